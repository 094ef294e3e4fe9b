"""`course grade`: a folder of student folders into a gradebook, each submission sealed off."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.commands.check import add_limit_arguments, limits
from course.commands.options import UsageError
from course.exercises import EXERCISES
from course.formatting import one_line
from course.grading import (
    LONG_FIELDS,
    Student,
    course_commit,
    csv_text,
    grade_class,
    long_rows,
    points,
    read_roster,
    refuse_existing_file,
    report_record,
    student_folders,
    wide_fields,
    wide_rows,
    write_new,
)
from course.isolation import Limits, isolation_problem
from course.limits import count_problem
from course.paths import display_path
from course.scorer import SCORER_VERSION

MAX_JOBS = 64
"""`--jobs` at most: each check is a process of its own."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "grade", help="grade a folder of student folders into a gradebook",
        description="Run `course check` on every exercise of every student folder in "
                    "SUBMISSIONS (one folder per student; the folder's workspace/ if it has "
                    "one). Each file runs sealed off from this machine, the other students "
                    "and the gradebook (Linux with bubblewrap), with the limits below. "
                    "Writes one CSV row per student and exercise (--out), one row per "
                    "student with a column of points per exercise (--wide), or JSON records "
                    "(--json). A gradebook file is never overwritten.",
        epilog="Exit code: 0 when the grades are written, 2 when SUBMISSIONS is not a folder "
               "of student folders, a gradebook file already exists, the roster is not "
               "valid, or the submissions cannot be sealed off (and --trust-submissions was "
               "not given).")
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS",
                        help="the folder that holds one folder per student")
    parser.add_argument("--out", type=Path, metavar="CSV",
                        help="the new CSV file of grades: a row per student and exercise")
    parser.add_argument("--wide", type=Path, metavar="CSV",
                        help="the new CSV file for a learning-management system: a row per "
                             "student, a column of points per exercise")
    parser.add_argument("--json", action="store_true",
                        help="print the records as JSON (the summary goes to stderr)")
    parser.add_argument("--roster", type=Path, metavar="CSV",
                        help="the class: a CSV file with the columns folder,student_id,name")
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="checks run at the same time (default 2)")
    parser.add_argument("--trust-submissions", action="store_true",
                        help="where the submissions cannot be sealed off, run them as you "
                             "all the same (the gradebook says sealed: no)")
    add_limit_arguments(parser)
    parser.set_defaults(func=lambda values: _main(
        values.submissions, Gradebooks(values.out, values.wide, values.json), values.roster,
        values.jobs, limits(values), values.trust_submissions))


@dataclass(frozen=True)
class Gradebooks:
    """Where the grades go: at least one of the three."""

    long: Path | None
    """`--out`: a new CSV file, a row per student and exercise."""
    wide: Path | None
    """`--wide`: a new CSV file, a row per student, a column of points per exercise."""
    json: bool
    """`--json`: the records as JSON on stdout (the summary then goes to stderr)."""


def _sealed(trust: bool) -> bool:
    """Whether the submissions run sealed off; refuses to go on unsealed unless trusted."""
    problem = isolation_problem()
    if problem is None:
        return True
    if not trust:
        raise UsageError(f"cannot seal the submissions off: {problem}; grade on a machine "
                         "that can, or pass --trust-submissions to run them as you")
    return False


def _main(submissions: Path, books: Gradebooks, roster_file: Path | None, jobs: int,
          limit: Limits, trust: bool) -> int:
    problem = count_problem("--jobs", jobs, 1, MAX_JOBS, "each check is a process of its own")
    if problem:
        raise UsageError(problem)
    if books.long is None and books.wide is None and not books.json:
        raise UsageError("say where the grades go: --out CSV, --wide CSV or --json")
    for path in (books.long, books.wide):
        if path is not None:
            refuse_existing_file(path)
    roster = read_roster(roster_file) if roster_file is not None else None
    folders, passed_over = student_folders(submissions)
    sealed = _sealed(trust)
    graded = grade_class(folders, jobs, limit, sealed)
    students = roster if roster is not None else [Student(f.name, f.name, "") for f in folders]
    ids = {student.folder: student.student_id for student in students}
    names = {student.folder: student.name for student in students}
    summary = [f"graded {len(graded)} students, {len(EXERCISES)} exercises each, "
               + ("sealed off" if sealed else "NOT sealed off (--trust-submissions)")]
    for flag, path, text in (
            ("--out", books.long, lambda: csv_text(LONG_FIELDS, long_rows(graded, ids, sealed))),
            ("--wide", books.wide, lambda: csv_text(wide_fields(), wide_rows(graded, students)))):
        if path is not None:
            written = write_new(path, text())
            summary.append(f"{flag}: {display_path(written)}" + (
                "" if written == path else f" ({display_path(path)} appeared while grading "
                                           "and was left as it is)"))
    missing = [s for s in students if s.folder not in graded]
    unexpected = [folder for folder in graded if folder not in ids]
    for what, shown in (("on the roster with no folder, 0 points", [s.folder for s in missing]),
                        ("not on the roster, graded, not in --wide", unexpected),
                        ("passed over, links and files are not graded", passed_over)):
        if shown:
            summary.append(f"{what} ({len(shown)}): {', '.join(map(one_line, shown))}")
    if books.json:
        print(json.dumps({
            "scorer_version": SCORER_VERSION, "course_commit": course_commit(),
            "sealed": sealed,
            "students": [{"folder": folder, "student_id": ids.get(folder, ""),
                          "name": names.get(folder, ""),
                          "points": sum(points(report) for report in reports),
                          "exercises": [report_record(report) for report in reports]}
                         for folder, reports in graded.items()],
            "missing": [s.folder for s in missing], "unexpected": unexpected,
            "passed_over": passed_over}, indent=2, ensure_ascii=False))
    print("\n".join(summary), file=sys.stderr if books.json else sys.stdout)
    return 0
