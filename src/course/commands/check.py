"""`course check`: the student's exercises in `workspace/`, run against the course's cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course.check import WORKSPACE, check, check_all
from course.commands.options import UsageError
from course.exercises import EXERCISES, format_progress, format_report


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check", help="check your exercises in workspace/ and show your progress",
        description="Run your code in workspace/ against the course's reference cases and "
                    "print a report. Without NAME (or with --all): the progress table.",
        epilog="Exit code: 0 when every exercise checked is passing, 1 otherwise (not "
               "started, failing or error), 2 when the workspace folder does not exist.")
    parser.add_argument("name", nargs="?", choices=list(EXERCISES), metavar="NAME",
                        help=f"one exercise: {', '.join(EXERCISES)}")
    parser.add_argument("--all", action="store_true", help="the progress table (the default)")
    parser.add_argument("--workspace", type=Path, default=WORKSPACE, metavar="DIR",
                        help="the folder with the exercise files (default: workspace/; "
                             "teachers: a student's folder, or teacher/solutions)")
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    if args.name and args.all:
        raise UsageError("give one exercise NAME or --all, not both")
    if args.name:
        report = check(args.name, args.workspace)
        print(format_report(report))
        return 0 if report.status == "passing" else 1
    reports = check_all(args.workspace)
    print(format_progress(reports))
    return 0 if all(report.status == "passing" for report in reports) else 1
