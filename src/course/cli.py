"""The `course` command: one subcommand per story, each defined next to the code it runs.

Every module listed in `COMMAND_MODULES` has a `register(subparsers)` function at its end that
adds its subcommand(s) and sets `func`, the function that receives the parsed arguments and
returns an exit code. Errors a user can fix (bad data, an existing run folder, a refused
comparison) are printed as one clear line with exit code 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from course import __version__
from course.data import DataError
from course.runs import RunError

COMMAND_MODULES = (  # in the order of the course: measure, select, learn, red-team, practise
    "course.scorer",
    "course.datagen",
    "course.eval",
    "course.canonical",
    "course.selection",
    "course.bandit",
    "course.mdp",
    "course.kl",
    "course.tokens",
    "course.rubrics",
    "course.goodhart",
    "course.peers",
    "course.check",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course",
        description="RL Foundations for LLMs: score, evaluate, select and learn, with saved runs.",
    )
    parser.add_argument("--version", action="version", version=f"course {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (DataError, RunError) as err:
        print(f"course {args.command}: error: {err}", file=sys.stderr)
        return 2
