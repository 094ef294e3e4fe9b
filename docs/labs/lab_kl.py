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
import matplotlib
import numpy as np

from course.kl import (
    KLConfig,
    describe_policy,
    kl_divergence,
    kl_objective,
    kl_regularized_optimum,
    sweep,
)
from course.paths import RUNS_DIR
from course.policy import softmax
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.runs import read_json

# the course's figure style, for every plot of this lab
matplotlib.rcParams.update(STYLE)

config = KLConfig()         # the canonical settings of runs/run_005
pi_ref = np.asarray(config.pi_ref)
rewards = np.asarray(config.rewards)
print(f"{'style':<36} {'π_ref':>6} {'r':>5}")
for name, p, r in zip(config.actions, pi_ref, rewards, strict=True):
    print(f"{name:<36} {p:6.2f} {r:5.2f}")
reference_reward = float(pi_ref @ rewards)
print(f"reference E[r] = {reference_reward:.4f}; "
      f"π_ref mass on styles with r = 0: "
      f"{pi_ref[rewards == 0].sum():.2f}")

# %% [markdown]
# ## The β sweep: the reward-versus-KL frontier
#
# For each β of the sweep (log-spaced, as printed below), compute $\pi_\beta$, its expected
# reward and its KL to the reference. Each point of Figure 1 is one β. Large β sits at the
# origin (the reference itself); small β climbs toward the best style the reference can
# produce.

# %%
rows = sweep(config)                        # ascending β
betas = np.array([row["beta"] for row in rows])
reward = np.array([row["expected_reward"] for row in rows])
kl = np.array([row["kl"] for row in rows])
print(f"{len(betas)} values of β from {betas[0]:g} to {betas[-1]:g}")
for row in rows[::6]:
    beta, r, d = row["beta"], row["expected_reward"], row["kl"]
    print(f"β = {beta:<8.4g} E[r] = {r:.4f}  KL = {d:.4f}")

# The frontier is monotone: as β grows, reward and KL can only fall.
assert np.all(np.diff(reward) <= 0) and np.all(np.diff(kl) <= 0)
# The same numbers as the committed run.
summary = read_json(RUNS_DIR / "run_005", "summary.json")
assert summary["frontier_monotone"] is True
for row, saved in zip(rows, summary["sweep"], strict=True):
    for key in ("expected_reward", "kl"):
        assert round(row[key], 6) == saved[key]
best = int(np.argmax(rewards))
limit_kl = -np.log(pi_ref[best])        # all mass on the best style
print(f"β → 0 limit: E[r] → {rewards[best]}, "
      f"KL → -log π_ref(best) = {limit_kl:.4f}")
assert np.isclose(kl[0], limit_kl, atol=1e-6)
assert np.isclose(reward[0], rewards[best])

# %%
fig = new_figure(4.2, LAB_WIDTH)
ax = fig.subplots()
ax.plot(kl, reward, color="tab:gray", linewidth=1)
points = ax.scatter(kl, reward, c=np.log10(betas), cmap="viridis",
                    zorder=3)
last = None   # a point is labelled only if clear of the last label
for row in rows:
    here = np.array([row["kl"] / kl.max(),
                     row["expected_reward"] / reward.max()])
    if last is None or np.hypot(*(here - last)) > 0.12:
        ax.annotate(f"β={row['beta']:.3g}",
                    (row["kl"], row["expected_reward"]),
                    textcoords="offset points", xytext=(6, -13))
        last = here
ax.axhline(reference_reward, color="tab:red", linestyle=":",
           label="π_ref (β → ∞)")
ax.axhline(rewards[best], color="tab:green", linestyle=":",
           label="best style only (β → 0)")
fig.colorbar(points, ax=ax, label="log10 β")
ax.set(xlabel="KL(π_β ‖ π_ref)  [nats]",
       ylabel="expected reward E[r]",
       title="Reward gained versus drift, one point per β")
ax.legend(loc="lower right")
show_figure(
    fig, 1,
    caption="The reward-versus-KL frontier of run_005: one point per "
            "β, from the reference at the origin to the best style "
            "alone.",
    alt=f"Scatter plot with a line through {len(rows)} points, one "
        f"per β from {betas[0]:g} to {betas[-1]:g}, coloured by "
        f"log10 β: expected reward against KL to the reference. At "
        f"large β the points sit at KL 0 and reward "
        f"{reward[-1]:.2f}, near the reference's "
        f"{reference_reward:.2f}; the curve rises steeply, then "
        f"flattens, to KL {kl[0]:.2f} and reward {reward[0]:.2f}, "
        f"the best style's reward, at β = {betas[0]:g}.")

# %% [markdown]
# The curve is steep near the origin and flat near the top: the first nats of drift buy a lot
# of reward, the last ones very little. Measure the slope, reward bought per nat, at both ends:

# %%
at = {round(row["beta"], 6): row for row in rows}
near = ((at[1.0]["expected_reward"] - reference_reward)
        / at[1.0]["kl"])
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
# Figure 2 shows three values of β, from a strong leash to a weak one. Watch where the mass
# goes: first away from the styles that earn 0, then onto the best style.

# %%
shown = (10.0, 1.0, 0.1)
policies = {beta: kl_regularized_optimum(pi_ref, rewards, beta)
            for beta in shown}
viridis = matplotlib.colormaps["viridis"]
fig = new_figure(5.2, LAB_WIDTH)
ax = fig.subplots()
y = np.arange(len(config.actions))
height = 0.2
ax.barh(y - 1.5 * height, pi_ref, height, color="black",
        label="π_ref")
for i, (beta, pi) in enumerate(policies.items(), start=1):
    ax.barh(y + (i - 1.5) * height, pi, height, color=viridis(i / 4),
            label=f"π_β, β = {beta:g}")
labels = [f"{name} (r={r:g})"
          for name, r in zip(config.actions, rewards, strict=True)]
ax.set_yticks(y, labels)
ax.invert_yaxis()
ax.set(xlabel="probability",
       title="The optimum for three values of β")
ax.legend(loc="lower right")
zero_mass = [policies[beta][rewards == 0].sum() for beta in shown]
show_figure(
    fig, 2,
    caption="The reference and the KL-regularised optimum for "
            "β = 10, 1 and 0.1: the mass leaves the styles that earn "
            "0, then gathers on the best style.",
    alt=f"Horizontal grouped bar chart of the probability of each "
        f"of the {len(y)} styles under π_ref and under π_β for "
        f"β = 10, 1 and 0.1. The mass on styles that earn 0 falls "
        f"from {pi_ref[rewards == 0].sum():.2f} under π_ref to "
        + ", ".join(f"{m:.2f}" for m in zero_mass)
        + f"; at β = 0.1 the style '{config.actions[best]}' holds "
        f"{policies[0.1][best]:.2f} of it.")

for beta in shown:
    pi = policies[beta]
    print(f"β = {beta:<5g} E[r] = {pi @ rewards:.4f}  "
          f"KL = {kl_divergence(pi, pi_ref):.4f}  "
          f"mass on r = 0 styles: {pi[rewards == 0].sum():.4f}")

assert pi_ref[rewards == 0].sum() > zero_mass[0] > zero_mass[1]
assert zero_mass[1] > zero_mass[2]
# the weak leash puts most mass on the best style
assert int(np.argmax(policies[0.1])) == best

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
# formula against finite differences of `kl_objective`, then climb (Figure 3).

# %%
beta = 0.3       # one β for the check (a smaller β needs more steps)
lr, iterations = 4.0, 1000   # step size on θ, number of ascent steps


def grad_F(theta: np.ndarray) -> np.ndarray:
    """∇θ F(softmax(θ)) = π ⊙ (r̃ - E_π[r̃]),
    with r̃ = r - β log(π / π_ref)."""
    pi = softmax(theta)
    shaped = rewards - beta * np.log(pi / pi_ref)
    return pi * (shaped - pi @ shaped)


def F(theta: np.ndarray) -> float:
    """The objective at π = softmax(θ)."""
    return kl_objective(softmax(theta), pi_ref, rewards, beta)


theta_test = np.linspace(-1.0, 1.0, len(rewards))  # any point will do
eps = 1e-6
steps = eps * np.eye(len(rewards))
numeric = np.array([(F(theta_test + e) - F(theta_test - e))
                    / (2 * eps) for e in steps])
assert np.allclose(grad_F(theta_test), numeric, atol=1e-8)
print("analytic gradient matches finite differences")

theta = np.zeros(len(rewards))              # the uniform policy
objective = []
for _ in range(iterations):
    objective.append(F(theta))
    theta = theta + lr * grad_F(theta)      # θ <- θ + lr ∇θ F
ascended = softmax(theta)
closed = kl_regularized_optimum(pi_ref, rewards, beta)
f_closed = kl_objective(closed, pi_ref, rewards, beta)
gap = np.abs(ascended - closed).max()
print(f"β = {beta}: F(closed form) = {f_closed:.6f}, "
      f"F after {iterations} steps = {F(theta):.6f}")
print(f"largest difference between the two policies: {gap:.1e}")

assert gap < 1e-8                     # it lands on the formula,
assert max(objective) <= f_closed + 1e-12    # nothing beats it,
assert np.all(np.diff(objective) >= -1e-12)  # and F never goes down

# %%
fig = new_figure(5.2, LAB_WIDTH)
top, bottom = fig.subplots(2, 1)
top.plot(objective, color="tab:blue",
         label="F(softmax(θ)) during ascent")
top.axhline(f_closed, color="tab:green", linestyle="--",
            label="F(π_β), closed form")
top.set(xlabel="ascent step", ylabel="E[r] − β·KL",
        title=f"Climbing F, β = {beta}")
top.legend(loc="lower right")
distance = f_closed - np.array(objective)
# below 1e-14, the distance is rounding noise only
below = np.flatnonzero(distance < 1e-14)
shown_steps = int(below[0]) if below.size else iterations
bottom.semilogy(distance[:shown_steps], color="tab:blue")
bottom.set(xlabel="ascent step", ylabel="F(π_β) − F(π_t)",
           title="Distance to the optimum, log scale (until 1e-14)")
show_figure(
    fig, 3,
    caption=f"Gradient ascent on F from the uniform policy, "
            f"β = {beta}: it climbs to the closed form's value and "
            f"never passes it.",
    alt=f"Top: F during {iterations} ascent steps, rising from "
        f"{objective[0]:.3f} to the dashed line of the closed form's "
        f"{f_closed:.3f}. Bottom: the distance to that value on a "
        f"log scale, falling from {distance[0]:.1e} to below 1e-14 "
        f"by step {shown_steps}.")

# %% [markdown]
# ## Your turn: edit the reward
#
# The reward vector is the specification. Below, the copy `my_rewards` starts with one change:
# a **hackable rubric** that also pays the style `The answer is <int>.` (the strict scorer
# pays it nothing). The reference produces that style often.
#
# **Predict: the loophole.** At a weak leash (β = 0.1), once the loophole is paid, does the
# probability of the style the strict scorer wants rise or fall, against the optimum under
# the original rewards?
#
# ```predict
# choice: the strict style's probability at β = 0.1, loophole paid
# options: rises | falls
# key: "at β = 0.1, against the original rewards, P(best) {}"
# ```

# %%
my_rewards = list(config.rewards)
loophole = config.actions.index("The answer is <int>.")
my_rewards[loophole] = 1.0                  # <- edit me
mine = np.asarray(my_rewards)

edited = KLConfig(rewards=tuple(my_rewards))
edited_rows = sweep(edited)
edited_reward = np.array([r["expected_reward"] for r in edited_rows])
edited_kl = np.array([r["kl"] for r in edited_rows])
# Whatever the rewards, the frontier stays monotone:
# d E[r] / dβ = -Var_π(r) / β² <= 0.
assert np.all(np.diff(edited_reward) <= 1e-12)
assert np.all(np.diff(edited_kl) <= 1e-12)

watched = 0.1
pi_edit = kl_regularized_optimum(pi_ref, mine, watched)
fig = new_figure(7.4, LAB_WIDTH)
top, bottom = fig.subplots(2, 1, height_ratios=(1, 1.3))
top.plot(kl, reward, "o-", markersize=3, label="original rewards")
top.plot(edited_kl, edited_reward, "s-", markersize=3,
         label="your rewards")
top.set(xlabel="KL(π_β ‖ π_ref)  [nats]",
        ylabel="E[r] (its own rewards)",
        title="The frontier, before and after the edit")
top.legend(loc="lower right")
y = np.arange(len(config.actions))
bottom.barh(y - 0.2, policies[watched], 0.4,
            label=f"original, β = {watched:g}")
bottom.barh(y + 0.2, pi_edit, 0.4,
            label=f"your rewards, β = {watched:g}")
bottom.set_yticks(y, config.actions)
bottom.invert_yaxis()
bottom.set(xlabel="probability", title="Where the mass goes")
bottom.legend(loc="lower right")
top_style = config.actions[int(np.argmax(pi_edit))]
show_figure(
    fig, 4,
    caption="Your rewards against the original ones: the frontier "
            "each one draws, and where the optimum puts its mass at "
            f"β = {watched:g}.",
    alt=f"Top: two reward-versus-KL frontiers; the original ends at "
        f"reward {reward[0]:.2f} and KL {kl[0]:.2f}, yours at reward "
        f"{edited_reward[0]:.2f} and KL {edited_kl[0]:.2f}, each "
        f"under its own rewards. Bottom: paired horizontal bars of "
        f"each style's probability at β = {watched:g}; under your "
        f"rewards the style '{top_style}' holds "
        f"{pi_edit.max():.2f}, and the style the strict scorer pays "
        f"most holds {pi_edit[best]:.2f} (originally "
        f"{policies[watched][best]:.2f}).")

print(f"P(best) = P({config.actions[best]}),")
print("    the style the strict scorer pays most")
print(f"{'β':<4}  {'your E[r]':>9}  {'strict E[r]':>11}  "
      f"{'P(best)':>7}")
for beta_check in (10.0, 1.0, watched):
    pi = kl_regularized_optimum(pi_ref, mine, beta_check)
    print(f"{beta_check:<4g}  {pi @ mine:9.4f}  "
          f"{pi @ rewards:11.4f}  {pi[best]:7.4f}")
print(f"at β = {watched:g}, against the original rewards, P(best)",
      "rises" if pi_edit[best] > policies[watched][best] else "falls")

# %% [markdown]
# **Answer: the loophole.** It falls: the loophole style takes the mass, and the style the
# strict scorer wants loses it. The second column of the table is the one to watch: the
# expected reward **under the strict scorer** of a policy optimised for your rewards. When the
# two columns part ways, the optimiser is paid for something the specification does not want,
# and a weaker leash lets it take more of it. Does a strong leash (β = 10) protect you from
# the loophole, or only slow the drift? Which curve of Figure 4 ends higher on the reward
# axis, and what is that reward measuring?
#
# Then try your own edits: pay the trailing-period style, make every in-format style equal, or
# give a style the reference never uses a high reward (set its `pi_ref` to 0 in a
# `KLConfig(pi_ref=...)`; can the optimum ever reach it?).

# %% [markdown]
# ## Questions
#
# 1. Why does every frontier end at KL $= -\log \pi_{\text{ref}}(a^*)$, where $a^*$ is the best
#    rewarded style? What happens when two styles tie for the best reward?
# 2. Multiply all rewards by 10 and divide β by 10. Which plot changes, and which does not?
# 3. In the gradient-ascent check, start from $\theta = \log \pi_{\text{ref}}$ instead of the
#    uniform policy. What is $F$ at step 0, and does the climb end in the same place?
