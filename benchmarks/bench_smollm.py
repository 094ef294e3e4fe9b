"""How long does the real model take to load, to answer, and to write data/smollm/?

Run:  .venv/bin/python benchmarks/bench_smollm.py

Measured in this process, on one BLAS thread (as `scripts/make_smollm_data.py` runs it):
`course.smollm.load` (CPU-seconds), one forward step for a batch of 1, 8 and 17 rows after a
prompt (the cost of a token), and one batch of the script's (a greedy answer and 8 samples at
each of two temperatures) for the first problem of each split and prompt version. Then the
whole script's time as its own record states it (`data/smollm/made.json`, `generation`:
each run of the script, its prompt versions and seconds). Target (PASS/FAIL at the end): the
model loads in at most 10 CPU-seconds on a quiet machine, so that the tests and the lab can
afford it. No test times anything: this is a measurement.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # before numpy loads

REPO = Path(__file__).resolve().parents[1]
LOAD_TARGET_S = 10.0


def main() -> int:
    import numpy as np

    from course import smollm, smollm_data
    from course.data import load_problems

    start = time.process_time()
    model = smollm.load()
    load_s = time.process_time() - start
    print(f"load: {load_s:.1f} CPU-s, {sum(w.nbytes for w in model.weights.values()) / 1e9:.2f}"
          " GB of float32 weights")

    prompt = np.array([smollm.encode(model, smollm.chat_prompt("Compute 47+38."))])
    for batch in (1, 8, 17):
        cache = smollm.Cache.empty(model.config, 1, prompt.shape[1] + 8)
        smollm.forward(model, prompt, cache)
        cache = cache.repeat(batch)
        start = time.process_time()
        for _ in range(5):
            cache.length = prompt.shape[1]
            smollm.forward(model, np.ones((batch, 1), dtype=np.int64), cache)
        step = (time.process_time() - start) / 5
        print(f"one token for {batch:2d} rows: {1000 * step:6.1f} ms "
              f"({1000 * step / batch:5.1f} ms a row)")

    temperatures = [0.0] + [0.7] * 8 + [1.0] * 8
    for split in smollm_data.SPLITS:
        problem = load_problems(REPO / "data" / "problems" / f"{split}.jsonl")[0]
        for version, ask in smollm_data.PROMPT_VERSIONS.items():
            start = time.process_time()
            question, shots = ask(problem["prompt"])
            answers = smollm.generate(model, question, temperatures,
                                      np.random.default_rng(0), max_new=64, shots=shots)
            tokens = sum(len(smollm.encode(model, a)) + 1 for a in answers)
            print(f"{problem['id']} {smollm_data.STEMS[version]:8s}: 17 completions, "
                  f"{tokens} tokens in {time.process_time() - start:.1f} CPU-s")

    made = json.loads((REPO / "data" / "smollm" / "made.json").read_text())
    problems = sum(len(load_problems(REPO / "data" / "problems" / f"{split}.jsonl"))
                   for split in smollm_data.SPLITS)
    for run in made["generation"]:
        print(f"scripts/make_smollm_data.py, as made.json records it: {problems} problems x "
              f"{len(run['versions'])} prompt version(s) x 17 completions in {run['seconds']} s "
              f"on {run['processes']} processes ({', '.join(run['versions'])})")
    verdict = "PASS" if load_s <= LOAD_TARGET_S else "FAIL"
    print(f"{verdict}: the model loads in {load_s:.1f} CPU-s (target {LOAD_TARGET_S:.0f})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
