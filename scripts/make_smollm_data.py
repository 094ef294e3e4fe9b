"""Write data/smollm/: SmolLM2-135M-Instruct's completions (`course.smollm`).

    python scripts/make_smollm_data.py             # rewrite data/smollm/ (about 20 minutes on
                                                   # two cores; benchmarks/bench_smollm.py)
    python scripts/make_smollm_data.py --limit 3   # the first 3 problems of each split, into
                                                   # --out DIR
    python scripts/make_smollm_data.py --out DIR   # write the files and made.json in DIR

Each problem of the two splits (`course.smollm_data.SPLITS`: dev, sums) is asked in two prompt
versions (`PROMPT_VERSIONS`): the question alone, and the course's prompt with its `Final:`
line. For each, one batch in the model's own chat template writes a greedy answer (Loop A's
frozen rollout) and 8 samples at each of two temperatures (Loop B's packs). Every (split,
prompt version, problem) has its own random generator, seeded from `SEED` and the three
indices, so a file does not depend on the order the problems were run in, nor on how many
processes ran them. numpy's BLAS
runs on one thread. The test command never runs this: `course data check` checks the files
against the sha256 values written here in made.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # before numpy loads: it reads them once, when it starts

SEED = 135
"""The seed of every sample in data/smollm/."""
N = 8
"""Samples per problem at each temperature (a Loop B pack)."""
TEMPERATURES = (0.7, 1.0)
"""The two sampling temperatures; greedy (0) is asked for too."""
MAX_NEW = 64
"""Tokens the model may write before it is stopped (it usually stops itself sooner)."""


def _answers(task: tuple[str, str, list[dict[str, Any]]]) -> list[list[str]]:
    """For each problem of one (split, prompt version): the greedy answer, then N samples per
    temperature, in that order."""
    import numpy as np

    from course import smollm
    from course.smollm_data import PROMPT_VERSIONS, SPLITS

    split, version, problems = task
    model = smollm.load()
    indices = [SPLITS.index(split), list(PROMPT_VERSIONS).index(version)]
    temperatures = [0.0] + [t for t in TEMPERATURES for _ in range(N)]
    out = []
    for number, problem in enumerate(problems):
        rng = np.random.default_rng([SEED, *indices, number])
        question, shots = PROMPT_VERSIONS[version](problem["prompt"])
        out.append(smollm.generate(model, question, temperatures, rng, max_new=MAX_NEW,
                                   shots=shots))
    return out


def main() -> int:
    from course import smollm, smollm_data
    from course.data import load_problems
    from course.datagen import write_data
    from course.paths import DATA_DIR

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DATA_DIR / "smollm",
                        help="folder to write (default: data/smollm)")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first LIMIT problems (a trial; needs --out)")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--versions", nargs="+", choices=list(smollm_data.PROMPT_VERSIONS),
                        default=list(smollm_data.PROMPT_VERSIONS),
                        help="run these prompt versions only, and read the others' answers "
                             "back from the files in --out (default: all)")
    args = parser.parse_args()
    if args.limit is not None and args.out == DATA_DIR / "smollm":
        parser.error("--limit writes a partial set: give it --out DIR")
    smollm.weights_path()  # a missing model is one line, before anything starts

    tasks = [(split, version,
              load_problems(DATA_DIR / "problems" / f"{split}.jsonl")[:args.limit])
             for split in smollm_data.SPLITS for version in args.versions]
    answers: dict[str, dict[str, list[list[str]]]] = {
        split: {version: smollm_data.read_answers(args.out, split, version, TEMPERATURES)
                for version in smollm_data.PROMPT_VERSIONS if version not in args.versions}
        for split in smollm_data.SPLITS}
    start = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for (split, version, _), rows in zip(tasks, pool.map(_answers, tasks), strict=True):
            answers[split][version] = rows
    answers = {split: {v: by_version[v] for v in smollm_data.PROMPT_VERSIONS if v in by_version}
               for split, by_version in answers.items()}
    seconds = time.monotonic() - start
    generation = smollm_data.generation_record(args.out, args.versions, seconds, args.jobs)
    files = smollm_data.files(answers, seed=SEED, n=N, temperatures=TEMPERATURES,
                              max_new=MAX_NEW, generation=generation)
    for path in write_data(files, args.out, replace=args.out == DATA_DIR / "smollm"):
        print(f"wrote {path}")
    count = sum(len(problems) for _, _, problems in tasks)
    print(f"{count} (problem, prompt version) pairs x {1 + N * len(TEMPERATURES)} completions "
          f"in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
