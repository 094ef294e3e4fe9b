"""Loop C on the tiny transformer over seeds (canonical `runs/run_021`), and its step table.

`course.tiny_learn` trains the tiny transformer of `course.tiny_lm` from its committed base
(`course.tiny_pretrain.load_base`); `course learn --model tiny-lm` runs it once and prints a
table. This module runs it from each seed of `RunConfig.seeds`, in five arms that differ in one
setting at a time, and asks four questions of what it saved:

1. transfer: RL samples train prompts only; does held-out strict pass@1 rise with train's?
2. sharpen or expand: does pass@k rise at every k up to 16, or only at small k, and are there
   more or fewer prompts that no sample in 64 solves, than the base has?
3. exploit and leash: trained on the hackable `answer_anywhere`, how much of what the policy
   writes is the exploit, what becomes of strict pass@1, and what does a KL leash of β = 0.1
   or 0.3 change?
4. entropy and reward: does the entropy per token fall as the reward rises?

Every answer is a count over seeds with its Wilson interval
(`course.evaluation.in_how_many_seeds`), and the numbers behind it, seed by seed.

The module reads top to bottom:

1. one BLAS thread (`one_blas_thread`): numpy's BLAS adds a matrix product's terms in another
   order on two threads, and a sample drawn near a boundary then flips: every run here is
   trained on one;
2. the step table that `course learn --model tiny-lm` prints and each run saves (`log_table`),
   and reading it back (`read_log`);
3. the run's settings (`RunConfig`, `ARMS`, `CONFIG`) and training one arm from one seed
   (`train_arm`: exactly what `course learn --model tiny-lm` trains);
4. the raw files (a step log per arm and seed, `checkpoints.jsonl`) and every other file made
   from them alone (`derived_files`: `summary.json`, `report.txt`, `README.md`, the sealed
   `manifest.json`);
5. the summary and the four questions (`summarise`, `questions`), and the report;
6. the whole run (`build_run`, its trainings in one process per core: about 18 minutes on two)
   and the check `course runs verify` runs instead (`spot_check`, a few seconds).
"""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from course import runs
from course.evaluation import in_how_many_seeds
from course.formatting import (
    COLUMNS,
    fixed,
    inline_code,
    markdown_table,
    paragraph,
    prose_text,
    rounded,
)
from course.jsonfiles import json_bytes, jsonl_bytes, jsonl_lines
from course.progress import Tally
from course.reports.learn import spread
from course.runs import RunFiles
from course.selection import pass_at_k_curve
from course.tiny_learn import (
    KS,
    SPLITS,
    EvalConfig,
    Evaluation,
    StepLog,
    TinyLearnConfig,
    TinyTraining,
    evaluate,
    evaluation_problems,
    train,
)
from course.tiny_lm import ModelConfig, Params, count_params
from course.tiny_pretrain import BASE_DIR, load_base

# -- 1. one BLAS thread ---------------------------------------------------------------------------

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The variables a BLAS reads for its thread count, once, when numpy loads."""
_SET_THREADS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                "openblas_set_num_threads64_", "openblas_set_num_threads")
"""What the OpenBLAS of numpy's wheels (or another OpenBLAS) calls its thread setter."""


def one_blas_thread() -> bool:
    """Run numpy's BLAS on one thread from now on, in this process and in those it starts.

    The `course` command has loaded numpy before any subcommand runs, so setting
    `OPENBLAS_NUM_THREADS=1` here would come too late for this process: the OpenBLAS that
    numpy's wheels ship (`numpy.libs/`) is told directly, by its own setter (ctypes). Returns
    True when the BLAS was told, or numpy was started with one thread; False when neither can
    be known (another BLAS build): runs are then slower and may differ in their bytes."""
    started_with_one = all(os.environ.get(name) == "1" for name in BLAS_THREADS[:2])
    for name in BLAS_THREADS:
        os.environ[name] = "1"                  # for the processes this one starts
    for library in sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("*openblas*")):
        loaded = ctypes.CDLL(str(library))      # already loaded by numpy: the same library
        setter = next((getattr(loaded, name) for name in _SET_THREADS
                       if hasattr(loaded, name)), None)
        if setter is not None:
            setter(1)
            return True
    return started_with_one


# -- 2. the step table ----------------------------------------------------------------------------

LOG_LEGEND = paragraph(
    "Columns, on each step's fresh samples of train prompts, before its update: reward = mean "
    "reward paid by the scorer trained on; pass@1 = share the strict scorer pays; held-out = "
    "the same share on fresh samples of held-out prompts, never learned from; KL = mean "
    "log(π/π_ref) per completion, in nats; entropy = mean entropy per written token, in nats; "
    "length = mean tokens per completion, the end token included; exploit = share of "
    "exploits (several numbers, the answer among them).")
"""Printed once, above the step table (`LOG_HEADER`), in the terminal and in each saved log."""

LOG_HEADER = (f"{'step':>5}  {'reward':>6}  {'pass@1':>6}  {'held-out':>8}  {'KL':>7}  "
              f"{'entropy':>7}  {'length':>6}  {'exploit':>7}")

LOG_FIELDS = ("step", "reward", "pass_at_1", "held_out_pass_at_1", "kl", "entropy", "length",
              "exploit_share")
"""The `StepLog` fields of the table's columns, in order (its gradient norm is not shown)."""


def log_line(entry: StepLog) -> str:
    """One step as a row of the step table: 3 decimals, 2 for the length."""
    return (f"{entry.step:>5}  {fixed(entry.reward):>6}  {fixed(entry.pass_at_1):>6}  "
            f"{fixed(entry.held_out_pass_at_1):>8}  {fixed(entry.kl):>7}  "
            f"{fixed(entry.entropy):>7}  {fixed(entry.length, digits=2):>6}  "
            f"{fixed(entry.exploit_share):>7}")


def log_table(entries: Sequence[StepLog]) -> str:
    """The step table: `LOG_LEGEND` once, the headings, one `log_line` per entry."""
    return "\n".join([LOG_LEGEND, LOG_HEADER, *map(log_line, entries)])


def log_bytes(entries: Sequence[StepLog]) -> bytes:
    """A saved step log: `log_table` of every step, as `course learn --model tiny-lm
    --log-every 1` prints it."""
    return (log_table(entries) + "\n").encode("utf-8")


def read_log(raw: bytes) -> list[dict[str, float]]:
    """The rows of a saved step log (`log_bytes`) as `LOG_FIELDS` -> value, read back from
    the text (so at its 3 decimals). `ValueError` if it is not such a log."""
    lines = raw.decode("utf-8").splitlines()
    if LOG_HEADER not in lines:
        raise ValueError("no step table in it (its heading line is missing)")
    rows = lines[lines.index(LOG_HEADER) + 1:]
    parsed = [dict(zip(LOG_FIELDS, map(float, row.split()), strict=True)) for row in rows]
    if [row["step"] for row in parsed] != list(range(1, len(parsed) + 1)):
        raise ValueError("its steps are not 1, 2, 3, ... in order")
    return parsed


# -- 3. the run's settings, and one arm from one seed ---------------------------------------------

ARMS: dict[str, dict[str, Any]] = {
    "strict_rloo": {"reward": "strict", "advantage": "rloo", "beta": 0.0},
    "strict_grpo": {"reward": "strict", "advantage": "grpo", "beta": 0.0},
    "proxy_beta_0": {"reward": "answer_anywhere", "advantage": "rloo", "beta": 0.0},
    "proxy_beta_0.1": {"reward": "answer_anywhere", "advantage": "rloo", "beta": 0.1},
    "proxy_beta_0.3": {"reward": "answer_anywhere", "advantage": "rloo", "beta": 0.3},
}
"""Each arm's settings beyond `RunConfig.learn`: trained on the strict scorer (the leave-one-out
baseline, then GRPO), then on the hackable `answer_anywhere` (strict only measured) with no
KL leash and with two."""
STRICT_ARMS = ("strict_rloo", "strict_grpo")
PROXY_ARMS = ("proxy_beta_0", "proxy_beta_0.1", "proxy_beta_0.3")


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides the canonical run, given the committed base."""

    learn: TinyLearnConfig = field(default_factory=lambda: TinyLearnConfig(steps=200))
    """What every arm shares (`course.tiny_learn`): lr 3e-4, 16 prompts x 8 samples a step,
    τ = 1, 24 tokens at most, 200 steps; `ARMS` sets the reward, the advantage and β."""
    arms: tuple[str, ...] = tuple(ARMS)
    """The arms run, names of `ARMS`."""
    seeds: tuple[int, ...] = tuple(range(10))
    """Each arm is trained from each of these seeds; 10, as the token policy's sweeps
    (run_012, run_020): a claim that holds in 10 of 10 has a Wilson interval from 0.72, in 5
    of 5 only from 0.57. About 35 minutes of one core, 1.2 MB of logs and counts."""
    checkpoints: tuple[int, ...] = (0, 50, 100, 200)
    """Steps after which both splits are measured; 0 is the base, the same in every run."""
    measure: EvalConfig = field(default_factory=lambda: EvalConfig(prompts=128, samples=64))
    """How a checkpoint measures: 128 prompts of each split, 64 fresh samples each (pass@k up
    to 64), from a generator of its own (the same draws at every checkpoint of every run)."""
    dr_grpo_seed: int = 0
    """Dr. GRPO is trained once, from this seed, without checkpoints, to show that its step log
    is RLOO's: its advantage is RLOO's times (G - 1)/G, a constant that Adam divides out."""
    spot_arm: str = "proxy_beta_0.1"
    """The arm `spot_check` trains again: its reward, scorer, labels and KL term all act."""
    spot_steps: int = 10
    """How many of the spot arm's first steps (from the first seed) `spot_check` trains again."""

    def arm_config(self, arm: str, seed: int, **changes: Any) -> TinyLearnConfig:
        """The training config of `arm` from `seed` (`changes` override, e.g. `steps`)."""
        return replace(self.learn, seed=seed, **{**ARMS[arm], **changes})


CONFIG = RunConfig()
"""The canonical run's settings (`runs/run_021`)."""


def train_arm(config: TinyLearnConfig, model: ModelConfig, base: Params,
              checkpoints: Sequence[int], measure: EvalConfig) -> TinyTraining:
    """Train from `base` with the generator `numpy.random.default_rng(config.seed)`, measuring
    at `checkpoints`: what `course learn --model tiny-lm` does, and each run of the canonical
    run (checkpoints draw from a generator of their own, so they do not change the training)."""
    return train(config, model, base, np.random.default_rng(config.seed), checkpoints, measure)


# -- 4. the files: raw, and made from the raw -----------------------------------------------------

def log_name(arm: str, seed: int) -> str:
    """Where the step log of `arm` from `seed` is saved in the run folder."""
    return f"logs/{arm}/seed_{seed}.txt"


CHECKPOINTS_FILE = "checkpoints.jsonl"
"""One line per arm, seed, checkpoint and split: the raw counts of each prompt's correct
samples, and the entropy, length and exploit share measured on the same samples."""


def checkpoint_rows(arm: str, seed: int, evaluations: Mapping[int, Evaluation]
                    ) -> list[dict[str, Any]]:
    """The lines of `CHECKPOINTS_FILE` for one run (4 decimals)."""
    return [{"arm": arm, "seed": seed, "step": step, "split": split,
             "samples": measured.samples, "correct": list(measured.correct),
             "entropy": round(measured.entropy, 4), "length": round(measured.length, 4),
             "exploit_share": round(measured.exploit_share, 4)}
            for step, both in sorted(evaluations.items()) for split, measured in both.items()]


def raw_names(config: RunConfig) -> list[str]:
    """The run's raw files: a step log per arm and seed, Dr. GRPO's, and the checkpoints."""
    return [*(log_name(arm, seed) for arm in config.arms for seed in config.seeds),
            log_name("strict_dr_grpo", config.dr_grpo_seed), CHECKPOINTS_FILE]


def derived_files(config: RunConfig, raw: Mapping[str, bytes], note: str,
                  record_git: bool = False) -> RunFiles:
    """The whole run folder from its raw files alone: the raw files, `summary.json`,
    `report.txt` and `README.md` made from them, and `manifest.json` sealing them all
    (`runs.sealed`: each file's sha256 and the manifest's own). `ValueError` if a raw file is
    missing or cannot be read."""
    missing = [name for name in raw_names(config) if name not in raw]
    if missing:
        raise ValueError(f"missing: {', '.join(missing)}")
    summary = summarise(config, raw)
    files = {**{name: raw[name] for name in raw_names(config)},
             "summary.json": json_bytes(summary),
             "report.txt": report_text(summary).encode("utf-8"),
             "README.md": render_readme(summary, note).encode("utf-8")}
    return runs.sealed(run_manifest(config, note, record_git), files)


def run_manifest(config: RunConfig, note: str, record_git: bool) -> dict[str, Any]:
    """What the run was made from: the base (its files pinned by sha256) and every setting."""
    record = {"learn": asdict(config.learn), "arms": {arm: ARMS[arm] for arm in config.arms},
              "seeds": list(config.seeds), "checkpoints": list(config.checkpoints),
              "measure": asdict(config.measure), "dr_grpo_seed": config.dr_grpo_seed,
              "spot_check": {"arm": config.spot_arm, "seed": config.seeds[0],
                             "steps": config.spot_steps},
              "blas_threads": 1}
    return runs.manifest(kind="learn_tiny", note=note, config=record,
                         inputs={"base": BASE_DIR / "base.npz",
                                 "base_provenance": BASE_DIR / "provenance.json"},
                         seed=config.seeds[0], record_git=record_git)


# -- 5. the summary and the four questions --------------------------------------------------------

def measured(row: Mapping[str, Any]) -> dict[str, Any]:
    """One line of `CHECKPOINTS_FILE` as the numbers the questions read: pass@k for each k of
    `KS` (the mean over prompts of the unbiased estimator, from the raw counts), the prompts no
    sample solved, entropy, length, exploit share."""
    n, correct = row["samples"], row["correct"]
    curves = np.array([pass_at_k_curve(n, c) for c in correct])
    return {"pass_at": {str(k): round(float(curves[:, k - 1].mean()), 4) for k in KS if k <= n},
            "never_solved": sum(c == 0 for c in correct), "prompts": len(correct),
            "entropy": row["entropy"], "length": row["length"],
            "exploit_share": row["exploit_share"]}


Point = dict[tuple[str, int, int, str], dict[str, Any]]
"""(arm, seed, step, split) -> `measured`."""


def read_raw(config: RunConfig, raw: Mapping[str, bytes]
             ) -> tuple[dict[tuple[str, int], list[dict[str, float]]], Point]:
    """The step logs by (arm, seed) and the checkpoints by (arm, seed, step, split), checked
    to be exactly the ones `config` makes. `ValueError` otherwise."""
    logs = {(arm, seed): read_log(raw[log_name(arm, seed)])
            for arm in config.arms for seed in config.seeds}
    for (arm, seed), rows in logs.items():
        if len(rows) != config.learn.steps:
            raise ValueError(f"{log_name(arm, seed)}: {len(rows)} steps, not "
                             f"{config.learn.steps}")
    points: Point = {}
    for _, line in jsonl_lines(raw[CHECKPOINTS_FILE].decode("utf-8")):
        row = json.loads(line)
        points[(row["arm"], row["seed"], row["step"], row["split"])] = measured(row)
    expected = {(arm, seed, step, split) for arm in config.arms for seed in config.seeds
                for step in config.checkpoints for split in SPLITS}
    if set(points) != expected:
        raise ValueError(f"{CHECKPOINTS_FILE}: not one line per arm, seed, checkpoint and "
                         f"split ({len(points)} distinct, {len(expected)} expected)")
    return logs, points


def window(rows: Sequence[Mapping[str, float]], field_name: str, first: bool,
           size: int = 10) -> float:
    """The mean of a step-log column over the first or the last `size` steps."""
    part = rows[:size] if first else rows[-size:]
    return float(np.mean([row[field_name] for row in part]))


def claim(text: str, holds: Sequence[bool]) -> dict[str, Any]:
    """A claim over seeds: what it says, whether it holds in each seed, and the count with its
    Wilson interval."""
    return {"claim": text, "holds": [bool(h) for h in holds],
            "count": in_how_many_seeds(holds)}


def rows_block(title: str, rows: Sequence[tuple[str, Sequence[float]]],
               claims: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One table of a question: a row per quantity, its value in each seed (`spread`), shown
    with 3 decimals, or none for a count (a row of Python ints), and the claims it supports."""
    return {"title": title,
            "rows": [{"label": label, "digits": 0 if all(isinstance(v, int) for v in values)
                      else 3, **spread(values)} for label, values in rows],
            "claims": list(claims)}


def questions(config: RunConfig, logs: Mapping[tuple[str, int], list[dict[str, float]]],
              points: Point) -> dict[str, dict[str, Any]]:
    """The four questions, each a few `rows_block`s (per-seed values and claims)."""
    seeds, last, n = config.seeds, config.checkpoints[-1], config.measure.samples
    top = max(k for k in KS if k <= n)          # pass@64 with the canonical 64 samples

    def at(arm: str, step: int, split: str, key: str, k: int | None = None) -> list[float]:
        values = [points[(arm, s, step, split)] for s in seeds]
        return [v["pass_at"][str(k)] if k is not None else v[key] for v in values]

    def change(arm: str, split: str, key: str, k: int | None = None) -> list[float]:
        return [b - a for a, b in zip(at(arm, 0, split, key, k), at(arm, last, split, key, k),
                                      strict=True)]

    def watched(arm: str, first: bool) -> list[float]:
        return [window(logs[(arm, s)], "held_out_pass_at_1", first) for s in seeds]

    transfer, sharpen = [], []
    for arm in (a for a in STRICT_ARMS if a in config.arms):
        gain_train = change(arm, "train", "pass_at", 1)
        gain_held = change(arm, "held_out", "pass_at", 1)
        transfer.append(rows_block(f"{arm}: strict pass@1, step 0 -> {last}", [
            ("train, step 0", at(arm, 0, "train", "pass_at", 1)),
            (f"train, step {last}", at(arm, last, "train", "pass_at", 1)),
            ("held-out, step 0", at(arm, 0, "held_out", "pass_at", 1)),
            (f"held-out, step {last}", at(arm, last, "held_out", "pass_at", 1)),
            ("gain, train", gain_train), ("gain, held-out", gain_held),
            ("held-out, every step: first 10", watched(arm, first=True)),
            ("held-out, every step: last 10", watched(arm, first=False))], [
            claim("held-out pass@1 rose", [g > 0 for g in gain_held]),
            claim("the held-out gain is at least half the train gain",
                  [h >= t / 2 for h, t in zip(gain_held, gain_train, strict=True)]),
            claim("the held-out gain is at least the train gain",
                  [h >= t for h, t in zip(gain_held, gain_train, strict=True)]),
            claim("held-out pass@1 of the last 10 steps' watch batches is above the first 10's",
                  [b > a for a, b in zip(watched(arm, True), watched(arm, False),
                                         strict=True)])]))
        for split in SPLITS:
            ks = [k for k in KS if k <= min(16, n)]
            deltas = {k: change(arm, split, "pass_at", k) for k in ks}
            never = at(arm, last, split, "never_solved")
            base_never = at(arm, 0, split, "never_solved")
            sharpen.append(rows_block(
                f"{arm}, {split.replace('_', '-')}: pass@k at step {last} minus the base's",
                [*((f"pass@{k} change", deltas[k]) for k in ks),
                 (f"pass@{top}, step {last}", at(arm, last, split, "pass_at", top)),
                 (f"never solved in {n}, step {last}", never),
                 (f"never solved in {n}, base", base_never)],
                [*(claim(f"pass@{k} rose", [d > 0 for d in deltas[k]]) for k in ks),
                 claim("more prompts never solved than the base",
                       [n > b for n, b in zip(never, base_never, strict=True)]),
                 claim("fewer prompts never solved than the base",
                       [n < b for n, b in zip(never, base_never, strict=True)])]))

    proxies = [a for a in PROXY_ARMS if a in config.arms]
    exploit = []
    for arm in proxies:
        kl = [window(logs[(arm, s)], "kl", first=False) for s in seeds]
        share = at(arm, last, "train", "exploit_share")
        strict = at(arm, last, "train", "pass_at", 1)
        claims = [claim("the exploit share is above the base's",
                        [x > b for x, b in zip(share, at(arm, 0, "train", "exploit_share"),
                                               strict=True)]),
                  claim("strict pass@1 is below the base's",
                        [p < b for p, b in zip(strict, at(arm, 0, "train", "pass_at", 1),
                                               strict=True)])]
        if arm != proxies[0]:
            free = proxies[0]
            claims += [
                claim(f"the exploit share is below {free}'s, same seed",
                      [x < y for x, y in zip(share, at(free, last, "train", "exploit_share"),
                                             strict=True)]),
                claim(f"strict pass@1 is above {free}'s, same seed",
                      [p > q for p, q in zip(strict, at(free, last, "train", "pass_at", 1),
                                             strict=True)])]
        exploit.append(rows_block(f"{arm} (β = {ARMS[arm]['beta']}), step {last}", [
            ("exploit share, base", at(arm, 0, "train", "exploit_share")),
            ("exploit share, train", share),
            ("exploit share, held-out", at(arm, last, "held_out", "exploit_share")),
            ("strict pass@1, base", at(arm, 0, "train", "pass_at", 1)),
            ("strict pass@1, train", strict),
            ("strict pass@1, held-out", at(arm, last, "held_out", "pass_at", 1)),
            ("reward paid, last 10 steps",
             [window(logs[(arm, s)], "reward", first=False) for s in seeds]),
            ("KL (nats), last 10 steps", kl),
            ("length, train", at(arm, last, "train", "length"))], claims))

    entropy = []
    for arm in config.arms:
        reward = [window(logs[(arm, s)], "reward", False) - window(logs[(arm, s)], "reward", True)
                  for s in seeds]
        per_token = [window(logs[(arm, s)], "entropy", False)
                     - window(logs[(arm, s)], "entropy", True) for s in seeds]
        measured_change = change(arm, "train", "entropy")
        entropy.append(rows_block(f"{arm}: last 10 steps minus first 10", [
            ("reward change", reward), ("entropy change (batch)", per_token),
            (f"entropy change (step 0 -> {last})", measured_change)], [
            claim("the reward rose", [r > 0 for r in reward]),
            claim("the entropy per token fell", [e < 0 for e in per_token]),
            claim("the reward rose and the entropy fell",
                  [r > 0 and e < 0 for r, e in zip(reward, per_token, strict=True)])]))
    return {
        "transfer": {"question": "Does learning on train prompts carry to held-out prompts?",
                     "blocks": transfer},
        "sharpen_or_expand": {"question": "Does RL sharpen (pass@1 up, pass@k at large k flat "
                                          "or down) or expand (pass@k up at every k)?",
                              "blocks": sharpen},
        "exploit_and_leash": {"question": "Trained on answer_anywhere, does the policy find the "
                                          "exploit, and does the KL leash hold it?",
                              "blocks": exploit},
        "entropy_and_reward": {"question": "Does the entropy per token fall as the reward "
                                           "rises?", "blocks": entropy},
    }


CURVES = ("pass@1", "pass@16", "never_solved", "entropy", "length", "exploit_share")
"""What `summarise` keeps of every checkpoint, as curves over the steps."""


def value_of(point: Mapping[str, Any], key: str) -> float:
    """A key of `CURVES` read from a `measured` point."""
    return point["pass_at"][key.removeprefix("pass@")] if key.startswith("pass@") else point[key]


def band(values: Sequence[float]) -> dict[str, float]:
    """One number over seeds as its median, smallest and largest value (4 decimals); each
    seed's value is in `CHECKPOINTS_FILE`."""
    return {"median": rounded(np.median(values)), "min": rounded(min(values)),
            "max": rounded(max(values))}


def summarise(config: RunConfig, raw: Mapping[str, bytes]) -> dict[str, Any]:
    """Everything the run's report says, from its raw files alone."""
    logs, points = read_raw(config, raw)
    base = {split: points[(config.arms[0], config.seeds[0], 0, split)] for split in SPLITS}
    if any(points[(arm, seed, 0, split)] != base[split] for arm in config.arms
           for seed in config.seeds for split in SPLITS):
        raise ValueError("the step-0 measurements differ between runs: each is the base, "
                         "measured from the same generator")
    dr_grpo = read_log(raw[log_name("strict_dr_grpo", config.dr_grpo_seed)])
    rloo = logs[("strict_rloo", config.dr_grpo_seed)]
    same = next((i for i, (a, b) in enumerate(zip(dr_grpo, rloo, strict=False)) if a != b),
                min(len(dr_grpo), len(rloo)))
    curves = {arm: {split: {"steps": list(config.checkpoints), **{
        key: [band([value_of(points[(arm, seed, step, split)], key) for seed in config.seeds])
              for step in config.checkpoints] for key in CURVES
        if not key.startswith("pass@") or int(key[5:]) <= config.measure.samples}}
        for split in SPLITS} for arm in config.arms}
    return {
        "kind": "learn_tiny",
        "arms": {arm: ARMS[arm] for arm in config.arms},
        "seeds": list(config.seeds),
        "steps": config.learn.steps,
        "learn": {key: getattr(config.learn, key)
                  for key in ("prompts", "group", "lr", "temperature", "max_new")},
        "checkpoints": list(config.checkpoints),
        "measure": {"prompts": config.measure.prompts, "samples": config.measure.samples,
                    "seed": config.measure.seed, "watch": config.measure.watch,
                    "ks": [k for k in KS if k <= config.measure.samples]},
        "base": base,
        "curves": curves,
        "dr_grpo": {"seed": config.dr_grpo_seed, "steps": len(dr_grpo),
                    "first_rows_equal_to_rloo": same,
                    "reward_last_50_steps": {
                        "dr_grpo": round(window(dr_grpo, "reward", False, 50), 4),
                        "rloo": round(window(rloo, "reward", False, 50), 4)}},
        "questions": questions(config, logs, points),
    }


# -- the report -----------------------------------------------------------------------------------

SEED_HEADER = ("", "median", "min", "max")
"""The columns of a block's table (`seed_table`); each seed's value is in `summary.json`."""


def seed_table(block: Mapping[str, Any]) -> list[list[str]]:
    """A block's rows as cells: the label, then the median, smallest and largest value over
    seeds."""
    return [[row["label"], *(fixed(row[key], digits=row["digits"]) for key in SEED_HEADER[1:])]
            for row in block["rows"]]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as fixed-width text: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                      for i, (cell, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in [header, *rows]]


def dr_grpo_text(dr: Mapping[str, Any]) -> str:
    """What Dr. GRPO's one run shows, in a few sentences."""
    last = dr["reward_last_50_steps"]
    return (f"Dr. GRPO, trained once from seed {dr['seed']}: the first "
            f"{dr['first_rows_equal_to_rloo']} of its {dr['steps']} step-log rows are RLOO's "
            "from the same seed, byte for byte. Its advantage is RLOO's times (G - 1)/G, a "
            "constant that Adam divides out; computed another way, it rounds differently in "
            "the last bits, until a sample drawn near a boundary flips and the two runs part. "
            f"Mean reward over the last 50 steps: {last['dr_grpo']:.3f} (Dr. GRPO), "
            f"{last['rloo']:.3f} (RLOO).")


def report_text(summary: Mapping[str, Any]) -> str:
    """The four answers at 80 columns: per question, a table per arm (the median, smallest and
    largest value over seeds) and each claim as a count over seeds."""
    seeds, measure = summary["seeds"], summary["measure"]
    lines = [
        *paragraph(f"Loop C on the tiny transformer: {len(summary['arms'])} arms x "
                   f"{len(seeds)} seeds, {summary['steps']} steps each. Checkpoints measure "
                   f"{measure['prompts']} prompts of each split, {measure['samples']} fresh "
                   "samples each; claims are counts over seeds with the 95% Wilson "
                   "interval.").split("\n"), ""]
    for number, item in enumerate(summary["questions"].values(), start=1):
        lines += [*paragraph(f"{number}. {item['question']}").split("\n"), ""]
        for block in item["blocks"]:
            lines += [f"  {block['title']}",
                      *("  " + row for row in text_table(SEED_HEADER, seed_table(block)))]
            lines += [*("  " + line for c in block["claims"]
                        for line in paragraph(f"{c['claim']}: {c['count']}",
                                              hanging="    ", width=COLUMNS - 2).split("\n"))]
            lines.append("")
    lines += paragraph(dr_grpo_text(summary["dr_grpo"])).split("\n")
    wide = [line for line in lines if len(line) > COLUMNS]
    if wide:
        raise ValueError(f"a report line is wider than {COLUMNS} columns: {wide[0]!r}")
    return "\n".join(lines) + "\n"


def render_readme(summary: Mapping[str, Any], note: str) -> str:
    """The run's README: what was run, then each question's tables and claims."""
    seeds, measure, base, learn = (summary["seeds"], summary["measure"], summary["base"],
                                   summary["learn"])
    params, pretrain, provenance = load_base()
    top = measure["ks"][-1]
    arms = [f"- `{arm}`: reward {inline_code(s['reward'])}, advantage `{s['advantage']}`, "
            f"β = {s['beta']}" for arm, s in summary["arms"].items()]
    lines = [
        "# Loop C on a tiny transformer: transfer, sharpening, the proxy's exploit, entropy",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"The tiny transformer ({pretrain.model.n_layer} layers, width "
        f"{pretrain.model.n_embd}, {count_params(params):,} parameters) starts from "
        f"its committed base (`data/tiny_lm/base.npz`, sha256 `{provenance['sha256'][:16]}`) "
        f"and is trained by `course.tiny_learn` for {summary['steps']} steps from each of seeds "
        f"{seeds[0]}-{seeds[-1]}, in each arm below: {learn['prompts']} train prompts x "
        f"{learn['group']} fresh samples a step, lr {learn['lr']:g} (Adam, gradient norm "
        f"clipped at 1), temperature {learn['temperature']:g}, at most {learn['max_new']} "
        "tokens a completion. RL draws train prompts only; held-out prompts are only "
        "measured.",
        "",
        *arms,
        "",
        f"At steps {', '.join(map(str, summary['checkpoints']))}, "
        f"{measure['prompts']} prompts of each split (evenly spaced over the split) are "
        f"sampled {measure['samples']} times each, from a generator of their own: strict "
        "pass@k for k up to 64 (the unbiased estimator), the prompts no sample solved, "
        "entropy, length, exploit share. At step 0 this is the base: strict pass@1 "
        f"{base['train']['pass_at']['1']:.3f} train, {base['held_out']['pass_at']['1']:.3f} "
        f"held-out; pass@{top} {base['train']['pass_at'][str(top)]:.3f} and "
        f"{base['held_out']['pass_at'][str(top)]:.3f}, so sharpening and expanding are read "
        "at k up to 16 and in the prompts never solved.",
        "",
        f"At every step, before its update, {measure['watch']} held-out prompts drawn at "
        f"random are sampled {learn['group']} times each, as a training batch is, from a "
        "generator of their own, and scored strictly (never learned from): held-out pass@1 "
        "per step, the `held-out` column of each step log.",
        "",
        "Each run is `course learn --model tiny-lm --reward R --advantage A --beta B "
        f"--steps {summary['steps']} --seed S`; its per-step table is "
        "`logs/ARM/seed_S.txt`. Each claim below is a count over seeds with its 95% Wilson "
        "interval; each table gives the median, smallest and largest value over the seeds "
        "(each seed's value is in `summary.json`).",
        "",
    ]
    for number, item in enumerate(summary["questions"].values(), start=1):
        lines += [f"## {number}. {item['question']}", ""]
        for block in item["blocks"]:
            lines += [f"**{prose_text(block['title'])}**", "",
                      *markdown_table(list(SEED_HEADER), seed_table(block)), "",
                      *(f"- {c['claim']}: {c['count']}" for c in block["claims"]), ""]
    dr = summary["dr_grpo"]
    lines += [
        "## Dr. GRPO",
        "",
        f"{dr_grpo_text(dr)} So it is not run as an arm of its own (its log: "
        f"`logs/strict_dr_grpo/seed_{dr['seed']}.txt`).",
        "",
        "## Files",
        "",
        "- `report.txt`: the answers above at 80 columns.",
        "- `logs/ARM/seed_S.txt`: every step's table row (reward, strict pass@1, KL, entropy, "
        "length, exploit share on the step's fresh samples of train prompts; strict pass@1 on "
        f"a watch batch of {measure['watch']} held-out prompts, never learned "
        "from).",
        f"- `{CHECKPOINTS_FILE}`: per arm, seed, checkpoint and split, how many of each "
        "prompt's samples the strict scorer pays, with entropy, length and exploit share.",
        "- `summary.json`: every number above, made from those two alone; `manifest.json`: "
        "the settings, the base's sha256 and each file's.",
        "",
        "## Reproduce",
        "",
        "`course runs regenerate run_021 --force` trains every arm again (minutes) and rewrites "
        "the folder; the bytes match on one machine with numpy's BLAS on one thread (another "
        "CPU may round float32 differently and draw other samples). `course runs verify "
        "run_021` checks it in seconds: the seal, every file made from the raw files, and the "
        "first steps of one arm trained again.",
        "",
    ]
    return "\n".join(lines)


# -- 6. the whole run, and the spot check ---------------------------------------------------------

def _trained(arm: str, seed: int, training: TinyLearnConfig, checkpoints: Sequence[int],
             measure: EvalConfig) -> tuple[bytes, list[dict[str, Any]]]:
    """One training of `build_run`, in a process of its own: its step log and its checkpoint
    rows. Each training starts from the base with its own seed, so which process runs it, and
    when, changes no byte."""
    one_blas_thread()
    base, pretrain, _ = load_base()
    run = train_arm(training, pretrain.model, base, checkpoints, measure)
    return log_bytes(run.logs), checkpoint_rows(arm, seed, run.evaluations)


def build_run(config: RunConfig, note: str, *, record_git: bool = True,
              jobs: int | None = None) -> RunFiles:
    """Train every arm from every seed, and Dr. GRPO once (about 45 s a training on one core),
    in `jobs` processes side by side (default: one per core), and return the run folder's
    files, the same bytes whatever `jobs` is."""
    trainings = {(arm, seed): (config.arm_config(arm, seed), config.checkpoints)
                 for arm in config.arms for seed in config.seeds}
    dr_grpo = ("strict_dr_grpo", config.dr_grpo_seed)
    trainings[dr_grpo] = (config.arm_config("strict_rloo", config.dr_grpo_seed,
                                            advantage="dr_grpo"), ())
    tally = Tally(len(trainings))
    with ProcessPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        futures = {pool.submit(_trained, arm, seed, training, checkpoints, config.measure):
                   (arm, seed) for (arm, seed), (training, checkpoints) in trainings.items()}
        done = {futures[future]: future.result()
                for future in tally.counted(as_completed(futures))}
    raw = {log_name(arm, seed): done[(arm, seed)][0] for arm, seed in trainings}
    raw[CHECKPOINTS_FILE] = jsonl_bytes([row for key in trainings if key != dr_grpo
                                         for row in done[key][1]])
    return derived_files(config, raw, note, record_git)


SPOT_CHUNK = 64
"""Prompts of the base's train measurement that `spot_check` samples again: its first chunk
(`tiny_learn.SIDE_BY_SIDE` samples side by side, 64 prompts x 64)."""


def spot_check(config: RunConfig, note: str, folder: Path) -> list[str]:
    """What `course runs verify` checks of the run in `folder`, in seconds (the whole run takes
    minutes; `course runs regenerate` rebuilds it whole). One line per difference:

    1. every file made from the raw files (`summary.json`, `report.txt`, `README.md`,
       `manifest.json` with its seal of each file's sha256) is made again from the committed
       raw files and compared byte for byte: an edited number, a missing or extra file, a
       setting of `config` that is not the run's, or a raw file changed after it was sealed,
       all show;
    2. the first `config.spot_steps` steps of `config.spot_arm` from the first seed are trained
       again from the base: their rows must be the first rows of its saved log, byte for byte;
    3. the first `SPOT_CHUNK` prompts of the base's train measurement (step 0) are sampled
       again: their correct counts must be the saved ones.
    """
    one_blas_thread()
    committed = runs.read_files(folder)
    raw = {name: content for name, content in committed.items()
           if name.startswith("logs/") or name == CHECKPOINTS_FILE}
    try:
        rebuilt = derived_files(config, raw, note)
    except (ValueError, KeyError, TypeError) as err:
        return [f"the raw files cannot be read back: {' '.join(str(err).split())}"]
    differences = runs.diff_files(committed, rebuilt) + runs.unsealed(folder)
    base, pretrain, _ = load_base()
    seed, steps = config.seeds[0], config.spot_steps
    again = train_arm(config.arm_config(config.spot_arm, seed, steps=steps), pretrain.model,
                      base, (), config.measure).logs
    saved = raw[log_name(config.spot_arm, seed)].decode("utf-8").splitlines()
    header = saved.index(LOG_HEADER) + 1 if LOG_HEADER in saved else len(saved)
    for row, line in zip(map(log_line, again), saved[header:header + steps], strict=False):
        if row != line:
            differences.append(f"{log_name(config.spot_arm, seed)}: trained again, step "
                               f"{row.split()[0]} reads {row.split()[1:]}, saved "
                               f"{line.split()[1:]}")
            break
    measure = config.measure
    first = evaluate(base, pretrain.model, evaluation_problems("train", measure.prompts)
                     [:SPOT_CHUNK], measure.samples, config.learn.temperature,
                     config.learn.max_new, np.random.default_rng(measure.seed)).correct
    saved_counts = next(row["correct"] for row in map(json.loads, (
        line for _, line in jsonl_lines(raw[CHECKPOINTS_FILE].decode("utf-8"))))
        if row["step"] == 0 and row["split"] == "train")
    if list(first) != saved_counts[:SPOT_CHUNK]:
        differences.append(f"{CHECKPOINTS_FILE}: the base's train measurement, sampled again, "
                           f"differs in its first {SPOT_CHUNK} prompts")
    return differences
