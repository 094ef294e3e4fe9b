"""Progress of long work, shown on stderr only when a person is watching: a bar, a status line.

`bar(items, total, label)` yields the same items it is given. It draws when stderr is a
terminal and the `CI` environment variable is unset; in a pipe, a log file, a test or a CI job
it returns `items` untouched, so the output of every command stays byte-identical whether or
not anyone watched it run. No dependency, no thread, no timer: the bar is redrawn when the
whole percentage changes, so at most 101 redraws happen whatever `total` is.

`Tally` counts how far a canonical run's long work has got (its trainings), and `RunsStatus`
shows, for `course runs verify` and `regenerate`, which runs are being rebuilt, how many are
done, and how far each one's long work has got, with an estimate of the time left.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
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


Event = str | tuple[int, int]
"""What happens to a run being rebuilt: "started", "done", or `(done, total)` of its long work
(`course.progress.Tally`)."""


class RunsStatus:
    """What `verify` (or `regenerate`) is rebuilding, on stderr: a bar, `k/N` runs done, and
    each run being rebuilt with its kind, its seconds, how far its long work has got and an
    estimate of the time it has left. On a terminal (`course.progress.enabled`), one line
    redrawn in place every second: `verify: [==>             ] 3/20 run_012 (learn_kl_sweep)
    41 s, 12/40, about 95 s left`. Elsewhere (a pipe, a log file, CI), a line when a run
    starts (`verify: [==>             ] 3/20 run_004 (mdp) started at 41 s`) and then, while
    runs are being rebuilt, the same line as on a terminal every HEARTBEAT seconds, so that a
    log never stays silent for a minute. Ends with `verify: [================] 20/20 done in
    95 s`. Each method is safe to call from any thread."""

    WIDTH = 16
    """Characters between the brackets."""
    HEARTBEAT = 30.0
    """Seconds between two lines in a log while runs are being rebuilt."""

    def __init__(self, label: str, kinds: dict[str, str], stream: TextIO) -> None:
        self.label = label                      # "verify" or "regenerate"
        self.kinds = kinds                      # run to rebuild -> its kind (may be "")
        self.stream = stream
        self.live = enabled(stream)
        self.began = self.written = time.monotonic()
        self.running: dict[str, float] = {}     # run -> when it started
        self.within: dict[str, tuple[int, int]] = {}   # run -> (done, total) of its work
        self.finished: set[str] = set()
        self.drawn = 0                          # the length of the line now on the terminal
        self.lock = threading.Lock()

    def tell(self, name: str, event: Event) -> None:
        """`name` has started, is done, or has done `(done, total)` of its long work; a start
        and an end are each shown once."""
        with self.lock:
            if event == "done":
                self.running.pop(name, None)
                self.finished.add(name)
            elif event == "started":
                if name not in self.running and name not in self.finished:
                    self.running[name] = time.monotonic()
                    if not self.live:
                        self._write(f"{self._bar()} {self._named(name)} started at "
                                    f"{time.monotonic() - self.began:.0f} s\n")
            elif name in self.running and isinstance(event, tuple):
                self.within[name] = event
            self._draw()

    def draw(self) -> None:
        """Redraw the line in place (its seconds change) on a terminal; in a log, write it if
        HEARTBEAT seconds have passed since the last line."""
        with self.lock:
            if self.live:
                self._draw()
            elif self.running and time.monotonic() - self.written >= self.HEARTBEAT:
                self._write(self._line() + "\n")

    @contextmanager
    def aside(self) -> Iterator[None]:
        """Inside, the terminal's line is erased, so that lines printed on stdout do not land on
        it; it is drawn again after."""
        with self.lock:
            if self.drawn:
                self._write("\r" + " " * self.drawn + "\r")
                self.drawn = 0
            try:
                yield
            finally:
                self._draw()

    @contextmanager
    def ticking(self) -> Iterator[None]:
        """Inside, a thread calls `draw` every second (the work runs in this thread)."""
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(1.0):
                self.draw()

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()

    def __enter__(self) -> RunsStatus:
        return self

    def __exit__(self, error_type: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """The last line, `N/N done in S s`; after an error, only the end of the line drawn."""
        with self.lock:
            if error is not None or not self.kinds:
                if self.drawn:
                    self._write("\n")
                return
            line = f"{self._bar()} done in {time.monotonic() - self.began:.0f} s"
            self._write(("\r" + line.ljust(self.drawn) if self.live else line) + "\n")
            self.drawn = 0

    def _named(self, name: str) -> str:
        kind = self.kinds.get(name, "")
        return f"{name} ({kind})" if kind else name

    def _bar(self) -> str:
        done, total = len(self.finished), len(self.kinds)
        filled = self.WIDTH * done // max(total, 1)
        arrow = "=" * filled + (">" if filled < self.WIDTH else "")
        return f"{self.label}: [{arrow:<{self.WIDTH}}] {done}/{total}"

    def _running(self, name: str, now: float) -> str:
        """`run_012 (learn_kl_sweep) 41 s, 12/40, about 95 s left`: the estimate assumes the
        units of its work still to come take as long as those done."""
        seconds = now - self.running[name]
        shown = f"{self._named(name)} {seconds:.0f} s"
        if name in self.within:
            done, total = self.within[name]
            shown += f", {done}/{total}"
            if 0 < done < total:
                left = seconds * (total - done) / done
                shown += (f", about {left:.0f} s left" if left < 120 else
                          f", about {left / 60:.0f} min left")
        return shown

    def _line(self) -> str:
        now = time.monotonic()
        return self._bar() + "".join(f"{',' if k else ''} {self._running(name, now)}"
                                     for k, name in enumerate(self.running))

    def _draw(self) -> None:
        if not self.live or not self.kinds:
            return
        line = self._line()
        width = shutil.get_terminal_size().columns - 1    # a wrapped line is not redrawn
        line = line if len(line) <= width else line[:width - 3] + "..."
        self._write("\r" + line.ljust(self.drawn))
        self.drawn = len(line)

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
        self.written = time.monotonic()
