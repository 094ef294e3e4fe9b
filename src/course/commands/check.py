"""`course check`: the student's exercises in `workspace/`, run against the course's cases."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from course.check import WORKSPACE, check, check_all
from course.commands.options import UsageError
from course.exercises import EXERCISES, format_progress, format_report
from course.grading import check_record
from course.isolation import DEFAULT_LIMITS, Limits, isolation_problem

MAX_CPU_SECONDS, MIN_MEMORY_MB = 600, 64


def _cpu_seconds(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) <= MAX_CPU_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r:.40}: expected whole CPU seconds, from 1 "
                                         f"to {MAX_CPU_SECONDS}")
    return int(text)


def _megabytes(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < MIN_MEMORY_MB:
        raise argparse.ArgumentTypeError(f"{text!r:.40}: expected a whole number of MB, at "
                                         f"least {MIN_MEMORY_MB} (numpy needs about 25)")
    return int(text)


def add_limit_arguments(parser: Any) -> None:
    """`--cpu SECONDS` and `--memory MB`: the sandbox's limits for one exercise."""
    parser.add_argument("--cpu", type=_cpu_seconds, default=DEFAULT_LIMITS.cpu_seconds,
                        metavar="SECONDS", help="CPU time for one exercise: loading the file "
                        f"and every call (default {DEFAULT_LIMITS.cpu_seconds})")
    parser.add_argument("--memory", type=_megabytes, default=DEFAULT_LIMITS.memory_mb,
                        metavar="MB", help="memory for one exercise: the file may start no "
                        f"other process (default {DEFAULT_LIMITS.memory_mb})")


def limits(values: argparse.Namespace) -> Limits:
    """The limits `--cpu` and `--memory` set (`add_limit_arguments`)."""
    return Limits(cpu_seconds=values.cpu, memory_mb=values.memory)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check", help="check your exercises in workspace/ and show your progress",
        description="Run your code in workspace/ against the course's reference cases and "
                    "print a report. Without NAME (or with --all): the progress table. Your "
                    "file runs in processes of its own, sealed off from the machine where "
                    "it can be (Linux with bubblewrap), with a CPU-time and a memory limit.",
        epilog="Exit code: 0 when every exercise checked is passing, 1 otherwise (not "
               "started, failing or error), 2 when the workspace folder does not exist.")
    parser.add_argument("name", nargs="?", choices=list(EXERCISES), metavar="NAME",
                        help=f"one exercise: {', '.join(EXERCISES)}")
    parser.add_argument("--all", action="store_true", help="the progress table (the default)")
    parser.add_argument("--workspace", type=Path, default=WORKSPACE, metavar="DIR",
                        help="the folder with the exercise files (default: workspace/; "
                             "teachers: a student's folder, or teacher/solutions)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: each exercise's status, counts, message "
                             "and cases, the scorer's version, the course's git commit and "
                             "whether the file ran sealed off")
    add_limit_arguments(parser)
    parser.set_defaults(func=_parsed)


def _parsed(values: argparse.Namespace) -> int:
    if values.name and values.all:
        raise UsageError("give one exercise NAME or --all, not both")
    return _main(values.name, values.workspace, limits(values), values.json)


def _main(name: str | None, workspace: Path, limit: Limits, as_json: bool) -> int:
    problem = isolation_problem()
    if problem is not None:
        print(f"course check: your file runs without the seal here ({problem}); it runs as "
              "you, so check only files you trust (a teacher grades with `course grade`)",
              file=sys.stderr)
    sealed = problem is None
    if name:
        reports = [check(name, workspace, limit, sealed)]
    else:
        reports = check_all(workspace, limit, sealed)
    if as_json:
        print(json.dumps(check_record(reports, sealed), indent=2, ensure_ascii=False))
    elif name:
        print(format_report(reports[0]))
    else:
        print(format_progress(reports))
    return 0 if all(report.status == "passing" for report in reports) else 1
