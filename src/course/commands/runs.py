"""`course runs list | verify | regenerate | check`: the canonical runs, the proof that each one
can be rebuilt from code and data to the same bytes, and the check of a submitted run.

Exit status: 0 when every run is listed, verified or checked; 1 when a finding is printed (a
run whose manifest cannot be read, in `list`; a difference or a stale run, in `verify`; a
problem, in `check`), after every other run has been listed or checked; 2 when the command
cannot do its job (an unknown run name, `--jobs 0`)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any

from course import progress
from course.commands.options import UsageError
from course.formatting import one_line
from course.limits import count_problem
from course.locked_room import check_run
from course.paths import RUNS_DIR, display_path
from course.reports.canonical import (
    CANONICAL,
    MAX_JOBS,
    REGENERATE_STALE,
    SPOT_CHECK_SAYS,
    after_what_they_read,
    committed_kind,
    in_processes,
    regenerate,
    regenerate_group,
    stale,
    verify,
    verify_group,
)
from course.reports.canonical import groups as rebuild_groups
from course.runs import RunError, leftover_partials, read_json
from course.scorer import SCORER_VERSION
from course.scorers import SCORERS


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runs", help="list, verify or regenerate the canonical run folders",
        description="The canonical runs under runs/ are rebuilt from code and data and must "
                    "match the committed bytes exactly.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="list the canonical runs")
    listing.set_defaults(func=lambda _: _list_main())
    check = actions.add_parser("verify", help="rebuild runs in memory and compare bytes")
    check.add_argument("names", nargs="*", metavar="NAME", help="runs to verify (default: all)")
    check.add_argument("--jobs", type=int, default=2, metavar="N",
                       help="runs rebuilt side by side, in N processes (default 2)")
    check.set_defaults(func=lambda values: _verify_main(values.names, values.jobs))
    rebuild = actions.add_parser(
        "regenerate", help="rewrite one canonical run folder, or every stale one",
        description="Rewrite the canonical run NAME (an existing folder only with --force), or "
                    "with --scorer-dependent every run measured by another scorer version than "
                    "the one it is built with now, in --jobs processes (the comparisons after "
                    "the runs they read). Each folder is written whole, then swapped in, so a "
                    "stopped command keeps every run it finished: started again, it rebuilds "
                    "the runs still stale. Review the diff before committing.")
    which = rebuild.add_mutually_exclusive_group(required=True)
    which.add_argument("name", metavar="NAME", nargs="?", help="for example run_001")
    which.add_argument("--scorer-dependent", action="store_true",
                       help="every run made stale by a change of scorer (replaced in place)")
    rebuild.add_argument("--force", action="store_true", help="replace an existing folder")
    rebuild.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, MAX_JOBS),
                         metavar="N",
                         help="with --scorer-dependent, runs rebuilt side by side in N "
                              "processes (default: the machine's cores)")
    rebuild.set_defaults(func=lambda values: _regenerate_main(
        values.name, values.scorer_dependent, values.force, values.jobs))
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
    submitted.set_defaults(func=lambda values: _check_main(values.folder, values.scorer))


def _report_leftovers() -> None:
    for folder in leftover_partials(RUNS_DIR):
        print(f"leftover: {one_line(display_path(folder))} is a run write that was interrupted; "
              "nothing reads it, delete it when no command is running")


def _list_main() -> int:
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


def _verify_main(asked: list[str], jobs: int) -> int:
    """One line per run on stdout, in the order asked; meanwhile, on stderr, which runs are
    being rebuilt and how many are done (`course.progress.RunsStatus`; all of them take a few
    minutes in two processes). A stale run (measured by another scorer version) is reported
    without being rebuilt, and then, once, the command that regenerates the stale runs."""
    _report_leftovers()
    problem = count_problem("--jobs", jobs, 1, MAX_JOBS,
                            "one process per run at most, and each holds a run in memory")
    if problem:
        raise UsageError(problem)
    names = asked or list(CANONICAL)
    for name in names:
        if name not in CANONICAL:
            verify([name])                      # the one-line error that names the known runs
    old = [name for name in names if stale(name) is not None]
    results: dict[str, tuple[list[str], float | None]] = {
        name: (verify([name])[name], None) for name in old}
    fresh = [name for name in names if name not in results]
    groups = rebuild_groups(fresh)
    print(f"verify: {len(names)} runs, {len(old)} stale (not rebuilt), {len(fresh)} to "
          f"rebuild with --jobs {jobs}", file=sys.stderr, flush=True)
    status = progress.RunsStatus("verify", {name: committed_kind(name) for name in fresh},
                                 sys.stderr)
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
        if jobs == 1 or len(groups) <= 1:
            with status.ticking():
                progress.muted = True
                try:
                    for group in groups:
                        done(verify_group(group, status.tell))
                finally:
                    progress.muted = False
        else:
            in_processes(verify_group, groups, jobs, status, done)
    if old:
        print(f"stale: {', '.join(old)} (measured by another scorer version than the one they "
              f"are built with now, {SCORER_VERSION}); regenerate them with "
              f"`{REGENERATE_STALE}`, then review and commit the diff", flush=True)
    return 1 if any(differences for differences, _ in results.values()) else 0


def _print_verified(name: str, differences: list[str], seconds: float | None) -> None:
    """`verify`'s line(s) for one run: each difference, or ok with the time it took."""
    for difference in differences:               # names files found in runs/: escaped
        print(f"{name}: {one_line(difference)}", flush=True)
    if not differences:
        how = SPOT_CHECK_SAYS.get(name, "byte-identical, rebuilt")
        print(f"{name}: ok ({how} in {seconds or 0:.1f} s)", flush=True)


def _regenerate_main(name: str | None, scorer_dependent: bool, force: bool, jobs: int) -> int:
    """One run by name; or, with `--scorer-dependent`, every stale run, in `jobs` processes
    (`canonical.after_what_they_read`: a comparison after the runs it reads), one line each as
    it is written; meanwhile, on stderr, how far each run has got and the time it has left
    (`course.progress.RunsStatus`)."""
    problem = count_problem("--jobs", jobs, 1, MAX_JOBS,
                            "one process per run at most, and each holds a run in memory")
    if problem:
        raise UsageError(problem)
    if name is not None and name not in CANONICAL:
        regenerate(name)                        # the one-line error that names the known runs
    names = [name] if name is not None else [run for run in CANONICAL if stale(run) is not None]
    if not names:
        print(f"no stale run: every canonical run was measured by the scorer version it is "
              f"built with ({SCORER_VERSION}, or its pinned one)")
    status = progress.RunsStatus("regenerate", {name: committed_kind(name) for name in names},
                                 sys.stderr)
    written = 0

    def done(finished: list[tuple[str, Path, float]]) -> None:
        nonlocal written
        for run, path, seconds in finished:
            written += 1
            status.tell(run, "done")
            with status.aside():
                print(f"[{written}/{len(names)}] wrote {display_path(path)} ({seconds:.1f} s)"
                      if scorer_dependent else f"wrote {display_path(path)}", flush=True)

    work = functools.partial(regenerate_group, force=force or scorer_dependent)
    with status:
        for phase in after_what_they_read(names):
            if jobs == 1 or len(phase) == 1:
                with status.ticking():
                    progress.muted = True
                    try:
                        for group in rebuild_groups(phase):
                            done(work(group, status.tell))
                    finally:
                        progress.muted = False
            else:
                in_processes(work, rebuild_groups(phase), jobs, status, done)
    return 0


def _check_main(folder: Path, scorer: str) -> int:
    """`course runs check DIR`: one line, `ok` (exit 0) or what does not hold (exit 1)."""
    shown = one_line(display_path(folder))
    try:
        found = check_run(folder, scorer)
    except RunError as err:
        print(f"{shown}: not ok: {one_line(' '.join(str(err).split()))}")
        return 1
    print(f"{shown}: ok: seal and manifest intact, {found['n']} result lines scored again by "
          f"{found['scorer_version']} agree ({found['passes']}/{found['n']} pass)")
    return 0
