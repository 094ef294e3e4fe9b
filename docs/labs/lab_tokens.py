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
# $$\log \pi_\theta(y \mid x) = \sum_t \log \pi_\theta(y_t \mid x, y_{<t}), \qquad
# \hat g = \frac{1}{B}\sum_i A_i \sum_t \nabla_\theta \log \pi_\theta(y_{i,t} \mid x_i,
# y_{i,<t}).$$

# %%
import matplotlib.pyplot as plt
import numpy as np

from course.learn import LearnConfig, log_table, setup, slow_motion, train
from course.paths import RUNS_DIR
from course.runs import read_json
from course.token_policy import PIECES, Vocabulary, learner_for, sample

vocab = Vocabulary()
print(f"{'piece':<16} cl100k_base ids")
for text, ids in PIECES:
    print(f"{text!r:<16} {list(ids)}")
assert vocab.size == 21 and vocab.encode("Final: 323") == [1, 2, 3, 8, 7, 8, 0]

# %% [markdown]
# The tokenizer of Milestone 3 agrees on every piece that is one real token (and shows that
# `The answer is` is three). One difference is on purpose: cl100k_base writes `323` as one
# token (15726); this vocabulary writes one digit per piece, so the answer is learned digit
# by digit.

# %%
from course.tokens import tokenize

for text, ids in PIECES[1:]:
    assert [token for token, _ in tokenize(text)] == list(ids), text
print("Final: 323 in cl100k_base:", tokenize("Final: 323"))

# %% [markdown]
# ## The reference policy, counted from the snapshot
#
# The learner starts from a reference (the "SFT model"), and the KL penalty holds it near
# there. Nothing was trained to make it: each frozen completion was split into pieces and
# counted, per problem and pooled over problems (`course.token_policy.fit_reference`).
#
# **Predict** before you run the next cell: the frozen snapshot passes 57% of the dev
# problems. Will fresh samples of a policy counted from it pass more, fewer, or the same?

# %%
config = LearnConfig()
problems, reference, fit = setup(config)
print(f"counted {fit['used']} frozen completions; skipped {len(fit['skipped'])}:")
for text in fit["skipped"]:
    print("   ", repr(text))

rng = np.random.default_rng(0)
fresh = sample(reference, np.repeat(np.arange(len(problems)), 16), rng)
from course.learn import rewards_of
from course.scorer import score

pass_rate = rewards_of(score, problems, fresh).mean()
print(f"fresh samples of the reference pass {pass_rate:.3f}")
print("eight of its completions for dev-001:", fresh.texts[:8])
assert fit["used"] == 54 and 0.35 < pass_rate < 0.55

# %% [markdown]
# Fewer: the reference copies each problem's frozen completion most of the time, and the
# pooled counts and the smoothing make it wander the rest of the time (a digit from another
# answer, a stray period). Every piece stays possible; that is what lets learning find
# anything at all.
#
# ## One update in slow motion
#
# **Predict**: the sampled completion below gets an advantage A = R − b, one number. Which
# pieces' log-probabilities does *its own* term push up, and which down?

# %%
learner = learner_for(reference, len(problems))
print(slow_motion(learner, problems, config, np.random.default_rng(0)))

# %% [markdown]
# All of them move the same way, the sign of A: the one scalar reaches every piece through
# the sum of log-probabilities. The whole batch can still move a piece the other way: other
# samples of the same problem, and other problems that share a row of the format table.
#
# ## Training on fresh samples
#
# **Predict**: after 60 updates of 8 fresh completions per problem, strict pass@1 goes from
# about 0.44 to what? And the KL to the reference, from 0 to what order of magnitude?

# %%
logs = train(LearnConfig(steps=60), np.random.default_rng(0)).logs
print(log_table(logs[::10] + logs[-1:]))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot([e.step for e in logs], [e.pass_at_1 for e in logs], label="strict pass@1 (fresh)")
ax.plot([e.step for e in logs], [e.kl for e in logs], label="KL to reference (nats)")
ax.set(xlabel="update step", ylim=(0, 1.2))
ax.legend()
plt.show()
assert logs[-1].pass_at_1 > logs[0].pass_at_1 + 0.1

# %% [markdown]
# ## What the canonical runs measured
#
# The same code, at full length, is saved as runs you can open on this site, each trained from
# five seeds (the files hold seed 0's run, and every quoted number over all five). The policy is
# trained and measured on the same 60 prompts (train = eval). Their numbers, read from the
# files:

# %%
select = read_json(RUNS_DIR / "run_009", "summary.json")
hack = read_json(RUNS_DIR / "run_011", "summary.json")
sweep = read_json(RUNS_DIR / "run_012", "summary.json")
print("run_009, equal compute:", select["final"])
print("run_009, pass@1 and pass@64 before/after:", select["pass_at_1_before_after"],
      select["pass_at_64_before_after"])
print("run_011, proxy start/end:", hack["start"]["proxy"], hack["end"]["proxy"],
      "| strict peak and end:", hack["strict_peak"]["strict"], hack["end"]["strict"])
print("run_011, the most written exploit in each of seeds 0-4:")
print("  ", ", ".join(repr(text) for text in hack["over_seeds"]["top_exploit"]))
for row in sweep["betas"]:
    strict = row["over_seeds"]["final_strict"]
    print(f"run_012, beta {row['beta']:<5} strict {strict['median']:.3f} "
          f"[{strict['min']:.3f}, {strict['max']:.3f}] over seeds 0-4")
assert hack["end"]["strict"] < hack["start"]["strict"] < hack["end"]["proxy"]

# %% [markdown]
# ## Try it
#
# - Train on `contains_format` or `last_integer` instead (`LearnConfig(reward=...)`): which
#   strings does the optimiser assemble, and does the strict pass rate fall?
# - Add `beta=0.1` to the `answer_anywhere` run and compare its exploit share with run_012.
# - Swap the advantage rule (`LearnConfig(advantage="grpo")` or `"dr_grpo"`) and compare the
#   strict pass@1 after 60 steps with the leave-one-out default; run_020 does it on 3 seeds.
# - Give the reference `own_weight=0.5` in `fit_reference`: a worse SFT model. What happens
#   to the prompts it almost never answers?
