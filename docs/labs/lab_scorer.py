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
# # Lab: the scorer in a notebook
#
# This notebook is executed every time the site is built: if a cell raised, the build would
# fail. Download it (links above), run it next to the repository, and change things.
#
# We score a handful of completions for one problem, look at *why* each one passes or fails,
# and plot the outcome codes. Reward is binary in spec `strict-v1`:
# $r(x, y) = 1$ exactly when the completion $y$ is the line `Final: <int>` with the expected
# integer, and $r(x, y) = 0$ otherwise.

# %%
from collections import Counter

import matplotlib
from matplotlib.ticker import MaxNLocator

from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.scorer import SCORER_VERSION, score

# the course's figure style, for every plot of this lab
matplotlib.rcParams.update(STYLE)

example = {
    "id": "lab-1",
    "prompt": "Compute 17*19. Output exactly one line: Final: <int>",
    "expected_answer": 323,
}
completions = [
    "Final: 323",          # the one in-spec spelling
    "Final: 323\n",        # trailing newline: surrounding whitespace
    "Final: 324",          # well formed, wrong number
    "The answer is 323.",  # right number, wrong format
    "Final: 0323",         # leading zero: not canonical
    "Final: \u2212323",    # U+2212 MINUS SIGN, looks like "-"
    "**Final: 323**",      # markdown around the line
]
print("scorer version:", SCORER_VERSION)

# %% [markdown]
# ## Score each completion
#
# `score(example, completion)` returns the reward and the details that explain it.

# %%
results = [score(example, completion) for completion in completions]
for completion, result in zip(completions, results, strict=True):
    code = result["details"]["code"]
    print(f"{result['reward']:.1f}  {code:<22} {completion!r}")

# %% [markdown]
# The mean reward over these $N = 7$ completions is
# $\bar r = \frac{1}{N} \sum_i r(x, y_i)$: a number that means nothing until we know *why*
# each completion failed.

# %%
rewards = [r["reward"] for r in results]
assert rewards == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
mean_reward = sum(rewards) / len(rewards)
print(f"mean reward = {mean_reward:.3f}")

# %% [markdown]
# ## Failures by cause
#
# Figure 1 counts the completions by outcome code: the reason the scorer gives for each
# reward.

# %%
codes = Counter(r["details"]["code"] for r in results)
fig = new_figure(2.6, LAB_WIDTH)
ax = fig.subplots()
ax.barh(list(codes), list(codes.values()), color="tab:blue")
ax.invert_yaxis()
ax.xaxis.set_major_locator(MaxNLocator(integer=True))
ax.set_xlabel("completions")
ax.set_title(f"Outcome codes ({SCORER_VERSION})")
counted = ", ".join(f"{code} {n}" for code, n in codes.items())
show_figure(
    fig, 1,
    caption=f"The {len(results)} completions by outcome code: only "
            f"'correct' earns a reward, and each failing code names "
            f"its own reason.",
    alt=f"Horizontal bar chart of the outcome codes of the "
        f"{len(results)} completions: {counted}.")
