"""`course check`: the student's exercises in `workspace/`, run against the course's cases."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from course.check import WORKSPACE, check, check_all
from course.commands.options import UsageError
from course.exercises import EXERCISES, format_progress, format_report
from course.grading import check_record
from course.sandbox import DEFAULT_LIMITS, Limits

MAX_TIMEOUT, MIN_MEMORY_MB = 600.0, 64


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(f"{text!r:.40}: expected seconds, more than 0 and at "
                                         f"most {MAX_TIMEOUT:g}")
    return value


def _megabytes(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < MIN_MEMORY_MB:
        raise argparse.ArgumentTypeError(f"{text!r:.40}: expected a whole number of MB, at "
                                         f"least {MIN_MEMORY_MB} (numpy needs about 25)")
    return int(text)


def add_limit_arguments(parser: Any) -> None:
    """`--timeout SECONDS` and `--memory MB`: the sandbox's limits for one exercise."""
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_LIMITS.timeout,
                        metavar="SECONDS", help="time limit for one exercise: loading the file "
                        f"and every call (default {DEFAULT_LIMITS.timeout:g})")
    parser.add_argument("--memory", type=_megabytes, default=DEFAULT_LIMITS.memory_mb,
                        metavar="MB", help="memory limit of the process that runs the file "
                        f"(default {DEFAULT_LIMITS.memory_mb})")


def limits(args: Any) -> Limits:
    return Limits(timeout=args.timeout, memory_mb=args.memory)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check", help="check your exercises in workspace/ and show your progress",
        description="Run your code in workspace/ against the course's reference cases and "
                    "print a report. Without NAME (or with --all): the progress table. Your "
                    "file runs in a separate process, with a time and a memory limit.",
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
                             "and cases, the scorer's version and the course's git commit")
    add_limit_arguments(parser)
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    if args.name and args.all:
        raise UsageError("give one exercise NAME or --all, not both")
    if args.name:
        reports = [check(args.name, args.workspace, limits(args))]
    else:
        reports = check_all(args.workspace, limits(args))
    if args.json:
        print(json.dumps(check_record(reports), indent=2, ensure_ascii=False))
    elif args.name:
        print(format_report(reports[0]))
    else:
        print(format_progress(reports))
    return 0 if all(report.status == "passing" for report in reports) else 1
