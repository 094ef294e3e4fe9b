"""`course runs list | verify | regenerate`: the canonical runs, and the proof that each one
can be rebuilt from code and data to the same bytes."""

from __future__ import annotations

import time
from typing import Any

from course.paths import RUNS_DIR, display_path
from course.reports.canonical import CANONICAL, regenerate, verify
from course.runs import leftover_partials, read_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runs", help="list, verify or regenerate the canonical run folders",
        description="The canonical runs under runs/ are rebuilt from code and data and must "
                    "match the committed bytes exactly.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="list the canonical runs").set_defaults(func=_list_main)
    check = actions.add_parser("verify", help="rebuild runs in memory and compare bytes")
    check.add_argument("names", nargs="*", metavar="NAME", help="runs to verify (default: all)")
    check.set_defaults(func=_verify_main)
    rebuild = actions.add_parser("regenerate", help="rewrite one canonical run folder")
    rebuild.add_argument("name", metavar="NAME", help="for example run_001")
    rebuild.add_argument("--force", action="store_true", help="replace an existing folder")
    rebuild.set_defaults(func=_regenerate_main)


def _report_leftovers() -> None:
    for folder in leftover_partials(RUNS_DIR):
        print(f"leftover: {display_path(folder)} is a run write that was interrupted; "
              "nothing reads it, delete it when no command is running")


def _list_main(args: Any) -> int:
    _report_leftovers()
    manifests = {name: read_json(RUNS_DIR / name, "manifest.json")
                 for name in CANONICAL if (RUNS_DIR / name).is_dir()}
    width = max((len(str(m.get("kind", "?"))) for m in manifests.values()), default=0)
    for name in CANONICAL:
        if name in manifests:
            kind, note = manifests[name].get("kind", "?"), manifests[name].get("note", "")
            print(f"{name}  {kind!s:<{width}}  {note}")
        else:
            print(f"{name}  (missing: course runs regenerate {name})")
    return 0


def _verify_main(args: Any) -> int:
    """One line per run as soon as it is checked (all of them take about half a minute)."""
    _report_leftovers()
    failed = False
    for name in args.names or CANONICAL:
        start = time.perf_counter()
        differences = verify([name])[name]
        seconds = time.perf_counter() - start
        if differences:
            failed = True
            for difference in differences:
                print(f"{name}: {difference}", flush=True)
        else:
            print(f"{name}: ok (byte-identical, rebuilt in {seconds:.1f} s)", flush=True)
    return 1 if failed else 0


def _regenerate_main(args: Any) -> int:
    path = regenerate(args.name, force=args.force)
    print(f"wrote {display_path(path)}")
    return 0
