"""Grading a class: `course check --json` for a machine, `course grade` for a folder of students.

Both run exactly what `course check` runs (`course.check.check`: the student's file in a
sandbox, the checker in this process) and write its reports as plain records:

- `report_record`: one exercise's report as a JSON-ready dict (exercise, milestone, status,
  passed, total, message, and each case's name, pass, want and got); `check_record` wraps the
  records with the scorer's version and the course's git commit, so a grade says what judged it;
- `grade`: every exercise of every student folder in SUBMISSIONS, `jobs` checks at a time (each
  check is a child process, so threads are enough), written as one CSV row per student and
  exercise plus one total row per student. One student's broken or hostile file is an `error`
  row of theirs: it cannot stop, slow down beyond its time limit, or change anyone else's rows.
"""

from __future__ import annotations

import csv
import io
import subprocess
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from course.check import check
from course.data import DataError
from course.exercises import EXERCISES, Report
from course.formatting import one_line
from course.paths import REPO_ROOT
from course.progress import bar
from course.sandbox import DEFAULT_LIMITS, Limits
from course.scorer import SCORER_VERSION

MAX_REASON = 300
"""Characters of a CSV row's reason: enough for the exception, the line and the case."""


def course_commit() -> str | None:
    """The git commit of the course that grades (HEAD of REPO_ROOT), or None when this copy
    is not a git checkout (or git is not installed)."""
    try:
        done = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--verify", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None


def report_record(report: Report) -> dict[str, Any]:
    """One exercise's report as plain data: what `course check --json` prints for it."""
    return {"exercise": report.exercise.name, "milestone": report.exercise.milestone,
            "status": report.status, "passed": report.passed, "total": len(report.cases),
            "message": report.message,
            "cases": [{"name": case.name, "pass": case.passed, "want": case.expected,
                       "got": case.got} for case in report.cases]}


def check_record(reports: Iterable[Report]) -> dict[str, Any]:
    """`course check --json`: the reports, with what judged them."""
    return {"scorer_version": SCORER_VERSION, "course_commit": course_commit(),
            "exercises": [report_record(report) for report in reports]}


# -- grading a folder of students ------------------------------------------------------------------

CSV_FIELDS = ("student", "exercise", "milestone", "status", "passed", "total", "reason")
TOTAL = "(total)"
"""The `exercise` of a student's total row."""


def student_folders(submissions: Path) -> list[Path]:
    """The student folders of SUBMISSIONS, sorted by name (the student's id); a DataError when
    there is none. A folder holding `workspace/` (a clone of the students' repository) is
    graded there, any other folder as the workspace itself."""
    if not submissions.is_dir():
        raise DataError(submissions, None, None, "not a folder of student folders")
    folders = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise DataError(submissions, None, None, "holds no student folder (one per student, "
                                                 "named by the student's id)")
    return folders


def _workspace(folder: Path) -> Path:
    return folder / "workspace" if (folder / "workspace").is_dir() else folder


def reason(report: Report) -> str:
    """Why a report is not passing, in one line of at most MAX_REASON characters."""
    if report.status == "failing":
        text = "failed: " + "; ".join(case.name for case in report.cases if not case.passed)
    elif report.status == "not started":
        text = report.message.split("\n", 1)[0]
    else:
        text = "; ".join(line.strip() for line in report.message.split("\n") if line.strip())
    text = one_line(text)
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a student's text that starts like a formula
    (=, +, -, @) gets a leading apostrophe."""
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@") else value


def grade_rows(student: str, reports: list[Report]) -> list[dict[str, Any]]:
    """One student's CSV rows: one per exercise, then the total row."""
    rows = [{"student": student, "exercise": r.exercise.name, "milestone": r.exercise.milestone,
             "status": r.status, "passed": r.passed, "total": len(r.cases),
             "reason": reason(r)} for r in reports]
    done = sum(report.status == "passing" for report in reports)
    rows.append({"student": student, "exercise": TOTAL, "milestone": "",
                 "status": "all passing" if done == len(reports) else "not all passing",
                 "passed": done, "total": len(reports),
                 "reason": f"{done} of {len(reports)} exercises passing"})
    return rows


def grade(submissions: Path, out: Path, jobs: int = 2, limits: Limits = DEFAULT_LIMITS) -> int:
    """Grade every student folder of `submissions` into the new CSV file `out`; return the
    number of students. Refuses an existing `out` before any work (and again as it writes)."""
    if out.exists() or out.is_symlink():
        raise DataError(out, None, None, "already exists: grades are never overwritten; "
                                         "choose a new file")
    folders = student_folders(submissions)
    tasks = [(folder, name) for folder in folders for name in EXERCISES]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        checked = pool.map(lambda task: check(task[1], _workspace(task[0]), limits), tasks)
        reports = list(bar(checked, len(tasks), "grading"))
    text = io.StringIO()
    writer = csv.DictWriter(text, CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    per_student = len(EXERCISES)
    for index, folder in enumerate(folders):
        mine = reports[index * per_student:(index + 1) * per_student]
        writer.writerows({key: _cell(value) for key, value in row.items()}
                         for row in grade_rows(folder.name, mine))
    try:
        with out.open("x", encoding="utf-8", newline="") as file:
            file.write(text.getvalue())
    except FileExistsError:
        raise DataError(out, None, None, "appeared while grading: not overwritten") from None
    return len(folders)
