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

import matplotlib.pyplot as plt
import numpy as np

from course.bandit import (
    BanditConfig,
    ablation,
    describe_step,
    expected_reward,
    mean_gradient,
    setup_lines,
    train,
)
from course.paths import RUNS_DIR
from course.runs import read_json

config = BanditConfig()                     # the canonical settings of runs/run_003
rng = np.random.default_rng(config.seed)    # the one generator: the learner, then the ablation
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
history = train(config, rng)
for number, step in enumerate(history[:3], start=1):
    print(describe_step(number, step, config), end="\n\n")

# %% [markdown]
# A positive advantage pushes the sampled style up; a negative one pushes it down. The baseline
# is what makes a failure count: in step 3 the reward is 0, the advantage $A = -b$ is negative,
# and the sampled style goes down, where with $b = 0$ nothing would have moved. The same seed
# drew the same samples for `runs/run_003`, so this learner *is* the canonical run's learner.
# Check it against the committed summary:

# %%
step3 = history[2]                          # the failure told above
a3 = int(step3.actions[0])
assert step3.rewards[0] == 0.0 and step3.advantages[0] < 0 and step3.baseline > 0
assert step3.new_probs[a3] < step3.probs[a3]

summary = read_json(RUNS_DIR / "run_003", "summary.json")
probs = np.stack([history[0].probs] + [s.new_probs for s in history])  # (steps + 1, K)
p_best = probs[:, best]
j_curve = probs @ reward_probs                                          # J(θ_t) = π_t · r̄
first_above = int(np.flatnonzero(p_best > 0.9)[0])
print(f"J: {j_curve[0]:.4f} at the start -> {j_curve[-1]:.4f} after {config.steps} steps")
print(f"P(best) ends at {p_best[-1]:.4f}; first above 0.9 at step {first_above}")

train_summary = summary["train"]
assert round(float(j_curve[0]), 4) == train_summary["expected_reward_start"]
assert round(float(j_curve[-1]), 4) == train_summary["expected_reward_final"]
assert round(float(p_best[-1]), 4) == train_summary["p_best_final"]
assert first_above == train_summary["first_step_p_best_above_0.9"]
assert np.isclose(j_curve[-1], expected_reward(history[-1].new_theta, reward_probs))

# %% [markdown]
# ## The learning curve
#
# $P(\text{best})$ is the probability of the best style, and $J$ the expected reward, after
# each update (step 0 is the uniform start). $J$ cannot rise above the best style's
# $\bar r$, drawn as a dotted line: once the policy has settled, the sampled rewards still
# miss now and then, because that noise lives in the environment, not in the learner.

# %%
fig, ax = plt.subplots(figsize=(7, 3.8))
ax.plot(p_best, color="tab:blue", label=f"P(best) = π({best})")
ax.plot(j_curve, color="black", linestyle="--", label="J(θ) = expected reward")
ax.axhline(reward_probs[best], color="tab:green", linestyle=":",
           label=f"best style's r̄ = {reward_probs[best]}")
ax.axvline(first_above, color="tab:gray", linewidth=0.8)
ax.annotate(f"P(best) > 0.9 at step {first_above}", (first_above, 0.05),
            xytext=(6, 0), textcoords="offset points", fontsize=8)
ax.set(xlabel="update step", ylabel="probability / expected reward", ylim=(0, 1.02),
       title=f"One learner, baseline = {config.baseline}, lr = {config.lr}")
ax.legend(fontsize=8, loc="center right")
fig.tight_layout()
plt.show()

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
stuck = {m: float((results[m]["p_best"][-1] < 0.5).mean()) for m in methods}
print(f"{config.ablation_learners} learners per method, batch of {config.ablation_batch_size}, "
      f"lr {config.lr}, {config.steps} steps")
for m in methods:
    print(f"{m:<8} gradient noise {noise[m]:.5f} ({noise[m] / noise['none']:.3f} × none)  "
          f"mean P(best) at step 50: {results[m]['p_best'][50].mean():.4f}, "
          f"at step {config.steps}: {results[m]['p_best'][-1].mean():.4f}  "
          f"stuck below 0.5: {stuck[m]:.0%}")

assert noise["none"] > noise["running"] > noise["batch"]     # a baseline removes noise
assert stuck["none"] > 0 and stuck["running"] == stuck["batch"] == 0
assert results["running"]["p_best"][50].mean() > results["batch"]["p_best"][50].mean()
for m in methods:                                            # the same learners as run_003
    assert round(noise[m], 5) == summary["ablation"]["methods"][m]["gradient_variance"]

# %%
colors = {"none": "tab:red", "running": "tab:blue", "batch": "tab:green"}
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), width_ratios=(2, 1))
steps = np.arange(config.steps + 1)
for m in methods:
    curves = results[m]["p_best"]                            # (steps + 1, learners)
    left.plot(steps, curves.mean(axis=1), color=colors[m], label=f"baseline: {m}")
    left.fill_between(steps, np.quantile(curves, 0.1, axis=1), np.quantile(curves, 0.9, axis=1),
                      color=colors[m], alpha=0.15)
    for learner in np.flatnonzero(curves[-1] < 0.5):         # the stuck learners, one by one
        left.plot(steps, curves[:, learner], color=colors[m], linewidth=0.5, alpha=0.5)
left.set(xlabel="update step", ylabel="P(best)", ylim=(0, 1.02),
         title=f"Mean over {config.ablation_learners} learners (band: 10th-90th percentile)")
left.legend(fontsize=8, loc="lower right")
bars = right.bar(methods, [noise[m] for m in methods], color=[colors[m] for m in methods])
right.bar_label(bars, labels=[f"{noise[m]:.4f}" for m in methods], fontsize=8)
right.set(ylabel="E‖ĝ − E[ĝ | θ]‖², mean over steps", title="Gradient noise")
fig.tight_layout()
plt.show()

# %% [markdown]
# Read the two panels together. Without a baseline, every success pushes its own style up,
# and here even the mediocre styles succeed often. The thin red lines are the no-baseline
# learners that ended stuck below 0.5 (too few to move the band): each rode an early lucky
# streak on a worse style and never left it. With either baseline no learner is stuck.
# Both baselines shrink the noise, in the order asserted above: none > running > batch. That
# order compares unlike things: each reward sits inside its own batch's baseline, which
# shortens every step by a factor $(1 - 1/B)$, and its variance by $(1 - 1/B)^2$. Scaled back
# to full steps, the batch mean is noisier than the running mean (Milestone 1 computes both),
# and it is behind the running mean at step 50. A smaller number is not always less noise.

# %% [markdown]
# ## Change one knob
#
# The helper below trains many independent learners for each setting you give it and plots
# the mean $P(\text{best})$ and mean $J$ with a 10th-90th percentile band. Each setting gets a
# new generator made from the same `seed`, so a rerun reproduces every number and the settings
# start from the same random stream. It prints, per setting, the final mean $P(\text{best})$,
# the share of learners stuck below 0.5, and the gradient noise (of $\hat g$, before the
# learning rate scales it). Change **one** thing at a time, and write your prediction down
# before you run the cell.

# %%
def compare(settings: dict[str, BanditConfig], learners: int = 200, seed: int = 1) -> None:
    """Train `learners` independent learners per setting; plot mean P(best) and J with bands."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    for label, cfg in settings.items():
        run = train(cfg, np.random.default_rng(seed), learners=learners)
        probs = np.stack([run[0].probs] + [s.new_probs for s in run])  # (steps + 1, L, K)
        p_best = probs[..., cfg.best_action]
        j = probs @ np.asarray(cfg.reward_probs)
        noise = np.mean([((s.gradient - mean_gradient(s.theta, cfg)) ** 2).sum(-1).mean()
                         for s in run])
        print(f"{label:<28} mean P(best) at step {cfg.steps}: {p_best[-1].mean():.3f}  "
              f"stuck below 0.5: {(p_best[-1] < 0.5).mean():.0%}  gradient noise {noise:.4f}")
        for ax, curves in ((left, p_best), (right, j)):
            line, = ax.plot(curves.mean(axis=1), label=label)
            ax.fill_between(np.arange(len(curves)), np.quantile(curves, 0.1, axis=1),
                            np.quantile(curves, 0.9, axis=1), color=line.get_color(), alpha=0.15)
    left.set(xlabel="update step", ylabel="P(best)", ylim=(0, 1.02), title="P(best action)")
    right.set(xlabel="update step", ylabel="J(θ)", title="Expected reward")
    left.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    plt.show()


# %% [markdown]
# ### Knob 1: the learning rate
#
# **Predict first.** The cell compares the canonical lr with the value of `lr` below. Before
# running it, write down:
#
# - will the mean $P(\text{best})$ at the last step be higher or lower than with the canonical
#   lr?
# - will more or fewer learners end stuck below 0.5?
# - then try a large value (say `lr = 4.0`): does a bigger step always learn faster, or can it
#   commit to the wrong style before the evidence is in?
#
# *My prediction:* …

# %%
lr = 0.1                                    # <- edit me (the canonical run uses 0.75)

compare({f"lr = {config.lr} (canonical)": config,
         f"lr = {lr}": replace(config, lr=lr)})

# %% [markdown]
# ### Knob 2: the baseline
#
# **Predict first.** The canonical single learner uses a running-mean baseline and one sample
# per update. The cell compares it with the `baseline` below, with everything else unchanged.
# Before running it, write down:
#
# - which setting has the larger gradient noise?
# - which one leaves more learners stuck on a worse style, and why (think about what a reward
#   of 1 means when most styles usually earn 1)?
# - then try `baseline = "batch"`: it needs at least two samples per update, so also set
#   `batch_size = 4`. Is that still changing only one knob? What else changed?
#
# *My prediction:* …

# %%
baseline = "none"                           # <- edit me: "none", "running" or "batch"
batch_size = 1                              # "batch" needs 2 or more

compare({f"baseline = {config.baseline} (canonical)": config,
         f"baseline = {baseline}, batch of {batch_size}":
             replace(config, baseline=baseline, batch_size=batch_size)})

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
