"""A busy machine on demand: CPU hogs beside a command, so that anyone can see it pass there.

Run:  .venv/bin/python benchmarks/busy_machine.py [--hogs N] [--limit SECONDS] -- COMMAND...

N processes (default 8) spin on the CPU, at the same priority as everything else, while
COMMAND runs; they stop when it ends, and each stops by itself after `--limit` seconds (default
3600) or as soon as the process that started it is gone, so a hog never outlives its purpose.
On two cores, 8 hogs keep the load average at about 8 plus the command's own processes: each
process of the command gets a fraction of a core, as on a shared CI machine. The load average
is sampled every 30 s from the first minute on (a one-minute average needs that long to
rise) and printed with the command's exit status.

`hogs(n)` is the same as a context manager, for the other benchmarks
(`bench_test_command.py --hogs N`).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _spin(parent: int, deadline: float) -> None:
    """One hog: busy until the deadline or until `parent` is gone (checked every 0.2 s)."""
    while time.monotonic() < deadline and os.getppid() == parent:
        stop = time.monotonic() + 0.2
        while time.monotonic() < stop:
            pass


@contextmanager
def hogs(n: int, limit: float = 3600.0) -> Iterator[list[float]]:
    """`n` hog processes for the duration of the `with` block (at most `limit` seconds); yields
    the list to which the load average is appended every 30 s from the first minute on."""
    deadline = time.monotonic() + limit
    spinners = [multiprocessing.Process(target=_spin, args=(os.getpid(), deadline), daemon=True)
                for _ in range(n)]
    for spinner in spinners:
        spinner.start()
    loads: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        if stop.wait(60):
            return
        while True:
            loads.append(os.getloadavg()[0])
            if stop.wait(30):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield loads
    finally:
        stop.set()
        for spinner in spinners:
            spinner.terminate()
        for spinner in spinners:
            spinner.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hogs", type=int, default=8, help="hog processes (default 8)")
    parser.add_argument("--limit", type=float, default=3600.0,
                        help="seconds after which a hog stops by itself (default 3600)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run beside the hogs, after --")
    with hogs(args.hogs, args.limit) as loads:
        started = time.monotonic()
        code = subprocess.call(command)
        seconds = time.monotonic() - started
    shown = f"min {min(loads):.1f}, max {max(loads):.1f}" if loads else "not sampled (< 60 s)"
    print(f"busy_machine: {args.hogs} hogs; exit status {code} after {seconds:.0f} s; load "
          f"average every 30 s after the first minute: {shown}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
