"""Loop C on the tiny transformer over bases and seeds (canonical `runs/run_021`), and its step
table.

`course.tiny_learn` trains the tiny transformer of `course.tiny_lm` from a committed base
(`course.tiny_pretrain.load_base`); `course learn --model tiny-lm` runs it once and prints a
table. This module runs it from each of three bases (pre-trained from `RunConfig.bases`) with
each seed of `RunConfig.seeds`, in five arms that differ in one setting at a time, and asks
six questions of what it saved:

1. transfer: RL samples train prompts only; does held-out strict pass@1 rise with train's?
2. sharpen or expand: does pass@k rise at every k, or only at small k; are there more or
   fewer prompts that no sample in 64 solves than the base has; and of the prompts the base
   rarely solves, are more or fewer solved at least once than by the base measured again?
3. decoding: is RL's policy better than its base decoded greedily, and than its base sampled
   at the temperature whose entropy per token is the policy's?
4. exploit and leash: trained on the hackable `answer_anywhere`, how much of what the policy
   writes is the exploit, what becomes of strict pass@1, and what does a KL leash of β = 0.1
   or 0.3 change?
5. entropy and reward: does the entropy per token fall as the reward rises?
6. the first steps: how much KL do the first updates spend, under the warm-up?

Every answer is a count over runs (a base and a seed each) with its Wilson interval
(`course.evaluation.in_how_many_seeds`), then base by base, and the numbers behind it, run
by run.

The module reads top to bottom:

1. one BLAS thread (`one_blas_thread`): numpy's BLAS adds a matrix product's terms in another
   order on two threads, and a sample drawn near a boundary then flips: every run here is
   trained on one;
2. the step table that `course learn --model tiny-lm` prints and each run saves (`log_table`),
   and reading it back (`read_log`);
3. the run's settings (`RunConfig`, `ARMS`, `CONFIG`), training one arm from one base and
   seed (`train_arm`: exactly what `course learn --model tiny-lm` trains) and the decoding
   control (`greedy_held_out`, `base_at`);
4. the raw files (a step log per arm, base and seed, `checkpoints.jsonl`, `decoding.jsonl`)
   and every other file made from them alone (`derived_files`: `summary.json`, `report.txt`,
   `README.md`, the sealed `manifest.json`);
5. the summary and the six questions (`summarise`, `questions`), and the report;
6. the whole run (`build_run`, its trainings in one process per core: about 27 minutes on
   two) and the check `course runs verify` runs instead (`spot_check`, a few seconds).
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
from course.paths import display_path
from course.progress import Tally
from course.reports.learn import spread
from course.runs import RunFiles
from course.selection import pass_at_k_curve
from course.tiny_learn import (
    KS,
    SPLITS,
    EvalConfig,
    Evaluation,
    Measure,
    StepLog,
    TinyLearnConfig,
    TinyTraining,
    evaluate,
    evaluation_problems,
    train,
)
from course.tiny_lm import ModelConfig, Params, count_params
from course.tiny_pretrain import BASE_DIR, OTHER_BASES, base_dir, load_base

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

Origin = tuple[int, int]
"""Where one training starts: (the base's pre-training seed, the RL seed)."""


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides the canonical run, given the committed bases."""

    learn: TinyLearnConfig = field(default_factory=lambda: TinyLearnConfig(steps=200))
    """What every arm shares (`course.tiny_learn`): lr 3e-4 reached over a 20-step warm-up,
    16 prompts x 8 samples a step, τ = 1, 24 tokens at most, 200 steps; `ARMS` sets the
    reward, the advantage and β."""
    arms: tuple[str, ...] = tuple(ARMS)
    """The arms run, names of `ARMS`."""
    bases: tuple[int, ...] = (0, *OTHER_BASES)
    """The pre-training seeds of the bases trained from (`tiny_pretrain.base_dir`): the
    lessons' base and two more of the same config. Bases differ more than RL seeds do (the
    lessons' base solves about a third of the held-out samples, another a tenth), so a claim
    is counted over both."""
    seeds: tuple[int, ...] = tuple(range(6))
    """The RL seeds each arm is trained with from each base: 3 bases x 6 seeds = 18 runs an
    arm. A claim that holds in 18 of 18 has a Wilson interval from 0.82 (10 of 10: from
    0.72). About 55 minutes of one core, 2.5 MB of logs and counts."""
    checkpoints: tuple[int, ...] = (0, 50, 100, 200)
    """Steps after which both splits are measured; 0 is the base, the same in every run from
    it."""
    measure: EvalConfig = field(default_factory=lambda: EvalConfig(prompts=128, samples=64))
    """How a checkpoint measures: 128 prompts of each split, 64 fresh samples each (pass@k up
    to 64), from a generator of its own (the same draws at every checkpoint of every run)."""
    temperatures: tuple[float, ...] = tuple(round(0.2 + 0.05 * i, 2) for i in range(17))
    """The decoding control: each base samples the held-out prompts of `measure` at each of
    these temperatures, 0.2 to 1.0 (and greedily, as each trained policy is), so that a
    trained policy is compared with its base at the temperature whose entropy per token is
    its own (interpolated between two of these)."""
    decoding_seed: int = 2
    """Seed of the decoding control's generators (one per base and temperature): other draws
    than the checkpoints', so its τ = 1 is the base measured a second time."""
    dr_grpo_seed: int = 0
    """Dr. GRPO is trained once, from the first base with this seed, without checkpoints, to
    show that its step log is RLOO's: its advantage is RLOO's times (G - 1)/G, a constant
    that Adam divides out."""
    spot_arm: str = "proxy_beta_0.1"
    """The arm `spot_check` trains again: its reward, scorer, labels and KL term all act."""
    spot_steps: int = 10
    """How many of the spot arm's first steps (from the first base and seed) `spot_check`
    trains again."""

    def origins(self) -> list[Origin]:
        """Every (base, seed) an arm is trained from, base by base."""
        return [(base, seed) for base in self.bases for seed in self.seeds]

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


def greedy_held_out(params: Params, model: ModelConfig, config: RunConfig) -> Measure:
    """The held-out prompts of `config.measure`, each decoded greedily (τ = 0: the most
    likely token at every position; one completion a prompt, no draws)."""
    return evaluate(params, model, evaluation_problems("held_out", config.measure.prompts), 1,
                    0.0, config.learn.max_new, np.random.default_rng(config.decoding_seed))


def base_at(params: Params, model: ModelConfig, config: RunConfig, temperature: float
            ) -> Measure:
    """The held-out prompts of `config.measure` sampled from a base at `temperature`, from a
    generator of its own (`decoding_seed` and the temperature in hundredths)."""
    rng = np.random.default_rng([config.decoding_seed, round(temperature * 100)])
    return evaluate(params, model, evaluation_problems("held_out", config.measure.prompts),
                    config.measure.samples, temperature, config.learn.max_new, rng)


# -- 4. the files: raw, and made from the raw -----------------------------------------------------

def log_name(arm: str, base: int, seed: int) -> str:
    """Where the step log of `arm` from `base` with `seed` is saved in the run folder."""
    return f"logs/base_{base}/{arm}/seed_{seed}.txt"


CHECKPOINTS_FILE = "checkpoints.jsonl"
"""One line per arm, base, seed, checkpoint and split: the raw counts of each prompt's correct
samples, and the entropy, length and exploit share measured on the same samples."""

DECODING_FILE = "decoding.jsonl"
"""The decoding control's raw counts, on held-out prompts: a line per base and temperature
(`arm` "base", τ = 0 for greedy), and a line per trained policy decoded greedily."""

BASE_ROW = "base"
"""The `arm` of a base's lines in `DECODING_FILE`."""


def measure_row(keys: Mapping[str, Any], measured: Measure) -> dict[str, Any]:
    """One line of `CHECKPOINTS_FILE` or `DECODING_FILE`: `keys`, then what was measured
    (the counts whole, the rest to 4 decimals)."""
    return {**keys, "samples": measured.samples, "correct": list(measured.correct),
            "entropy": round(measured.entropy, 4), "length": round(measured.length, 4),
            "exploit_share": round(measured.exploit_share, 4)}


def checkpoint_rows(arm: str, origin: Origin, evaluations: Mapping[int, Evaluation]
                    ) -> list[dict[str, Any]]:
    """The lines of `CHECKPOINTS_FILE` for one training."""
    base, seed = origin
    return [measure_row({"arm": arm, "base": base, "seed": seed, "step": step, "split": split},
                        measured)
            for step, both in sorted(evaluations.items()) for split, measured in both.items()]


def raw_names(config: RunConfig) -> list[str]:
    """The run's raw files: a step log per arm, base and seed, Dr. GRPO's, the checkpoints and
    the decoding control."""
    return [*(log_name(arm, base, seed) for arm in config.arms
              for base, seed in config.origins()),
            log_name("strict_dr_grpo", config.bases[0], config.dr_grpo_seed), CHECKPOINTS_FILE,
            DECODING_FILE]


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
    """What the run was made from: the bases (their files pinned by sha256) and every
    setting."""
    record = {"learn": asdict(config.learn), "arms": {arm: ARMS[arm] for arm in config.arms},
              "bases": list(config.bases), "seeds": list(config.seeds),
              "checkpoints": list(config.checkpoints), "measure": asdict(config.measure),
              "temperatures": list(config.temperatures), "decoding_seed": config.decoding_seed,
              "dr_grpo_seed": config.dr_grpo_seed,
              "spot_check": {"arm": config.spot_arm, "base": config.bases[0],
                             "seed": config.seeds[0], "steps": config.spot_steps},
              "blas_threads": 1}
    inputs = {f"base_{base}{part}": base_dir(base) / name for base in config.bases
              for part, name in (("", "base.npz"), ("_provenance", "provenance.json"))}
    return runs.manifest(kind="learn_tiny", note=note, config=record, inputs=inputs,
                         seed=config.seeds[0], record_git=record_git)


# -- 5. the summary and the six questions ---------------------------------------------------------

def measured(row: Mapping[str, Any]) -> dict[str, Any]:
    """One line of `CHECKPOINTS_FILE` or `DECODING_FILE` as the numbers the questions read:
    pass@k for each k of `KS` up to its samples (the mean over prompts of the unbiased
    estimator, from the raw counts), the counts themselves, the prompts no sample solved,
    entropy, length, exploit share."""
    n, correct = row["samples"], row["correct"]
    curves = np.array([pass_at_k_curve(n, c) for c in correct])
    return {"pass_at": {str(k): round(float(curves[:, k - 1].mean()), 4) for k in KS if k <= n},
            "correct": list(correct), "never_solved": sum(c == 0 for c in correct),
            "prompts": len(correct), "entropy": row["entropy"], "length": row["length"],
            "exploit_share": row["exploit_share"]}


Logs = dict[tuple[str, int, int], list[dict[str, float]]]
"""(arm, base, seed) -> the rows of its step log."""
Point = dict[tuple[str, int, int, int, str], dict[str, Any]]
"""(arm, base, seed, step, split) -> `measured`."""
Decoded = dict[tuple[str, int, int, float], dict[str, Any]]
"""(arm, base, seed, τ) -> `measured` on held-out prompts; a base's lines have arm `BASE_ROW`
and seed -1; τ = 0 is greedy."""


def read_raw(config: RunConfig, raw: Mapping[str, bytes]) -> tuple[Logs, Point, Decoded]:
    """The step logs, the checkpoints and the decoding control, checked to be exactly the
    ones `config` makes. `ValueError` otherwise."""
    logs = {(arm, base, seed): read_log(raw[log_name(arm, base, seed)])
            for arm in config.arms for base, seed in config.origins()}
    for (arm, base, seed), rows in logs.items():
        if len(rows) != config.learn.steps:
            raise ValueError(f"{log_name(arm, base, seed)}: {len(rows)} steps, not "
                             f"{config.learn.steps}")
    points: Point = {}
    for _, line in jsonl_lines(raw[CHECKPOINTS_FILE].decode("utf-8")):
        row = json.loads(line)
        points[(row["arm"], row["base"], row["seed"], row["step"], row["split"])] = \
            measured(row)
    expected = {(arm, base, seed, step, split) for arm in config.arms
                for base, seed in config.origins() for step in config.checkpoints
                for split in SPLITS}
    if set(points) != expected:
        raise ValueError(f"{CHECKPOINTS_FILE}: not one line per arm, base, seed, checkpoint "
                         f"and split ({len(points)} distinct, {len(expected)} expected)")
    decoded: Decoded = {}
    for _, line in jsonl_lines(raw[DECODING_FILE].decode("utf-8")):
        row = json.loads(line)
        decoded[(row["arm"], row["base"], row["seed"], row["temperature"])] = measured(row)
    wanted = {(BASE_ROW, base, -1, t) for base in config.bases
              for t in (0.0, *config.temperatures)}
    wanted |= {(arm, base, seed, 0.0) for arm in config.arms for base, seed in config.origins()}
    if set(decoded) != wanted:
        raise ValueError(f"{DECODING_FILE}: not one line per base and temperature and per "
                         f"trained policy ({len(decoded)} distinct, {len(wanted)} expected)")
    return logs, points, decoded


def window(rows: Sequence[Mapping[str, float]], field_name: str, first: bool,
           size: int = 10) -> float:
    """The mean of a step-log column over the first or the last `size` steps."""
    part = rows[:size] if first else rows[-size:]
    return float(np.mean([row[field_name] for row in part]))


def claim(text: str, holds: Sequence[bool | None], bases: Sequence[int]) -> dict[str, Any]:
    """A claim over runs (`holds`: one per (base, seed), base by base; None where it does not
    apply): the count over the runs it applies to with its Wilson interval, then base by
    base."""
    applies = [h for h in holds if h is not None]
    per = len(holds) // len(bases)
    by_base = [[h for h in holds[i * per:(i + 1) * per] if h is not None]
               for i in range(len(bases))]
    return {"claim": text, "holds": [None if h is None else bool(h) for h in holds],
            "count": f"{in_how_many_seeds(applies, 'runs')}; base by base "
                     + ", ".join(f"{sum(b)}/{len(b)}" for b in by_base)}


def rows_block(title: str, rows: Sequence[tuple[str, Sequence[float]]],
               claims: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One table of a question: a row per quantity, its value in each run (`spread`), shown
    with 3 decimals, or none for a count (a row of Python ints), and the claims it supports."""
    return {"title": title,
            "rows": [{"label": label, "digits": 0 if all(isinstance(v, int) for v in values)
                      else 3, **spread(values)} for label, values in rows],
            "claims": list(claims)}


RARE = 2
"""A prompt the base rarely solves: at most this many of its 64 samples correct at step 0."""


def matched(entropy: float, grid: Sequence[tuple[float, float, float]]
            ) -> tuple[float, float] | None:
    """The base's temperature whose entropy per token is `entropy`, and its pass@1 there, both
    interpolated linearly between the two measured temperatures around it (`grid`: (τ,
    entropy, pass@1) by rising τ); None if `entropy` is outside the measured range."""
    taus, entropies, passes = (np.array(column) for column in zip(*grid, strict=True))
    if not entropies[0] <= entropy <= entropies[-1] or np.any(np.diff(entropies) <= 0):
        return None
    tau = float(np.interp(entropy, entropies, taus))
    return tau, float(np.interp(tau, taus, passes))


def questions(config: RunConfig, logs: Logs, points: Point, decoded: Decoded
              ) -> dict[str, dict[str, Any]]:
    """The six questions, each a few `rows_block`s (per-run values and claims)."""
    origins, last, n = config.origins(), config.checkpoints[-1], config.measure.samples
    top = max(k for k in KS if k <= n)          # pass@64 with the canonical 64 samples

    def said(text: str, holds: Sequence[bool | None]) -> dict[str, Any]:
        return claim(text, holds, config.bases)

    def at(arm: str, step: int, split: str, key: str, k: int | None = None) -> list[Any]:
        values = [points[(arm, b, s, step, split)] for b, s in origins]
        return [v["pass_at"][str(k)] if k is not None else v[key] for v in values]

    def change(arm: str, split: str, key: str, k: int | None = None) -> list[float]:
        return [b - a for a, b in zip(at(arm, 0, split, key, k), at(arm, last, split, key, k),
                                      strict=True)]

    def logged(arm: str, key: str, first: bool) -> list[float]:
        return [window(logs[(arm, b, s)], key, first) for b, s in origins]

    def base_again(temperature: float) -> list[dict[str, Any]]:
        return [decoded[(BASE_ROW, b, -1, temperature)] for b, _ in origins]

    transfer, sharpen, decoding, first_steps = [], [], [], []
    for arm in (a for a in STRICT_ARMS if a in config.arms):
        gain_train = change(arm, "train", "pass_at", 1)
        gain_held = change(arm, "held_out", "pass_at", 1)
        watch_first, watch_last = (logged(arm, "held_out_pass_at_1", f) for f in (True, False))
        transfer.append(rows_block(f"{arm}: strict pass@1, step 0 -> {last}", [
            ("train, step 0", at(arm, 0, "train", "pass_at", 1)),
            (f"train, step {last}", at(arm, last, "train", "pass_at", 1)),
            ("held-out, step 0", at(arm, 0, "held_out", "pass_at", 1)),
            (f"held-out, step {last}", at(arm, last, "held_out", "pass_at", 1)),
            ("gain, train", gain_train), ("gain, held-out", gain_held),
            ("held-out, every step: first 10", watch_first),
            ("held-out, every step: last 10", watch_last)], [
            said("held-out pass@1 rose", [g > 0 for g in gain_held]),
            said("the held-out gain is at least half the train gain",
                 [h >= t / 2 for h, t in zip(gain_held, gain_train, strict=True)]),
            said("the held-out gain is at least the train gain",
                 [h >= t for h, t in zip(gain_held, gain_train, strict=True)]),
            said("held-out pass@1 of the last 10 steps' watch batches is above the first 10's",
                 [b > a for a, b in zip(watch_first, watch_last, strict=True)])]))
        for split in SPLITS:
            ks = [k for k in KS if k <= n]
            deltas = {k: change(arm, split, "pass_at", k) for k in ks}
            never, base_never = at(arm, last, split, "never_solved"), \
                at(arm, 0, split, "never_solved")
            rows: list[tuple[str, Sequence[float]]] = [
                *((f"pass@{k} change", deltas[k]) for k in ks),
                (f"pass@{top}, base", at(arm, 0, split, "pass_at", top)),
                (f"never solved in {n}, step {last}", never),
                (f"never solved in {n}, base", base_never)]
            claims = [*(said(f"pass@{k} rose", [d > 0 for d in deltas[k]])
                        for k in ks if k in (1, 4, 16)),
                      said(f"pass@{top} fell", [d < 0 for d in deltas[top]]),
                      said("more prompts never solved than the base",
                           [a > b for a, b in zip(never, base_never, strict=True)]),
                      said("fewer prompts never solved than the base",
                           [a < b for a, b in zip(never, base_never, strict=True)])]
            if split == "held_out":        # the base measured again: the decoding control's τ = 1
                rare = [[i for i, c in enumerate(counts) if c <= RARE]
                        for counts in at(arm, 0, split, "correct")]
                again = [sum(point["correct"][i] > 0 for i in chosen)
                         for point, chosen in zip(base_again(1.0), rare, strict=True)]
                after = [sum(counts[i] > 0 for i in chosen)
                         for counts, chosen in zip(at(arm, last, split, "correct"), rare,
                                                   strict=True)]
                rows += [(f"rare prompts (base: at most {RARE} of {n} at step 0)",
                          [len(chosen) for chosen in rare]),
                         ("of them solved at least once: the base measured again", again),
                         (f"of them solved at least once: step {last}", after)]
                claims += [said(f"of the rare prompts, more are solved at least once at step "
                                f"{last} than by the base measured again",
                                [a > b if chosen else None
                                 for a, b, chosen in zip(after, again, rare, strict=True)]),
                           said(f"of the rare prompts, fewer are solved at least once at step "
                                f"{last} than by the base measured again",
                                [a < b if chosen else None
                                 for a, b, chosen in zip(after, again, rare, strict=True)])]
            sharpen.append(rows_block(
                f"{arm}, {split.replace('_', '-')}: pass@k at step {last} minus the base's",
                rows, claims))

        sampled = at(arm, last, "held_out", "pass_at", 1)
        entropy = at(arm, last, "held_out", "entropy")
        greedy = [decoded[(arm, b, s, 0.0)]["pass_at"]["1"] for b, s in origins]
        base_greedy = [point["pass_at"]["1"] for point in base_again(0.0)]
        grids = {base: [(t, decoded[(BASE_ROW, base, -1, t)]["entropy"],
                         decoded[(BASE_ROW, base, -1, t)]["pass_at"]["1"])
                        for t in config.temperatures] for base in config.bases}
        twins = [matched(h, grids[b]) for h, (b, _) in zip(entropy, origins, strict=True)]
        found = [twin for twin in twins if twin is not None]
        decoding.append(rows_block(f"{arm}, held-out, step {last}: RL against its base "
                                   "decoded otherwise", [
            ("RL sampled (τ = 1): pass@1", sampled),
            ("RL greedy: pass@1", greedy),
            ("base sampled (τ = 1): pass@1", at(arm, 0, "held_out", "pass_at", 1)),
            ("base greedy: pass@1", base_greedy),
            ("RL's entropy per token (τ = 1)", entropy),
            *([("base's temperature of that entropy", [twin[0] for twin in found]),
               ("base at that temperature: pass@1", [twin[1] for twin in found]),
               ("RL sampled minus the base at that temperature",
                [p - twin[1] for p, twin in zip(sampled, twins, strict=True)
                 if twin is not None])]
              if found else [])], [
            said("RL sampled beats the base at the temperature of the same entropy",
                 [None if twin is None else p > twin[1]
                  for p, twin in zip(sampled, twins, strict=True)]),
            said("RL sampled is below the base greedy",
                 [p < g for p, g in zip(sampled, base_greedy, strict=True)]),
            said("RL greedy beats the base greedy",
                 [g > b for g, b in zip(greedy, base_greedy, strict=True)])]))

        kl = {update: [logs[(arm, b, s)][update]["kl"] for b, s in origins]
              for update in (1, 5, 20) if update < config.learn.steps}   # row u: after u
        kl_last = logged(arm, "kl", first=False)
        first_steps.append(rows_block(f"{arm}: KL from the base (nats), step by step", [
            *((f"after {u} update{'s' * (u > 1)}", values) for u, values in kl.items()),
            ("last 10 steps", kl_last)], [
            said("the first update spends less than a tenth of the last 10 steps' KL",
                 [a < b / 10 for a, b in zip(kl[1], kl_last, strict=True)])]))

    proxies = [a for a in PROXY_ARMS if a in config.arms]
    exploit = []
    for arm in proxies:
        kl_last = logged(arm, "kl", first=False)
        share = at(arm, last, "train", "exploit_share")
        strict = at(arm, last, "train", "pass_at", 1)
        claims = [said("the exploit share is above the base's",
                       [x > b for x, b in zip(share, at(arm, 0, "train", "exploit_share"),
                                              strict=True)]),
                  said("strict pass@1 is below the base's",
                       [p < b for p, b in zip(strict, at(arm, 0, "train", "pass_at", 1),
                                              strict=True)])]
        if arm != proxies[0]:
            free = proxies[0]
            claims += [
                said(f"the exploit share is below {free}'s, same base and seed",
                     [x < y for x, y in zip(share, at(free, last, "train", "exploit_share"),
                                            strict=True)]),
                said(f"strict pass@1 is above {free}'s, same base and seed",
                     [p > q for p, q in zip(strict, at(free, last, "train", "pass_at", 1),
                                            strict=True)])]
        exploit.append(rows_block(f"{arm} (β = {ARMS[arm]['beta']}), step {last}", [
            ("exploit share, base", at(arm, 0, "train", "exploit_share")),
            ("exploit share, train", share),
            ("exploit share, held-out", at(arm, last, "held_out", "exploit_share")),
            ("strict pass@1, base", at(arm, 0, "train", "pass_at", 1)),
            ("strict pass@1, train", strict),
            ("strict pass@1, held-out", at(arm, last, "held_out", "pass_at", 1)),
            ("reward paid, last 10 steps", logged(arm, "reward", first=False)),
            ("KL (nats), last 10 steps", kl_last),
            ("length, train", at(arm, last, "train", "length"))], claims))

    entropy_blocks = []
    for arm in config.arms:
        reward = [b - a for a, b in zip(logged(arm, "reward", True), logged(arm, "reward", False),
                                        strict=True)]
        per_token = [b - a for a, b in zip(logged(arm, "entropy", True),
                                           logged(arm, "entropy", False), strict=True)]
        entropy_blocks.append(rows_block(f"{arm}: last 10 steps minus first 10", [
            ("reward change", reward), ("entropy change (batch)", per_token),
            (f"entropy change (step 0 -> {last})", change(arm, "train", "entropy"))], [
            said("the reward rose", [r > 0 for r in reward]),
            said("the entropy per token fell", [e < 0 for e in per_token]),
            said("the reward rose and the entropy fell",
                 [r > 0 and e < 0 for r, e in zip(reward, per_token, strict=True)])]))
    return {
        "transfer": {"question": "Does learning on train prompts carry to held-out prompts?",
                     "blocks": transfer},
        "sharpen_or_expand": {"question": "Does RL sharpen (pass@1 up, pass@k at large k flat "
                                          "or down) or expand (pass@k up at every k, prompts "
                                          "the base rarely solves solved more often)?",
                              "blocks": sharpen},
        "decoding": {"question": "Did RL do more than a lower temperature would? Its policy "
                                 "against its own base decoded greedily and at the temperature "
                                 "of the same entropy per token.",
                     "blocks": decoding},
        "exploit_and_leash": {"question": "Trained on answer_anywhere, does the policy find the "
                                          "exploit, and does the KL leash hold it?",
                              "blocks": exploit},
        "entropy_and_reward": {"question": "Does the entropy per token fall as the reward "
                                           "rises?", "blocks": entropy_blocks},
        "first_steps": {"question": "How fast does the policy leave its base? The KL of the "
                                    "first updates, warmed up over 20 steps.",
                        "blocks": first_steps},
    }


CURVES = ("pass@1", "pass@16", "never_solved", "entropy", "length", "exploit_share")
"""What `summarise` keeps of every checkpoint, as curves over the steps."""


def value_of(point: Mapping[str, Any], key: str) -> float:
    """A key of `CURVES` read from a `measured` point."""
    return point["pass_at"][key.removeprefix("pass@")] if key.startswith("pass@") else point[key]


def band(values: Sequence[float]) -> dict[str, float]:
    """One number over runs as its median, smallest and largest value (4 decimals); each
    run's value is in `CHECKPOINTS_FILE`."""
    return {"median": rounded(np.median(values)), "min": rounded(min(values)),
            "max": rounded(max(values))}


def summarise(config: RunConfig, raw: Mapping[str, bytes]) -> dict[str, Any]:
    """Everything the run's report says, from its raw files alone."""
    logs, points, decoded = read_raw(config, raw)
    first = config.seeds[0]
    bases = {base: {split: points[(config.arms[0], base, first, 0, split)] for split in SPLITS}
             for base in config.bases}
    if any(points[(arm, base, seed, 0, split)] != bases[base][split] for arm in config.arms
           for base, seed in config.origins() for split in SPLITS):
        raise ValueError("the step-0 measurements of a base differ between runs: each is the "
                         "base, measured from the same generator")
    home = config.bases[0]
    dr_grpo = read_log(raw[log_name("strict_dr_grpo", home, config.dr_grpo_seed)])
    rloo = logs[("strict_rloo", home, config.dr_grpo_seed)]
    same = next((i for i, (a, b) in enumerate(zip(dr_grpo, rloo, strict=False)) if a != b),
                min(len(dr_grpo), len(rloo)))
    curves = {arm: {split: {"steps": list(config.checkpoints), **{
        key: [band([value_of(points[(arm, base, seed, step, split)], key)
                    for base, seed in config.origins()])
              for step in config.checkpoints] for key in CURVES
        if not key.startswith("pass@") or int(key[5:]) <= config.measure.samples}}
        for split in SPLITS} for arm in config.arms}
    return {
        "kind": "learn_tiny",
        "arms": {arm: ARMS[arm] for arm in config.arms},
        "bases": list(config.bases),
        "seeds": list(config.seeds),
        "steps": config.learn.steps,
        "learn": {key: getattr(config.learn, key)
                  for key in ("prompts", "group", "lr", "warmup", "temperature", "max_new")},
        "checkpoints": list(config.checkpoints),
        "measure": {"prompts": config.measure.prompts, "samples": config.measure.samples,
                    "seed": config.measure.seed, "watch": config.measure.watch,
                    "ks": [k for k in KS if k <= config.measure.samples]},
        "temperatures": list(config.temperatures),
        "base": {str(base): {**{split: {key: point[key] for key in point if key != "correct"}
                                for split, point in both.items()},
                             "held_out_greedy": decoded[(BASE_ROW, base, -1, 0.0)]["pass_at"]}
                 for base, both in bases.items()},
        "curves": curves,
        "dr_grpo": {"seed": config.dr_grpo_seed, "steps": len(dr_grpo),
                    "first_rows_equal_to_rloo": same,
                    "reward_last_50_steps": {
                        "dr_grpo": round(window(dr_grpo, "reward", False, 50), 4),
                        "rloo": round(window(rloo, "reward", False, 50), 4)}},
        "questions": questions(config, logs, points, decoded),
    }


# -- the report -----------------------------------------------------------------------------------

SEED_HEADER = ("", "median", "min", "max")
"""The columns of a block's table (`seed_table`); each run's value is in `summary.json`."""


def seed_table(block: Mapping[str, Any]) -> list[list[str]]:
    """A block's rows as cells: the label, then the median, smallest and largest value over
    runs."""
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
    """The six answers at 80 columns: per question, a table per arm (the median, smallest and
    largest value over runs) and each claim as a count over runs."""
    bases, seeds, measure = summary["bases"], summary["seeds"], summary["measure"]
    lines = [
        *paragraph(f"Loop C on the tiny transformer: {len(summary['arms'])} arms x "
                   f"{len(bases)} pre-trained bases x {len(seeds)} seeds, {summary['steps']} "
                   f"steps each. Checkpoints measure {measure['prompts']} prompts of each "
                   f"split, {measure['samples']} fresh samples each; claims are counts over "
                   "runs (a base and a seed each) with the 95% Wilson interval, then base by "
                   "base (bases " + ", ".join(map(str, bases)) + ").").split("\n"), ""]
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
    bases, seeds, measure, learn = (summary["bases"], summary["seeds"], summary["measure"],
                                    summary["learn"])
    params, pretrain, _ = load_base()
    top = measure["ks"][-1]
    arms = [f"- `{arm}`: reward {inline_code(s['reward'])}, advantage `{s['advantage']}`, "
            f"β = {s['beta']}" for arm, s in summary["arms"].items()]
    base_rows = []
    for base in bases:
        held, greedy = summary["base"][str(base)]["held_out"], \
            summary["base"][str(base)]["held_out_greedy"]
        base_rows.append([str(base), fixed(held["pass_at"]["1"]), fixed(greedy["1"]),
                          fixed(held["pass_at"][str(top)]), str(held["never_solved"])])
    lines = [
        "# Loop C on a tiny transformer: transfer, sharpening, decoding, the proxy's exploit, "
        "entropy, the first steps",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"The tiny transformer ({pretrain.model.n_layer} layers, width "
        f"{pretrain.model.n_embd}, {count_params(params):,} parameters) is pre-trained from "
        f"{len(bases)} seeds with one config (`scripts/pretrain_tiny_lm.py --seed S`), and "
        f"each base is trained by `course.tiny_learn` for {summary['steps']} steps with each "
        f"of seeds {seeds[0]}-{seeds[-1]}, in each arm below: {learn['prompts']} train prompts "
        f"x {learn['group']} fresh samples a step, lr {learn['lr']:g} reached over a "
        f"{learn['warmup']}-step linear warm-up (Adam, gradient norm clipped at 1), "
        f"temperature {learn['temperature']:g}, at most {learn['max_new']} tokens a "
        "completion. RL draws train prompts only; held-out prompts are only measured. A run "
        "is one arm from one base with one seed.",
        "",
        *arms,
        "",
        f"Base 0 is the lessons' (`{display_path(base_dir(0))}/`), base S is in "
        f"`{display_path(BASE_DIR)}/bases/seed_S/`; each folder's `provenance.json` holds "
        "its sha256, and the manifest pins both files. On the "
        f"{measure['prompts']} held-out prompts of the checkpoints (strict pass@1 sampled at "
        f"τ = 1 and greedy, pass@{top}, prompts no sample in {measure['samples']} solved):",
        "",
        *markdown_table(["base seed", "pass@1", "greedy", f"pass@{top}", "never solved"],
                        base_rows),
        "",
        f"At steps {', '.join(map(str, summary['checkpoints']))}, "
        f"{measure['prompts']} prompts of each split (evenly spaced over the split) are "
        f"sampled {measure['samples']} times each, from a generator of their own: strict "
        "pass@k for k up to 64 (the unbiased estimator), the prompts no sample solved, "
        "entropy, length, exploit share. At step 0 this is the base. The decoding control "
        "decodes each base's held-out prompts greedily and samples them at temperatures "
        f"{summary['temperatures'][0]:g} to {summary['temperatures'][-1]:g}, and decodes each "
        "trained policy greedily.",
        "",
        f"At every step, before its update, {measure['watch']} held-out prompts drawn at "
        f"random are sampled {learn['group']} times each, as a training batch is, from a "
        "generator of their own, and scored strictly (never learned from): held-out pass@1 "
        "per step, the `held-out` column of each step log.",
        "",
        "Each run is `course learn --model tiny-lm --base B --reward R --advantage A --beta B "
        f"--steps {summary['steps']} --seed S`; its per-step table is "
        "`logs/base_B/ARM/seed_S.txt`. Each claim below is a count over runs with its 95% "
        "Wilson interval, then base by base; each table gives the median, smallest and "
        "largest value over the runs (each run's value is in `summary.json`).",
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
        f"`logs/base_{bases[0]}/strict_dr_grpo/seed_{dr['seed']}.txt`).",
        "",
        "## Files",
        "",
        "- `report.txt`: the answers above at 80 columns.",
        "- `logs/base_B/ARM/seed_S.txt`: every step's table row (reward, strict pass@1, KL, "
        "entropy, length, exploit share on the step's fresh samples of train prompts; strict "
        "pass@1 on "
        f"a watch batch of {measure['watch']} held-out prompts, never learned "
        "from).",
        f"- `{CHECKPOINTS_FILE}`: per arm, base, seed, checkpoint and split, how many of "
        "each prompt's samples the strict scorer pays, with entropy, length and exploit "
        "share.",
        f"- `{DECODING_FILE}`: the same counts for the decoding control, on held-out prompts "
        "(each base greedy and at each temperature; each trained policy greedy).",
        "- `summary.json`: every number above, made from those alone; `manifest.json`: "
        "the settings, each base's sha256 and each file's.",
        "",
        "## Reproduce",
        "",
        "`course runs regenerate run_021 --force` trains every arm again (minutes) and rewrites "
        "the folder; the bytes match on one machine with numpy's BLAS on one thread (another "
        "CPU may round float32 differently and draw other samples). `course runs verify "
        "run_021` checks it in seconds: the seal, every file made from the raw files, the "
        "first steps of one arm trained again, and the first base measured again.",
        "",
    ]
    return "\n".join(lines)


# -- 6. the whole run, and the spot check ---------------------------------------------------------

def _trained(arm: str, origin: Origin, training: TinyLearnConfig, config: RunConfig,
             checkpoints: Sequence[int]) -> tuple[bytes, list[dict[str, Any]], dict[str, Any]]:
    """One training of `build_run`, in a process of its own: its step log, its checkpoint rows
    and its trained policy decoded greedily (a `DECODING_FILE` line). Each training starts
    from its base with its own seed, so which process runs it, and when, changes no byte."""
    one_blas_thread()
    base, pretrain, _ = load_base(base_dir(origin[0]))
    run = train_arm(training, pretrain.model, base, checkpoints, config.measure)
    greedy = measure_row({"arm": arm, "base": origin[0], "seed": origin[1], "temperature": 0.0,
                          "split": "held_out"}, greedy_held_out(run.params, pretrain.model, config))
    return log_bytes(run.logs), checkpoint_rows(arm, origin, run.evaluations), greedy


def _decoded(base: int, config: RunConfig) -> list[dict[str, Any]]:
    """The decoding control of one base, in a process of its own: its held-out prompts decoded
    greedily, then sampled at each of `config.temperatures`."""
    one_blas_thread()
    params, pretrain, _ = load_base(base_dir(base))
    measures = {0.0: greedy_held_out(params, pretrain.model, config),
                **{t: base_at(params, pretrain.model, config, t) for t in config.temperatures}}
    return [measure_row({"arm": BASE_ROW, "base": base, "seed": -1, "temperature": t,
                         "split": "held_out"}, m) for t, m in measures.items()]


def build_run(config: RunConfig, note: str, *, record_git: bool = True,
              jobs: int | None = None) -> RunFiles:
    """Train every arm from every base with every seed, and Dr. GRPO once (about 35 s a
    training on one core), measure each base's decoding control, all in `jobs` processes side
    by side (default: one per core), and return the run folder's files, the same bytes
    whatever `jobs` is."""
    trainings = {(arm, *origin): (config.arm_config(arm, origin[1]), config.checkpoints)
                 for arm in config.arms for origin in config.origins()}
    dr_grpo = ("strict_dr_grpo", config.bases[0], config.dr_grpo_seed)
    trainings[dr_grpo] = (config.arm_config("strict_rloo", config.dr_grpo_seed,
                                            advantage="dr_grpo"), ())
    tally = Tally(len(trainings) + len(config.bases))
    with ProcessPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        futures: dict[Any, Any] = {
            pool.submit(_trained, key[0], key[1:], training, config, checkpoints): key
            for key, (training, checkpoints) in trainings.items()}
        futures |= {pool.submit(_decoded, base, config): base for base in config.bases}
        done = {futures[future]: future.result()
                for future in tally.counted(as_completed(futures))}
    raw = {log_name(*key): done[key][0] for key in trainings}
    raw[CHECKPOINTS_FILE] = jsonl_bytes([row for key in trainings if key != dr_grpo
                                         for row in done[key][1]])
    raw[DECODING_FILE] = jsonl_bytes([*(row for base in config.bases for row in done[base]),
                                      *(done[key][2] for key in trainings if key != dr_grpo)])
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
    2. the first `config.spot_steps` steps of `config.spot_arm` from the first base and seed
       are trained again: their rows must be the first rows of its saved log, byte for byte;
    3. the first `SPOT_CHUNK` prompts of the first base's train measurement (step 0) are
       sampled again, and its held-out prompts decoded greedily: their correct counts must be
       the saved ones.
    """
    one_blas_thread()
    committed = runs.read_files(folder)
    raw = {name: content for name, content in committed.items()
           if name.startswith("logs/") or name in (CHECKPOINTS_FILE, DECODING_FILE)}
    try:
        rebuilt = derived_files(config, raw, note)
    except (ValueError, KeyError, TypeError) as err:
        return [f"the raw files cannot be read back: {' '.join(str(err).split())}"]
    differences = runs.diff_files(committed, rebuilt) + runs.unsealed(folder)
    home, seed, steps = config.bases[0], config.seeds[0], config.spot_steps
    base, pretrain, _ = load_base(base_dir(home))
    again = train_arm(config.arm_config(config.spot_arm, seed, steps=steps), pretrain.model,
                      base, (), config.measure).logs
    name = log_name(config.spot_arm, home, seed)
    saved = raw[name].decode("utf-8").splitlines()
    header = saved.index(LOG_HEADER) + 1 if LOG_HEADER in saved else len(saved)
    for row, line in zip(map(log_line, again), saved[header:header + steps], strict=False):
        if row != line:
            differences.append(f"{name}: trained again, step {row.split()[0]} reads "
                               f"{row.split()[1:]}, saved {line.split()[1:]}")
            break
    measure = config.measure
    first = evaluate(base, pretrain.model, evaluation_problems("train", measure.prompts)
                     [:SPOT_CHUNK], measure.samples, config.learn.temperature,
                     config.learn.max_new, np.random.default_rng(measure.seed)).correct
    rows = [json.loads(line) for name in (CHECKPOINTS_FILE, DECODING_FILE)
            for _, line in jsonl_lines(raw[name].decode("utf-8"))]
    saved_counts = next(row["correct"] for row in rows if row.get("step") == 0
                        and row["base"] == home and row["split"] == "train")
    if list(first) != saved_counts[:SPOT_CHUNK]:
        differences.append(f"{CHECKPOINTS_FILE}: the base's train measurement, sampled again, "
                           f"differs in its first {SPOT_CHUNK} prompts")
    greedy = next(row["correct"] for row in rows if row["arm"] == BASE_ROW
                  and row["base"] == home and row["temperature"] == 0.0)
    if list(greedy_held_out(base, pretrain.model, config).correct) != greedy:
        differences.append(f"{DECODING_FILE}: the base decoded greedily again differs")
    return differences
