"""How long does `course grade` take on a class of 60, sealed off, and what does the seal cost?

Run:  .venv/bin/python benchmarks/bench_grade.py [--jobs N] [--students N]

1. A temporary SUBMISSIONS folder gets one folder per synthetic student, named s001, s002...,
   each a full workspace (one file per exercise), in a fixed mix:
   - `reference`: the reference solutions of teacher/solutions/;
   - `stub`: the untouched stubs of workspace/;
   - `wrong`: the reference solutions with one realistic mistake in two of the files;
   - `hostile`: the reference solutions with pick_best.py replaced by a hostile file, in turn:
     a loop that never ends (it uses the whole CPU limit), `os._exit(0)` at import, a file
     that patches the checker and prints a fake passing report, one that allocates 1 GB, one
     that raises SystemExit in the call, a fork flood, and one that overwrites the next
     student's kl.py.
2. `course grade SUBMISSIONS --out grades.csv --jobs N` runs as a separate process, timed
   wall-clock from start to exit, with the default limits (5 CPU seconds, 512 MB per
   exercise), every file sealed off (`course.isolation`; the benchmark stops if this machine
   cannot seal).
3. The CSV is read back: every `reference` student must have every exercise passing, every
   `stub` none, every `wrong` student exactly the two broken ones not passing, and every
   `hostile` student pick_best not passing (and the rest passing): no hostile file changed
   another student's grade.
4. The seal's cost: the eight reference solutions checked 5 times each in this process, sealed
   and not sealed, one at a time; the difference per check, in wall and CPU seconds (this
   process's and its children's).

Target (PASS/FAIL lines at the end): 60 students graded in <= 120 s with --jobs 2 on the two
cores of the course machine, every grade as expected.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from machine import busy_cpu_seconds

from course.check import check
from course.exercises import EXERCISES
from course.isolation import isolation_problem

REPO = Path(__file__).resolve().parents[1]
COURSE = REPO / ".venv" / "bin" / "course"
SOLUTIONS, STUBS = REPO / "teacher" / "solutions", REPO / "workspace"
TARGET_S = 120.0
MIX = ("reference", "stub", "wrong", "reference", "stub", "wrong", "reference", "hostile",
       "reference", "wrong")
"""The kind of student s001, s002, ... in turn: 60 students are 24 reference, 12 stub, 18 wrong
and 6 hostile."""

WRONG = {  # file: (text of the reference solution, the mistake)
    "kl.py": ("mass = p > 0", "mass = p >= 0"),
    "trajectory_return.py": ("return returns[::-1]", "return returns"),
}
HOSTILE = (
    "import glob\nfor path in glob.glob('/**/kl.py', recursive=True):\n"
    "    open(path, 'w').write('')\n",
    "import os\nfor _ in range(64):\n    os.fork()\n",
    "def pick_best(samples):\n    while True:\n        pass\n",
    "import os\nos._exit(0)\n",
    "import course.check\ncourse.check._close = lambda got, want: True\n"
    "print('status: passing')\ndef pick_best(samples):\n    return samples[-1]\n",
    "def pick_best(samples):\n    return bytearray(2**30)\n",
    "def pick_best(samples):\n    raise SystemExit(0)\n",
)


def make_class(root: Path, students: int) -> dict[str, str]:
    """Write the student folders under `root`; return each student's kind."""
    kinds, hostile = {}, 0
    for number in range(1, students + 1):
        student, kind = f"s{number:03d}", MIX[(number - 1) % len(MIX)]
        folder = root / student
        shutil.copytree(STUBS if kind == "stub" else SOLUTIONS, folder,
                        ignore=shutil.ignore_patterns("*.md", "__pycache__"))
        if kind == "wrong":
            for name, (old, new) in WRONG.items():
                path = folder / name
                path.write_text(path.read_text(encoding="utf-8").replace(old, new),
                                encoding="utf-8")
        if kind == "hostile":
            (folder / "pick_best.py").write_text(HOSTILE[hostile % len(HOSTILE)],
                                                 encoding="utf-8")
            hostile += 1
        kinds[student] = kind
    return kinds


def not_passing(rows: list[dict[str, str]], student: str) -> set[str]:
    return {row["exercise"] for row in rows
            if row["student"] == student and row["exercise"] != "(total)"
            and row["status"] != "passing"}


def seal_cost(rounds: int = 5) -> dict[bool, tuple[float, float]]:
    """Seconds per check, (wall, busy CPU of the machine), sealed (True) and not: the reference
    solutions checked one at a time."""
    spent = {}
    for sealed in (False, True):
        cpu, wall = busy_cpu_seconds(), time.perf_counter()
        for _ in range(rounds):
            for name in EXERCISES:
                assert check(name, SOLUTIONS, sealed=sealed).status == "passing"
        spent[sealed] = (time.perf_counter() - wall, busy_cpu_seconds() - cpu)
    checks = rounds * len(EXERCISES)
    return {sealed: (wall / checks, cpu / checks) for sealed, (wall, cpu) in spent.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--students", type=int, default=60)
    args = parser.parse_args()
    problem = isolation_problem()
    if problem is not None:
        print(f"this machine cannot seal a check off: {problem}")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as temp:
        root = Path(temp)
        kinds = make_class(root / "submissions", args.students)
        mix = ", ".join(f"{n} {kind}" for kind, n in Counter(kinds.values()).items())
        print(f"{args.students} students ({mix}), {len(EXERCISES)} exercises each, "
              f"--jobs {args.jobs}")
        started = time.perf_counter()
        done = subprocess.run([str(COURSE), "grade", str(root / "submissions"), "--out",
                               str(root / "grades.csv"), "--jobs", str(args.jobs)],
                              capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        print(done.stdout.strip() or done.stderr.strip())
        with (root / "grades.csv").open(encoding="utf-8", newline="") as file:
            rows = list(csv.DictReader(file))
    expected = {"reference": set(), "stub": set(EXERCISES), "wrong": {"kl", "trajectory_return"},
                "hostile": {"pick_best"}}
    wrong_grades = []
    for student, kind in kinds.items():
        got = not_passing(rows, student)
        if got != expected[kind]:
            wrong_grades.append(f"{student} ({kind}): {sorted(got)} not passing, "
                                f"expected {sorted(expected[kind])}")
    statuses = Counter(row["status"] for row in rows if row["exercise"] != "(total)")
    print(f"statuses: {dict(sorted(statuses.items()))}")
    print(f"course grade: {seconds:.1f} s wall-clock, {seconds / args.students:.2f} s a student")
    cost = seal_cost()
    for sealed, (wall, cpu) in sorted(cost.items()):
        print(f"a check, {'sealed' if sealed else 'not sealed'}: {wall * 1000:.0f} ms wall-clock, "
              f"{cpu * 1000:.0f} ms of busy CPU (reference solutions, one at a time)")
    print(f"the seal's cost per check: {(cost[True][0] - cost[False][0]) * 1000:+.0f} ms "
          f"wall-clock, {(cost[True][1] - cost[False][1]) * 1000:+.0f} ms of CPU")
    for line in wrong_grades:
        print(f"  unexpected: {line}")
    fast = seconds <= TARGET_S * args.students / 60
    print(f"{'PASS' if fast else 'FAIL'}: {args.students} students graded in {seconds:.1f} s "
          f"(target <= {TARGET_S * args.students / 60:.0f} s)")
    print(f"{'PASS' if not wrong_grades else 'FAIL'}: every grade as expected "
          f"({len(kinds) - len(wrong_grades)} of {len(kinds)} students)")
    return 0 if fast and not wrong_grades and done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
