"""Does Loop A scale to a real model's outputs? Time and peak memory of `course eval` and
`course compare` as the number of examples grows.

Run:  .venv/bin/python benchmarks/bench_streaming.py [N ...]     (default 10000 100000 1000000)

For each N, a temporary folder gets N problems (`{id, prompt, expected_answer}`), two rollouts
files A and B (`{id, completion}`: B differs from A on one example in ten) and a provenance file
per policy. Then, each as its own process under GNU time (`/usr/bin/time -f "%e %M"`, wall
seconds and peak resident memory):

1. `course eval` of A, then of B, into run folders;
2. `course compare` of the two runs.

Targets (issue 21, PASS/FAIL at the end): at N = 1,000,000, peak memory <= 300 MB for `eval`
and for `compare`. "No slower than today" is read against the figures this script printed
before the streaming change, quoted in the closing note of issue 21. No test times anything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_PEAK_MB = 300.0
COURSE = [sys.executable, "-c", "import sys; from course.cli import main; sys.exit(main())"]
"""`course` as the installed command runs it, with this interpreter."""


def write_inputs(folder: Path, n: int) -> None:
    """N problems, rollouts A and B, and one provenance file per policy, in `folder`."""
    with (open(folder / "problems.jsonl", "w", encoding="utf-8") as problems,
          open(folder / "a.jsonl", "w", encoding="utf-8") as a,
          open(folder / "b.jsonl", "w", encoding="utf-8") as b):
        for i in range(n):
            answer = (i * 7919) % 2001 - 1000
            problems.write(json.dumps({"id": f"p{i}", "prompt": f"What is {answer} + 0?",
                                       "expected_answer": answer}) + "\n")
            right, wrong = f"Final: {answer}", f"Final: {answer + 1}"
            a.write(json.dumps({"id": f"p{i}", "completion": right if i % 3 else wrong}) + "\n")
            b.write(json.dumps({"id": f"p{i}", "completion": wrong if i % 10 == 0 else
                                (right if i % 3 else wrong)}) + "\n")
    for policy in ("a", "b"):
        (folder / f"{policy}.origin.json").write_text(json.dumps({
            "made_by": "bench_streaming.py, generated", "prompt_version": "bench-v1",
            "sampling": {"policy": policy, "temperature": 0.0, "n": 1}}), encoding="utf-8")


def timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one command, measured by GNU time."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{done.stdout}{done.stderr}")
    seconds, kb = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), float(kb) / 1024


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000, 1_000_000]
    print(f"{'N':>10}  {'command':<8} {'seconds':>8} {'peak MB':>8} {'KB/example':>11}")
    worst: dict[int, float] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            write_inputs(folder, n)
            for policy in ("a", "b"):
                seconds, mb = timed([*COURSE, "eval", "--problems", "problems.jsonl",
                                     "--rollouts", f"{policy}.jsonl", "--provenance",
                                     f"{policy}.origin.json", "--out", f"run_{policy}",
                                     "--note", "bench"], folder)
                if policy == "a":
                    print(f"{n:>10,}  {'eval':<8} {seconds:>8.1f} {mb:>8.0f} "
                          f"{mb * 1024 / n:>11.2f}")
                    worst[n] = max(worst.get(n, 0.0), mb)
            if not (folder / "run_b" / "results.jsonl").is_file():
                raise SystemExit("course eval wrote no run: is the command line right?")
            seconds, mb = timed([*COURSE, "compare", "run_a", "run_b"], folder)
            print(f"{n:>10,}  {'compare':<8} {seconds:>8.1f} {mb:>8.0f} {mb * 1024 / n:>11.2f}")
            worst[n] = max(worst[n], mb)
    largest = max(sizes)
    ok = largest < 1_000_000 or worst[largest] <= TARGET_PEAK_MB
    print(f"\n{'PASS' if ok else 'FAIL'}  peak memory at N = {largest:,}: "
          f"{worst[largest]:.0f} MB (target <= {TARGET_PEAK_MB:.0f} MB at N = 1,000,000)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
