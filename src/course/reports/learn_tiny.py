"""run_021, Loop C on the tiny transformer over bases and seeds: its settings, one training,
and the raw files it keeps.

`course.tiny_learn` trains the tiny transformer of `course.tiny_lm` from a committed base
(`course.tiny_pretrain.load_base`); `course learn --model tiny-lm` runs it once and prints
its step table (`course.reports.tiny_steps`). The canonical run trains it in five arms that
differ in one setting at a time (`ARMS`), from each of three bases pre-trained from
`RunConfig.bases`, with each RL seed of `RunConfig.seeds`. This module reads top to bottom:

1. the settings (`RunConfig`, `CONFIG`), one training (`train_arm`: exactly what `course
   learn --model tiny-lm` trains) and the decoding control (`greedy_held_out`, `base_at`);
2. the raw files each training leaves (a step log per arm, base and seed, `checkpoints.jsonl`,
   `decoding.jsonl`) and the manifest that pins the bases and every setting.

What those files say, and every other file of the run made from them alone, is
`course.reports.learn_tiny_report` (six questions, each answered by counts over runs);
training the whole run, and checking it in seconds, is `course.reports.learn_tiny_build`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from course import runs
from course.tiny_learn import (
    EvalConfig,
    Evaluation,
    Measure,
    TinyLearnConfig,
    TinyTraining,
    evaluate,
    evaluation_problems,
    train,
)
from course.tiny_lm import ModelConfig, Params
from course.tiny_pretrain import BASES, base_dir

# -- 1. the run's settings, one training, the decoding control ---------------------------------

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
    bases: tuple[int, ...] = BASES
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


# -- 2. the raw files each training leaves, and the manifest -------------------------------------

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
