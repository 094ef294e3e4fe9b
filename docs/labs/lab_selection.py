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
# # Lab: selection, pass@k and its controls
#
# The hands-on companion to [Milestone 0.5](../../lessons/m05-selection/) (in the repository:
# `docs/lessons/m05-selection.md`). This notebook is executed every time the site is built.
# Download it (links above), run it next to the repository, and change things.
#
# We are in **Loop B**: sample N completions, pick one. The policy does not change, so any gain
# here is a *selection improvement*, never a *learning improvement*. The data is a frozen pack:
# for each prompt of the dev split, N samples already drawn from one frozen policy.
#
# For a prompt with $c$ correct samples out of $n$, the unbiased estimate of pass@k (the chance
# that at least one of $k$ fresh samples is correct) is
#
# $$\text{pass@}k = 1 - \frac{\binom{n - c}{k}}{\binom{n}{k}},$$
#
# the share of $k$-subsets of the $n$ samples that contain a correct one.

# %%
from collections import Counter
from itertools import combinations

import matplotlib.pyplot as plt
import numpy as np

from course import data
from course.paths import DATA_DIR
from course.paths import RUNS_DIR
from course.runs import read_json
from course.selection import (
    best_of_n,
    majority_vote,
    pass_at_k,
    random_pick,
    score_samples,
    vote_counts,
    why_no_sample_passes,
)

PACK = DATA_DIR / "selection" / "pack_n8.jsonl"
PROBLEMS = DATA_DIR / "problems" / "dev.jsonl"
pairs = data.join_on_id(data.load_problems(PROBLEMS), data.load_pack(PACK), PACK)
problems = {problem["id"]: problem for problem, _ in pairs}
scored = {problem["id"]: score_samples(problem, pack["samples"]) for problem, pack in pairs}
ids = list(scored)
n = len(scored[ids[0]])
assert all(len(samples) == n for samples in scored.values())   # one N for the whole pack
print(f"{len(ids)} prompts, {n} samples each, {len(ids) * n} completions scored")

# %% [markdown]
# ## Per-prompt c and the mean pass@k curve
#
# Count the correct samples $c$ of each prompt, then average the estimator over prompts for
# every $k$ from 1 to $n$. Then compare with the summary of the canonical run `runs/run_002`,
# which did the same from the same pack.

# %%
c = {pid: sum(s["details"]["code"] == "correct" for s in scored[pid]) for pid in ids}
ks = list(range(1, n + 1))
mean_pass = {k: float(np.mean([pass_at_k(n, c[pid], k) for pid in ids])) for k in ks}
for k in ks:
    print(f"pass@{k} = {mean_pass[k]:.4f}")

summary = read_json(RUNS_DIR / "run_002", "summary.json")
for k in ks:                                              # the whole curve matches run_002
    assert round(mean_pass[k], 4) == summary["pass_at_k"][str(k)]
assert round(mean_pass[n], 4) == summary["pass_at_k"][str(n)] == summary["best_of_n"]
# pass@1 is the plain mean reward: what ONE sample of the policy earns, whatever N is.
mean_reward = np.mean([s["reward"] for pid in ids for s in scored[pid]])
assert np.isclose(mean_pass[1], mean_reward)
print(f"mean reward over all samples = {mean_reward:.4f} = pass@1; "
      f"run_002 says pass@{n} = {summary['pass_at_k'][str(n)]}")

# %% [markdown]
# ## The picks and the controls at each N
#
# pass@k is an average over every $k$-subset. A real pick looks at one set of samples; here,
# the first $N$ of each prompt. Three picks per $N$:
#
# - **Best-of-N by our scorer**: highest reward, first one on a tie. The scorer compares with
#   the expected answer, so this is an *oracle*, not something you could deploy.
# - **Majority vote** (self-consistency): the most common parsed answer, no answer key needed.
#   This is the deployable comparison.
# - **Random pick**: what luck alone gives. Its expectation is the mean reward of the first
#   $N$ samples, computed exactly; the dots are one realisation from a seeded generator.

# %%
rng = np.random.default_rng(0)              # the only randomness: the random-pick realisation


def mean_reward_of(picks: list) -> float:
    """Mean reward of one pick per prompt; a vote with nothing to vote on counts 0."""
    return float(np.mean([0.0 if pick is None else pick["reward"] for pick in picks]))


oracle = {N: mean_reward_of([best_of_n(scored[pid], N) for pid in ids]) for N in ks}
vote = {N: mean_reward_of([majority_vote(scored[pid], N) for pid in ids]) for N in ks}
luck = {N: float(np.mean([np.mean([s["reward"] for s in scored[pid][:N]]) for pid in ids]))
        for N in ks}
luck_draw = {N: mean_reward_of([random_pick(scored[pid], N, rng) for pid in ids]) for N in ks}
print(f"{'N':>2}  {'pass@N':>6}  {'best-of-N':>9}  {'majority':>8}  {'random E':>8}  {'drawn':>6}")
for N in ks:
    print(f"{N:>2}  {mean_pass[N]:6.4f}  {oracle[N]:9.4f}  {vote[N]:8.4f}  {luck[N]:8.4f}  "
          f"{luck_draw[N]:6.4f}")

for row in summary["by_n"]:                 # the deterministic picks match run_002
    assert round(oracle[row["n"]], 4) == row["best_of_n"]
    assert round(vote[row["n"]], 4) == row["majority_vote"]
assert oracle[n] == mean_pass[n]            # at N = n the oracle pick IS pass@n
assert all(vote[N] <= oracle[N] for N in ks)  # a vote can never beat the oracle
assert vote[4] < vote[3]                    # more samples, yet a worse vote (question 2)
assert all(abs(luck[N] - mean_pass[1]) < 0.05 for N in ks)  # luck stays near pass@1

# %%
fig, ax = plt.subplots(figsize=(8, 5))
ax.plot(ks, [mean_pass[k] for k in ks], "-o", color="tab:blue",
        label="mean pass@k (unbiased, all k-subsets)")
ax.plot(ks, [oracle[N] for N in ks], "s", color="tab:green", markersize=9, fillstyle="none",
        label="Best-of-N by scorer, first N (oracle)")
ax.plot(ks, [vote[N] for N in ks], "--^", color="tab:orange",
        label="majority vote, first N (deployable)")
ax.plot(ks, [luck[N] for N in ks], ":", color="tab:gray",
        label="random pick, expectation (luck)")
ax.plot(ks, [luck_draw[N] for N in ks], "v", color="tab:gray",
        label="random pick, one seeded draw")
ax.axhline(mean_pass[1], color="tab:red", linewidth=1,
           label=f"pass@1 = {mean_pass[1]:.3f}: the policy, unchanged")
ax.set(xlabel="k = N, samples per prompt", ylabel="share of prompts solved", xticks=ks,
       ylim=(0, 1.05), title="Loop B: more samples, better picks, the same policy")
ax.grid(alpha=0.3)
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()

# %% [markdown]
# The gap between the oracle and the vote is the price of not knowing the answer; the gap
# between the vote and the random pick is what agreement between samples is worth. The red
# line never moves: every point on this plot comes from the same frozen samples.

# %% [markdown]
# ## How many of the 8 samples are correct?
#
# The mean curve hides the prompts. Left: how many prompts have each value of $c$. Right:
# pass@k for a single prompt with $c$ correct samples, one line per $c$. A prompt with $c = 0$
# stays at 0 for every $k$; a prompt with $c \ge 1$ reaches 1 by $k = n - c + 1$.

# %%
histogram = Counter(c.values())
counts = [histogram.get(value, 0) for value in range(n + 1)]
print("c:       " + " ".join(f"{value:>3}" for value in range(n + 1)))
print("prompts: " + " ".join(f"{count:>3}" for count in counts))
assert sum(counts) == len(ids) and counts[0] == len(summary["selection_fails"])
for value in range(1, n + 1):               # c >= 1: pass@k is 1 exactly from k = n - c + 1 on
    assert min(k for k in ks if pass_at_k(n, value, k) == 1.0) == n - value + 1

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
colors = ["tab:red"] + ["tab:blue"] * (n - 1) + ["tab:green"]
bars = left.bar(range(n + 1), counts, color=colors)
left.bar_label(bars, fontsize=8)
left.set(xlabel=f"c = correct samples out of {n}", ylabel="prompts", xticks=range(n + 1),
         title="Per-prompt c (red: selection cannot help; green: not needed)")
left.title.set_fontsize(10)
for value in sorted(histogram):
    right.plot(ks, [pass_at_k(n, value, k) for k in ks], "-o", markersize=3,
               color=plt.cm.viridis(value / n), label=f"c = {value} ({histogram[value]})")
right.set(xlabel="k", ylabel="pass@k of one prompt", xticks=ks, ylim=(-0.03, 1.03),
          title="pass@k for one prompt, by its c (prompts)")
right.title.set_fontsize(10)
right.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Where selection still fails
#
# The prompts with $c = 0$: no sample is correct, so no picking rule, oracle or not, can
# rescue them. `why_no_sample_passes` reads the reason from the samples themselves.

# %%
fails = [pid for pid in ids if c[pid] == 0]
assert fails == summary["selection_fails"]
for pid in fails:
    print(f"{pid} (expected {problems[pid]['expected_answer']}): "
          f"{problems[pid]['prompt'].splitlines()[0][:70]}")
    print(f"    {why_no_sample_passes(scored[pid])}\n")

# %% [markdown]
# And the prompts where the oracle finds a correct sample among all $n$ but the vote picks a
# wrong answer: the right answer exists, but another one gets more votes (or as many, and came
# first).

# %%
misses = [pid for pid in ids
          if c[pid] > 0 and mean_reward_of([majority_vote(scored[pid], n)]) == 0.0]
assert misses == [miss["id"] for miss in summary["vote_misses"]]
for pid in misses:
    votes = vote_counts(scored[pid])
    expected = problems[pid]["expected_answer"]
    print(f"{pid}: votes {dict(votes)}, expected {expected} "
          f"(x{votes.get(expected, 0)})")
print(f"{len(misses)} prompts where the vote misses an answer the oracle finds")

# %% [markdown]
# ## pass@k by brute force, for one prompt
#
# The formula is a shortcut; the definition is "the share of $k$-subsets of this prompt's
# samples with at least one correct sample". Enumerate every subset of the real samples of one
# prompt and compare, for every $k$. The last column is the tempting plug-in
# $1 - (1 - c/n)^k$, which treats the $n$ samples as if drawn with replacement.
#
# Change `prompt_id` to any prompt (try one with $c = 1$, say, or one of the failures above).

# %%
prompt_id = "dev-010"                       # <- edit me

samples = scored[prompt_id]
correct = [s["reward"] == 1.0 for s in samples]
print(f"{prompt_id}: c = {sum(correct)} of {len(samples)}, rewards "
      + " ".join(f"{s['reward']:.0f}" for s in samples))
print(f"{'k':>2}  {'subsets':>7}  {'with a correct one':>18}  {'brute force':>11}  "
      f"{'pass_at_k':>9}  {'plug-in':>7}")
for k in range(1, len(samples) + 1):
    subsets = list(combinations(range(len(samples)), k))
    hits = sum(any(correct[i] for i in subset) for subset in subsets)
    brute = hits / len(subsets)
    formula = pass_at_k(len(samples), sum(correct), k)
    plug_in = 1 - (1 - sum(correct) / len(samples)) ** k
    print(f"{k:>2}  {len(subsets):>7}  {hits:>18}  {brute:11.4f}  {formula:9.4f}  {plug_in:7.4f}")
    assert abs(brute - formula) < 1e-12

# %% [markdown]
# ## Questions
#
# 1. Mean pass@8 equals Best-of-8 by our scorer. Why can no deployable picking rule reach it on
#    this pack, and what would you need to close the gap?
# 2. On this pack the vote is worse at N = 4 than at N = 3 (see the table). Find a prompt
#    where the fourth sample turned a right vote into a wrong one, and explain how a sample
#    can make a vote worse even though the oracle can only get better with N.
# 3. The random pick's expectation stays near pass@1 for every N. Explain why in one sentence,
#    and say what that line is for in a report.
