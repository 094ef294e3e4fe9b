"""A tiny progress bar for long work, drawn on stderr only when a person is watching.

`bar(items, total, label)` yields the same items it is given. It draws when stderr is a
terminal and the `CI` environment variable is unset; in a pipe, a log file, a test or a CI job
it returns `items` untouched, so the output of every command stays byte-identical whether or
not anyone watched it run. No dependency, no thread, no timer: the bar is redrawn when the
whole percentage changes, so at most 101 redraws happen whatever `total` is.

`Tally` counts how far a canonical run's long work has got (its trainings), for `course runs
verify` and `regenerate`, which show it with an estimate of the time left.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")

WIDTH = 30
"""Characters between the brackets."""


muted = False
"""Set by a command that shows progress of its own (`course runs verify`): the bars of the work
it calls would be drawn over its line, so none is drawn."""


def enabled(stream: TextIO) -> bool:
    """Draw only for a human: `stream` is a terminal, we are not inside CI and no command shows
    progress of its own (`muted`)."""
    return stream.isatty() and "CI" not in os.environ and not muted


def bar(items: Iterable[T], total: int, label: str, stream: TextIO | None = None) -> Iterable[T]:
    """Iterate over `items` (there are `total` of them), drawing a bar on `stream` (stderr).

    Returns `items` itself when drawing is off, so the silent path costs nothing.
    """
    stream = stream if stream is not None else sys.stderr
    if total <= 0 or not enabled(stream):
        return items
    return _drawing(items, total, label, stream)


def _drawing(items: Iterable[T], total: int, label: str, stream: TextIO) -> Iterator[T]:
    shown = -1
    for done, item in enumerate(items, start=1):
        yield item
        percent = done * 100 // total
        if percent != shown:
            shown = percent
            filled = done * WIDTH // total
            stream.write(f"\r{label} [{'#' * filled}{'.' * (WIDTH - filled)}] "
                         f"{percent:3d}% ({done}/{total})")
            stream.flush()
    stream.write("\n")
    stream.flush()


# -- progress within a run: `course runs verify` and `regenerate` ------------------------------

listener: Callable[[int, int], None] | None = None
"""Set by `course runs verify` and `regenerate` in the process that builds a run: told
`(done, total)` each time the run's long work (its trainings) advances, by `Tally`."""


class Tally:
    """How far a run's long work has got, in units of `total` (its trainings over seeds and
    arms), told to the `listener` when one is set. `counted(items)` yields the items and
    counts one unit after each, so a loop reads as before; loops nested over arms and seeds
    share one tally."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0

    def counted(self, items: Iterable[T]) -> Iterator[T]:
        for item in items:
            yield item
            self.done += 1
            if listener is not None:
                listener(self.done, self.total)
