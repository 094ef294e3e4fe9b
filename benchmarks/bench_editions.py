"""How long do both editions of the site take, built in one command, against one edition alone?

Run:  .venv/bin/python benchmarks/bench_editions.py [--rounds K]

The site's sources (every file git tracks or would track) are copied to a temporary folder
(linked to this repository's .venv/ and node_modules/), and three builds run there in turn, as
`bash scripts/site.sh` runs them once the course is set up:

1. `scripts/build_site.sh`: the student edition alone, into site/;
2. `COURSE_EDITION=teacher scripts/build_site.sh`: the teacher edition alone, into
   site-teacher/;
3. `scripts/build_site.sh --both` (what `site.sh --both` runs): both, the teacher edition
   reading what the student edition's build printed and executed (src/course_site/serve.py,
   SHARED_BUILD).

Each is timed on the wall clock and by the CPU-seconds of its processes. The two editions of
the third command are then compared with those of the first two, file by file: the same bytes
but for the build's own date in sitemap.xml.gz, or the benchmark fails.

Target (the PASS/FAIL line): both editions in at most 1.3 times the time of the student
edition alone (issue 46; two separate builds take about 2 times).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.3
COMMANDS = {"student alone": ("student", ["--site-dir", "site"]),
            "teacher alone": ("teacher", ["--site-dir", "site-teacher"]),
            "both editions": ("student", ["--both"])}
"""Each timed build: its COURSE_EDITION and what it passes to scripts/build_site.sh."""


def sources(copy: Path) -> None:
    """The files git tracks or would track, copied to `copy`; .venv/ and node_modules/ linked."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    for name in (".venv", "node_modules"):
        (copy / name).symlink_to(REPO / name)


def timed(copy: Path, edition: str, options: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU-seconds (its processes' and their children's) of one build."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(["bash", "scripts/build_site.sh", *options], cwd=copy,
                          capture_output=True, text=True,
                          env={**os.environ, "COURSE_EDITION": edition})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"build_site.sh {' '.join(options)} failed (exit {done.returncode}):\n"
                 f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def differing(one: Path, other: Path) -> list[str]:
    """Files that are in one built site only, or differ in bytes (sitemap.xml.gz carries the
    build's date)."""
    names = {path.relative_to(site).as_posix() for site in (one, other)
             for path in site.rglob("*") if path.is_file()} - {"sitemap.xml.gz"}
    return sorted(name for name in names
                  if not ((one / name).is_file() and (other / name).is_file())
                  or (one / name).read_bytes() != (other / name).read_bytes())


def first_difference(one: Path, other: Path) -> str:
    """Where two files first differ, with a few bytes of each around it."""
    a, b = one.read_bytes(), other.read_bytes()
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
              min(len(a), len(b)))
    return f"byte {at}: {a[at - 60:at + 60]!r} against {b[at - 60:at + 60]!r}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="times each command is run")
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory(prefix="bench-editions-") as scratch:
        copy = Path(scratch) / "course"
        copy.mkdir()
        sources(copy)
        print(f"{os.cpu_count()} cores, load average at start {os.getloadavg()[0]:.1f}")
        best: dict[str, float] = {}
        kept = Path(scratch) / "alone"
        for _ in range(rounds):
            for label, (edition, options) in COMMANDS.items():
                wall, cpu = timed(copy, edition, options)
                best[label] = min(best.get(label, wall), wall)
                print(f"{label:<14} {wall:6.1f} s  {cpu:6.1f} CPU-s", flush=True)
                if label != "both editions":
                    folder = options[-1]
                    shutil.rmtree(kept / folder, ignore_errors=True)
                    shutil.copytree(copy / folder, kept / folder)
        for folder in ("site", "site-teacher"):
            differs = differing(kept / folder, copy / folder)
            if differs:
                first = sorted(differs)[0]
                print(f"FAIL: {folder}/ built by --both differs from its edition built alone: "
                      f"{', '.join(sorted(differs)[:5])}; the first, {first}: "
                      f"{first_difference(kept / folder / first, copy / folder / first)}")
                return 1
        ratio = best["both editions"] / best["student alone"]
        separate = (best["student alone"] + best["teacher alone"]) / best["student alone"]
        verdict = "PASS" if ratio <= TARGET else "FAIL"
        print(f"{verdict}: both editions in {best['both editions']:.1f} s, {ratio:.2f} times "
              f"the student edition alone ({best['student alone']:.1f} s; target <= {TARGET}); "
              f"two separate builds: {separate:.2f} times; every page the same bytes")
        return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
