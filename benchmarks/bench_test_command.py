"""How long does the test command take from a fresh clone, and where does the time go?

Run:  .venv/bin/python benchmarks/bench_test_command.py [--keep] [--runs K] [--hogs N]

The repository's committed HEAD is cloned into a temporary folder (nothing uncommitted, no
`.venv/`, no `node_modules/`: a fresh machine's checkout) and CI's command, `CI=true bash
.ci/run`, runs there as CI runs it. Its own progress lines give the parts: set-up (the
virtual environment, the packages, npm), ruff, mypy and `course data check`, then pytest with
`course runs verify` beside it (scripts/test.sh says why), each stamped with bash's SECONDS.
The machine's load average at the start is printed, since another job on the two cores slows
every part. `--keep` leaves the clone in place; `--runs K` does it all K times in a row.

Two measures of the work, since wall time depends on the machine: the CPU-seconds the
command's own processes used (theirs and their children's, from the kernel's accounting when
they are waited for), and the CPU-seconds the whole machine was busy meanwhile (/proc/stat;
the same on a quiet machine, more beside other work).

`--hogs N` runs N CPU hogs beside the command (benchmarks/busy_machine.py), as on a busy CI
machine: the command must pass there too; its wall time is then no target.

Targets (the PASS/FAIL lines at the end), on a quiet 2-core machine: the whole command in
360 s or less, and at most 600 CPU-seconds of the machine busy meanwhile.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from busy_machine import hogs
from machine import busy_cpu_seconds

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 360.0
TARGET_CPU_S = 600.0
PART = re.compile(r"^test: .*\d+ s\)?$|^=+ .* in [\d.]+s|^verify: .* done in \d+ s$"
                  r"|^[\d.]+s (?:call|setup|teardown) |^(?:FAILED|ERROR) ")
"""The lines of the test command's output that carry a time (pytest's slowest tests among
them), and any test that failed."""


def own_cpu_seconds() -> float:
    """CPU-seconds used by this process's children that have been waited for, and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(keep: bool) -> tuple[int, float, float, float]:
    """Clone HEAD, run CI's command there; (exit status, wall s, own CPU s, busy CPU s)."""
    folder = Path(tempfile.mkdtemp(prefix="bench-test-command-"))
    clone = folder / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, check=True,
                          capture_output=True, text=True).stdout.strip()
    print(f"commit {head}, {os.cpu_count()} cores, load average at start "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    start, own, busy = time.monotonic(), own_cpu_seconds(), busy_cpu_seconds()
    done = subprocess.run(["bash", ".ci/run"], cwd=clone, env={**os.environ, "CI": "true"},
                          capture_output=True, text=True)
    seconds, own, busy = (time.monotonic() - start, own_cpu_seconds() - own,
                          busy_cpu_seconds() - busy)
    for line in (done.stdout + done.stderr).splitlines():
        if PART.search(line):
            print(line)
    print(f"exit status {done.returncode}; the whole command: {seconds:.0f} s, its processes "
          f"{own:.0f} CPU-s, the machine busy {busy:.0f} CPU-s of "
          f"{seconds * (os.cpu_count() or 1):.0f}", flush=True)
    if not keep:
        shutil.rmtree(folder)
    return done.returncode, seconds, own, busy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--keep", action="store_true", help="leave each clone in place")
    parser.add_argument("--runs", type=int, default=1, help="runs in a row (default 1)")
    parser.add_argument("--hogs", type=int, default=0,
                        help="CPU hogs beside the command (default 0: a quiet machine)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        loads = stack.enter_context(hogs(args.hogs)) if args.hogs else []
        results = [one_run(args.keep) for _ in range(args.runs)]
    if args.hogs:
        shown = (f"min {min(loads):.1f}, max {max(loads):.1f}" if loads
                 else "not sampled (< 60 s)")
        print(f"{args.hogs} hogs beside it; load average every 30 s after the first minute: "
              f"{shown}")
    passed = True
    for code, seconds, own, busy in results:
        # on a quiet machine the machine's busy CPU-seconds are the command's (its own count
        # misses the processes that are not waited for: browsers, the sandboxes' namespaces)
        fast = args.hogs > 0 or (seconds <= TARGET_S and busy <= TARGET_CPU_S)
        passed = passed and code == 0 and fast
        print(f"{'PASS' if code == 0 and fast else 'FAIL'}: test command exit status {code}, "
              f"{seconds:.0f} s, {own:.0f} CPU-s counted for its processes"
              + (f", the machine busy {busy:.0f} CPU-s (targets on a quiet machine: <= "
                 f"{TARGET_S:.0f} s, <= {TARGET_CPU_S:.0f} busy CPU-s)" if not args.hogs
                 else ""))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
