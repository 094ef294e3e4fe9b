"""How long from saving a lesson to the reloaded page, under `mkdocs serve`? The teacher's loop.

Run:  .venv/bin/python benchmarks/bench_edit_loop.py [--rounds N] [--full] [--code]

1. The site's sources (every file git tracks or would track) are copied to a temporary folder,
   so the real pages are never touched, and `mkdocs serve --dirty` is started there on a free
   port, as scripts/site.sh starts it (`--full`: without --dirty, for comparison). Its first
   build (which executes the labs, the serve cache being empty) is timed until the lesson is
   served.
2. Then, N times, a new line with a unique marker is appended to the lesson (the copy of
   docs/lessons/m2-credit-assignment.md) and three moments are timed from the save:
   - `detected`: the server logs "Detected file changes" (its watcher polls every 0.5 s);
   - `notice`: livereload answers the long poll a browser on the page keeps open, which is
     when the browser reloads;
   - `page`: a GET of the lesson returns the marker, which is what the reloaded page shows.
   With `--code` the marker is not prose but printed by a new line in the lesson's last Python
   block (`print("edit-loop-" + "marker-...")`, so only the block's output shows it whole):
   each save runs that block again (src/course_site/outputs.py), as a teacher's code edit does.
   The server's own "Documentation built in X seconds" is reported too, when it is logged
   (mkdocs drops a log line equal to the one before: `-` when a build took as long as the last).
3. The server is stopped and started again on the same copy: the first build of this second
   session reads the labs from the serve cache (.cache/mkdocs-jupyter/ in the copy).

Target (PASS/FAIL lines at the end): save -> reloaded page <= 3 s, median and max.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MKDOCS = REPO / ".venv" / "bin" / "mkdocs"
LESSON = "docs/lessons/m2-credit-assignment.md"
URL_PATH = "lessons/m2-credit-assignment/"
TARGET_S = 3.0
STARTUP_BUDGET_S = 600.0
ROUND_BUDGET_S = 60.0
POLL_S = 0.05
PAUSE_S = 1.0
"""Seconds between rounds, so that one save's rebuild is over before the next save."""

LIVERELOAD = re.compile(r"livereload\((\d+), (\d+)\)")
BUILT = re.compile(r"Documentation built in ([\d.]+) seconds")
COLUMNS = (("detected", 9), ("build (log)", 12), ("notice", 9), ("page", 9))
"""Each timing's name and column width."""


def copy_sources(target: Path) -> None:
    """Copy what git tracks (or would: untracked but not ignored) into `target`; node_modules/
    is linked, not copied. The copy builds the same site without touching the repository."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True, check=True)
    for name in listed.stdout.decode().split("\0"):
        source = REPO / name
        if name and source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / "node_modules").symlink_to(REPO / "node_modules")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`mkdocs serve` in a folder, with its log lines timestamped as they arrive."""

    def __init__(self, root: Path, dirty: bool) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        command = [str(MKDOCS), "serve", "--dev-addr", f"127.0.0.1:{self.port}"]
        if dirty:
            command.insert(2, "--dirty")
        # The copy's src/ first on the path, so the build and the lab kernels import its code.
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(root / "src")}
        self.process = subprocess.Popen(command, cwd=root, env=env, text=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.lines: list[tuple[float, str]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append((time.perf_counter(), line.rstrip()))

    def first_line_after(self, start: float, pattern: str,
                         wait: float = 2.0) -> tuple[float, str] | None:
        """The first log line matching `pattern` read after `start`, waiting up to `wait`
        seconds for it (the log is read by another thread, a moment after it is written)."""
        until = time.perf_counter() + wait
        while True:
            found = next(((at, line) for at, line in list(self.lines)
                          if at >= start and re.search(pattern, line)), None)
            if found or time.perf_counter() > until:
                return found
            time.sleep(POLL_S)

    def get(self, path: str, timeout: float = ROUND_BUDGET_S) -> str:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as response:
            return response.read().decode("utf-8")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)   # mkdocs shuts down and removes its site folder
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def wait_until_served(server: Server, budget: float) -> float | None:
    """Seconds until the lesson is served, or None if the server stopped or the budget ran out."""
    start = time.perf_counter()
    while time.perf_counter() - start < budget and server.process.poll() is None:
        try:
            server.get(URL_PATH, timeout=budget)
            return time.perf_counter() - start
        except OSError:
            time.sleep(0.5)
    return None


def edited(original: bytes, marker: str, code: bool) -> bytes:
    """The lesson with `marker` as a new last paragraph, or (`code`) printed by a new first line
    of the lesson's last top-level Python block."""
    if not code:
        return original + f"\n\n{marker}\n".encode()
    opening = original.rindex(b"\n```python\n") + len(b"\n```python\n")
    head, tail = marker.split("marker", 1)
    line = f'print("{head}" + "marker{tail}")\n'.encode()
    return original[:opening] + line + original[opening:]


def one_round(server: Server, lesson: Path, original: bytes, n: int,
              code: bool = False) -> dict[str, float | None]:
    """Save the lesson with a new marker; seconds from the save to each moment (None: never)."""
    epoch, request = LIVERELOAD.search(server.get(URL_PATH)).groups()  # type: ignore[union-attr]
    marker = f"edit-loop-marker-{n}-{time.time_ns()}"
    noticed: list[float] = []

    def long_poll() -> None:   # what the page's livereload script does
        server.get(f"livereload/{epoch}/{request}")
        noticed.append(time.perf_counter())

    poller = threading.Thread(target=long_poll, daemon=True)
    poller.start()
    time.sleep(0.2)   # the poll is open before the save, as in a browser that shows the page
    saved = time.perf_counter()
    lesson.write_bytes(edited(original, marker, code))
    page = None
    while time.perf_counter() - saved < ROUND_BUDGET_S:
        if marker in server.get(URL_PATH):
            page = time.perf_counter() - saved
            break
        time.sleep(POLL_S)
    poller.join(timeout=ROUND_BUDGET_S)
    detected = server.first_line_after(saved, "Detected file changes")
    built = server.first_line_after(saved, BUILT.pattern)
    return {"detected": detected and detected[0] - saved,
            "build (log)": built and float(BUILT.search(built[1]).group(1)),  # type: ignore[union-attr]
            "notice": noticed[0] - saved if noticed else None,
            "page": page}


def seconds(value: float | None, missing: str = "never") -> str:
    return missing if value is None else f"{value:.2f} s"


def startup(root: Path, dirty: bool) -> tuple[Server, float | None]:
    """Start a server in `root`; it and the seconds until it served the lesson (None: never)."""
    server = Server(root, dirty)
    served = wait_until_served(server, STARTUP_BUDGET_S)
    if served is None:
        print("the server never served the lesson; the end of its log:")
        print("\n".join(line for _, line in server.lines[-40:]))
    return server, served


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--full", action="store_true", help="serve without --dirty")
    parser.add_argument("--code", action="store_true",
                        help="each save edits a Python block (its output is made again)")
    args = parser.parse_args()
    dirty = not args.full

    with tempfile.TemporaryDirectory(prefix="edit-loop-") as folder:
        root = Path(folder)
        copy_sources(root)
        lesson = root / LESSON
        original = lesson.read_bytes()
        print(f"mkdocs serve{' --dirty' if dirty else ''}, in a copy of the repository; "
              f"lesson {LESSON}; each save edits {'a Python block' if args.code else 'prose'}")
        server, first = startup(root, dirty)
        rows = []
        try:
            if first is None:
                return 1
            print(f"first session, labs executed (empty serve cache): lesson served after "
                  f"{first:.1f} s\n")
            print(f"{'round':<6} " + " ".join(f"{key:>{width}}" for key, width in COLUMNS))
            for n in range(1, args.rounds + 1):
                rows.append(one_round(server, lesson, original, n, args.code))
                print(f"{n:<6} " + " ".join(
                    f"{seconds(rows[-1][key], '-' if key == 'build (log)' else 'never'):>{width}}"
                    for key, width in COLUMNS))
                time.sleep(PAUSE_S)
        finally:
            server.stop()
        lesson.write_bytes(original)
        server, second = startup(root, dirty)
        server.stop()
        print(f"\nsecond session, labs from the serve cache: lesson served after "
              f"{seconds(second)}\n")

    for key, _ in COLUMNS:
        values = [value for row in rows if (value := row[key]) is not None]
        if values:
            print(f"{key:<12} median {statistics.median(values):.2f} s, max {max(values):.2f} s"
                  f" ({len(values)} of {len(rows)} rounds)")
    pages = [row["page"] for row in rows]
    measured = [value for value in pages if value is not None]
    median = statistics.median(measured) if measured else None
    worst = None if None in pages else max(measured)
    checks = [(f"save -> reloaded page, median <= {TARGET_S} s", median,
               median is not None and median <= TARGET_S),
              (f"save -> reloaded page, every save <= {TARGET_S} s", worst,
               worst is not None and worst <= TARGET_S)]
    print()
    for label, value, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {label:<48} {seconds(value)}")
    return 0 if all(ok for _, _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
