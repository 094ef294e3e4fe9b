"""Grading a class: `course check --json` for a machine, `course grade` for a folder of students.

Both run exactly what `course check` runs (`course.check.check`: the student's file in a
sandbox, the checker in this process) and write its reports as plain records:

- `report_record`: one exercise's report as a JSON-ready dict (exercise, milestone, status,
  passed, total, message, and each case's name, pass, want and got); `check_record` wraps the
  records with the scorer's version, the course's git commit and whether the files ran sealed
  off (`course.isolation`), so a grade says what judged it and how;
- `grade_class`: every exercise of every student folder, `jobs` checks at a time (each check
  is a process of its own, so threads are enough). One student's broken or hostile file is an
  `error` of theirs: sealed off, it cannot reach another student's files, the grader, the
  gradebook or the key, and cannot stop or slow the grading beyond its own limits;
- the gradebook: `long_rows` (one CSV row per student and exercise, plus a total row),
  `wide_rows` (one row per student of the roster, one column of points per exercise, as a
  learning-management system imports it), both written by `write_new`, which never replaces a
  file; `read_roster` maps the submission folders to student ids and names.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.check import check
from course.data import DataError
from course.exercises import EXERCISES, Report
from course.formatting import one_line
from course.isolation import DEFAULT_LIMITS, Limits
from course.paths import REPO_ROOT
from course.progress import bar
from course.scorer import SCORER_VERSION

MAX_REASON = 300
"""Characters of a CSV row's reason: enough for the exception, the line and the case."""
POINTS = 10
"""Points of an exercise that is passing (0 otherwise): what each step of the GitHub Classroom
workflow (`scripts/classroom/classroom.yml`, `max-score`) gives."""


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


def check_record(reports: Iterable[Report], sealed: bool) -> dict[str, Any]:
    """`course check --json`: the reports, with what judged them and whether the files ran
    sealed off."""
    return {"scorer_version": SCORER_VERSION, "course_commit": course_commit(),
            "sealed": sealed, "exercises": [report_record(report) for report in reports]}


# -- 1. the class: its folders, its roster, its reports -----------------------------------------


@dataclass(frozen=True)
class Student:
    """One student of the roster: the folder of their submission, their id and their name."""

    folder: str
    student_id: str
    name: str


ROSTER_FIELDS = ("folder", "student_id", "name")
"""The roster's columns, in its header line (`name` may be empty)."""


def read_roster(path: Path) -> list[Student]:
    """The students of a roster CSV file (header `folder,student_id,name`). Raises DataError
    naming the file, the line and the field of the first problem: a missing column, an empty
    folder or id, a folder or an id given twice."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(path, None, None, f"cannot be read as UTF-8 text: {err}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [field for field in ROSTER_FIELDS if field not in (reader.fieldnames or [])]
    if missing:
        raise DataError(path, 1, missing[0], f"the header needs the columns "
                                             f"{','.join(ROSTER_FIELDS)}")
    students: list[Student] = []
    seen: dict[tuple[str, str], int] = {}
    for row in reader:
        line = reader.line_num
        student = Student(*((row.get(field) or "").strip() for field in ROSTER_FIELDS))
        for field in ("folder", "student_id"):
            value = getattr(student, field)
            if not value:
                raise DataError(path, line, field, "empty")
            if (field, value) in seen:
                raise DataError(path, line, field, f"{one_line(value)!s} is already on line "
                                                   f"{seen[field, value]}")
            seen[field, value] = line
        students.append(student)
    return students


def student_folders(submissions: Path) -> tuple[list[Path], list[str]]:
    """The student folders of SUBMISSIONS, sorted by name (the student's folder name), and the
    names of the entries passed over: a link (a student could point it at the key) and any
    file. Raises DataError when there is no student folder at all."""
    if not submissions.is_dir():
        raise DataError(submissions, None, None, "not a folder of student folders")
    folders, passed_over = [], []
    for entry in sorted(submissions.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():
            folders.append(entry)
        else:
            passed_over.append(entry.name)
    if not folders:
        raise DataError(submissions, None, None, "holds no student folder (one per student, "
                                                 "named by the student's id)")
    return folders, passed_over


def workspace_of(folder: Path) -> Path:
    """Where a student folder's exercise files are: its `workspace/` (a clone of the students'
    repository), unless that is a link, or else the folder itself."""
    inner = folder / "workspace"
    return inner if inner.is_dir() and not inner.is_symlink() else folder


def grade_class(folders: list[Path], jobs: int = 2, limits: Limits = DEFAULT_LIMITS,
                sealed: bool = True) -> dict[str, list[Report]]:
    """Every exercise's report of every student folder, by folder name, in course order."""
    tasks = [(folder, name) for folder in folders for name in EXERCISES]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        checked = pool.map(lambda task: check(task[1], workspace_of(task[0]), limits, sealed),
                           tasks)
        reports = list(bar(checked, len(tasks), "grading"))
    per_student = len(EXERCISES)
    return {folder.name: reports[index * per_student:(index + 1) * per_student]
            for index, folder in enumerate(folders)}


# -- 2. the gradebook ------------------------------------------------------------------------------

LONG_FIELDS = ("student", "student_id", "exercise", "milestone", "status", "passed", "total",
               "points", "reason", "sealed")
TOTAL = "(total)"
"""The `exercise` of a student's total row."""


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


def points(report: Report) -> int:
    """An exercise's points: POINTS when it is passing, else 0."""
    return POINTS if report.status == "passing" else 0


def long_rows(graded: Mapping[str, list[Report]], ids: Mapping[str, str],
              sealed: bool) -> list[dict[str, Any]]:
    """One row per student and exercise, then a total row per student; `ids` maps a folder to
    the student's id (from the roster; empty without one)."""
    rows = []
    for folder, reports in graded.items():
        common = {"student": folder, "student_id": ids.get(folder, ""),
                  "sealed": "yes" if sealed else "no"}
        rows += [{**common, "exercise": r.exercise.name, "milestone": r.exercise.milestone,
                  "status": r.status, "passed": r.passed, "total": len(r.cases),
                  "points": points(r), "reason": reason(r)} for r in reports]
        done = sum(report.status == "passing" for report in reports)
        rows.append({**common, "exercise": TOTAL, "milestone": "",
                     "status": "all passing" if done == len(reports) else "not all passing",
                     "passed": done, "total": len(reports),
                     "points": sum(points(report) for report in reports),
                     "reason": f"{done} of {len(reports)} exercises passing"})
    return rows


def wide_rows(graded: Mapping[str, list[Report]], roster: list[Student]) -> list[dict[str, Any]]:
    """One row per student of the roster, in its order: id, name, folder, the points of each
    exercise, the total and the most there is. A student without a folder gets 0 points and
    `submitted` no."""
    rows = []
    for student in roster:
        reports = graded.get(student.folder)
        marks = {name: 0 for name in EXERCISES}
        if reports is not None:
            marks.update({report.exercise.name: points(report) for report in reports})
        rows.append({"student_id": student.student_id, "name": student.name,
                     "folder": student.folder, "submitted": "no" if reports is None else "yes",
                     **marks, "points": sum(marks.values()),
                     "points_available": POINTS * len(EXERCISES)})
    return rows


def wide_fields() -> tuple[str, ...]:
    return ("student_id", "name", "folder", "submitted", *EXERCISES, "points",
            "points_available")


FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""


def cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as the text it is: a text is made one line of
    visible characters (`formatting.one_line`), and one that starts like a formula gets a
    leading apostrophe."""
    if not isinstance(value, str):
        return value
    text = one_line(value)
    return "'" + text if text.startswith(FORMULA_LEADS) else text


def csv_text(fields: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """The rows as CSV text, every cell guarded by `cell`."""
    text = io.StringIO()
    writer = csv.DictWriter(text, tuple(fields), lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: cell(value) for key, value in row.items()} for row in rows)
    return text.getvalue()


def refuse_existing_file(path: Path) -> None:
    """Refuse, before any grading, a gradebook file that already exists."""
    if path.exists() or path.is_symlink():
        raise DataError(path, None, None, "already exists: grades are never overwritten; "
                                          "choose a new file")


@contextmanager
def _temporary_beside(path: Path) -> Iterator[Path]:
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part",
                                        dir=path.parent)
    os.close(descriptor)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def write_new(path: Path, text: str) -> Path:
    """Write `text` to the new file `path`, whole or not at all, and return where it went.

    The text is written and flushed to disk under a temporary name beside `path`, then linked
    to `path` (a hard link is never made over an existing file). If `path` appeared meanwhile,
    the text goes beside it, to `NAME-2.csv`, `NAME-3.csv`...: the class's grades are never
    lost, and the file that appeared is left as it is. The caller says where they went."""
    with _temporary_beside(path) as part:
        with part.open("w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        for attempt in range(1, 1000):
            target = path if attempt == 1 else path.with_name(
                f"{path.stem}-{attempt}{path.suffix}")
            try:
                os.link(part, target)
            except FileExistsError:
                continue
            return target
    raise DataError(path, None, None, "999 files of this name exist beside it: choose another")
