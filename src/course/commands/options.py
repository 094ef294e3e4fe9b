"""Options shared by several commands: where a run is saved and why, and checked arguments."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from course.paths import DATA_DIR
from course.runs import RunError, refuse_existing


def add_output_arguments(parser: Any, required: bool = False) -> None:
    """The two flags of every command that saves a run: `--out DIR` and `--note TEXT`.

    With `required=False` the command only prints unless `--out` is given."""
    parser.add_argument("--out", type=Path, required=required,
                        help="save the run in this new folder, e.g. runs/run_009 "
                             "(never overwritten)")
    parser.add_argument("--note", required=required,
                        help="the one change versus the previous run, in a sentence "
                             "(required with --out)")


def check_output_arguments(args: Any) -> None:
    """Refuse `--out` before any work is done: an existing folder, or a missing `--note`."""
    if args.out is None:
        return
    refuse_existing(Path(args.out))
    if not (args.note or "").strip():
        raise RunError("--out needs --note: the one change versus the previous run")


def add_case_arguments(parser: Any, scorers: str) -> None:
    """The flags `course rubrics` and `course peers` share: the two golden files, the run
    output, and `--try TEXT [--expected N]` to score one completion of your own instead."""
    parser.add_argument("--exploits", type=Path, default=DATA_DIR / "golden" / "exploits.jsonl",
                        help="golden exploit suite JSONL")
    parser.add_argument("--correct", type=Path, default=DATA_DIR / "golden" / "correct.jsonl",
                        help="golden-correct set JSONL")
    add_output_arguments(parser)
    parser.add_argument("--try", dest="attempt", metavar="TEXT",
                        help=f"score TEXT with every {scorers} (use $'...' for \\n)")
    parser.add_argument("--expected", type=int, default=323,
                        help="the expected answer for --try (default 323)")


class UsageError(Exception):
    """A command-line value the lesson refuses (a negative step count, an infinite learning
    rate, ...): the message says which value and why; the command exits with code 2."""


C = TypeVar("C")


def make_config(factory: Callable[..., C], **values: Any) -> C:
    """Build a lesson's config from command-line values; a value it refuses (`ValueError` from
    the config's checks) becomes a `UsageError` with the same message."""
    try:
        return factory(**values)
    except ValueError as err:
        raise UsageError(str(err)) from None
