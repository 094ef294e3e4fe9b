"""Canonical runs: the run folders committed with the course, and the check that they are real.

Every number a lesson quotes comes from a folder `runs/run_00N/`. A folder is only evidence if
anyone can rebuild it from the code and the data and get the same bytes. So each canonical run
is registered here as a zero-argument function that returns its files (`RunFiles`), built with
`record_git=False` (a committed file cannot name the commit that contains it):

- `course runs list` shows the registry and whether each folder is present;
- `course runs verify [NAME...]` rebuilds each run in memory and compares it byte for byte with
  the committed folder, printing every difference (exit code 1 if there is any);
- `course runs regenerate NAME [--force]` rewrites a folder after a deliberate change. The new
  folder is written whole beside the old one and only then swapped in, so an interruption
  leaves either the old run or the new one, never a mixture or nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import course.eval as loop_a
from course import bandit, goodhart, kl, mdp, peers, rubrics, runs, selection
from course.data import DATA_DIR, display_path

RUN_001 = loop_a.EvalConfig(
    problems=DATA_DIR / "problems" / "dev.jsonl",
    rollouts=DATA_DIR / "rollouts" / "frozen_v1.jsonl",
    note="Baseline: the strict-v1 scorer on the frozen v1 rollouts of the dev split.",
    out=runs.RUNS_DIR / "run_001",
)

CANONICAL: dict[str, Callable[[], runs.RunFiles]] = {
    "run_001": lambda: loop_a.build_run(RUN_001, record_git=False),
    "run_002": lambda: selection.build_run(selection.SelectionConfig(note=(
        "Loop B selection: Best-of-N, pass@k and two controls on the frozen N=8 pack.")),
        record_git=False),
    "run_003": lambda: bandit.build_run(bandit.BanditConfig(), record_git=False, note=(
        "Loop C bandit: REINFORCE with a running-mean baseline, plus the baseline ablation.")),
    "run_004": lambda: mdp.build_run(mdp.MDPConfig(), record_git=False, note=(
        "Loop C two-step MDP: REINFORCE where the end reward credits both decisions.")),
    "run_005": lambda: kl.build_run(kl.KLConfig(), record_git=False, note=(
        "Loop C KL tradeoff: the exact KL-regularised optimum over a sweep of beta.")),
    "run_006": lambda: rubrics.build_run(rubrics.MatrixConfig(note=(
        "Red team: the golden exploits and golden-correct set under strict and five weak "
        "rubrics.")), record_git=False),
    "run_007": lambda: peers.build_run(peers.ComparisonConfig(note=(
        "Verifier comparison: our strict scorer, the hackable rubrics and four peer rules "
        "from other projects on the golden sets and near misses.")), record_git=False),
    "run_008": lambda: goodhart.build_run(goodhart.GoodhartConfig(), record_git=False, note=(
        "Goodhart toy: REINFORCE on the answer_anywhere proxy, the strict scorer only measured.")),
}
"""Run name -> function that rebuilds that run's files, deterministically."""


def _builder(name: str) -> Callable[[], runs.RunFiles]:
    if name not in CANONICAL:
        raise runs.RunError(f"{name!r} is not a canonical run; known: {', '.join(CANONICAL)}")
    return CANONICAL[name]


def verify(names: Iterable[str] | None = None,
           root: Path = runs.RUNS_DIR) -> dict[str, list[str]]:
    """Rebuild each named run (all by default) and diff it against `root / name`.

    Returns name -> list of differences (empty when the committed folder is byte-identical).
    """
    report = {}
    for name in names or CANONICAL:
        rebuilt = _builder(name)()
        folder = root / name
        if not folder.is_dir():
            report[name] = [f"{display_path(folder)} is missing "
                            f"(create it with `course runs regenerate {name}`)"]
        else:
            report[name] = runs.diff_files(runs.read_files(folder), rebuilt)
    return report


def regenerate(name: str, root: Path = runs.RUNS_DIR, force: bool = False) -> Path:
    """Rebuild the run `name` and write it to `root / name`, replacing it only with `force`.

    Swap: write the new folder completely inside a hidden scratch folder (`runs.write_run`),
    move the old folder into the scratch folder, move the new one into place; if that last move
    fails, the old folder is moved back. The scratch folder is removed at the end either way.
    """
    target = root / name
    if target.exists() and not force:
        raise runs.RunError(f"{display_path(target)} already exists; pass --force to rebuild it "
                            "(then review the diff before committing)")
    files = _builder(name)()
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=root))
    previous = scratch / "previous"
    try:
        fresh = runs.write_run(scratch / name, files)
        if target.exists():
            os.rename(target, previous)
        try:
            os.rename(fresh, target)
        except BaseException:
            if previous.exists():
                os.rename(previous, target)
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


# -- command line: course runs list | verify | regenerate -------------------------------------

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


def _list_main(args: Any) -> int:
    for name in CANONICAL:
        folder = runs.RUNS_DIR / name
        if folder.is_dir():
            manifest = runs.read_json(folder, "manifest.json")
            print(f"{name}  {manifest.get('kind', '?'):<10} {manifest.get('note', '')}")
        else:
            print(f"{name}  (missing: course runs regenerate {name})")
    return 0


def _verify_main(args: Any) -> int:
    failed = False
    for name, differences in verify(args.names).items():
        if differences:
            failed = True
            for difference in differences:
                print(f"{name}: {difference}")
        else:
            print(f"{name}: ok (byte-identical)")
    return 1 if failed else 0


def _regenerate_main(args: Any) -> int:
    path = regenerate(args.name, force=args.force)
    print(f"wrote {display_path(path)}")
    return 0
