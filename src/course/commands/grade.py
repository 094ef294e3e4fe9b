"""`course grade`: a folder of student folders into one CSV of grades."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course.commands.check import add_limit_arguments, limits
from course.commands.options import UsageError
from course.exercises import EXERCISES
from course.grading import grade
from course.limits import count_problem
from course.paths import display_path

MAX_JOBS = 64
"""`--jobs` at most: each check is a process of its own."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "grade", help="grade a folder of student folders into a CSV file",
        description="Run `course check` on every exercise of every student folder in "
                    "SUBMISSIONS (one folder per student, named by the student's id; the "
                    "folder's workspace/ if it has one) and write one CSV row per student and "
                    "exercise, plus a total row per student. Each file runs in its own "
                    "process, with the time and memory limits below.",
        epilog="Exit code: 0 when the CSV file is written, 2 when SUBMISSIONS is not a folder "
               "of student folders or --out already exists.")
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                        help="the folder that holds one folder per student")
    parser.add_argument("--out", type=Path, required=True, metavar="CSV",
                        help="the new CSV file of grades (never overwritten)")
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="checks run at the same time (default 2)")
    add_limit_arguments(parser)
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    problem = count_problem("--jobs", args.jobs, 1, MAX_JOBS, "each check is a process of its own")
    if problem:
        raise UsageError(problem)
    students = grade(args.submissions, args.out, args.jobs, limits(args))
    print(f"graded {students} students, {len(EXERCISES)} exercises each: "
          f"{display_path(args.out)}")
    return 0
