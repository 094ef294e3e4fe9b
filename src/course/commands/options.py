"""Options shared by several commands: where a run is saved and why, and checked arguments."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from course import data
from course.formatting import one_line, short_literal
from course.paths import display_path
from course.runs import RunError, refuse_existing
from course.scorer import MAX_DIGITS, read_integer


def add_output_arguments(parser: Any, required: bool = False) -> None:
    """The two flags of every command that saves a run: `--out DIR` and `--note TEXT`.

    With `required=False` the command only prints unless `--out` is given."""
    parser.add_argument("--out", type=Path, required=required,
                        help="save the run in this new folder, e.g. runs/my_run "
                             "(never overwritten)")
    parser.add_argument("--note", required=required,
                        help="the one change versus the previous run, in a sentence "
                             "(required with --out)")


@dataclass(frozen=True)
class Output:
    """Where a command saves its run (`--out`) and the one change it records (`--note`)."""

    folder: Path | None
    """The new run folder; None: the command only prints."""
    note: str
    """The note, when `folder` is given ("" otherwise)."""


def output_of(values: argparse.Namespace) -> Output:
    """`--out` and `--note`, refused before any work when they cannot be used
    (`check_output_arguments`)."""
    check_output_arguments(values)
    return Output(values.out, values.note or "")


def check_output_arguments(args: argparse.Namespace) -> None:
    """Refuse `--out` before any work is done: an existing folder, a folder that could not be
    created (`refuse_unwritable`), a missing `--note`, or a note or folder name that is not
    text (bytes that are not UTF-8 reach Python as lone surrogates and could not be written to
    the manifest or printed). Every command that saves a run calls this before it computes."""
    if args.out is None:
        return
    for flag, value in (("--out", str(args.out)), ("--note", args.note or "")):
        if not _is_text(value):
            raise UsageError(f"{flag}: not valid UTF-8 text ({value.encode('utf-8', 'replace')!r})")
    refuse_existing(Path(args.out))
    refuse_unwritable(Path(args.out))
    if not (args.note or "").strip():
        raise RunError("--out needs --note: the one change versus the previous run")


def refuse_unwritable(path: Path) -> None:
    """Raise `RunError` if the new folder `path` could not be created, so that a command
    refuses before minutes of training rather than after them: its nearest existing ancestor
    must be a folder (not a file, nor a symbolic-link loop) in which a folder can be made (an
    empty probe folder is made and removed at once: permissions, a read-only or special file
    system), and every name still to be created must fit the file system's name length.
    (`write_run` still reports any failure the checks cannot foresee, such as a full disk.)"""
    to_create = [path.name]
    ancestor = path.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        to_create.append(ancestor.name)
        ancestor = ancestor.parent
    problem = None
    if not ancestor.is_dir():
        problem = f"{display_path(ancestor)} is not a folder"
    elif (refused := _cannot_make_folder_in(ancestor)) is not None:
        problem = f"cannot make a folder in {display_path(ancestor)} ({refused})"
    else:
        longest = max(to_create, key=lambda name: len(os.fsencode(name)))
        if len(os.fsencode(longest)) > _name_max(ancestor):
            problem = (f"the name {longest[:20]}... is {len(os.fsencode(longest))} bytes long; "
                       f"the file system allows {_name_max(ancestor)}")
    if problem:
        raise RunError(f"cannot write the run folder {display_path(path)}: {problem}")


def _cannot_make_folder_in(folder: Path) -> str | None:
    """None if an empty folder can be made (and is removed) in `folder`, else why not."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".course-probe-", dir=folder))
    except OSError as err:
        return err.strerror or str(err)
    return None


def _name_max(folder: Path) -> int:
    """The longest file name, in bytes, the file system of `folder` accepts (255 if unsaid)."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def add_case_arguments(parser: Any, scorers: str) -> None:
    """The flags `course rubrics` and `course peers` share beside their configs' (the two
    golden files): the run output, and `--try TEXT [--expected N]` to score one completion of
    your own instead."""
    add_output_arguments(parser)
    parser.add_argument("--try", dest="attempt", metavar="TEXT",
                        help=f"score TEXT with every {scorers} (use $'...' for \\n)")
    parser.add_argument("--expected", type=spec_integer, default=323, metavar="N",
                        help="the expected answer for --try (default 323)")


def add_provenance_argument(parser: Any, what: str) -> None:
    """`--provenance FILE`: who made the completions, for files `data/provenance.json` does not
    list (see `course.data.origin`)."""
    parser.add_argument("--provenance", type=Path, metavar="FILE",
                        help=f"JSON file {{made_by, prompt_version, sampling}} describing the "
                             f"{what}, when data/provenance.json does not list them")


def warn_unknown_origin(command: str, path: Path, files: Mapping[str, bytes]) -> None:
    """Say on stderr, once the run is saved, when nobody described the completions: the run
    is made, but its manifest (read from the run's own `files`) records their origin as
    unknown."""
    origin = json.loads(files["manifest.json"]).get("origin") or {}
    if origin.get("made_by") == data.UNKNOWN_ORIGIN:
        print(f"course {command}: warning: {one_line(display_path(path))} is not in "
              "data/provenance.json and no --provenance FILE was given; the run records its "
              "prompt version and sampling as unknown, and `course compare` will refuse it",
              file=sys.stderr)


def spec_integer(text: str) -> int:
    """argparse type for an expected answer: the scorer's own integer rule, not `int()`.

    `int()` would take `٣` (an Arabic-Indic three), `+3`, `007`, `3_0` and ` 3 `, all of which
    the spec refuses in a completion; an expected answer the spec could never reward is refused
    here, on one line with exit code 2, before anything is scored."""
    value = read_integer(text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"{short_literal(text)} is not an integer as the spec writes one: ASCII digits, an "
            f"optional leading '-', no '+', no leading zeros, at most {MAX_DIGITS} digits")
    return value


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
