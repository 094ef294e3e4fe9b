"""`course runs list | verify | regenerate`: the canonical runs, and the proof that each one
can be rebuilt from code and data to the same bytes.

Exit status: 0 when every run is listed or verified; 1 when a finding is printed (a run whose
manifest cannot be read, in `list`; a difference, in `verify`), after every other run has been
listed or checked; 2 when the command cannot do its job (an unknown run name, `--jobs 0`)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from course.commands.options import UsageError
from course.formatting import one_line
from course.limits import count_problem
from course.paths import RUNS_DIR, display_path
from course.reports.canonical import CANONICAL, regenerate, verify
from course.runs import RunError, leftover_partials, read_json


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
    rebuild = actions.add_parser("regenerate", help="rewrite one canonical run folder")
    rebuild.add_argument("name", metavar="NAME", help="for example run_001")
    rebuild.add_argument("--force", action="store_true", help="replace an existing folder")
    rebuild.set_defaults(func=_regenerate_main)


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
SLOWEST = ("run_012", "run_020")
"""Started first, so that the other runs fill the second process meanwhile (about 90 and 45 s)."""


def _verify_group(names: tuple[str, ...]) -> list[tuple[str, list[str], float]]:
    results = []
    for name in names:
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
    """One line per run, in the registry's order, as soon as it and the runs before it are
    checked (all of them take about two minutes in two processes)."""
    _report_leftovers()
    problem = count_problem("--jobs", args.jobs, 1, MAX_JOBS,
                            "one process per run at most, and each holds a run in memory")
    if problem:
        raise UsageError(problem)
    names = args.names or list(CANONICAL)
    for name in names:
        if name not in CANONICAL:
            verify([name])                      # the one-line error that names the known runs
    results: dict[str, tuple[list[str], float]] = {}
    groups = {name: group for group in _groups(names) for name in group}
    failed = False
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = ({} if args.jobs == 1 or len(set(groups.values())) == 1 else
                   {g: pool.submit(_verify_group, g) for g in dict.fromkeys(groups.values())})
        for name in names:
            if name not in results:
                group = groups[name]
                done = futures[group].result() if futures else _verify_group(group)
                results.update({n: (d, s) for n, d, s in done})
            differences, seconds = results[name]
            if differences:
                failed = True
                for difference in differences:   # names files found in runs/: escaped
                    print(f"{name}: {one_line(difference)}", flush=True)
            else:
                print(f"{name}: ok (byte-identical, rebuilt in {seconds:.1f} s)", flush=True)
    return 1 if failed else 0


def _regenerate_main(args: Any) -> int:
    path = regenerate(args.name, force=args.force)
    print(f"wrote {display_path(path)}")
    return 0
