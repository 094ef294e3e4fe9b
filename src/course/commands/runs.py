"""`course runs list | verify | regenerate | check`: the canonical runs, the proof that each one
can be rebuilt from code and data to the same bytes, and the check of a submitted run.

Exit status: 0 when every run is listed, verified or checked; 1 when a finding is printed (a
run whose manifest cannot be read, in `list`; a difference or a stale run, in `verify`; a
problem, in `check`), after every other run has been listed or checked; 2 when the command
cannot do its job (an unknown run name, `--jobs 0`)."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing.queues import SimpleQueue
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from course import progress
from course.commands.options import UsageError
from course.formatting import cut, one_line
from course.limits import count_problem
from course.locked_room import check_run
from course.paths import RUNS_DIR, display_path
from course.reports.canonical import (
    CANONICAL,
    REGENERATE_STALE,
    SPOT_CHECK_SAYS,
    regenerate,
    stale,
    verify,
)
from course.runs import RunError, leftover_partials, read_json
from course.scorer import SCORER_VERSION
from course.scorers import SCORERS


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runs", help="list, verify or regenerate the canonical run folders",
        description="The canonical runs under runs/ are rebuilt from code and data and must "
                    "match the committed bytes exactly.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="list the canonical runs").set_defaults(func=_list_main)
    check = actions.add_parser("verify", help="rebuild runs in memory and compare bytes")
    check.add_argument("names", nargs="*", metavar="NAME", help="runs to verify (default: all)")
    check.add_argument("--jobs", type=int, default=2, metavar="N",
                       help="runs rebuilt side by side, in N processes (default 2)")
    check.set_defaults(func=_verify_main)
    rebuild = actions.add_parser(
        "regenerate", help="rewrite one canonical run folder, or every stale one",
        description="Rewrite the canonical run NAME (an existing folder only with --force), or "
                    "with --scorer-dependent every run measured by another scorer version than "
                    "the one it is built with now. Each folder is written whole, then swapped "
                    "in; review the diff before committing.")
    which = rebuild.add_mutually_exclusive_group(required=True)
    which.add_argument("name", metavar="NAME", nargs="?", help="for example run_001")
    which.add_argument("--scorer-dependent", action="store_true",
                       help="every run made stale by a change of scorer (replaced in place)")
    rebuild.add_argument("--force", action="store_true", help="replace an existing folder")
    rebuild.set_defaults(func=_regenerate_main)
    submitted = actions.add_parser(
        "check", help="check a submitted eval run: seal, manifest, every line scored again",
        description="Check one Loop A run folder as `course compare` reads it: its manifest's "
                    "fields and seal, each file's sha256, every result line scored again with "
                    "the scorer version the manifest names, their expected answers against the "
                    "problems file it names, and the summary's counts. Exit 0 when all agree, 1 "
                    "with one line saying what does not.")
    submitted.add_argument("folder", type=Path, metavar="DIR", help="the run folder")
    submitted.add_argument("--scorer", default=SCORER_VERSION, choices=list(SCORERS),
                           metavar="VERSION",
                           help=f"the scorer version the run must have been measured by "
                                f"(default: the course's, {SCORER_VERSION}; one of "
                                f"{', '.join(SCORERS)})")
    submitted.set_defaults(func=_check_main)


def _report_leftovers() -> None:
    for folder in leftover_partials(RUNS_DIR):
        print(f"leftover: {one_line(display_path(folder))} is a run write that was interrupted; "
              "nothing reads it, delete it when no command is running")


def _list_main(args: Any) -> int:
    """One line per canonical run: kind and note, or why it is missing or cannot be read.
    Exit status 1 when a present run's manifest cannot be read (a finding, like a difference
    in `verify`); the other runs are still listed."""
    _report_leftovers()
    manifests: dict[str, dict[str, Any] | RunError] = {}
    for name in CANONICAL:
        if os.path.lexists(RUNS_DIR / name):
            try:
                manifests[name] = read_json(RUNS_DIR / name, "manifest.json")
            except RunError as err:
                manifests[name] = err
    shown = {name: (one_line(str(m.get("kind", "?"))), one_line(str(m.get("note", ""))))
             for name, m in manifests.items() if isinstance(m, dict)}  # data: escaped
    width = max((len(kind) for kind, _ in shown.values()), default=0)
    failed = False
    for name in CANONICAL:
        found = manifests.get(name)
        if found is None:
            print(f"{name}  (missing: course runs regenerate {name})")
        elif isinstance(found, RunError):
            failed = True
            print(f"{name}  (unreadable: {one_line(' '.join(str(found).split()))})")
        else:
            kind, note = shown[name]
            print(f"{name}  {kind:<{width}}  {note}")
    return 1 if failed else 0


TOGETHER = (("run_010", "run_011"),)
"""Runs built from the same trainings (`course.reports.learn_hack.measure` keeps them): each
group is verified in one process, so that its trainings run once."""
MAX_JOBS = 32
"""`--jobs` at most: there are 20 canonical runs, and each process holds one in memory."""
SLOWEST = ("run_009", "run_010")
"""Started first, so that the other runs fill the second process meanwhile (about 14 s and, with
run_011, 15 s; the runs that train most are spot-checked in 3 to 7 s)."""


Event = str | tuple[int, int]
"""What happens to a run being rebuilt: "started", "done", or `(done, total)` of its long work
(`course.progress.Tally`)."""


class _Progress:
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
        self.live = progress.enabled(stream)
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

    def __enter__(self) -> _Progress:
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


def _kind(name: str) -> str:
    """The kind of the committed run `name` as its manifest says it ("" if unreadable)."""
    try:
        return cut(str(read_json(RUNS_DIR / name, "manifest.json").get("kind", "")), 24)
    except RunError:
        return ""


_events: SimpleQueue[tuple[str, Event]] | None = None
"""In a worker process of `verify`: where `_tell` sends what happens to each run."""


def _listen(events: SimpleQueue[tuple[str, Event]]) -> None:
    """The worker process's initializer: keep the parent's queue, and draw no bar of its own."""
    global _events
    _events = events
    progress.muted = True


def _tell(name: str, event: Event) -> None:
    """In a worker process: tell the parent what happens to `name` (`_Progress.tell`)."""
    if _events is not None:
        _events.put((name, event))


@contextmanager
def _rebuilding(name: str, tell: Callable[[str, Event], None]) -> Iterator[None]:
    """Inside, `name` is being rebuilt: told started, then its long work's progress
    (`course.progress.listener`), then done."""
    tell(name, "started")
    progress.listener = lambda done, total: tell(name, (done, total))
    try:
        yield
    finally:
        progress.listener = None
    tell(name, "done")


def _verify_group(names: tuple[str, ...], tell: Callable[[str, Event], None]
                  ) -> list[tuple[str, list[str], float]]:
    results = []
    for name in names:
        with _rebuilding(name, tell):
            start = time.perf_counter()
            differences = verify([name])[name]
        results.append((name, differences, time.perf_counter() - start))
    return results


def _groups(names: list[str]) -> list[tuple[str, ...]]:
    """`names` as groups to verify (`TOGETHER`), the `SLOWEST` first."""
    groups: list[tuple[str, ...]] = []
    placed: set[str] = set()
    for name in names:
        if name not in placed:
            group = next((tuple(n for n in g if n in names) for g in TOGETHER if name in g),
                         (name,))
            groups.append(group)
            placed.update(group)
    return sorted(groups, key=lambda g: not set(g) & set(SLOWEST))


def _verify_main(args: Any) -> int:
    """One line per run on stdout, in the order asked; meanwhile, on stderr, which runs are
    being rebuilt and how many are done (`_Progress`; all of them take a few minutes in two
    processes). A stale run (measured by another scorer version) is reported without being
    rebuilt, and then, once, the command that regenerates the stale runs."""
    _report_leftovers()
    problem = count_problem("--jobs", args.jobs, 1, MAX_JOBS,
                            "one process per run at most, and each holds a run in memory")
    if problem:
        raise UsageError(problem)
    names = args.names or list(CANONICAL)
    for name in names:
        if name not in CANONICAL:
            verify([name])                      # the one-line error that names the known runs
    old = [name for name in names if stale(name) is not None]
    results: dict[str, tuple[list[str], float | None]] = {
        name: (verify([name])[name], None) for name in old}
    fresh = [name for name in names if name not in results]
    groups = _groups(fresh)
    print(f"verify: {len(names)} runs, {len(old)} stale (not rebuilt), {len(fresh)} to "
          f"rebuild with --jobs {args.jobs}", file=sys.stderr, flush=True)
    status = _Progress("verify", {name: _kind(name) for name in fresh}, sys.stderr)
    shown = 0

    def done(checked: list[tuple[str, list[str], float]]) -> None:
        """Record runs just checked; print, in the order asked, every run now ready."""
        nonlocal shown
        for name, differences, seconds in checked:
            results[name] = (differences, seconds)
            status.tell(name, "done")
        ready = []
        while shown < len(names) and names[shown] in results:
            ready.append(names[shown])
            shown += 1
        if ready:
            with status.aside():
                for name in ready:
                    _print_verified(name, *results[name])

    with status:
        done([])
        if args.jobs == 1 or len(groups) <= 1:
            with status.ticking():
                progress.muted = True
                try:
                    for group in groups:
                        done(_verify_group(group, status.tell))
                finally:
                    progress.muted = False
        else:
            _verify_in_processes(groups, args.jobs, status, done)
    if old:
        print(f"stale: {', '.join(old)} (measured by another scorer version than the one they "
              f"are built with now, {SCORER_VERSION}); regenerate them with "
              f"`{REGENERATE_STALE}`, then review and commit the diff", flush=True)
    return 1 if any(differences for differences, _ in results.values()) else 0


def _verify_in_processes(groups: list[tuple[str, ...]], jobs: int, status: _Progress,
                         done: Callable[[list[tuple[str, list[str], float]]], None]) -> None:
    """Verify `groups` in `jobs` processes: `done` with each group's results as it ends, and
    `status` told which run each process starts or has finished, within half a second."""
    events: SimpleQueue[tuple[str, Event]] = multiprocessing.SimpleQueue()
    with ProcessPoolExecutor(jobs, initializer=_listen, initargs=(events,)) as pool:
        pending = {pool.submit(_verify_group, group, _tell) for group in groups}
        while pending:
            ended, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            while not events.empty():
                status.tell(*events.get())
            for future in ended:
                done(future.result())
            status.draw()


def _print_verified(name: str, differences: list[str], seconds: float | None) -> None:
    """`verify`'s line(s) for one run: each difference, or ok with the time it took."""
    for difference in differences:               # names files found in runs/: escaped
        print(f"{name}: {one_line(difference)}", flush=True)
    if not differences:
        how = SPOT_CHECK_SAYS.get(name, "byte-identical, rebuilt")
        print(f"{name}: ok ({how} in {seconds or 0:.1f} s)", flush=True)


def _regenerate_main(args: Any) -> int:
    """One run by name; or, with `--scorer-dependent`, every stale run in the registry's
    order (a comparison after the runs it reads), one line each as it is written; meanwhile,
    on stderr, how far each run has got (`_Progress`)."""
    if not args.scorer_dependent and args.name not in CANONICAL:
        regenerate(args.name)                   # the one-line error that names the known runs
    names = ([name for name in CANONICAL if stale(name) is not None]
             if args.scorer_dependent else [args.name])
    if not names:
        print(f"no stale run: every canonical run was measured by the scorer version it is "
              f"built with ({SCORER_VERSION}, or its pinned one)")
    status = _Progress("regenerate", {name: _kind(name) for name in names}, sys.stderr)
    with status, status.ticking():
        progress.muted = True
        try:
            for k, name in enumerate(names, start=1):
                start = time.perf_counter()
                with _rebuilding(name, status.tell):
                    path = regenerate(name, force=args.force or args.scorer_dependent)
                with status.aside():
                    print(f"[{k}/{len(names)}] wrote {display_path(path)} "
                          f"({time.perf_counter() - start:.1f} s)" if args.scorer_dependent
                          else f"wrote {display_path(path)}", flush=True)
        finally:
            progress.muted = False
    return 0


def _check_main(args: Any) -> int:
    """`course runs check DIR`: one line, `ok` (exit 0) or what does not hold (exit 1)."""
    shown = one_line(display_path(args.folder))
    try:
        found = check_run(args.folder, args.scorer)
    except RunError as err:
        print(f"{shown}: not ok: {one_line(' '.join(str(err).split()))}")
        return 1
    print(f"{shown}: ok: seal and manifest intact, {found['n']} result lines scored again by "
          f"{found['scorer_version']} agree ({found['passes']}/{found['n']} pass)")
    return 0
