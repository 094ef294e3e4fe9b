"""How fast is the measurement instrument? One run, four targets, side by side.

Run:  .venv/bin/python benchmarks/bench_scorer.py

1. `score` per call on typical completions (the frozen rollouts, every failure mode included),
   next to a bare `re.fullmatch(r"Final: (-?\\d+)", s)` (the floor: no checks, no details) and
   math-verify's `parse` + `verify` (a lenient peer that understands LaTeX and expressions).
   Timing: `time.perf_counter_ns` around a batch of calls, divided by the batch size; the
   median over batches is reported, so one slow batch (a context switch) does not move it.
2. The worst case: 1 MB adversarial strings, each timed alone (best of a few repeats, since a
   single call is what a slow input costs).
3. The Loop A pipeline at scale: load, evaluate, summarise and write a run of 100,000 rollouts
   (the frozen ones repeated under new ids, in a temporary folder), with a per-stage breakdown.
   Each step runs under a time budget (10x the target), so a runaway step is named, not waited
   for.

4. Loop B at scale: one prompt's selection row (`prompt_row`: every pick and pass@k for every
   k) for N = 1,600 and N = 20,000 scored samples; pass@k for all k is linear in N.

Targets (PASS/FAIL lines at the end): score <= 2 us/call median; >= 100x faster than
math-verify; every 1 MB input <= 10 ms; 100k rollouts evaluated and written <= 3 s; one
selection row of 20,000 samples <= 1 s.
"""

from __future__ import annotations

import functools
import re
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from course import data, evaluation, runs, selection
from course.jsonfiles import jsonl_bytes
from course.paths import DATA_DIR
from course.reports import evaluation as report
from course.scorer import score

T = TypeVar("T")

PROBLEMS = DATA_DIR / "problems" / "dev.jsonl"
ROLLOUTS = DATA_DIR / "rollouts" / "frozen_v1.jsonl"
MB = 1_000_000
SCALE = 100_000

TARGET_SCORE_US = 2.0
TARGET_RATIO = 100.0
TARGET_ADVERSARIAL_MS = 10.0
TARGET_PIPELINE_S = 3.0
TARGET_SELECTION_S = 1.0
SELECTION_SIZES = (1_600, 20_000)
BUDGET_FACTOR = 10
"""A pipeline step is stopped after 10x the whole pipeline's target."""

FLOOR = re.compile(r"Final: (-?\d+)")


def per_call_ns(call: Callable[[Any, str], object], pairs: list[tuple[dict, str]],
                batches: int, repeat: int) -> float:
    """Median over `batches` of (time for `repeat` passes over `pairs`) / calls, in ns."""
    samples = []
    for _ in range(batches):
        start = time.perf_counter_ns()
        for _ in range(repeat):
            for example, completion in pairs:
                call(example, completion)
        samples.append((time.perf_counter_ns() - start) / (repeat * len(pairs)))
    return statistics.median(samples)


def best_of_ms(call: Callable[[], object], repeats: int = 5) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return min(samples)


def adversarial_inputs() -> dict[str, str]:
    """1 MB (10^6 characters) inputs aimed at every check of the scorer."""
    return {
        '"Final: " + 9 x 1e6 (too long)': "Final: " + "9" * MB,
        '"Final: -" + 0 x 1e6': "Final: -" + "0" * MB,
        '"Final: 1" + space x 1e6 + "x"': "Final: 1" + " " * MB + "x",
        '"Final: " + 1 x 1e6 + "x"': "Final: " + "1" * MB + "x",
        '"Final: " + 1 x 1e6 + NBSP': "Final: " + "1" * MB + "\u00a0",
        '"Final: 3" + "_3" x 5e5': "Final: 3" + "_3" * (MB // 2),
        "newline x 1e6": "\n" * MB,
        "space x 1e6 around Final: 3": " " * (MB // 2) + "Final: 3" + " " * (MB // 2),
        '"F" x 1e6': "F" * MB,
        "NBSP x 1e6": "\u00a0" * MB,
        "U+2212 x 1e6": "\u2212" * MB,
        "digits x 1e6 + newline": "1" * MB + "\n",
        '"x\\n" x 5e5 (many lines)': "x\n" * (MB // 2),
        '"Final: 3\\n" x 1.25e5 (laundering)': "Final: 3\n" * (MB // 9),
        '"Final:" + tab x 1e6 + "3"': "Final:" + "\t" * MB + "3",
        "zero-width space x 1e6": "\u200b" * MB,
    }


class OverBudget(Exception):
    """A pipeline step ran past its time budget and was stopped."""


def timed(call: Callable[[], T], budget_s: float) -> tuple[T | None, float | None]:
    """Run `call`; return (value, seconds), or (None, None) if it ran past `budget_s`.

    A SIGALRM timer stops a runaway step (for example a quadratic loop) so that the benchmark
    still finishes and names the culprit instead of hanging.
    """
    def stop(signum: int, frame: object) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, budget_s)
    begin = time.perf_counter()
    try:
        value = call()
    except OverBudget:
        return None, None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return value, time.perf_counter() - begin


def pipeline(tmp: Path) -> tuple[float | None, dict[str, float | str | None]]:
    """Write 100k synthetic rollouts, then time `course eval` end to end and stage by stage.

    Returns the end-to-end seconds (None if stopped at the budget) and seconds per stage
    (None if stopped; a note if skipped because a step it needs was stopped).
    """
    problems, rollouts = data.load_problems(PROBLEMS), data.load_rollouts(ROLLOUTS)
    copies = -(-SCALE // len(problems))
    big_problems = [{**p, "id": f"{p['id']}-{k:05d}"} for k in range(copies) for p in problems]
    big_rollouts = [{**r, "id": f"{r['id']}-{k:05d}"} for k in range(copies) for r in rollouts]
    problems_path, rollouts_path = tmp / "problems.jsonl", tmp / "rollouts.jsonl"
    problems_path.write_bytes(jsonl_bytes(big_problems[:SCALE]))
    rollouts_path.write_bytes(jsonl_bytes(big_rollouts[:SCALE]))
    # The synthetic file has no entry in data/provenance.json; it inherits frozen_v1's.
    origin = data.provenance(ROLLOUTS)

    def same_origin(path: Path | str, registry: Path | str = "") -> dict[str, Any]:
        return origin

    data.provenance = same_origin

    config = evaluation.EvalConfig(problems=problems_path, rollouts=rollouts_path,
                                   out=tmp / "run")
    note = "Benchmark: 100k synthetic rollouts."
    budget = BUDGET_FACTOR * TARGET_PIPELINE_S
    _, total = timed(lambda: runs.write_run(tmp / "run",
                                            report.build_run(config, note, record_git=False)),
                     budget)

    stages: dict[str, float | str | None] = {}
    loaded_p, stages["load problems"] = timed(lambda: data.load_problems(problems_path), budget)
    loaded_r, stages["load rollouts"] = timed(lambda: data.load_rollouts(rollouts_path), budget)
    assert loaded_p is not None and loaded_r is not None, "the loaders ran past the budget"
    _, stages["join_on_id"] = timed(
        lambda: data.join_on_id(loaded_p, loaded_r, rollouts_path), budget)
    # The synthetic files list the same ids in the same order, so zip pairs them like the join.
    _, stages["score (no join)"] = timed(
        lambda: [score(p, r["completion"]) for p, r in zip(loaded_p, loaded_r, strict=True)],
        budget)
    results, stages["evaluate (join + score)"] = timed(
        lambda: evaluation.evaluate(loaded_p, loaded_r), budget)
    stages.update(dict.fromkeys(("summarise", "results.jsonl bytes", "write_run"),
                                "skipped (needs evaluate)"))
    if results is not None:
        _, stages["summarise"] = timed(lambda: evaluation.summarise(results), budget)
        _, stages["results.jsonl bytes"] = timed(lambda: jsonl_bytes(results), budget)
        files = report.build_run(config, note, record_git=False)
        _, stages["write_run"] = timed(lambda: runs.write_run(tmp / "again", files), budget)
    return total, stages


def selection_row_seconds(n: int) -> float:
    """Wall time of `prompt_row` for one prompt with n already-scored samples (1 in 8 right)."""
    import numpy as np

    problem = {"id": "p", "expected_answer": 323}
    samples = [{"sample_id": f"s{i}", "completion": "Final: 323" if i % 8 == 0 else "Final: 7"}
               for i in range(n)]
    scored = selection.score_samples(problem, samples)
    start = time.perf_counter()
    selection.prompt_row(problem, scored, (1, 2, 4, 8, n), np.random.default_rng(0))
    return time.perf_counter() - start


def seconds(value: float | str | None, budget: float) -> str:
    if value is None:
        return f"STOPPED after {budget:.0f} s"
    return value if isinstance(value, str) else f"{value:.3f} s"


def main() -> int:
    problems, rollouts = data.load_problems(PROBLEMS), data.load_rollouts(ROLLOUTS)
    pairs = [(p, r["completion"]) for p, r in data.join_on_id(problems, rollouts, ROLLOUTS)]
    print(f"Python {sys.version.split()[0]}; typical mix: {len(pairs)} frozen rollouts "
          f"({sum(score(p, c)['reward'] == 1.0 for p, c in pairs)} correct)\n")

    rows = [("bare re.fullmatch (floor)", per_call_ns(lambda e, c: FLOOR.fullmatch(c), pairs,
                                                       batches=200, repeat=20)),
            ("course score", per_call_ns(score, pairs, batches=200, repeat=20))]
    try:
        from math_verify import parse as mv_parse
        from math_verify import verify as mv_verify
    except ImportError:
        print("math-verify is not installed: skipping the peer (pip install math-verify)")
        mv_ns = None
    else:
        def peer(example: dict, completion: str) -> bool:
            return mv_verify(mv_parse(str(example["expected_answer"])), mv_parse(completion))

        mv_ns = per_call_ns(peer, pairs, batches=7, repeat=1)
        rows.append(("math-verify parse + verify", mv_ns))
    score_ns = rows[1][1]
    print(f"{'per call, median':<34} {'us/call':>10} {'vs score':>10}")
    for name, ns in rows:
        print(f"{name:<34} {ns / 1000:>10.3f} {ns / score_ns:>9.2f}x")

    print(f"\n{'1 MB adversarial input':<40} {'code':<22} {'ms':>8}")
    worst = 0.0
    for name, text in adversarial_inputs().items():
        example = {"expected_answer": 3}
        ms = best_of_ms(functools.partial(score, example, text))
        worst = max(worst, ms)
        print(f"{name:<40} {score(example, text)['details']['code']:<22} {ms:>8.2f}")

    budget = BUDGET_FACTOR * TARGET_PIPELINE_S
    with tempfile.TemporaryDirectory() as folder:
        total, stages = pipeline(Path(folder))
    print(f"\n{SCALE:,} rollouts, build_run + write_run (load, join, score, summarise, write): "
          f"{seconds(total, budget)}\nstages, each timed alone:")
    for name, value in stages.items():
        print(f"  {name:<28} {seconds(value, budget)}")

    print("\nLoop B, one prompt's selection row (every pick, pass@k for every k):")
    selection_s = {}
    for n in SELECTION_SIZES:
        selection_s[n] = selection_row_seconds(n)
        print(f"  N = {n:>6,} samples   {selection_s[n]:.3f} s")

    checks = [
        (f"score median <= {TARGET_SCORE_US} us/call", score_ns / 1000 <= TARGET_SCORE_US,
         f"{score_ns / 1000:.3f} us"),
        (f"math-verify / score >= {TARGET_RATIO:.0f}x",
         None if mv_ns is None else mv_ns / score_ns >= TARGET_RATIO,
         "skipped" if mv_ns is None else f"{mv_ns / score_ns:,.0f}x"),
        (f"every 1 MB input <= {TARGET_ADVERSARIAL_MS} ms", worst <= TARGET_ADVERSARIAL_MS,
         f"worst {worst:.2f} ms"),
        (f"{SCALE:,} rollouts evaluated + written <= {TARGET_PIPELINE_S} s",
         total is not None and total <= TARGET_PIPELINE_S, seconds(total, budget)),
        (f"selection row of {SELECTION_SIZES[-1]:,} samples <= {TARGET_SELECTION_S} s",
         selection_s[SELECTION_SIZES[-1]] <= TARGET_SELECTION_S,
         f"{selection_s[SELECTION_SIZES[-1]]:.3f} s"),
    ]
    print()
    for label, ok, value in checks:
        print(f"{'SKIP' if ok is None else 'PASS' if ok else 'FAIL'}  {label:<44} {value}")
    return 0 if all(ok is not False for _, ok, _ in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
