# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab: REINFORCE on the bandit
#
# The hands-on companion to [Milestone 1](../../lessons/m1-reinforce/) (in the repository:
# `docs/lessons/m1-reinforce.md`). This notebook is executed every time the site is built.
# Download it (links above), run it next to the repository, and change things.
#
# We are in **Loop C**: the policy itself changes. A softmax policy $\pi_\theta$ over four
# completion styles samples a style $a$, the verifier pays $r \in \{0, 1\}$ with a fixed chance
# $\bar r(a)$, and REINFORCE with a baseline $b$ moves the logits:
#
# $$\theta \leftarrow \theta + \alpha\,(r - b)\,\nabla_\theta \log \pi_\theta(a),
# \qquad \nabla_\theta \log \pi_\theta(a) = \mathrm{onehot}(a) - \pi_\theta .$$
#
# The objective is the expected reward $J(\theta) = \sum_a \pi_\theta(a)\,\bar r(a)$.
# Everything below calls `course.bandit`; the only randomness is one seeded
# `numpy.random.Generator` per experiment, created in plain sight.

# %%
from dataclasses import replace

import matplotlib
import numpy as np

from course.bandit import (
    LABEL,
    BanditConfig,
    ablation,
    describe_step,
    expected_reward,
    mean_gradient,
    setup_lines,
    train,
)
from course.formatting import paragraph, wrap
from course.paths import RUNS_DIR
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.runs import read_json

# the course's figure style, for every plot of this lab
matplotlib.rcParams.update(STYLE)
WIDTH = 73      # characters: what this page's output box shows whole

# the canonical settings of runs/run_003
config = BanditConfig()
# the one generator: the learner first, then the ablation
rng = np.random.default_rng(config.seed)
reward_probs = np.asarray(config.reward_probs)
best = config.best_action
print("\n".join(setup_lines(config)))

# %% [markdown]
# ## One learner, in slow motion
#
# Train a single learner for the full run, then replay its first three updates as a story:
# the sampled style, its reward, the baseline, the advantage $A = r - b$ and its sign, the
# update direction, and how $\pi$ moved.

# %%
def narrow(story: str) -> str:
    """A story of `describe_step` within `WIDTH`: a longer line is
    split where its parts are three spaces apart, then wrapped
    between words, under its label's column."""
    lines: list[str] = []
    for line in story.split("\n"):
        if len(line) <= WIDTH:
            lines.append(line)
            continue
        label, parts = line[:LABEL], line[LABEL:].split("   ")
        for part in parts:
            lines += wrap(part, WIDTH, indent=label,
                          hanging=" " * LABEL)
            label = " " * LABEL
    return "\n".join(lines)


history = train(config, rng)
for number, step in enumerate(history[:3], start=1):
    print(narrow(describe_step(number, step, config)), end="\n\n")

# %% [markdown]
# A positive advantage pushes the sampled style up; a negative one pushes it down. The baseline
# is what makes a failure count: in step 3 the reward is 0, the advantage $A = -b$ is negative,
# and the sampled style goes down, where with $b = 0$ nothing would have moved. The same seed
# drew the same samples for `runs/run_003`, so this learner *is* the canonical run's learner.
# Check it against the committed summary:

# %%
step3 = history[2]                          # the failure told above
a3 = int(step3.actions[0])
assert step3.rewards[0] == 0.0 and step3.advantages[0] < 0
assert step3.baseline > 0
assert step3.new_probs[a3] < step3.probs[a3]

summary = read_json(RUNS_DIR / "run_003", "summary.json")
# (steps + 1, K): the policy before the first update, then after each
probs = np.stack([history[0].probs] + [s.new_probs for s in history])
p_best = probs[:, best]
j_curve = probs @ reward_probs              # J(θ_t) = π_t · r̄
first_above = int(np.flatnonzero(p_best > 0.9)[0])
print(f"J: {j_curve[0]:.4f} at the start -> {j_curve[-1]:.4f} "
      f"after {config.steps} steps")
print(f"P(best) ends at {p_best[-1]:.4f}; "
      f"first above 0.9 at step {first_above}")

saved = summary["train"]
assert round(float(j_curve[0]), 4) == saved["expected_reward_start"]
assert round(float(j_curve[-1]), 4) == saved["expected_reward_final"]
assert round(float(p_best[-1]), 4) == saved["p_best_final"]
assert first_above == saved["first_step_p_best_above_0.9"]
j_last = expected_reward(history[-1].new_theta, reward_probs)
assert np.isclose(j_curve[-1], j_last)

# %% [markdown]
# ## The learning curve
#
# In Figure 1, $P(\text{best})$ is the probability of the best style, and $J$ the expected
# reward, after each update (step 0 is the uniform start). $J$ cannot rise above the best
# style's $\bar r$, drawn as a dotted line: once the policy has settled, the sampled rewards
# still miss now and then, because that noise lives in the environment, not in the learner.

# %%
fig = new_figure(3.4, LAB_WIDTH)
ax = fig.subplots()
ax.plot(p_best, color="tab:blue", label=f"P(best) = π({best})")
ax.plot(j_curve, color="black", linestyle="--",
        label="J(θ) = expected reward")
ax.axhline(reward_probs[best], color="tab:green", linestyle=":",
           label=f"best style's r̄ = {reward_probs[best]}")
ax.axvline(first_above, color="tab:gray", linewidth=0.8)
ax.annotate(f"P(best) > 0.9 at step {first_above}",
            (first_above, 0.05), xytext=(6, 0),
            textcoords="offset points")
ax.set(xlabel="update step", ylim=(0, 1.02),
       ylabel="probability / expected reward",
       title=f"One learner, baseline = {config.baseline}, "
             f"lr = {config.lr}")
ax.legend(loc="center right")
show_figure(
    fig, 1,
    caption=f"One learner of run_003 over {config.steps} updates: "
            f"the best style's probability and the expected reward "
            f"climb, the reward up to the best style's chance.",
    alt=f"Line chart over {config.steps} update steps. P(best) rises "
        f"from {p_best[0]:.2f} and passes 0.9 at step {first_above}, "
        f"ending at {p_best[-1]:.3f}; the expected reward J rises "
        f"from {j_curve[0]:.2f} to {j_curve[-1]:.3f}, just under the "
        f"dotted line of the best style's chance, "
        f"{reward_probs[best]}.")

# %% [markdown]
# ## The baseline ablation
#
# One learner is one story; to compare baselines we need many. `ablation` trains
# `ablation_learners` independent learners for each method (`none`, `running`, `batch`), all
# with the same batch size, learning rate and number of steps. It continues the same generator,
# so these are exactly the learners of `runs/run_003`.
#
# "Gradient noise" is $\mathbb{E}\,\lVert \hat g - \mathbb{E}[\hat g \mid \theta] \rVert^2$:
# how far a sampled update direction lands from its exact mean (`mean_gradient`), averaged over
# learners and steps.

# %%
results = ablation(config, rng)
methods = list(results)
noise = {m: float(results[m]["variance"].mean()) for m in methods}
stuck = {m: float((results[m]["p_best"][-1] < 0.5).mean())
         for m in methods}
last = config.steps
print(f"{config.ablation_learners} learners per method, "
      f"batch of {config.ablation_batch_size}, lr {config.lr}, "
      f"{last} steps")
print(paragraph(
    f"Columns: noise = gradient noise, and as a multiple of no "
    f"baseline's; P(best) at steps 50 and {last}, mean over "
    f"learners; stuck = share of learners below 0.5 at the end.",
    width=WIDTH))
print(f"{'baseline':<8}  {'noise':>7}  {'x none':>6}  "
      f"{'P(best) 50':>10}  {last:>6}  {'stuck':>5}")
for m in methods:
    p = results[m]["p_best"]
    ratio = noise[m] / noise["none"]
    print(f"{m:<8}  {noise[m]:7.5f}  {ratio:6.3f}  "
          f"{p[50].mean():10.4f}  {p[-1].mean():6.4f}  "
          f"{stuck[m]:5.0%}")

# a baseline removes noise
assert noise["none"] > noise["running"] > noise["batch"]
assert stuck["none"] > 0 and stuck["running"] == stuck["batch"] == 0
at_50 = {m: results[m]["p_best"][50].mean() for m in methods}
assert at_50["running"] > at_50["batch"]
for m in methods:                       # the same learners as run_003
    saved = summary["ablation"]["methods"][m]["gradient_variance"]
    assert round(noise[m], 5) == saved

# %%
colors = {"none": "tab:red", "running": "tab:blue",
          "batch": "tab:green"}
fig = new_figure(5.4, LAB_WIDTH)
top, bottom = fig.subplots(2, 1, height_ratios=(2, 1))
steps = np.arange(config.steps + 1)
for m in methods:
    curves = results[m]["p_best"]              # (steps + 1, learners)
    top.plot(steps, curves.mean(axis=1), color=colors[m],
             label=f"baseline: {m}")
    top.fill_between(steps, np.quantile(curves, 0.1, axis=1),
                     np.quantile(curves, 0.9, axis=1),
                     color=colors[m], alpha=0.15)
    # the stuck learners, one by one
    for learner in np.flatnonzero(curves[-1] < 0.5):
        top.plot(steps, curves[:, learner], color=colors[m],
                 linewidth=0.5, alpha=0.5)
top.set(xlabel="update step", ylabel="P(best)", ylim=(0, 1.02),
        title=f"Mean over {config.ablation_learners} learners "
              f"(band: 10th-90th percentile)")
top.legend(loc="lower right")
bars = bottom.barh(methods, [noise[m] for m in methods],
                   color=[colors[m] for m in methods])
bottom.bar_label(bars, labels=[f"{noise[m]:.4f}" for m in methods],
                 padding=3)
bottom.invert_yaxis()
bottom.set_xlim(0, 1.25 * max(noise.values()))
bottom.set(xlabel="E‖ĝ − E[ĝ | θ]‖², mean over steps",
           title="Gradient noise")
shares = ", ".join(f"{m} {stuck[m]:.0%}" for m in methods)
show_figure(
    fig, 2,
    caption=f"The baseline ablation of run_003: mean P(best) of "
            f"{config.ablation_learners} learners per baseline, and "
            f"each baseline's gradient noise.",
    alt=f"Top: mean P(best) over {last} update steps for the three "
        f"baselines, each with a 10th-90th percentile band; at step "
        f"50 the means are "
        + ", ".join(f"{m} {at_50[m]:.2f}" for m in methods)
        + f", and the learners stuck below 0.5 at the end are "
        f"{shares}, drawn as thin lines. Bottom: the gradient noise "
        f"of each baseline, "
        + ", ".join(f"{m} {noise[m]:.4f}" for m in methods) + ".")

# %% [markdown]
# Read the two panels of Figure 2 together. Without a baseline, every success pushes its own
# style up, and here even the mediocre styles succeed often. The thin red lines are the
# no-baseline learners that ended stuck below 0.5 (too few to move the band): each rode an
# early lucky streak on a worse style and never left it. With either baseline no learner is
# stuck. Both baselines shrink the noise, in the order asserted above: none > running > batch.
# That order compares unlike things: each reward sits inside its own batch's baseline, which
# shortens every step by a factor $(1 - 1/B)$, and its variance by $(1 - 1/B)^2$. Scaled back
# to full steps, the batch mean is noisier than the running mean (Milestone 1 computes both),
# and it is behind the running mean at step 50. A smaller number is not always less noise.

# %% [markdown]
# ## Change one knob
#
# The helper below trains many independent learners for each setting you give it and plots the
# mean $P(\text{best})$ and mean $J$ with a 10th-90th percentile band (Figures 3 and 4). Each
# setting gets a new generator made from the same `seed`, so a rerun reproduces every number
# and the settings start from the same random stream. It prints, per setting, the final mean
# $P(\text{best})$, the share of learners stuck below 0.5, and the gradient noise (of $\hat g$,
# before the learning rate scales it). Change **one** thing at a time, and write your
# prediction down before you run the cell.

# %%
def compare(settings: dict[str, BanditConfig], number: int,
            learners: int = 200,
            seed: int = 1) -> dict[str, tuple[float, float]]:
    """Train `learners` independent learners per setting; plot mean
    P(best) and J with bands, as Figure `number`. Returns, per
    setting, the mean P(best) at the last step and the share stuck."""
    fig = new_figure(5.0, LAB_WIDTH)
    top, bottom = fig.subplots(2, 1, sharex=True)
    print(paragraph(
        f"Columns: P(best) at the last step, mean over {learners} "
        f"learners; stuck = share of learners below 0.5 there; "
        f"noise = gradient noise.", width=WIDTH))
    print(f"{'setting':<30}  {'P(best)':>7}  {'stuck':>5}  "
          f"{'noise':>6}")
    ends, finals = [], {}
    for label, cfg in settings.items():
        rng = np.random.default_rng(seed)
        run = train(cfg, rng, learners=learners)
        # (steps + 1, L, K): the policies before and after each update
        probs = np.stack([run[0].probs] + [s.new_probs for s in run])
        p_best = probs[..., cfg.best_action]
        j = probs @ np.asarray(cfg.reward_probs)
        noise = np.mean([
            ((s.gradient - mean_gradient(s.theta, cfg)) ** 2)
            .sum(-1).mean() for s in run])
        stuck = (p_best[-1] < 0.5).mean()
        finals[label] = (float(p_best[-1].mean()), float(stuck))
        print(f"{label:<30}  {p_best[-1].mean():7.3f}  "
              f"{stuck:5.0%}  {noise:6.4f}")
        ends.append(f"{label}: P(best) {p_best[-1].mean():.2f} and "
                    f"J {j[-1].mean():.2f} at step {cfg.steps}")
        for ax, curves in ((top, p_best), (bottom, j)):
            line, = ax.plot(curves.mean(axis=1), label=label)
            ax.fill_between(np.arange(len(curves)),
                            np.quantile(curves, 0.1, axis=1),
                            np.quantile(curves, 0.9, axis=1),
                            color=line.get_color(), alpha=0.15)
    top.set(ylabel="P(best)", ylim=(0, 1.02), title="P(best action)")
    bottom.set(xlabel="update step", ylabel="J(θ)",
               title="Expected reward")
    top.legend(loc="lower right")
    show_figure(
        fig, number,
        caption=f"Mean P(best) and mean expected reward of "
                f"{learners} learners per setting: "
                + " versus ".join(settings) + ".",
        alt=f"Two line charts over the update steps, the mean over "
            f"{learners} learners with a 10th-90th percentile band, "
            f"one line per setting. " + "; ".join(ends) + ".")
    return finals


# %% [markdown]
# ### Knob 1: the learning rate
#
# The cell compares the canonical lr with the value of `lr` below.
#
# **Predict: a smaller step.** With `lr = 0.1`, as the cell has it, against the canonical
# 0.75: is the mean $P(\text{best})$ at the last step higher or lower?
#
# ```predict
# choice: the mean P(best) at the last step with lr = 0.1
# options: higher | lower
# key: "against the canonical lr, the mean P(best) at the last step is {}"
# ```

# %%
lr = 0.1                # <- edit me (the canonical run uses 0.75)

finals = compare({f"lr = {config.lr} (canonical)": config,
                  f"lr = {lr}": replace(config, lr=lr)}, number=3)
canonical, mine = finals.values()   # (mean P(best), share stuck) each
print("against the canonical lr, the mean P(best) at the last step",
      "is", "higher" if mine[0] > canonical[0] else "lower")

# %% [markdown]
# **Answer: a smaller step.** Lower: each update moves the policy about a seventh as far, so
# 300 steps are not enough to pile the mass on the best style. Now try a large value (say
# `lr = 4.0`): does a bigger step always learn faster, or can it commit to the wrong style
# before the evidence is in? Watch the stuck column.

# %% [markdown]
# ### Knob 2: the baseline
#
# The canonical single learner uses a running-mean baseline and one sample per update. The
# cell compares it with the `baseline` below, with everything else unchanged.
#
# **Predict: no baseline.** With `baseline = "none"`, as the cell has it: which setting leaves
# more learners stuck on a worse style (think about what a reward of 1 means when most styles
# usually earn 1)?
#
# ```predict
# choice: the setting that leaves more learners stuck
# options: the running mean | no baseline | neither
# key: "more learners stuck with: {}"
# ```

# %%
baseline = "none"       # <- edit me: "none", "running" or "batch"
batch_size = 1          # "batch" needs 2 or more

edited = replace(config, baseline=baseline, batch_size=batch_size)
settings = {f"baseline = {config.baseline} (canonical)": config,
            f"baseline = {baseline}, batch of {batch_size}": edited}
finals = compare(settings, number=4)
(_, canonical_stuck), (_, edited_stuck) = finals.values()
names = {"none": "no baseline", "running": "the running mean",
         "batch": "the batch mean"}
print("more learners stuck with:",
      "neither" if edited_stuck == canonical_stuck else
      names[config.baseline] if canonical_stuck > edited_stuck
      else names[baseline])

# %% [markdown]
# **Answer: no baseline.** No baseline. With rewards of 0 or 1 and $b = 0$ a failure teaches
# nothing and every success pushes the sampled style up, so a mediocre style's early luck
# compounds; the running mean makes a success of an ordinary style worth little. Its updates
# are also the noisier (the noise column). Then try `baseline = "batch"`: it needs at least
# two samples per update, so also set `batch_size = 4`. Is that still changing only one knob?
# What else changed?

# %% [markdown]
# ## Questions
#
# 1. The average update is $\alpha \nabla J$ whatever the baseline (`expected_update`). So why
#    do the curves with and without a baseline differ at all?
# 2. In the ablation, the batch-mean baseline's updates vary least, yet it is not ahead at
#    every step. Which factor slows it down, and how would you compensate for it?
# 3. Make two styles close: in a knob cell, compare `config` with
#    `replace(config, reward_probs=(0.9, 0.85, 0.5, 0.3))`. What happens to the steps needed
#    and to the share of stuck learners? Which loop are you in, and which knob did you turn?
