"""The bandit run (`runs/run_003`): one learner's story, the baseline ablation, two plots.

`build_run` trains one learner with `course.bandit.train`, runs the baseline ablation
(`course.bandit.ablation`) on the same random stream, and returns the run folder's files:
the slow-motion and fast log, the learning curve, the ablation plot, `summary.json`,
`manifest.json` and a README that reads the numbers.

The ablation's gradient noise is compared per unit of average step (`noise_per_unit_step`):
the batch mean includes each sample's own reward, so its update is the leave-one-out update
times (1 - 1/B), a shorter step with a variance (1 - 1/B)² smaller. As measured, the batch
mean looks the least noisy; divided by that square it estimates the same average step as the
others, and the running mean is the least noisy (M1, "Answer: the ablation"). The summary,
the plot and the README all rank by that number, so none of them shows the raw ranking alone.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from course.bandit import (
    BanditConfig,
    Step,
    ablation,
    expected_reward,
    fast_log,
    slow_motion_log,
    train,
)
from course.formatting import inline_code, rounded
from course.jsonfiles import json_bytes
from course.reports.png import figure_png, new_figure, plain, styled
from course.runs import RunFiles, manifest

SLOW_MOTION_STEPS = 10
"""How many steps the run's log tells in slow motion before switching to the fast log."""

FAST_LOG_EVERY = 25
P_BEST_TARGET = 0.9
CHECKPOINTS = (10, 50, 100, 300)


def step_scale(method: str, batch_size: int) -> float:
    """How much `method`'s update shrinks the average step ∇J: (1 - 1/B) for the batch mean,
    whose advantage is the leave-one-out advantage times (1 - 1/B); 1 for a baseline fixed
    before the batch is drawn (none, running)."""
    return 1 - 1 / batch_size if method == "batch" else 1.0


def noise_per_unit_step(config: BanditConfig, results: dict[str, dict[str, np.ndarray]]
                        ) -> dict[str, dict[str, Any]]:
    """Each method's gradient noise, as measured and per unit of average step, least noisy
    first. Per method: `scale`, its `step_scale`; `measured`, the per-step variance
    E||ĝ - E[ĝ | θ]||² (steps,); `per_unit_step`, that divided by scale², the variance of an
    estimate of ∇J itself; and the means of both over steps. Dividing by the scale's square
    puts the three methods on one scale, so that they can be ranked."""
    compared: dict[str, dict[str, Any]] = {}
    for method, result in results.items():
        scale = step_scale(method, config.ablation_batch_size)
        per_unit_step = result["variance"] / scale ** 2
        compared[method] = {"scale": scale, "measured": result["variance"],
                            "per_unit_step": per_unit_step,
                            "measured_mean": float(result["variance"].mean()),
                            "per_unit_step_mean": float(per_unit_step.mean())}
    return dict(sorted(compared.items(), key=lambda item: item[1]["per_unit_step_mean"]))


def _first_step_above(p_best: np.ndarray, target: float) -> int | None:
    above = np.flatnonzero(p_best > target)
    return int(above[0]) if above.size else None


def summarise(config: BanditConfig, history: list[Step],
              results: dict[str, dict[str, np.ndarray]]) -> dict[str, Any]:
    """The numbers the lesson quotes: the single run and the ablation, rounded to 4 digits."""
    reward_probs = np.asarray(config.reward_probs)
    p_best = np.array([history[0].probs[config.best_action]]
                      + [s.new_probs[config.best_action] for s in history])
    rewards = np.concatenate([s.rewards for s in history])
    train_summary = {
        "baseline": config.baseline,
        "steps": config.steps,
        "expected_reward_start": rounded(expected_reward(history[0].theta, reward_probs)),
        "expected_reward_final": rounded(expected_reward(history[-1].new_theta, reward_probs)),
        "mean_sampled_reward": rounded(rewards.mean()),
        "p_best_final": rounded(p_best[-1]),
        "first_step_p_best_above_0.9": _first_step_above(p_best, P_BEST_TARGET),
        "final_probs": {name: rounded(p) for name, p in zip(config.actions, history[-1].new_probs,
                                                      strict=True)},
    }
    methods = {}
    for method, result in results.items():
        curve = result["p_best"].mean(axis=1)
        final = result["p_best"][-1]
        methods[method] = {
            "gradient_variance": rounded(result["variance"].mean(), 5),
            "gradient_variance_first_50_steps": rounded(result["variance"][:50].mean(), 5),
            "mean_p_best_at_step": {str(t): rounded(curve[t]) for t in CHECKPOINTS
                                    if t <= config.steps},
            "p_best_final_p10": rounded(np.quantile(final, 0.1)),
            "share_final_p_best_below_0.5": rounded((final < 0.5).mean()),
        }
    none_variance = results["none"]["variance"].mean()
    compared = noise_per_unit_step(config, results)
    for method in methods:
        methods[method]["variance_vs_none"] = rounded(results[method]["variance"].mean()
                                                 / none_variance, 3)
        per_unit_step = compared[method]["per_unit_step_mean"]
        methods[method]["step_scale"] = compared[method]["scale"]
        methods[method]["gradient_variance_per_unit_step"] = rounded(per_unit_step, 5)
        methods[method]["per_unit_step_vs_none"] = rounded(
            per_unit_step / compared["none"]["per_unit_step_mean"], 3)
    return {
        "kind": "bandit",
        "actions": [{"index": i, "style": name, "reward_prob": p} for i, (name, p)
                    in enumerate(zip(config.actions, config.reward_probs, strict=True))],
        "best_action": config.best_action,
        "train": train_summary,
        "ablation": {"learners": config.ablation_learners,
                     "batch_size": config.ablation_batch_size,
                     "lr": config.lr, "steps": config.steps, "methods": methods},
    }


@styled
def learning_curve_png(config: BanditConfig, history: list[Step]) -> bytes:
    probs = np.stack([history[0].probs] + [s.new_probs for s in history])
    j = probs @ np.asarray(config.reward_probs)
    fig = new_figure(4.9)
    ax = fig.add_subplot()
    for a, name in enumerate(config.actions):
        ax.plot(probs[:, a], label=rf"$\pi({a})$: {plain(name)}  ($\bar{{r}}$ = "
                                   f"{config.reward_probs[a]})")
    ax.plot(j, "k--", label=r"$J(\theta)$ = expected reward")
    ax.set(xlabel="update step", ylabel="probability / expected reward", ylim=(0, 1),
           title=f"One learner, baseline = {config.baseline}, lr = {config.lr}")
    fig.legend(loc="outside lower center")
    return figure_png(fig)


def noise_label(method: str, noise: dict[str, Any]) -> str:
    """The legend entry of one method's noise curve: its mean per unit step, and for a method
    whose step is scaled, the scale that was divided out."""
    label = f"{method}: mean {noise['per_unit_step_mean']:.4f}"
    if noise["scale"] != 1.0:
        label += rf" (measured $\div$ {noise['scale']:g}$^2$)"
    return label


def measured_label(method: str, noise: dict[str, Any]) -> str:
    """The legend entry of a scaled method's noise as measured, drawn dotted beside it."""
    return (f"{method} as measured, steps $\\times$ {noise['scale']:g}: "
            f"mean {noise['measured_mean']:.4f}")


@styled
def ablation_figure(config: BanditConfig, results: dict[str, dict[str, np.ndarray]]) -> Any:
    """Above, P(best) per baseline; below, each baseline's gradient noise per unit of average
    step (`noise_per_unit_step`), its legend in the order of that noise, least noisy first;
    the batch mean's noise as measured, with its shorter step, is the dotted line."""
    fig = new_figure(6.6)
    top, bottom = fig.subplots(2, 1, sharex=True)
    colours = {}
    for method, result in results.items():
        p_best = result["p_best"]
        steps = np.arange(p_best.shape[0])
        line, = top.plot(steps, p_best.mean(axis=1), label=f"baseline: {method}")
        colours[method] = line.get_color()
        top.fill_between(steps, np.quantile(p_best, 0.1, axis=1),
                         np.quantile(p_best, 0.9, axis=1), color=line.get_color(), alpha=0.15)
    for method, noise in noise_per_unit_step(config, results).items():
        steps = np.arange(1, noise["per_unit_step"].size + 1)
        bottom.plot(steps, noise["per_unit_step"], color=colours[method], lw=1.2,
                    label=noise_label(method, noise))
        if noise["scale"] != 1.0:
            bottom.plot(steps, noise["measured"], color=colours[method], lw=1.0, ls=":",
                        alpha=0.8, label=measured_label(method, noise))
    top.set(ylabel="P(best action)", ylim=(0, 1),
            title=f"Mean over {config.ablation_learners} learners "
                  "(band: 10th to 90th percentile)")
    bottom.set(xlabel="update step",
               ylabel=r"$\mathbb{E}\,\Vert\hat{g} - \mathbb{E}[\hat{g}]\Vert^2 \,/\, s^2$",
               yscale="log",
               title=f"Gradient noise per unit of average step (batch of "
                     f"{config.ablation_batch_size}; $s$ = step scale)")
    top.legend(loc="lower right")
    bottom.legend(loc="upper right")
    return fig


def ablation_png(config: BanditConfig, results: dict[str, dict[str, np.ndarray]]) -> bytes:
    return figure_png(ablation_figure(config, results))


def render_readme(config: BanditConfig, summary: dict[str, Any]) -> str:
    train_s, abl = summary["train"], summary["ablation"]
    rows = "\n".join(
        f"| {m} | {s['gradient_variance_per_unit_step']:.5f} | "
        f"{s['per_unit_step_vs_none']:.3f} | {s['gradient_variance']:.5f} | "
        f"{s['step_scale']:g} | "
        f"{s['mean_p_best_at_step'].get('50', float('nan')):.3f} | "
        f"{s['mean_p_best_at_step'].get(str(config.steps), float('nan')):.3f} | "
        f"{s['share_final_p_best_below_0.5']:.3f} |"
        for m, s in abl["methods"].items())
    header = (f"| baseline | gradient noise per unit step | vs none | as measured | "
              f"step scale | mean P(best) at step 50 | at step {config.steps} | "
              f"share stuck (P(best) < 0.5) |")
    ranked = sorted(abl["methods"], key=lambda m: abl["methods"][m][
        "gradient_variance_per_unit_step"])
    scaled = {m: s["step_scale"] for m, s in abl["methods"].items() if s["step_scale"] != 1}
    stuck_none = abl["methods"]["none"]["share_final_p_best_below_0.5"]
    first = train_s["first_step_p_best_above_0.9"]
    reached = (f"first rises above 0.9 at step {first}" if first is not None
               else "never rises above 0.9")
    best = inline_code(config.actions[config.best_action])
    return f"""# Bandit: REINFORCE in slow motion (Loop C)

One learner picks one of {config.k} completion styles, the verifier pays 1 with a fixed
chance per style, and REINFORCE moves the logits: `θ += lr × (r − b) × (onehot(a) − π)`.
Best style: {best} (r̄ = {config.reward_probs[config.best_action]}).

## Files

- `bandit_train_log.txt`: the first {SLOW_MOTION_STEPS} steps told in slow motion (θ, π, the
  sampled action, reward, baseline, advantage and its sign, the update, the new π), then a
  one-line summary every {FAST_LOG_EVERY} steps.
- `learning_curve.png`: every action's probability and the expected reward over the run.
- `bandit_ablation.png`: baseline none vs running mean vs batch mean, {abl['learners']}
  learners each; above, P(best) with a 10th–90th percentile band; below, gradient noise
  per step and per unit of average step (the batch mean's as measured dotted).
- `summary.json`: the numbers below; `manifest.json`: the config and seed that produced them.

## The single run (baseline = {train_s['baseline']}, lr = {config.lr}, batch of {config.batch_size})

Expected reward J(θ) goes from {train_s['expected_reward_start']:.3f} (uniform policy) to
{train_s['expected_reward_final']:.3f} after {train_s['steps']} steps; P(best) ends at
{train_s['p_best_final']:.3f} and {reached}.

![Each style's probability and the expected reward J(θ) over the single run](learning_curve.png)

## The ablation ({abl['learners']} learners × {abl['steps']} steps, batch of {abl['batch_size']})

Gradient noise is E‖ĝ − E[ĝ | θ]‖², with E[ĝ | θ] computed exactly, averaged over steps and
learners. The batch mean includes each sample's own reward, so its update is the leave-one-out
update times its step scale, 1 − 1/B ({_scales(scaled)}): a shorter step, whose noise as
measured is smaller by the scale's square. Divided by that square, every baseline's noise is
that of an estimate of the same average step, ∇J: the two columns after the baseline's
name, and the plot's lower panel. Ranked that way, least noisy first: {", ".join(ranked)}.

{header}
| --- | --- | --- | --- | --- | --- | --- | --- |
{rows}

A baseline does not change where the updates point on average (the expected update is the
same for any fixed b); it removes the part of the reward that every action gets anyway. Here
most styles usually succeed, so a bare r = 1 says little, and without a baseline every success
pushes its own action up, a mediocre style's frequent successes included: that is how
{stuck_none:.1%} of the no-baseline learners ended stuck on a worse style. The batch mean
also shrinks the average step by (1 − 1/B), because each reward sits inside its own baseline.

![P(best), and gradient noise per unit of average step, per baseline](bandit_ablation.png)

## Toy tax

This learns in a few hundred steps because there are {config.k} actions and the reward is a
clean coin flip. A language model chooses among an enormous number of token sequences and
its reward can be sparse, noisy or brittle. Read these curves as a microscope on the
mechanism, not as a promise about how fast real post-training improves.

Watch it live: `course bandit --slow-motion` (the story) or `course bandit --log-every-step`.
Reproduce: `course runs regenerate run_003`; a new run: `course bandit --out DIR --note "..."`.
"""


def _scales(scaled: dict[str, float]) -> str:
    """The step scales other than 1, in words: `batch: 0.75`."""
    return ", ".join(f"{method}: {scale:g}" for method, scale in scaled.items())


def build_run(config: BanditConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Train one learner, run the ablation, and return the run folder's files.

    The run's one random generator is created here from `config.seed`: the single learner
    draws first (so its log matches `course bandit --seed S`), then the ablation continues
    the same stream.
    """
    rng = np.random.default_rng(config.seed)
    history = train(config, rng)
    results = ablation(config, rng)
    summary = summarise(config, history, results)
    log = "\n".join([
        slow_motion_log(history[:SLOW_MOTION_STEPS], config),
        fast_log(history, config, FAST_LOG_EVERY), ""])  # the fast log says what it shows
    run_manifest = manifest(kind="bandit", note=note, config=asdict(config), seed=config.seed,
                            record_git=record_git)
    return {
        "README.md": render_readme(config, summary).encode("utf-8"),
        "bandit_ablation.png": ablation_png(config, results),
        "bandit_train_log.txt": log.encode("utf-8"),
        "learning_curve.png": learning_curve_png(config, history),
        "manifest.json": json_bytes(run_manifest),
        "summary.json": json_bytes(summary),
    }
