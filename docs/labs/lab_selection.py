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

import matplotlib
import numpy as np

from course import data
from course.formatting import paragraph
from course.paths import DATA_DIR, RUNS_DIR
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
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

# the course's figure style, for every plot of this lab
matplotlib.rcParams.update(STYLE)
WIDTH = 73      # characters: what this page's output box shows whole

PACK = DATA_DIR / "selection" / "pack_n8.jsonl"
PROBLEMS = DATA_DIR / "problems" / "dev.jsonl"
pairs = data.join_on_id(data.load_problems(PROBLEMS),
                        data.load_pack(PACK), PACK)
problems = {problem["id"]: problem for problem, _ in pairs}
scored = {problem["id"]: score_samples(problem, pack["samples"])
          for problem, pack in pairs}
ids = list(scored)
n = len(scored[ids[0]])
# one N for the whole pack
assert all(len(samples) == n for samples in scored.values())
print(f"{len(ids)} prompts, {n} samples each, "
      f"{len(ids) * n} completions scored")

# %% [markdown]
# ## Per-prompt c and the mean pass@k curve
#
# Count the correct samples $c$ of each prompt, then average the estimator over prompts for
# every $k$ from 1 to $n$. Then compare with the summary of the canonical run `runs/run_002`,
# which did the same from the same pack.

# %%
c = {pid: sum(s["details"]["code"] == "correct" for s in scored[pid])
     for pid in ids}
ks = list(range(1, n + 1))
mean_pass = {k: float(np.mean([pass_at_k(n, c[pid], k)
                               for pid in ids]))
             for k in ks}
for k in ks:
    print(f"pass@{k} = {mean_pass[k]:.4f}")

summary = read_json(RUNS_DIR / "run_002", "summary.json")
saved = summary["pass_at_k"]
for k in ks:                        # the whole curve matches run_002
    assert round(mean_pass[k], 4) == saved[str(k)]
assert round(mean_pass[n], 4) == saved[str(n)] == summary["best_of_n"]
# pass@1 is the plain mean reward: what ONE sample of the policy
# earns, whatever N is.
mean_reward = np.mean([s["reward"]
                       for pid in ids for s in scored[pid]])
assert np.isclose(mean_pass[1], mean_reward)
print(f"mean reward over all samples = {mean_reward:.4f} = pass@1")
print(f"run_002 says pass@{n} = {saved[str(n)]}")

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
# the only randomness: the random pick's one realisation
rng = np.random.default_rng(0)


def mean_reward_of(picks: list) -> float:
    """Mean reward of one pick per prompt; a vote with nothing to vote
    on counts 0."""
    return float(np.mean([0.0 if pick is None else pick["reward"]
                          for pick in picks]))


def first_n_mean(pid: str, N: int) -> float:
    """The mean reward of a prompt's first N samples."""
    return float(np.mean([s["reward"] for s in scored[pid][:N]]))


oracle = {N: mean_reward_of([best_of_n(scored[pid], N)
                            for pid in ids])
          for N in ks}
vote = {N: mean_reward_of([majority_vote(scored[pid], N)
                          for pid in ids])
        for N in ks}
luck = {N: float(np.mean([first_n_mean(pid, N) for pid in ids]))
        for N in ks}
luck_draw = {N: mean_reward_of([random_pick(scored[pid], N, rng)
                                for pid in ids])
             for N in ks}
print(f"{'N':>2}  {'pass@N':>6}  {'best-of-N':>9}  {'majority':>8}  "
      f"{'random E':>8}  {'drawn':>6}")
for N in ks:
    print(f"{N:>2}  {mean_pass[N]:6.4f}  {oracle[N]:9.4f}  "
          f"{vote[N]:8.4f}  {luck[N]:8.4f}  {luck_draw[N]:6.4f}")

for row in summary["by_n"]:   # the deterministic picks match run_002
    assert round(oracle[row["n"]], 4) == row["best_of_n"]
    assert round(vote[row["n"]], 4) == row["majority_vote"]
# at N = n the oracle pick IS pass@n
assert oracle[n] == mean_pass[n]
# a vote can never beat the oracle
assert all(vote[N] <= oracle[N] for N in ks)
# more samples, yet a worse vote (question 2)
assert vote[4] < vote[3]
# luck stays near pass@1
assert all(abs(luck[N] - mean_pass[1]) < 0.05 for N in ks)

# %%
fig = new_figure(4.4, LAB_WIDTH)
ax = fig.subplots()
ax.plot(ks, [mean_pass[k] for k in ks], "-o", color="tab:blue",
        label="mean pass@k (unbiased, all k-subsets)")
ax.plot(ks, [oracle[N] for N in ks], "s", color="tab:green",
        markersize=9, fillstyle="none",
        label="Best-of-N by scorer, first N (oracle)")
ax.plot(ks, [vote[N] for N in ks], "--^", color="tab:orange",
        label="majority vote, first N (deployable)")
ax.plot(ks, [luck[N] for N in ks], ":", color="tab:gray",
        label="random pick, expectation (luck)")
ax.plot(ks, [luck_draw[N] for N in ks], "v", color="tab:gray",
        label="random pick, one seeded draw")
ax.axhline(mean_pass[1], color="tab:red", linewidth=1,
           label=f"pass@1 = {mean_pass[1]:.3f}: "
                 f"the policy, unchanged")
ax.set(xlabel="k = N, samples per prompt",
       ylabel="share of prompts solved", xticks=ks, ylim=(0, 1.05),
       title="Loop B: more samples, better picks, the same policy")
ax.legend(loc="lower right")
show_figure(
    fig, 1,
    caption="Selection on the frozen pack of run_002: mean pass@k, "
            "Best-of-N, majority vote and a random pick at each N, "
            "over a policy that never changes.",
    alt=f"Line chart against N from 1 to {n}. Mean pass@k rises from "
        f"{mean_pass[1]:.2f} to {mean_pass[n]:.2f}, with the "
        f"Best-of-N oracle's squares close to it, from "
        f"{oracle[1]:.2f} to {oracle[n]:.2f}; the majority vote "
        f"rises more slowly, from {vote[1]:.2f} to {vote[n]:.2f}, "
        f"dipping at N = 4; the random pick stays near the flat red "
        f"line of pass@1, {mean_pass[1]:.3f}.")

# %% [markdown]
# The gap between the oracle and the vote is the price of not knowing the answer; the gap
# between the vote and the random pick is what agreement between samples is worth. The red
# line never moves: every point of Figure 1 comes from the same frozen samples.

# %% [markdown]
# ## How many of the 8 samples are correct?
#
# The mean curve hides the prompts. Figure 2, top: how many prompts have each value of $c$.
# Bottom: pass@k for a single prompt with $c$ correct samples, one line per $c$. A prompt with
# $c = 0$ stays at 0 for every $k$; a prompt with $c \ge 1$ reaches 1 by $k = n - c + 1$.

# %%
histogram = Counter(c.values())
counts = [histogram.get(value, 0) for value in range(n + 1)]
print("c:       " + " ".join(f"{value:>3}" for value in range(n + 1)))
print("prompts: " + " ".join(f"{count:>3}" for count in counts))
assert sum(counts) == len(ids)
assert counts[0] == len(summary["selection_fails"])
# c >= 1: pass@k is 1 exactly from k = n - c + 1 on
for value in range(1, n + 1):
    ones = [k for k in ks if pass_at_k(n, value, k) == 1.0]
    assert min(ones) == n - value + 1

viridis = matplotlib.colormaps["viridis"]
fig = new_figure(6.4, LAB_WIDTH)
top, bottom = fig.subplots(2, 1)
colors = ["tab:red"] + ["tab:blue"] * (n - 1) + ["tab:green"]
bars = top.bar(range(n + 1), counts, color=colors)
top.bar_label(bars)
top.set_ylim(0, 1.2 * max(counts))
top.set(xlabel=f"c = correct samples out of {n}", ylabel="prompts",
        xticks=range(n + 1),
        title="Per-prompt c (red: selection cannot help; "
              "green: not needed)")
for value in sorted(histogram):
    bottom.plot(ks, [pass_at_k(n, value, k) for k in ks], "-o",
                markersize=3, color=viridis(value / n),
                label=f"c = {value} ({histogram[value]})")
bottom.set(xlabel="k", ylabel="pass@k of one prompt", xticks=ks,
           ylim=(-0.03, 1.03),
           title="pass@k for one prompt, by its c (prompts)")
bottom.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
shown = ", ".join(f"{count} with c = {value}"
                  for value, count in enumerate(counts))
show_figure(
    fig, 2,
    caption=f"How many of the {n} samples of each prompt are "
            f"correct, and what pass@k that count gives a single "
            f"prompt.",
    alt=f"Top: bar chart of the number of prompts by their count c "
        f"of correct samples out of {n}: {shown}. Bottom: pass@k "
        f"against k for one prompt, one line per c; the c = 0 line "
        f"stays at 0, and a line with c of 1 or more reaches 1 at "
        f"k = n - c + 1.")

# %% [markdown]
# ## Where selection still fails
#
# The prompts with $c = 0$: no sample is correct, so no picking rule, oracle or not, can
# rescue them. `why_no_sample_passes` reads the reason from the samples themselves.

# %%
fails = [pid for pid in ids if c[pid] == 0]
assert fails == summary["selection_fails"]
ask = "Output exactly one line: Final: <int>"
print("Every prompt ends with the instruction, cut here:")
print(f"    {ask!r}\n")
for pid in fails:
    problem = problems[pid]
    question = problem["prompt"].removesuffix(ask).strip()
    print(f"{pid}, expected {problem['expected_answer']}:")
    print(paragraph(question, indent="    ", hanging="    ",
                    width=WIDTH))
    print(paragraph(why_no_sample_passes(scored[pid]), indent="  -> ",
                    hanging="     ", width=WIDTH), end="\n\n")

# %% [markdown]
# And the prompts where the oracle finds a correct sample among all $n$ but the vote picks a
# wrong answer: the right answer exists, but another one gets more votes (or as many, and came
# first).

# %%
misses = [pid for pid in ids if c[pid] > 0
          and mean_reward_of([majority_vote(scored[pid], n)]) == 0.0]
assert misses == [miss["id"] for miss in summary["vote_misses"]]
for pid in misses:
    votes = vote_counts(scored[pid])
    expected = problems[pid]["expected_answer"]
    print(f"{pid}: votes {dict(votes)}, expected {expected} "
          f"(x{votes.get(expected, 0)})")
print(f"{len(misses)} prompts where the vote misses an answer "
      f"the oracle finds")

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
c_here, n_here = sum(correct), len(samples)
print(f"{prompt_id}: c = {c_here} of {n_here}, rewards "
      + " ".join(f"{s['reward']:.0f}" for s in samples))
print(f"{'k':>2}  {'subsets':>7}  {'with a correct one':>18}  "
      f"{'brute force':>11}  {'pass_at_k':>9}  {'plug-in':>7}")
for k in range(1, n_here + 1):
    subsets = list(combinations(range(n_here), k))
    hits = sum(any(correct[i] for i in subset) for subset in subsets)
    brute = hits / len(subsets)
    formula = pass_at_k(n_here, c_here, k)
    plug_in = 1 - (1 - c_here / n_here) ** k
    print(f"{k:>2}  {len(subsets):>7}  {hits:>18}  {brute:11.4f}  "
          f"{formula:9.4f}  {plug_in:7.4f}")
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
