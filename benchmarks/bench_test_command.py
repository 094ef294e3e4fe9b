"""How long does the test command take from a fresh clone, and where does the time go?

Run:  .venv/bin/python benchmarks/bench_test_command.py [--keep]

The repository's committed HEAD is cloned into a temporary folder (nothing uncommitted, no
`.venv/`, no `node_modules/`: a fresh machine's checkout) and CI's command, `CI=true bash
.ci/run`, runs there as CI runs it. Its own progress lines give the parts: set-up (the
virtual environment, the packages, npm), ruff, mypy and `course data check`, then pytest with
`course runs verify` beside it (scripts/test.sh says why), each stamped with bash's SECONDS.
The machine's load average at the start is printed, since another job on the two cores slows
every part. `--keep` leaves the clone in place.

Target (the PASS/FAIL line at the end): the whole command in 360 s or less on a quiet 2-core
machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import busy_cpu_seconds

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 360.0
PART = re.compile(r"^test: .*\d+ s\)?$|^=+ .* in [\d.]+s|^verify: .* done in \d+ s$"
                  r"|^[\d.]+s (?:call|setup|teardown) |^(?:FAILED|ERROR) ")
"""The lines of the test command's output that carry a time (pytest's slowest tests among
them), and any test that failed."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--keep", action="store_true", help="leave the clone in place")
    keep = parser.parse_args().keep
    folder = Path(tempfile.mkdtemp(prefix="bench-test-command-"))
    clone = folder / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, check=True,
                          capture_output=True, text=True).stdout.strip()
    print(f"commit {head}, {os.cpu_count()} cores, load average at start "
          f"{os.getloadavg()[0]:.1f}")
    start, busy = time.monotonic(), busy_cpu_seconds()
    done = subprocess.run(["bash", ".ci/run"], cwd=clone, env={**os.environ, "CI": "true"},
                          capture_output=True, text=True)
    seconds, busy = time.monotonic() - start, busy_cpu_seconds() - busy
    for line in (done.stdout + done.stderr).splitlines():
        if PART.search(line):
            print(line)
    print(f"exit status {done.returncode}; the whole command: {seconds:.0f} s, the machine "
          f"busy {busy:.0f} CPU-s of {seconds * (os.cpu_count() or 1):.0f}")
    if not keep:
        shutil.rmtree(folder)
    passed = done.returncode == 0 and seconds <= TARGET_S
    print(f"{'PASS' if passed else 'FAIL'}: test command {seconds:.0f} s "
          f"(target <= {TARGET_S:.0f} s, exit status {done.returncode})")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
