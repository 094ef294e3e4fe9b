"""Canonical runs: the run folders committed with the course, and the check that they are real.

Every number a lesson quotes comes from a folder `runs/run_00N/`. A folder is only evidence if
anyone can rebuild it from the code and the data and get the same bytes. So each canonical run
is registered here as a zero-argument function that returns its files (`RunFiles`), built with
`record_git=False` (a committed file cannot name the commit that contains it):

- `course runs list` shows the registry and whether each folder is present;
- `verify` (`course runs verify [NAME...]`) rebuilds each run in memory and compares it byte
  for byte with the committed folder, listing every difference; a run whose rebuild trains a
  model many times (`SPOT_CHECKED`) is spot-checked instead, in seconds;
- `regenerate` (`course runs regenerate NAME [--force]`) rewrites a folder after a deliberate
  change. The new folder is written whole beside the old one and only then swapped in, so an
  interruption leaves either the old run or the new one, never a mixture or nothing.

A change of scorer (a new `SCORER_VERSION`, docs/teacher/change-the-scorer.md) makes every
canonical run measured by the old version STALE (`stale`): `verify` reports it without
rebuilding it, and `course runs regenerate --scorer-dependent` rewrites exactly those runs, in
the registry's order (a comparison after the runs it reads). Only `PINNED` runs keep an older
version on purpose.

The last section rebuilds many runs at once, for `course runs verify`: runs that share their
trainings in one group (`TOGETHER`), the slowest started first, the groups spread over worker
processes, each telling the parent's status line (`course.progress.RunsStatus`) when a run
starts, how far its long work has got, and when it is done.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing.queues import SimpleQueue
from pathlib import Path
from typing import TypeVar

from course import progress, runs, scorer_v0
from course.bandit import BanditConfig
from course.evaluation import EvalConfig
from course.formatting import cut
from course.goodhart import GoodhartConfig
from course.kl import KLConfig
from course.locked_room import CompareConfig
from course.mdp import MDPConfig
from course.paths import DATA_DIR, RUNS_DIR, display_path
from course.peers import ComparisonConfig
from course.reports import (
    bandit,
    comparison,
    evaluation,
    goodhart,
    kl,
    learn,
    learn_family,
    learn_hack,
    learn_kl,
    learn_selection,
    learn_tiny,
    learn_tiny_build,
    learn_toy_tax,
    mdp,
    peers,
    real_model,
    rubrics,
    selection,
)
from course.rubrics import MatrixConfig
from course.scorer import SCORER_VERSION
from course.selection import SelectionConfig

ROLLOUTS, SMOLLM = DATA_DIR / "rollouts", DATA_DIR / "smollm"
"""Where the stand-in's frozen rollouts are, and the real model's files."""

PINNED = {"run_019": scorer_v0.SCORER_VERSION}
"""Canonical runs measured by an earlier, frozen scorer version on purpose (the forensics run);
every other canonical run is measured by the current version, `SCORER_VERSION`."""

NOTES = {
    "run_009": "Loop C on tokens against Loop B at equal compute: strict reward, fresh samples, "
               "pass@k before and after.",
    "run_010": "Distribution shift on tokens: the proxy-trained policy on the frozen snapshot "
               "versus its own fresh samples.",
    "run_011": "Loop C on tokens with answer_anywhere as the reward: the hack the optimiser "
               "assembles, strict only measured.",
    "run_012": "KL sweep on tokens: run_011's proxy training for four values of beta, ten seeds "
               "each.",
    "run_013": "The Toy Tax: the bandit of run_003 and the token policy, gap to the best closed "
               "per sample.",
    "run_020": "The RLVR family side by side: RLOO, GRPO and Dr. GRPO advantages on the token "
               "policy, strict reward and hackable proxy, everything else fixed.",
    "run_021": "Loop C on the tiny transformer from three pre-trained bases: the strict reward "
               "(RLOO, GRPO) and answer_anywhere at beta 0, 0.1 and 0.3, six seeds on each "
               "base; transfer to held-out prompts, pass@k and the prompts a base rarely "
               "solves, the base decoded greedily and at a matched temperature, the exploit, "
               "entropy, and the KL of the first steps.",
}
"""The notes of the spot-checked runs (`SPOT_CHECKED`): their builders and their spot checks
both need them."""

SPOT_CHECKED: dict[str, Callable[[Path], list[str]]] = {
    "run_009": lambda folder: learn.spot_check(learn_selection.CONFIG, NOTES["run_009"], folder,
                                               learn_selection.measure, learn_selection.files),
    "run_010": lambda folder: learn.spot_check(learn_hack.CONFIG, NOTES["run_010"], folder,
                                               learn_hack.measure, learn_hack.shift_files),
    "run_011": lambda folder: learn.spot_check(learn_hack.CONFIG, NOTES["run_011"], folder,
                                               learn_hack.measure, learn_hack.files),
    "run_012": lambda folder: learn_kl.spot_check(learn_kl.CONFIG, NOTES["run_012"], folder),
    "run_013": lambda folder: learn.spot_check(learn_toy_tax.CONFIG, NOTES["run_013"], folder,
                                               learn_toy_tax.measure, learn_toy_tax.files),
    "run_020": lambda folder: learn_family.spot_check(learn_family.CONFIG, NOTES["run_020"],
                                                    folder),
    "run_021": lambda folder: learn_tiny_build.spot_check(learn_tiny.CONFIG, NOTES["run_021"],
                                                        folder),
}
"""Runs whose rebuild trains a model many times: `verify` runs their spot check instead, in
seconds, and says so; `regenerate` rebuilds them whole. Each keeps its raw records (`logs/`),
and its check makes every other file again from them (and checks the seal), then trains a part
again and compares: run_009, run_010 and run_011, run_013 (each repeated from ten seeds, 7 to
15 s; their checks measure seed 0 again and read the other seeds' numbers from
`logs/seeds.jsonl`, 1 to 2 s), run_012 (40 trainings, about 45 s on one core; its check
trains seed 0 of each β, 5 s), run_020 (80 trainings, about 55 s; seed 0 of each arm), run_021
(the tiny transformer trained 91 times from three bases, about 3,050 CPU-seconds; the first
steps of one arm, and the first base measured again)."""
OVER_SEEDS_SAYS = ("spot-checked: the seal, and every file made again from seed 0 measured "
                   "again and the other seeds' saved numbers, match,")
SPOT_CHECK_SAYS = {
    "run_009": OVER_SEEDS_SAYS,
    "run_010": OVER_SEEDS_SAYS,
    "run_011": OVER_SEEDS_SAYS,
    "run_012": "spot-checked: the seal, every file made from the saved trainings, and seed 0 "
               "of each β trained again match,",
    "run_013": OVER_SEEDS_SAYS,
    "run_020": "spot-checked: the seal, every file made from the saved trainings, and seed 0 "
               "of each arm trained again match,",
    "run_021": f"spot-checked: the seal, every file made from the saved logs, "
               f"{learn_tiny.CONFIG.spot_steps} steps trained again and the base measured "
               "again match,",
}
"""How `course runs verify` names what it checked of each `SPOT_CHECKED` run."""

CANONICAL: dict[str, Callable[[], runs.RunFiles]] = {
    "run_001": lambda: evaluation.build_run(EvalConfig(
        problems=DATA_DIR / "problems" / "dev.jsonl",
        rollouts=DATA_DIR / "rollouts" / "frozen_v1.jsonl",
        out=RUNS_DIR / "run_001"),
        f"Baseline: the {SCORER_VERSION} scorer on the frozen v1 rollouts of the dev split.",
        record_git=False),
    "run_002": lambda: selection.build_run(SelectionConfig(), (
        "Loop B selection: Best-of-N, pass@k and two controls on the frozen N=8 pack."),
        record_git=False),
    "run_003": lambda: bandit.build_run(BanditConfig(), (
        "Loop C bandit: REINFORCE with a running-mean baseline, plus the baseline ablation."),
        record_git=False),
    "run_004": lambda: mdp.build_run(MDPConfig(), (
        "Loop C two-step MDP: REINFORCE where the end reward credits both decisions."),
        record_git=False),
    "run_005": lambda: kl.build_run(KLConfig(), (
        "Loop C KL tradeoff: the exact KL-regularised optimum over a sweep of beta."),
        record_git=False),
    "run_006": lambda: rubrics.build_run(MatrixConfig(), (
        "Red team: the golden exploits and golden-correct set under strict and five weak "
        "rubrics."), record_git=False),
    "run_007": lambda: peers.build_run(ComparisonConfig(), (
        "Verifier comparison: our strict scorer, the hackable rubrics and four peer rules "
        "from other projects on the golden sets and near misses."), record_git=False),
    "run_008": lambda: goodhart.build_run(GoodhartConfig(), (
        "Goodhart toy: REINFORCE on the answer_anywhere proxy, the strict scorer only measured."),
        record_git=False),
    "run_009": lambda: learn_selection.build_run(learn_selection.CONFIG, NOTES["run_009"],
                                                 record_git=False),
    "run_010": lambda: learn_hack.build_shift_run(learn_hack.CONFIG, NOTES["run_010"],
                                                  record_git=False),
    "run_011": lambda: learn_hack.build_run(learn_hack.CONFIG, NOTES["run_011"],
                                            record_git=False),
    "run_012": lambda: learn_kl.build_run(learn_kl.CONFIG, NOTES["run_012"], record_git=False),
    "run_013": lambda: learn_toy_tax.build_run(learn_toy_tax.CONFIG, NOTES["run_013"],
                                               record_git=False),
    "run_014": lambda: _eval("holdout", ROLLOUTS / "holdout_v1.jsonl", "run_014", (
        f"Holdout: the {SCORER_VERSION} scorer on stand-in v1's rollouts of the 25 holdout "
        "problems, the first run to read the holdout.")),
    "run_015": lambda: _eval("holdout", ROLLOUTS / "holdout_v2.jsonl", "run_015", (
        "Holdout: stand-in v2 in place of v1 (run_014); same scorer, prompt version and "
        "sampling settings.")),
    "run_016": lambda: _compare("run_014", "run_015", "run_016", (
        "Holdout: stand-in v1 (run_014) against stand-in v2 (run_015), same walls.")),
    "run_017": lambda: _eval("dev", ROLLOUTS / "frozen_v2.jsonl", "run_017", (
        "Dev: stand-in v2 in place of v1 (run_001); same scorer, prompt version and sampling "
        "settings.")),
    "run_018": lambda: _compare("run_001", "run_017", "run_018", (
        "Dev: stand-in v1 (run_001) against stand-in v2 (run_017), same walls.")),
    "run_019": lambda: _eval("dev", ROLLOUTS / "frozen_v1.jsonl", "run_019", (
        "Forensics: run_001's rollouts scored by the earlier scorer strict-v0, kept with its "
        "bugs; read it beside run_001, never as a measurement."), scorer=PINNED["run_019"]),
    "run_020": lambda: learn_family.build_run(learn_family.CONFIG, NOTES["run_020"],
                                              record_git=False),
    "run_021": lambda: learn_tiny_build.build_run(learn_tiny.CONFIG, NOTES["run_021"],
                                                  record_git=False),
    "run_022": lambda: _eval("sums", SMOLLM / "sums_question_greedy.jsonl", "run_022", (
        "A real model: SmolLM2-135M-Instruct's greedy answers to the two-digit sums asked as "
        "the question alone, without the format sentence; the strict scorer.")),
    "run_023": lambda: _eval("sums", SMOLLM / "sums_final_greedy.jsonl", "run_023", (
        "A real model: SmolLM2-135M-Instruct's greedy answers to the two-digit sums with the "
        "course's format sentence (a new prompt version, so a new environment after "
        "run_022).")),
    "run_024": lambda: selection.build_run(SelectionConfig(
        pack=SMOLLM / "sums_oneshot_t0.7.jsonl",
        problems=DATA_DIR / "problems" / "sums.jsonl"), (
        "Loop B on a real model: SmolLM2-135M-Instruct's 8 samples at temperature 0.7 for each "
        "two-digit sum, asked after one demonstration of the format, in place of the "
        "stand-in's pack."),
        record_git=False),
    "run_025": lambda: real_model.build_run(real_model.RealModelConfig(), (
        "Loops A and B on a real model side by side: SmolLM2-135M-Instruct's answers to the dev "
        "problems and the sums, three prompt versions, greedy and two temperatures; strict and "
        "a lenient control."),
        record_git=False),
}
"""Run name -> function that rebuilds that run's files, deterministically. Every builder has
the same contract: `build_run(config, note, *, record_git=True)`. A comparison run reads the
committed folders of the two runs it compares (pinned by sha256 in its manifest), so it is
listed after them."""


def _eval(split: str, rollouts: Path, name: str, note: str,
          scorer: str = SCORER_VERSION) -> runs.RunFiles:
    """A Loop A run of the rollouts file `rollouts` on `data/problems/<split>.jsonl`."""
    return evaluation.build_run(EvalConfig(
        problems=DATA_DIR / "problems" / f"{split}.jsonl",
        rollouts=rollouts,
        out=RUNS_DIR / name, scorer=scorer), note, record_git=False)


def _compare(run_a: str, run_b: str, name: str, note: str) -> runs.RunFiles:
    """A saved Locked Room comparison of two committed canonical runs."""
    return comparison.build_run(CompareConfig(
        run_a=RUNS_DIR / run_a, run_b=RUNS_DIR / run_b, out=RUNS_DIR / name), note,
        record_git=False)


def _builder(name: str) -> Callable[[], runs.RunFiles]:
    if name not in CANONICAL:
        raise runs.RunError(f"{name!r} is not a canonical run; known: {', '.join(CANONICAL)}")
    return CANONICAL[name]


def stale(name: str, root: Path = RUNS_DIR) -> str | None:
    """The scorer version that measured the committed run `root / name` when it is not the one
    the run is built with now (`PINNED`, else `SCORER_VERSION`): the run is stale after a
    change of scorer. None when it is not stale, or when its manifest cannot be read (`verify`
    then says why)."""
    try:
        recorded = runs.read_json(root / name, "manifest.json").get("scorer_version")
    except runs.RunError:
        return None
    if not isinstance(recorded, str) or recorded == PINNED.get(name, SCORER_VERSION):
        return None
    return recorded


REGENERATE_STALE = "course runs regenerate --scorer-dependent"
"""The command that rewrites every stale run (`stale`)."""


def verify(names: Iterable[str] | None = None,
           root: Path = RUNS_DIR) -> dict[str, list[str]]:
    """Rebuild each named run (all by default) and diff it against `root / name`; a run of
    `SPOT_CHECKED` is spot-checked instead (its check says what it compares).

    A run measured by another scorer version than the one it is built with now (`stale`) is
    not rebuilt: its one difference says so, and which command regenerates it.

    Returns name -> list of differences (empty when the committed folder is byte-identical and
    its seal, if it has one, matches its files: `runs.unsealed`). A committed folder that
    cannot be read back whole (`runs.read_files`: a link, a FIFO, a stray empty folder, a
    manifest that is not JSON) or a run that cannot be rebuilt (a comparison whose runs were
    tampered with) is reported as a difference of one line, so the other runs are still
    checked.
    """
    report = {}
    for name in names or CANONICAL:
        builder = _builder(name)
        folder = root / name
        if (old := stale(name, root)) is not None:
            report[name] = [f"stale: measured by {old}, built with "
                            f"{PINNED.get(name, SCORER_VERSION)} now; `{REGENERATE_STALE}` "
                            "rewrites it"]
            continue
        missing = [f"{display_path(folder)} is missing "
                   f"(create it with `course runs regenerate {name}`)"]
        try:
            if name in SPOT_CHECKED:
                report[name] = SPOT_CHECKED[name](folder) if os.path.lexists(folder) else missing
                continue
            rebuilt = builder()
            if not os.path.lexists(folder):
                report[name] = missing
                continue
            committed = runs.read_files(folder)
            report[name] = runs.diff_files(committed, rebuilt) + (
                runs.unsealed(folder) if "manifest.json" in committed else [])
        except runs.RunError as err:
            report[name] = [" ".join(str(err).split())]
    return report


def regenerate(name: str, root: Path = RUNS_DIR, force: bool = False) -> Path:
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
    scratch = Path(tempfile.mkdtemp(prefix=f".{name}{runs.PARTIAL}", dir=root))
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


# -- rebuilding many runs at once: groups, processes, and what each tells the status line ---------

TOGETHER = (("run_010", "run_011"),)
"""Runs built from the same trainings (`course.reports.learn_hack.measure` keeps them): each
group is verified (or regenerated) in one process, so that its trainings run once."""
MAX_JOBS = 32
"""`--jobs` at most: each process holds one canonical run in memory, and more processes than
runs would wait idle."""
SLOWEST = ("run_020", "run_012")
"""Started first, so that the other runs fill the second process meanwhile: the longest checks
(about 8 and 5 s; every other run is rebuilt or spot-checked in under 4 s)."""


def committed_kind(name: str) -> str:
    """The kind of the committed run `name` as its manifest says it ("" if unreadable)."""
    try:
        return cut(str(runs.read_json(RUNS_DIR / name, "manifest.json").get("kind", "")), 24)
    except runs.RunError:
        return ""


_events: SimpleQueue[tuple[str, progress.Event]] | None = None
"""In a worker process of `verify`: where `_tell` sends what happens to each run."""


def _listen(events: SimpleQueue[tuple[str, progress.Event]]) -> None:
    """The worker process's initializer: keep the parent's queue, and draw no bar of its own."""
    global _events
    _events = events
    progress.muted = True


def _tell(name: str, event: progress.Event) -> None:
    """In a worker process: tell the parent what happens to `name` (`RunsStatus.tell`)."""
    if _events is not None:
        _events.put((name, event))


R = TypeVar("R")


@contextmanager
def rebuilding(name: str, tell: Callable[[str, progress.Event], None]) -> Iterator[None]:
    """Inside, `name` is being rebuilt: told started, then its long work's progress
    (`course.progress.listener`), then done."""
    tell(name, "started")
    progress.listener = lambda done, total: tell(name, (done, total))
    try:
        yield
    finally:
        progress.listener = None
    tell(name, "done")


def each_timed(names: tuple[str, ...], tell: Callable[[str, progress.Event], None],
               rebuild: Callable[[str], R]) -> list[tuple[str, R, float]]:
    """`rebuild` each of `names` in turn, `tell` told as it starts and ends (`rebuilding`):
    each run's name, what `rebuild` returned and the seconds it took."""
    results = []
    for name in names:
        with rebuilding(name, tell):
            start = time.perf_counter()
            found = rebuild(name)
        results.append((name, found, time.perf_counter() - start))
    return results


def verify_group(names: tuple[str, ...], tell: Callable[[str, progress.Event], None]
                  ) -> list[tuple[str, list[str], float]]:
    """`verify` each of `names` in turn: its differences and the seconds it took."""
    return each_timed(names, tell, lambda name: verify([name])[name])


def groups(names: list[str]) -> list[tuple[str, ...]]:
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


def regenerate_group(names: tuple[str, ...], tell: Callable[[str, progress.Event], None],
                     force: bool) -> list[tuple[str, Path, float]]:
    """`regenerate` each of `names` in turn: the folder written and the seconds it took."""
    return each_timed(names, tell, lambda name: regenerate(name, force=force))


def after_what_they_read(names: list[str]) -> list[list[str]]:
    """`names` in the order they can be rebuilt: first every run that reads no other run, then
    the comparisons, which read the committed folders of the runs they compare."""
    reading = [name for name in names if committed_kind(name) == "comparison"]
    return [phase for phase in ([n for n in names if n not in reading], reading) if phase]



def in_processes(work: Callable[[tuple[str, ...], Callable[[str, progress.Event], None]],
                                list[R]],
                 groups: list[tuple[str, ...]], jobs: int, status: progress.RunsStatus,
                 done: Callable[[list[R]], None]) -> None:
    """`work` on each of `groups` (`verify_group`, or `regenerate_group` with its `force`) in
    `jobs` processes: `done` with each group's results as it ends, and `status` told which run
    each process starts, how far its long work has got, or that it has finished, within half
    a second."""
    events: SimpleQueue[tuple[str, progress.Event]] = multiprocessing.SimpleQueue()
    with ProcessPoolExecutor(jobs, initializer=_listen, initargs=(events,)) as pool:
        pending = {pool.submit(work, group, _tell) for group in groups}
        while pending:
            ended, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            while not events.empty():
                status.tell(*events.get())
            for future in ended:
                done(future.result())
            status.draw()
