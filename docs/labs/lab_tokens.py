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
# # Lab: Loop C on tokens
#
# Every learner so far chose among a few whole completion *styles*. The policy in this lab
# writes its completions **piece by piece**, the real `score()` reads the rendered text, and
# REINFORCE moves the probability of every piece it wrote with one scalar advantage. This
# notebook is executed every time the site is built; download it (links above), run it next
# to the repository, and change things.
#
# The limits stay explicit: numpy on a CPU, a 21-piece vocabulary, no downloaded model, no
# PPO, no critic, no framework. It is a demonstration you read and run, not training
# infrastructure.
#
# A completion's log-probability is the sum of its pieces' log-probabilities, and the update
# for a batch of $B$ completions weighs each completion's sum by its advantage $A_i$:
#
# $$\log \pi_\theta(y \mid x) = \sum_t \log \pi_\theta(y_t \mid x, y_{<t}),$$
#
# $$\hat g = \frac{1}{B}\sum_i A_i \sum_t \nabla_\theta
# \log \pi_\theta(y_{i,t} \mid x_i, y_{i,<t}).$$

# %%
import matplotlib
import numpy as np

from course.formatting import paragraph
from course.learn import (
    LOG_HEADER, LOG_LEGEND, LearnConfig, log_line, rewards_of, setup,
    slow_motion, train)
from course.paths import RUNS_DIR
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.runs import read_json
from course.scorer import score
from course.token_policy import (
    PIECES, Vocabulary, learner_for, sample)

# the course's figure style, for every plot of this lab
matplotlib.rcParams.update(STYLE)
WIDTH = 73      # characters: what this page's output box shows whole


def narrow(text: str) -> str:
    """`text` wrapped again to `WIDTH`, paragraph by paragraph (a
    line, then the lines under it indented by two spaces); a table
    row is kept as it is."""
    lines: list[str] = []
    prose = False          # is the line above part of a paragraph?
    for line in text.split("\n"):
        if prose and line.startswith("  ") and line[2:3] != " ":
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
            prose = not line.startswith(" ")
    return "\n".join(line if line.startswith(" ")
                     else paragraph(line, width=WIDTH)
                     for line in lines)


vocab = Vocabulary()
print(f"{'piece':<16} cl100k_base ids")
for text, ids in PIECES:
    print(f"{text!r:<16} {list(ids)}")
assert vocab.size == 21
assert vocab.encode("Final: 323") == [1, 2, 3, 8, 7, 8, 0]

# %% [markdown]
# The tokenizer of Milestone 3 agrees on every piece that is one real token (and shows that
# `The answer is` is three). One difference is on purpose: cl100k_base writes `323` as one
# token (15726); this vocabulary writes one digit per piece, so the answer is learned digit
# by digit.

# %%
from course.tokens import tokenize

for text, ids in PIECES[1:]:
    assert [token for token, _ in tokenize(text)] == list(ids), text
print("Final: 323 in cl100k_base:")
print("   ", tokenize("Final: 323"))

# %% [markdown]
# ## The reference policy, counted from the snapshot
#
# The learner starts from a reference (the "SFT model"), and the KL penalty holds it near
# there. Nothing was trained to make it: each frozen completion was split into pieces and
# counted, per problem and pooled over problems (`course.token_policy.fit_reference`).
#
# **Predict: fresh samples.** The frozen snapshot passes 57% of the dev problems. Will fresh
# samples of a policy counted from it pass more, about the same (within five points), or
# fewer?
#
# ```predict
# choice: fresh samples against the snapshot
# options: more | about the same | fewer
# key: "fresh samples against the snapshot: {}"
# ```

# %%
config = LearnConfig()
problems, reference, fit = setup(config)
skipped = fit["skipped"]
print(f"counted {fit['used']} frozen completions; "
      f"skipped {len(skipped)}:")
for text in skipped:
    print("   ", repr(text))

rng = np.random.default_rng(0)
prompts = np.repeat(np.arange(len(problems)), 16)
fresh = sample(reference, prompts, rng)

pass_rate = rewards_of(score, problems, fresh).mean()
print(f"fresh samples of the reference pass {pass_rate:.3f}")
snapshot = read_json(RUNS_DIR / "run_001",
                     "summary.json")["pass_rate"]
print("fresh samples against the snapshot:",
      "about the same" if abs(pass_rate - snapshot) <= 0.05 else
      "more" if pass_rate > snapshot else "fewer")
print("eight of its completions for dev-001:")
for row in (fresh.texts[:4], fresh.texts[4:8]):
    print("   ", ", ".join(map(repr, row)))
assert fit["used"] == 54 and 0.35 < pass_rate < 0.55

# %% [markdown]
# **Answer: fresh samples.** Fewer: the reference copies each problem's frozen completion most
# of the time, and the pooled counts and the smoothing make it wander the rest of the time (a
# digit from another answer, a stray period). Every piece stays possible; that is what lets
# learning find anything at all.

# %% [markdown]
# ## One update in slow motion
#
# **Predict: its own term.** The sampled completion below gets an advantage A = R − b, one
# number. Which pieces' log-probabilities does *its own* term push up, and which down?

# %%
learner = learner_for(reference, len(problems))
rng = np.random.default_rng(0)
story = slow_motion(learner, problems, config, rng)
print(narrow(story))

# %% [markdown]
# **Answer: its own term.** All of them move the same way, the sign of A: the one scalar
# reaches every piece through the sum of log-probabilities. The whole batch can still move a
# piece the other way: other samples of the same problem, and other problems that share a row
# of the format table.

# %% [markdown]
# ## Training on fresh samples
#
# The table below shows every tenth step; Figure 1 draws all sixty.
#
# **Predict: sixty updates.** After 60 updates of 8 fresh completions per problem, strict
# pass@1 goes from about 0.44 to what? And the KL to the reference, from 0 to what order of
# magnitude?

# %%
logs = train(LearnConfig(steps=60), np.random.default_rng(0)).logs
print(narrow(LOG_LEGEND))
print(LOG_HEADER)
for entry in logs[::10] + logs[-1:]:
    print(log_line(entry))
assert logs[-1].pass_at_1 > logs[0].pass_at_1 + 0.1
assert 0.1 < logs[-1].kl < 1        # tenths of a nat

steps = [e.step for e in logs]
fig = new_figure(2.9, LAB_WIDTH)
ax = fig.subplots()
ax.plot(steps, [e.pass_at_1 for e in logs],
        label="strict pass@1 (fresh samples)")
ax.plot(steps, [e.kl for e in logs],
        label="KL to the reference (nats)")
ax.set(xlabel="update step", ylim=(0, 1.2))
ax.legend(loc="upper left")
first, last = logs[0], logs[-1]
show_figure(
    fig, 1,
    caption=f"Sixty updates on fresh samples: strict pass@1 climbs "
            f"while the policy drifts from the reference.",
    alt=f"Line chart over {len(logs)} update steps: strict pass@1 "
        f"rises from {first.pass_at_1:.2f} to {last.pass_at_1:.2f}, "
        f"and the KL to the reference from {first.kl:.2f} to "
        f"{last.kl:.2f} nats.")

# %% [markdown]
# **Answer: sixty updates.** Read the table's first and last rows: pass@1 climbs by more than
# a tenth, and the KL grows from 0 to tenths of a nat, not whole nats. Sixty small steps move
# the policy a little, and its drift keeps growing as long as its reward does.

# %% [markdown]
# ## What the canonical runs measured
#
# The same code, at full length, is saved as runs you can open on this site, each trained from
# ten seeds (the files hold seed 0's run, and every quoted number over all ten). The policy is
# trained and measured on the same 60 prompts (train = eval). Their numbers, read from the
# files:

# %%
select = read_json(RUNS_DIR / "run_009", "summary.json")
hack = read_json(RUNS_DIR / "run_011", "summary.json")
sweep = read_json(RUNS_DIR / "run_012", "summary.json")
print("run_009, equal compute:")
for key, value in select["final"].items():
    print(f"    {key:<22} {value}")
print("run_009, before/after: pass@1",
      select["pass_at_1_before_after"],
      "pass@64", select["pass_at_64_before_after"])
print("run_011, proxy start/end:",
      hack["start"]["proxy"], hack["end"]["proxy"])
print("run_011, strict peak and end:",
      hack["strict_peak"]["strict"], hack["end"]["strict"])
print("run_011, the most written exploit of each seed:")
exploits = hack["over_seeds"]["top_exploit"]
for seed, text in enumerate(exploits):
    print(f"    seed {seed}: {text!r}")
for row in sweep["betas"]:
    strict = row["over_seeds"]["final_strict"]
    low, high = strict["min"], strict["max"]
    seeds = len(strict["per_seed"])
    print(f"run_012, beta {row['beta']:<5} "
          f"strict {strict['median']:.3f} "
          f"[{low:.3f}, {high:.3f}] over {seeds} seeds")
start, end = hack["start"], hack["end"]
assert end["strict"] < start["strict"] < end["proxy"]

# %% [markdown]
# ## Try it
#
# - Train on `contains_format` or `last_integer` instead (`LearnConfig(reward=...)`): which
#   strings does the optimiser assemble, and does the strict pass rate fall?
# - Add `beta=0.1` to the `answer_anywhere` run and compare its exploit share with run_012.
# - Swap the advantage rule (`LearnConfig(advantage="grpo")` or `"dr_grpo"`) and compare the
#   strict pass@1 after 60 steps with the leave-one-out default; run_020 does it on 10 seeds,
#   and again at a step size matched to RLOO's.
# - Give the reference `own_weight=0.5` in `fit_reference`: a worse SFT model. What happens
#   to the prompts it almost never answers?
