"""How long does Loop B take at N = 3,000 samples a prompt, and how much of it is the figure?

Run:  .venv/bin/python benchmarks/bench_select.py

A pack of 4 dev prompts x 3,000 samples is written to a temporary folder (each sample is the
prompt's first sample in `data/selection/pack_n8.jsonl`, cycled: real completions, many of
them), and `course select` saves a run from it, as a student would, in a process of its own.
Reported: the command's wall time (best of 3), and the time `reports.selection.plot_pass_at_k`
takes on that run's summary. Target (PASS/FAIL at the end): the command in at most 5 s on a
quiet 2-core machine (it took 36 s when the figure drew a tick per k, and drew twice). No test
times anything: this is a measurement.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 5.0
PROMPTS, SAMPLES = 4, 3_000


def write_pack(folder: Path) -> tuple[Path, Path]:
    """The big pack and its problems: the first `PROMPTS` prompts of the committed pack,
    their samples cycled to `SAMPLES` each, with ids of their own."""
    lines = (REPO / "data" / "selection" / "pack_n8.jsonl").read_text().splitlines()[:PROMPTS]
    ids = {json.loads(line)["id"] for line in lines}
    problems = folder / "problems.jsonl"
    problems.write_text("".join(
        line + "\n" for line in (REPO / "data" / "problems" / "dev.jsonl").read_text()
        .splitlines() if json.loads(line)["id"] in ids))
    pack = folder / "pack.jsonl"
    with pack.open("w") as out:
        for line in lines:
            record = json.loads(line)
            samples = record["samples"]
            record["samples"] = [{**samples[i % len(samples)],
                                  "sample_id": f"{record['id']}/s{i}"} for i in range(SAMPLES)]
            out.write(json.dumps(record) + "\n")
    return pack, problems


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pack, problems = write_pack(folder)
        provenance = folder / "provenance.json"
        provenance.write_text(json.dumps({"made_by": "bench_select.py (cycled samples)",
                                          "prompt_version": "pack_n8",
                                          "sampling": {"n": SAMPLES}}))
        times = []
        for attempt in range(3):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "course", "select", "--pack", str(pack),
                            "--problems", str(problems), "--provenance", str(provenance), "--out",
                            str(folder / f"run_{attempt}"), "--note", "N = 3,000"],
                           check=True, cwd=REPO, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        from course.reports.selection import plot_pass_at_k

        summary = json.loads((folder / "run_0" / "summary.json").read_text())
        start = time.perf_counter()
        plot_pass_at_k(summary)
        figure = time.perf_counter() - start
    best = min(times)
    print(f"course select, {PROMPTS} prompts x {SAMPLES:,} samples: best of 3 {best:.2f} s "
          f"({', '.join(f'{t:.2f}' for t in times)}); the pass@k figure alone {figure:.2f} s")
    verdict = "PASS" if best <= TARGET_S else "FAIL"
    print(f"{verdict}: at most {TARGET_S:g} s")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
