"""The RLVR family side by side (canonical `runs/run_020`): three advantage rules, all else fixed.

RLOO, GRPO and Dr. GRPO (`course.learn.ADVANTAGES`) train the same token policy from the same
reference with the same step size, batch and number of steps: once on the strict reward, once
on the hackable proxy `answer_anywhere` (the strict scorer then only measures), from each seed
of `SEEDS`. Only the advantage rule differs.

At each of `CHECKPOINTS`, `EVAL_SAMPLES` fresh samples per prompt of the policy as it is then
give: strict pass@1 and pass@k, the reward paid, the exploit share (paid by the proxy, refused
by the spec), the entropy -log π(y), the length in pieces, and the share of prompts whose first
B samples all earn the same reward: a group the update learns nothing from, whichever rule it
uses. The checkpoint samples come from a generator of their own, so the training itself is
exactly `course learn --advantage RULE --seed S`.

The run keeps every training's checkpoints (`RAW`); its other files are made from them alone
(`derived_files`), so that `course runs verify` checks the run in seconds (`spot_check`: every
file made again from the saved checkpoints, and seed 0 of every arm trained again), while
`course runs regenerate run_020` trains all of them again.

Three more arms, on the strict reward only, ask what the rules' differences are made of:
`grpo_matched` is GRPO at the step size that makes its first update as long as RLOO's
(`matched_lr`: GRPO divides by the group's spread and each completion's length, so at the same
lr its steps differ in length from RLOO's); `rloo_dynamic` is RLOO with dynamic sampling
(`LearnConfig.redraws`: a group whose rewards are all equal is drawn again), with the samples
it drew counted; and `rloo_equal_samples` is plain RLOO trained for as many more steps as
draw the samples dynamic sampling drew, so that the two are compared per sample drawn.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from course import runs
from course.data import Record
from course.formatting import inline_code, markdown_table, prose_text
from course.jsonfiles import json_bytes, jsonl_bytes
from course.learn import (
    ADVANTAGES,
    LearnConfig,
    collect,
    fresh_samples,
    gradient,
    learner_of,
    paid_and_strict,
    reinforce_step,
    setup,
    steps_of,
)
from course.progress import Tally
from course.reports.learn import (
    SEEDS,
    config_record,
    exploit_share,
    run_manifest,
    spread,
)
from course.reports.png import figure_png, new_figure, plain, styled
from course.runs import RunFiles
from course.selection import pass_at_k_curve
from course.token_policy import Policy, sequence_log_prob

CONFIG = LearnConfig(lr=3.0, steps=150, batch_size=8)
"""What every rule shares: lr 3, 150 steps, 8 fresh samples per prompt per step, β = 0."""
RULES = tuple(ADVANTAGES)
"""The advantage rules compared: rloo, grpo, dr_grpo."""
REWARDS = ("strict", "answer_anywhere")
"""What pays: the spec itself, then a proxy that can be hacked."""
REDRAWS = 3
"""The dynamic-sampling arm draws an all-equal group again up to 3 times a step."""
EQUAL_SAMPLES_STEPS = 508
"""Steps of the equal-samples arm: 508 x 8 = 4,064 completions per prompt, the median that
`rloo_dynamic` draws in 150 steps (4,063, ten seeds from 4,050 to 4,097; a test holds it)."""
MATCH_BATCHES = 20
"""Batches from the reference over which `matched_lr` averages the length of a first step."""
CHECKPOINTS = (0, 50, 100, 150)
"""The steps at which the policy is measured on fresh samples; 0 is the reference."""
EVAL_SAMPLES = 16
"""Fresh samples per prompt at each checkpoint."""
K = 8
"""pass@k is reported at k = 8, from the 16 samples (the unbiased estimator)."""
ARMS = {
    "grpo_matched": "GRPO at the step size whose first update is as long as RLOO's",
    "rloo_dynamic": f"RLOO with dynamic sampling: an all-equal group is drawn again, up to "
                    f"{REDRAWS} times a step",
    "rloo_equal_samples": f"RLOO for {EQUAL_SAMPLES_STEPS} steps: as many samples drawn as "
                          "rloo_dynamic draws in 150, measured at its start and end only",
}
"""The three arms on the strict reward beyond the three rules, each in one line."""
METRICS = {
    "pass_at_1": "strict pass@1",
    "pass_at_k": f"strict pass@{K}",
    "paid": "reward paid",
    "exploits": "exploit share",
    "entropy": "entropy (nats)",
    "length": "length (pieces)",
    "all_equal": "all-equal groups",
}
"""What each checkpoint measures, with its column heading."""
RAW = "logs/trajectories.jsonl"
"""Every training, one line each: reward, arm, seed, its `METRICS` at each checkpoint, and the
completions it drew per prompt."""
SPOT_SEED = SEEDS[0]
"""`spot_check` trains this seed again for every arm."""


def measure_policy(policy: Policy, problems: list[Record], reward: str, batch_size: int,
                   rng: np.random.Generator) -> dict[str, float]:
    """The `METRICS` of `policy` on `EVAL_SAMPLES` fresh samples per prompt."""
    n = len(problems)
    rollouts = fresh_samples(policy, n, EVAL_SAMPLES, rng)
    paid, strict = paid_and_strict(reward, problems, rollouts)
    correct = strict.reshape(n, EVAL_SAMPLES).sum(axis=1)
    groups = paid.reshape(n, EVAL_SAMPLES)[:, :batch_size]   # one training group per prompt
    return {"pass_at_1": float(strict.mean()),
            "pass_at_k": float(np.mean([pass_at_k_curve(EVAL_SAMPLES, int(c))[K - 1]
                                        for c in correct])),
            "paid": float(paid.mean()),
            "exploits": exploit_share(paid, strict),
            "entropy": float(-sequence_log_prob(policy, rollouts).mean()),
            "length": float(rollouts.lengths.mean()),
            "all_equal": float(np.mean(groups.min(axis=1) == groups.max(axis=1)))}


def first_step_length(config: LearnConfig) -> float:
    """The mean length (Euclidean norm over both tables) of one update from the reference under
    `config`, over `MATCH_BATCHES` batches drawn by a generator of their own: the same batches
    whatever the rule, since the rule acts only after sampling."""
    problems, reference, _ = setup(config)
    learner = learner_of(config, reference, len(problems))
    rng = np.random.default_rng([config.seed, 2])
    lengths = []
    for _ in range(MATCH_BATCHES):
        update = collect(learner, problems, config, rng)
        grads = gradient(learner, update.rollouts, update.weight, config.batch_size,
                         update.log_probs)
        step = steps_of(learner, grads, config.lr)
        lengths.append(math.sqrt(sum(float((part ** 2).sum()) for part in step)))
    return float(np.mean(lengths))


def matched_lr(config: LearnConfig) -> float:
    """The step size at which GRPO's first update is as long as RLOO's at `config.lr` (one
    decimal): lr · |step of RLOO| / |step of GRPO|, both measured at `config.lr`."""
    rloo = first_step_length(replace(config, advantage="rloo"))
    grpo = first_step_length(replace(config, advantage="grpo"))
    return round(config.lr * rloo / grpo, 1)


def arms(config: LearnConfig) -> dict[str, dict[str, LearnConfig]]:
    """Per reward, each arm's name and its training config: the three rules on both rewards,
    then on the strict reward GRPO at the matched step size, RLOO with dynamic sampling, and
    RLOO at as many samples."""
    table = {reward: {rule: replace(config, reward=reward, advantage=rule) for rule in RULES}
             for reward in REWARDS}
    strict = table["strict"]
    strict["grpo_matched"] = replace(strict["grpo"], lr=matched_lr(config))
    strict["rloo_dynamic"] = replace(strict["rloo"], redraws=REDRAWS)
    strict["rloo_equal_samples"] = replace(strict["rloo"], steps=EQUAL_SAMPLES_STEPS)
    return table


def checkpoints_of(config: LearnConfig) -> tuple[int, ...]:
    """Where a training is measured: at `CHECKPOINTS`, or, for a training of another length
    (the equal-samples arm), at its start and end."""
    return CHECKPOINTS if config.steps == CHECKPOINTS[-1] else (0, config.steps)


def trajectory(config: LearnConfig) -> tuple[list[dict[str, float]], float]:
    """Train from `config.seed` and measure the policy at every checkpoint; also the
    completions drawn per prompt over the whole training."""
    problems, reference, _ = setup(config)
    learner = learner_of(config, reference, len(problems))
    train_rng = np.random.default_rng(config.seed)
    eval_rng = np.random.default_rng([config.seed, 1])      # never touches the training draws
    points = [measure_policy(learner, problems, config.reward, config.batch_size, eval_rng)]
    drawn = 0
    for step in range(1, config.steps + 1):
        drawn += reinforce_step(learner, problems, config, train_rng).drawn
        if step in checkpoints_of(config):
            points.append(measure_policy(learner, problems, config.reward, config.batch_size,
                                         eval_rng))
    return points, drawn / len(problems)


def trainings(config: LearnConfig) -> list[dict[str, Any]]:
    """Every arm from every seed, in the order of `arms` then `SEEDS`: one `RAW` line each."""
    named = [(reward, arm, arm_config) for reward, of_reward in arms(config).items()
             for arm, arm_config in of_reward.items()]
    tally = Tally(len(named) * len(SEEDS))
    lines = []
    for reward, arm, arm_config in named:
        for seed in tally.counted(SEEDS):
            points, drawn = trajectory(replace(arm_config, seed=seed))
            lines.append({"reward": reward, "arm": arm, "seed": seed, "points": points,
                          "drawn": drawn})
    return lines


def read_raw(config: LearnConfig, raw: bytes) -> list[dict[str, Any]]:
    """The lines of `RAW`, checked to be exactly the trainings `trainings` makes (ValueError
    otherwise)."""
    lines = [json.loads(line) for line in raw.decode("utf-8").split("\n") if line]
    expected = [(reward, arm, seed) for reward, of_reward in arms(config).items()
                for arm in of_reward for seed in SEEDS]
    if [(line["reward"], line["arm"], line["seed"]) for line in lines] != expected:
        raise ValueError(f"{RAW} must hold one line per reward, arm and seed, in order")
    return lines


def summarise(config: LearnConfig, trained: list[dict[str, Any]]) -> dict[str, Any]:
    """Every arm from every seed, as spreads over seeds per checkpoint."""
    curves: dict[str, Any] = {}
    drawn: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for reward, named in arms(config).items():
        for arm, arm_config in named.items():
            seeds = [(line["points"], line["drawn"]) for line in trained
                     if (line["reward"], line["arm"]) == (reward, arm)]
            curves.setdefault(reward, {})[arm] = [
                {"step": step, **{m: spread([points[i][m] for points, _ in seeds])
                                  for m in METRICS}}
                for i, step in enumerate(checkpoints_of(arm_config))]
            drawn.setdefault(reward, {})[arm] = spread([d for _, d in seeds])
            settings[arm] = {"advantage": arm_config.advantage, "lr": arm_config.lr,
                             "redraws": arm_config.redraws}
    return {"kind": "learn_family", "rules": {**ADVANTAGES, **ARMS}, "rewards": list(REWARDS),
            "arms": settings, "checkpoints": list(CHECKPOINTS), "seeds": list(SEEDS),
            "eval_samples_per_prompt": EVAL_SAMPLES, "k": K, "runs": curves,
            "drawn_per_prompt": drawn}


@styled
def figure(s: dict[str, Any]) -> bytes:
    """Per reward (rows): strict pass@1, entropy and the all-equal share against the step,
    one line per rule (median over seeds) in a band from the smallest to the largest seed; the
    equal-samples arm, measured at its start and end only, is in the README's table."""
    shown = ("pass_at_1", "entropy", "all_equal")
    fig = new_figure(6.6)
    axes = fig.subplots(len(REWARDS), len(shown), sharex=True)
    for row, reward in zip(axes, REWARDS, strict=True):
        for ax, metric in zip(row, shown, strict=True):
            for rule, points in s["runs"][reward].items():
                steps = [p["step"] for p in points]
                if steps != s["checkpoints"]:
                    continue
                line, = ax.plot(steps, [p[metric]["median"] for p in points], marker="o",
                                label=rule)
                ax.fill_between(steps, [p[metric]["min"] for p in points],
                                [p[metric]["max"] for p in points], color=line.get_color(),
                                alpha=0.2, lw=0)
        row[0].set_ylabel(f"trained on\n{plain(reward)}")
    for ax, metric in zip(axes[0], shown, strict=True):
        ax.set_title(METRICS[metric])
    for ax in axes[-1]:
        ax.set_xlabel("update step")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
    return figure_png(fig)


def cell(value: dict[str, float], digits: int = 3) -> str:
    """A spread as `median (min to max)`, with `digits` decimals."""
    return (f"{value['median']:.{digits}f} ({value['min']:.{digits}f} to "
            f"{value['max']:.{digits}f})")


def render_readme(config: LearnConfig, note: str, s: dict[str, Any]) -> str:
    lines = [
        "# The RLVR family side by side: RLOO, GRPO, Dr. GRPO on the token policy",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"Everything but the advantage rule is fixed (the two extra arms below excepted): "
        f"lr = {config.lr}, β = {config.beta}, "
        f"{config.batch_size} fresh samples per prompt per step, {config.steps} steps, the "
        f"same reference, seeds {s['seeds'][0]}-{s['seeds'][-1]}. Each cell is the median "
        "over seeds with the range in brackets, measured on "
        f"{s['eval_samples_per_prompt']} fresh samples per prompt. Train = eval: the policy "
        "is trained and measured on the same prompts.",
        "",
        *(f"- `{rule}`: {text}" for rule, text in s["rules"].items()),
        "",
        f"`grpo_matched` trains at lr = {s['arms']['grpo_matched']['lr']}: at that step size "
        "GRPO's first update from the reference is as long as RLOO's at lr = "
        f"{config.lr} (the mean over {MATCH_BATCHES} batches). Completions drawn per prompt "
        f"over the {config.steps} steps, median over seeds (range): "
        + "; ".join(f"`{arm}` {cell(d, 0)}" for arm, d in s["drawn_per_prompt"]["strict"].items()
                    if arm in ("rloo", "rloo_dynamic")) + f"; `rloo_equal_samples` draws as "
        f"many as `rloo_dynamic` in {EQUAL_SAMPLES_STEPS} plain steps: "
        f"{cell(s['drawn_per_prompt']['strict']['rloo_equal_samples'], 0)}.",
        "",
    ]
    for reward in s["rewards"]:
        metrics = [m for m in METRICS if reward != "strict" or m not in ("paid", "exploits")]
        lines += [f"## Trained on {inline_code(reward)}", ""]
        rows = [[f"`{rule}`", str(p["step"]), *(cell(p[m]) for m in metrics)]
                for rule, points in s["runs"][reward].items() for p in points]
        lines += [*markdown_table(["rule", "step", *(METRICS[m] for m in metrics)], rows), ""]
    lines += [
        "An all-equal group is a prompt whose first "
        f"{config.batch_size} samples all earn the same reward: every rule gives each of them "
        "the advantage 0, so the prompt costs samples and teaches nothing.",
        "",
        "![pass@1, entropy and all-equal groups per rule](family.png)",
        "",
    ]
    return "\n".join(lines)


def derived_files(config: LearnConfig, raw: bytes, note: str,
                  record_git: bool = False) -> RunFiles:
    """The whole run folder from `RAW` alone: the summary, README, figure, and the manifest
    sealing every file (`runs.sealed`)."""
    summary = summarise(config, read_raw(config, raw))
    _, _, fit = setup(config)
    record = {**config_record(config), "rules": list(RULES), "rewards": list(REWARDS),
              "arms": summary["arms"], "seeds": list(SEEDS), "checkpoints": list(CHECKPOINTS),
              "eval_samples": EVAL_SAMPLES, "k": K}
    files = {RAW: raw, "README.md": render_readme(config, note, summary).encode("utf-8"),
             "family.png": figure(summary), "summary.json": json_bytes(summary)}
    return runs.sealed(run_manifest("learn_family", note, record, config, fit, record_git),
                       files)


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Train every arm from every seed (about a minute on one core), and the run's files."""
    return derived_files(config, jsonl_bytes(trainings(config)), note, record_git)


def spot_check(config: LearnConfig, note: str, folder: Path) -> list[str]:
    """What `course runs verify` checks of the run in `folder`, in seconds: every file made
    again from the committed `RAW` (and the seal), compared byte for byte; then seed
    `SPOT_SEED` of every arm trained again, whose checkpoints must be its saved ones exactly.
    One line per difference."""
    committed = runs.read_files(folder)
    try:
        trained = read_raw(config, committed[RAW])
        differences = (runs.diff_files(committed, derived_files(config, committed[RAW], note))
                       + runs.unsealed(folder))
    except (KeyError, ValueError, TypeError) as err:
        return [f"{RAW} cannot be read back: {' '.join(str(err).split())}"]
    for reward, named in arms(config).items():
        for arm, arm_config in named.items():
            points, drawn = trajectory(replace(arm_config, seed=SPOT_SEED))
            saved = next(line for line in trained
                         if (line["reward"], line["arm"], line["seed"]) == (reward, arm,
                                                                            SPOT_SEED))
            if (points, drawn) != (saved["points"], saved["drawn"]):
                differences.append(f"{RAW}: {reward} {arm}, seed {SPOT_SEED} trained again "
                                   "differs from its saved checkpoints")
    return differences
