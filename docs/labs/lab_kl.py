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
# # Lab: the KL-regularised optimum
#
# The hands-on companion to [Milestone 3](../../lessons/m3-llm-as-policy/) (in the repository:
# `docs/lessons/m3-llm-as-policy.md`). This notebook is executed every time the site is built.
# Download it (links above), run it next to the repository, and change things.
#
# Still **Loop C**, with a leash. Real post-training maximises reward minus a price for
# drifting from the reference policy $\pi_{\text{ref}}$ (the model before RL):
#
# $$F(\pi) = \mathbb{E}_{a \sim \pi}[r(a)] - \beta\,\mathrm{KL}(\pi \,\|\, \pi_{\text{ref}}),
# \qquad
# \pi_\beta(a) = \frac{\pi_{\text{ref}}(a)\, e^{r(a)/\beta}}{\sum_b \pi_{\text{ref}}(b)\,
# e^{r(b)/\beta}} .$$
#
# The policy here is categorical over ten completion styles of our task, so the maximiser
# $\pi_\beta$ is exact (`course.kl.kl_regularized_optimum`). Each style's reward is its invented
# chance of passing the strict scorer: the format-breaking styles earn 0. No sampling anywhere
# in this lab: every number is computed, not estimated.

# %%
import matplotlib.pyplot as plt
import numpy as np

from course.policy import softmax
from course.kl import (
    KLConfig,
    describe_policy,
    kl_divergence,
    kl_objective,
    kl_regularized_optimum,
    sweep,
)
from course.paths import RUNS_DIR
from course.runs import read_json

config = KLConfig()                         # the canonical settings of runs/run_005
pi_ref, rewards = np.asarray(config.pi_ref), np.asarray(config.rewards)
print(f"{'style':<36} {'π_ref':>6} {'r':>5}")
for name, p, r in zip(config.actions, pi_ref, rewards, strict=True):
    print(f"{name:<36} {p:6.2f} {r:5.2f}")
reference_reward = float(pi_ref @ rewards)
print(f"reference E[r] = {reference_reward:.4f}; "
      f"π_ref mass on styles with r = 0: {pi_ref[rewards == 0].sum():.2f}")

# %% [markdown]
# ## The β sweep: the reward-versus-KL frontier
#
# For each β of the sweep (log-spaced, as printed below), compute $\pi_\beta$, its expected
# reward and its KL to the reference. Each point of the plot is one β. Large β sits at the
# origin (the reference itself); small β climbs toward the best style the reference can
# produce.

# %%
rows = sweep(config)                        # ascending β
betas = np.array([row["beta"] for row in rows])
reward = np.array([row["expected_reward"] for row in rows])
kl = np.array([row["kl"] for row in rows])
print(f"{len(betas)} values of β from {betas[0]:g} to {betas[-1]:g}")
for row in rows[::6]:
    print(f"β = {row['beta']:<8.4g} E[r] = {row['expected_reward']:.4f}  KL = {row['kl']:.4f}")

# The frontier is monotone: as β grows, both reward and KL can only fall.
assert np.all(np.diff(reward) <= 0) and np.all(np.diff(kl) <= 0)
# The same numbers as the committed run.
summary = read_json(RUNS_DIR / "run_005", "summary.json")
assert summary["frontier_monotone"] is True
for row, saved in zip(rows, summary["sweep"], strict=True):
    assert round(row["expected_reward"], 6) == saved["expected_reward"]
    assert round(row["kl"], 6) == saved["kl"]
best = int(np.argmax(rewards))
limit_kl = -np.log(pi_ref[best])            # all mass on the best style
print(f"β → 0 limit: E[r] → {rewards[best]}, KL → -log π_ref(best) = {limit_kl:.4f}")
assert np.isclose(kl[0], limit_kl, atol=1e-6) and np.isclose(reward[0], rewards[best])

# %%
fig, ax = plt.subplots(figsize=(7.5, 4.5))
ax.plot(kl, reward, color="tab:gray", linewidth=1)
points = ax.scatter(kl, reward, c=np.log10(betas), cmap="viridis", zorder=3)
last = None                                 # label a point only if it is clear of the last label
for row in rows:
    here = np.array([row["kl"] / kl.max(), row["expected_reward"] / reward.max()])
    if last is None or np.hypot(*(here - last)) > 0.08:
        ax.annotate(f"β={row['beta']:.3g}", (row["kl"], row["expected_reward"]),
                    textcoords="offset points", xytext=(6, -11), fontsize=7)
        last = here
ax.axhline(reference_reward, color="tab:red", linestyle=":", label="π_ref (β → ∞)")
ax.axhline(rewards[best], color="tab:green", linestyle=":", label="best style only (β → 0)")
fig.colorbar(points, ax=ax, label="log10 β")
ax.set(xlabel="KL(π_β ‖ π_ref)  [nats]", ylabel="expected reward E[r]",
       title="Reward gained versus drift from the reference, one point per β")
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()

# %% [markdown]
# The curve is steep near the origin and flat near the top: the first nats of drift buy a lot
# of reward, the last ones very little. Measure the slope, reward bought per nat, at both ends:

# %%
at = {round(row["beta"], 6): row for row in rows}
near = (at[1.0]["expected_reward"] - reference_reward) / at[1.0]["kl"]
far = ((at[0.01]["expected_reward"] - at[0.1]["expected_reward"])
       / (at[0.01]["kl"] - at[0.1]["kl"]))
print(f"from π_ref to β = 1:   {near:.3f} reward per nat")
print(f"from β = 0.1 to 0.01: {far:.3f} reward per nat")
assert near > 10 * far

# %% [markdown]
# Where on this curve a real run should stop is not a
# question the maths answers; it depends on how much you trust the reward.

# %% [markdown]
# ## Three policies next to the reference
#
# Three values of β, from a strong leash to a weak one. Watch where the mass goes: first away
# from the styles that earn 0, then onto the best style.

# %%
shown = (10.0, 1.0, 0.1)
policies = {beta: kl_regularized_optimum(pi_ref, rewards, beta) for beta in shown}
fig, ax = plt.subplots(figsize=(8, 5))
y = np.arange(len(config.actions))
height = 0.2
ax.barh(y - 1.5 * height, pi_ref, height, color="black", label="π_ref")
for i, (beta, pi) in enumerate(policies.items(), start=1):
    ax.barh(y + (i - 1.5) * height, pi, height, color=plt.cm.viridis(i / 4),
            label=f"π_β, β = {beta:g}")
ax.set_yticks(y, [f"{name} (r={r:g})" for name, r in zip(config.actions, rewards, strict=True)],
              fontsize=8)
ax.invert_yaxis()
ax.set(xlabel="probability", title="The optimum for three values of β")
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()

for beta in shown:
    pi = policies[beta]
    print(f"β = {beta:<5g} E[r] = {pi @ rewards:.4f}  KL = {kl_divergence(pi, pi_ref):.4f}  "
          f"mass on r = 0 styles: {pi[rewards == 0].sum():.4f}")

zero_mass = [policies[beta][rewards == 0].sum() for beta in shown]
assert pi_ref[rewards == 0].sum() > zero_mass[0] > zero_mass[1] > zero_mass[2]
assert int(np.argmax(policies[0.1])) == best   # the weak leash puts most mass on the best style

# %% [markdown]
# `describe_policy` prints one of them as a table, the same as `course kl --beta 1`:

# %%
print(describe_policy(config, 1.0))

# %% [markdown]
# ## Does gradient ascent land on the closed form?
#
# The formula claims to be the maximiser of $F$. Check it the way a training loop would find
# it: parametrise $\pi = \mathrm{softmax}(\theta)$, start from the uniform policy (not from
# $\pi_{\text{ref}}$), and climb $F$ by plain gradient ascent. The gradient has a short form:
# with the *KL-shaped reward* $\tilde r(a) = r(a) - \beta \log \frac{\pi(a)}{\pi_{\text{ref}}(a)}$,
#
# $$\nabla_\theta F = \pi \odot \big(\tilde r - \mathbb{E}_\pi[\tilde r]\big),$$
#
# the same shape as the bandit's exact update, $\pi \odot (\bar r - J)$. First check that
# formula against finite differences of `kl_objective`, then climb.

# %%
beta = 0.3                                  # one β for the check (a smaller β needs more steps)
lr, iterations = 4.0, 1000                  # step size on θ, number of ascent steps


def grad_F(theta: np.ndarray) -> np.ndarray:
    """∇θ F(softmax(θ)) = π ⊙ (r̃ - E_π[r̃]), with r̃ = r - β log(π / π_ref)."""
    pi = softmax(theta)
    shaped = rewards - beta * np.log(pi / pi_ref)
    return pi * (shaped - pi @ shaped)


theta_test = np.linspace(-1.0, 1.0, len(rewards))          # any point will do
eps = 1e-6
numeric = np.array([(kl_objective(softmax(theta_test + eps * e), pi_ref, rewards, beta)
                     - kl_objective(softmax(theta_test - eps * e), pi_ref, rewards, beta))
                    / (2 * eps) for e in np.eye(len(rewards))])
assert np.allclose(grad_F(theta_test), numeric, atol=1e-8)
print("analytic gradient matches finite differences")

theta = np.zeros(len(rewards))              # the uniform policy
objective = []
for _ in range(iterations):
    objective.append(kl_objective(softmax(theta), pi_ref, rewards, beta))
    theta = theta + lr * grad_F(theta)      # θ <- θ + lr ∇θ F
ascended = softmax(theta)
closed = kl_regularized_optimum(pi_ref, rewards, beta)
f_closed = kl_objective(closed, pi_ref, rewards, beta)
gap = np.abs(ascended - closed).max()
print(f"β = {beta}: F(closed form) = {f_closed:.6f}, F after {iterations} steps = "
      f"{kl_objective(ascended, pi_ref, rewards, beta):.6f}")
print(f"largest difference between the two policies: {gap:.1e}")

assert gap < 1e-8                                          # it lands on the formula
assert max(objective) <= f_closed + 1e-12                  # nothing beats the closed form
assert np.all(np.diff(objective) >= -1e-12)                # and the climb never goes down

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
left.plot(objective, color="tab:blue", label="F(softmax(θ)) during ascent")
left.axhline(f_closed, color="tab:green", linestyle="--", label="F(π_β), closed form")
left.set(xlabel="ascent step", ylabel="E[r] − β·KL", title=f"Climbing F, β = {beta}")
left.legend(fontsize=8, loc="lower right")
distance = f_closed - np.array(objective)
below = np.flatnonzero(distance < 1e-14)                   # below this, rounding noise only
shown_steps = int(below[0]) if below.size else iterations
right.semilogy(distance[:shown_steps], color="tab:blue")
right.set(xlabel="ascent step", ylabel="F(π_β) − F(π_t)  (log scale)",
          title="Distance to the optimum (until it reaches 1e-14)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Your turn: edit the reward
#
# The reward vector is the specification. Below, the copy `my_rewards` starts with one change:
# a **hackable rubric** that also pays the style `The answer is <int>.` (the strict scorer
# pays it nothing). The reference produces that style often.
#
# **Predict first.** Before running the cell, write down:
#
# - at a weak leash (β = 0.1), where does the mass go, and what happens to the probability of
#   the style the strict scorer wants?
# - does a strong leash (β = 10) protect you from the loophole?
# - which curve ends higher on the reward axis, and what is that reward actually measuring?
#
# *My prediction:* …
#
# Then try your own edits: pay the trailing-period style, make every in-format style equal, or
# give a style the reference never uses a high reward (set its `pi_ref` to 0 in a
# `KLConfig(pi_ref=...)`; can the optimum ever reach it?).

# %%
my_rewards = list(config.rewards)
my_rewards[config.actions.index("The answer is <int>.")] = 1.0   # <- edit me

edited = KLConfig(rewards=tuple(my_rewards))
edited_rows = sweep(edited)
edited_reward = np.array([row["expected_reward"] for row in edited_rows])
edited_kl = np.array([row["kl"] for row in edited_rows])
# Whatever the rewards, the frontier stays monotone: d E[r] / dβ = -Var_π(r) / β² <= 0.
assert np.all(np.diff(edited_reward) <= 1e-12) and np.all(np.diff(edited_kl) <= 1e-12)

watched = 0.1
pi_edit = kl_regularized_optimum(pi_ref, np.asarray(my_rewards), watched)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), width_ratios=(1, 1.2))
left.plot(kl, reward, "o-", markersize=3, label="original rewards")
left.plot(edited_kl, edited_reward, "s-", markersize=3, label="your rewards")
left.set(xlabel="KL(π_β ‖ π_ref)  [nats]", ylabel="expected reward (under its own rewards)",
         title="The frontier, before and after the edit")
left.legend(fontsize=8, loc="lower right")
y = np.arange(len(config.actions))
right.barh(y - 0.2, policies[watched], 0.4, label=f"original, β = {watched:g}")
right.barh(y + 0.2, pi_edit, 0.4, label=f"your rewards, β = {watched:g}")
right.set_yticks(y, config.actions, fontsize=8)
right.invert_yaxis()
right.set(xlabel="probability", title="Where the mass goes")
right.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()

strict_best = config.actions.index("Final: <int>, after checking")
for beta_check in (10.0, 1.0, watched):
    pi = kl_regularized_optimum(pi_ref, np.asarray(my_rewards), beta_check)
    print(f"β = {beta_check:<4g} your E[r] = {pi @ np.asarray(my_rewards):.4f}  "
          f"strict-scorer E[r] = {pi @ rewards:.4f}  "
          f"P({config.actions[strict_best]}) = {pi[strict_best]:.4f}")

# %% [markdown]
# The second column is the one to watch: the expected reward **under the strict scorer** of a
# policy optimised for your rewards. When the two columns part ways, the optimiser is paid
# for something the specification does not want, and a weaker leash lets it take more of it.
#
# ## Questions
#
# 1. Why does every frontier end at KL $= -\log \pi_{\text{ref}}(a^*)$, where $a^*$ is the best
#    rewarded style? What happens when two styles tie for the best reward?
# 2. Multiply all rewards by 10 and divide β by 10. Which plot changes, and which does not?
# 3. In the gradient-ascent check, start from $\theta = \log \pi_{\text{ref}}$ instead of the
#    uniform policy. What is $F$ at step 0, and does the climb end in the same place?
