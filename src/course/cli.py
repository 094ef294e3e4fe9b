"""The `course` command: one subcommand per story, in the order of the course.

Each module in `COMMANDS` (under `course/commands/`) has a `register(subparsers)` function that
adds its subcommand(s) and sets `func`, the function that receives the parsed arguments and
returns an exit code. `main` runs it and turns every error a user can cause or fix (bad data,
an existing run folder, a refused comparison, a missing tokenizer, a refused value, a NaN
about to be saved, a file that cannot be read or written) into one line on stderr with exit
code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import NoReturn

from course import __version__
from course.commands import (
    bandit,
    check,
    data,
    evaluation,
    goodhart,
    grade,
    kl,
    learn,
    mdp,
    peers,
    rubrics,
    runs,
    score,
    selection,
    tokens,
)
from course.commands.options import UsageError
from course.data import DataError
from course.formatting import terminal_text
from course.jsonfiles import NonFiniteNumber
from course.runs import RunError
from course.tokens import TokenizerError

COMMANDS = (  # measure, select, learn, red-team, practise
    score,       # course score
    data,        # course data generate | check
    evaluation,  # course eval, course compare
    runs,        # course runs list | verify | regenerate
    selection,   # course select
    bandit,      # course bandit
    mdp,         # course mdp
    kl,          # course kl
    learn,       # course learn
    tokens,      # course tokens
    rubrics,     # course rubrics
    goodhart,    # course goodhart
    peers,       # course peers
    check,       # course check
    grade,       # course grade
)

EXPECTED_ERRORS = (DataError, RunError, TokenizerError, UsageError, NonFiniteNumber, OSError)
"""Errors that say something about the input or the machine, not about the course's code."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are shown by `terminal_text`: it quotes a bad
    value as a literal, but lists unrecognized arguments as they were given. Subcommands' parsers
    are of the same class."""

    def error(self, message: str) -> NoReturn:
        super().error(terminal_text(message))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="course",
        description="RL Foundations for LLMs: score, evaluate, select and learn, with saved runs.",
    )
    parser.add_argument("--version", action="version", version=f"course {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # A terminal that cannot print θ, π or − gets an escape (\u03b8), never a traceback.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader stopped reading (`course runs list | head -3`): nothing went wrong, and
        # nothing more can be written; stdout goes to /dev/null so its final flush is silent.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except EXPECTED_ERRORS as err:
        print(f"course {args.command}: error: {_one_line(err)}", file=sys.stderr)
        return 2


def _one_line(err: BaseException) -> str:
    """The error's message on one line, as `terminal_text` shows it (a path or a value from the
    data cannot act on the terminal); a filesystem error names its file."""
    if isinstance(err, OSError) and err.filename is not None:
        message = f"{err.filename}: {err.strerror or err}"
    else:
        message = str(err)
    return " ".join(terminal_text(message).split())
