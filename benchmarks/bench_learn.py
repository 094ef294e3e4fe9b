"""How fast is Loop C on tokens? Steps per second, and the wall time of each canonical run.

Run:  .venv/bin/python benchmarks/bench_learn.py

1. Updates per second of `course.learn.reinforce_step` on the 60 dev problems, 8 fresh
   completions each (480 completions sampled, scored and learned from per step), for the
   strict reward and for the `answer_anywhere` proxy (its completions grow longer). Timing:
   `time.perf_counter` around 20 steps after 2 warm-up steps, best of 3.
2. The wall time of building each canonical token run (run_009 to run_013, run_020) in
   memory, once, as `course runs verify` does. Each now trains from five seeds (three for
   run_020, for each of its six rule and reward pairs).
3. The lab notebook "Loop C on tokens", executed as the site build executes it (jupytext and
   nbclient, the same kernel), end to end.

Targets (PASS/FAIL at the end): each canonical run <= 120 s (it was 30 s for one seed; the
runs repeat over seeds since issue 20, and `course runs verify` builds them in two processes);
the lab <= 60 s; on the 2-core machine the course is built for. No test times anything: these
are measurements.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from course.learn import LearnConfig, reinforce_step, setup
from course.reports.canonical import CANONICAL
from course.token_policy import learner_for

TARGET_RUN_S = 120.0
TARGET_LAB_S = 60.0
TOKEN_RUNS = ("run_009", "run_010", "run_011", "run_012", "run_013", "run_020")
LAB = Path(__file__).resolve().parents[1] / "docs" / "labs" / "lab_tokens.py"


def steps_per_second(config: LearnConfig, steps: int = 20, repeats: int = 3) -> float:
    problems, reference, _ = setup(config)
    best = float("inf")
    for repeat in range(repeats):
        learner = learner_for(reference, len(problems))
        rng = np.random.default_rng(repeat)
        for _ in range(2):
            reinforce_step(learner, problems, config, rng)
        start = time.perf_counter()
        for _ in range(steps):
            reinforce_step(learner, problems, config, rng)
        best = min(best, time.perf_counter() - start)
    return steps / best


def lab_seconds() -> float | None:
    """Execute the lab like mkdocs-jupyter does; None when the lab or the tools are missing."""
    try:
        import jupytext
        from nbclient import NotebookClient
    except ImportError:
        return None
    if not LAB.is_file():
        return None
    notebook = jupytext.read(LAB)
    start = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(LAB.parent)}}).execute()
    return time.perf_counter() - start


def main() -> int:
    print(f"{'reinforce_step, 60 problems x 8 samples':<44} {'steps/s':>8}")
    for reward in ("strict", "answer_anywhere"):
        rate = steps_per_second(replace(LearnConfig(), reward=reward))
        print(f"  reward {reward:<36} {rate:>8.1f}")
    print(f"\n{'canonical run, built in memory':<44} {'seconds':>8}")
    timings = {}
    for name in TOKEN_RUNS:
        start = time.perf_counter()
        CANONICAL[name]()
        timings[name] = time.perf_counter() - start
        print(f"  {name:<42} {timings[name]:>8.2f}")
    lab = lab_seconds()
    print(f"\n{'lab: Loop C on tokens, executed':<44} "
          f"{'skipped' if lab is None else f'{lab:.2f}':>8}")
    checks: list[tuple[str, bool | None, str]] = [
        (f"{name} <= {TARGET_RUN_S:.0f} s", timings[name] <= TARGET_RUN_S,
               f"{timings[name]:.2f} s") for name in TOKEN_RUNS]
    checks.append((f"lab <= {TARGET_LAB_S:.0f} s", None if lab is None else lab <= TARGET_LAB_S,
                   "skipped" if lab is None else f"{lab:.2f} s"))
    print()
    for label, ok, value in checks:
        print(f"{'SKIP' if ok is None else 'PASS' if ok else 'FAIL'}  {label:<30} {value}")
    return 0 if all(ok is not False for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
