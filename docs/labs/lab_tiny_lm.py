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
# # Lab: Loop C on a tiny transformer
#
# The policy of [Loop C on tokens](../lab_tokens/) is a table: one row of weights per
# (problem, context), so what it learns for one prompt stays in that prompt's rows. Four
# questions about RL on language models cannot be asked of it, because their answers depend
# on weights that every prompt shares:
#
# 1. Does learning **transfer** to prompts the policy never trained on?
# 2. Does RL **sharpen** what the model could already do (pass@1 up, pass@k at large k
#    flat), or **expand** it (pass@k up at every k)?
# 3. Trained on a hackable proxy, does the model find the **exploit**, and does the KL
#    leash hold it?
# 4. Does the **entropy** fall as the reward rises?
#
# This lab asks them of a real language model, small enough for a laptop's CPU: a
# character-level, decoder-only transformer written in numpy (`course.tiny_lm`, forward and
# backward by hand), pre-trained on text from a scripted writer that makes the frozen
# rollouts' mistakes, then trained by the course's Loop C with `score()` as the reward. The
# prompts are two-digit sums (`47+38=`); the answer format is the course's, `Final: 85`.
#
# The runs behind the answers take about 35 minutes of one core, so this page does not
# train: it reads the canonical run [run_021](../../runs/run_021/) (ten seeds for each of
# five settings) and, for the table policy, runs 009, 011, 012 and 020. Every number below
# is read from those files or computed here. Download this notebook (links above) to run it
# next to the repository; the last section says how to train one arm yourself.
#
# **Before each answer, write your prediction down.** The table policy's answer comes first;
# the transformer's is the one to predict.

# %%
import textwrap

import matplotlib
import numpy as np

from course import tiny_lm
from course.data import read_jsonl
from course.paths import RUNS_DIR
from course.reports.learn_tiny import log_name, read_log
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.runs import read_json
from course.scorer import score
from course.selection import pass_at_k
from course.tiny_pretrain import load_base
from course.tiny_tasks import label, record_of

# the course's figure style, for every plot of this lab
matplotlib.rcParams.update(STYLE)

base, pretrain, provenance = load_base()
model = pretrain.model
run = read_json(RUNS_DIR / "run_021", "summary.json")
table_select = read_json(RUNS_DIR / "run_009", "summary.json")
table_hack = read_json(RUNS_DIR / "run_011", "summary.json")
table_sweep = read_json(RUNS_DIR / "run_012", "summary.json")
table_family = read_json(RUNS_DIR / "run_020", "summary.json")

print(f"parameters:  {tiny_lm.count_params(base):,}")
print(f"shape:       {model.n_layer} layers, width {model.n_embd}, "
      f"{model.n_head} heads, {model.block_size} positions")
print(f"vocabulary:  {model.vocab_size} characters")
print(f"pre-trained: {provenance['steps']} steps, seed "
      f"{provenance['seed']}, final loss "
      f"{provenance['final_loss_last_10']} nats per character")
assert tiny_lm.count_params(base) == 108_544

# %% [markdown]
# ## The base model
#
# The base was trained to continue text like `47+38=Final: 85;` (`;` ends a line), where
# the writer is right about half the time and otherwise slips on the format, makes a carry
# error, or writes several numbers (the kind of completion a hackable rubric pays). RL
# starts from it, and the KL leash pulls toward it.
#
# **Predict: the base at temperature 1.** Its greedy answer is right on most prompts.
# Sampled at temperature 1, the temperature RL trains at, does the strict scorer pay less than
# half of the base's completions, about half (40 to 60%), or more than half?
#
# ```predict
# choice: the strict share of the base's sampled completions
# options: less than half | about half | more than half
# key: "at temperature 1 the strict scorer pays {} of them"
# ```

# %%
rng = np.random.default_rng(0)
pairs = [(47, 38), (19, 64), (55, 27)]
prompts = [record_of(a, b)["prompt"] for a, b in pairs
           for _ in range(4)]
drawn = tiny_lm.sample(base, model, prompts, rng,
                       temperature=1.0, max_new=24)
for i, text in enumerate(drawn.texts):
    example = record_of(*pairs[i // 4])
    verdict = label(example, text)
    reward = score(example, text)["reward"]
    print(f"{example['prompt']} {text!r:<24} reward {reward:.0f}"
          f"  {verdict.kind}")

measured = provenance["measured"]
for split in ("train", "held_out"):
    sampled = measured[split]["strict"]
    greedy = measured[f"{split}_greedy"]["strict"]
    print(f"{split:<9} strict pass@1: sampled {sampled:.3f}, "
          f"greedy {greedy:.3f}")
assert measured["train"]["strict"] < 0.5 < measured[
    "train_greedy"]["strict"]
share = measured["train"]["strict"]
print("at temperature 1 the strict scorer pays",
      "less than half" if share < 0.4 else
      "more than half" if share > 0.6 else "about half", "of them")

# %% [markdown]
# **Answer: the base at temperature 1.** Less than half: about a third at temperature 1,
# against more than four in five greedily: the base knows the sums far better than it writes
# them when it samples. The room RL has is the gap between what the model usually does and what
# it can do.

# %% [markdown]
# ## 1. Does learning transfer?
#
# The table policy's held-out test (run_009) trains on half of the 60 dev prompts and
# measures the other half. The transformer trains on prompts drawn from 7,288 train pairs;
# the 812 held-out pairs were never in its pre-training text nor in any RL batch.
#
# **Predict: transfer.** The table policy's held-out pass@1 barely moves (it has no rows to
# share). After 200 steps of RL on train prompts, does the transformer's held-out pass@1 rise
# by about as much as its train pass@1, by half as much, or not at all?

# %%
def spread(entry):
    """'median [min, max]' of a number over seeds, at the digits
    of run_021's rows (which carry theirs), else 3."""
    d = entry.get("digits", 3)
    return (f"{entry['median']:.{d}f} "
            f"[{entry['min']:.{d}f}, {entry['max']:.{d}f}]")


def rows_of(question, name):
    """The rows and claims of the block of a run_021 question
    named `name` (its title up to `:` or ` (`: an arm, or an arm
    and a split)."""
    blocks = run["questions"][question]["blocks"]
    block = next(b for b in blocks
                 if b["title"].split(":")[0].split(" (")[0] == name)
    rows = {row["label"]: row for row in block["rows"]}
    return rows, block["claims"]


def say(claims, indent=2):
    """Each claim and its count over seeds, wrapped to the
    page's 73 columns."""
    for c in claims:
        print(textwrap.fill(f"{c['claim']}: {c['count']}", 73,
                            initial_indent=" " * indent,
                            subsequent_indent=" " * (indent + 4)))


seeds = table_select["over_seeds"]
print("table policy (run_009), strict pass@1, "
      f"{len(seeds['seeds'])} seeds, median [min, max]")
for name, key in (("trained prompts", "trained_prompts"),
                  ("held-out prompts", "held_out_prompts")):
    print(f"  {name:<17} "
          f"{spread(seeds['held_out_reference_on_' + key])}"
          f" -> {spread(seeds['held_out_trained_on_' + key])}")

rows, claims = rows_of("transfer", "strict_rloo")
print(f"transformer (run_021), strict pass@1, "
      f"{len(run['seeds'])} seeds, step 0 -> {run['steps']}")
for split, name in (("train", "train prompts"),
                    ("held-out", "held-out prompts")):
    start = rows[f"{split}, step 0"]["median"]
    end = rows[f"{split}, step {run['steps']}"]
    print(f"  {name:<17} {start:.3f} -> {spread(end)}")
for when in ("first", "last"):
    watch = rows[f"held-out, every step: {when} 10"]
    print(f"  held-out, {when} 10 steps' watch batches: "
          f"{spread(watch)}")
say(claims)

# %% [markdown]
# **Answer: transfer.** The transformer's held-out prompts gain about as much as its train
# prompts: at least half as much in all ten seeds, as much or more in two of ten. The watch
# batches say the same step by step: scored at every step on held-out prompts the run never
# learns from, their pass@1 climbs with the train batches' in every seed. (The interval after
# each count is what ten seeds can show: even ten of ten leaves room for a rate near its lower
# end.) What RL moved was shared, the format and the carrying that every sum uses; the table
# policy moved rows that only its trained prompts read.

# %% [markdown]
# Figure 1 follows both splits step by step and at the checkpoints. At every step, besides
# the batch of train prompts it learns from, the run samples a batch of held-out prompts in
# the same way and only scores it: the held-out line is the policy of that very step,
# measured on prompts it never trains on.

# %%
def per_step(arm, column, width=10):
    """A step-log column of run_021, each seed's averaged over
    `width` steps in a row (one batch is noisy), then the median
    over seeds: (steps - width + 1,) values, for steps width.."""
    smooth = []
    for seed in run["seeds"]:
        saved = RUNS_DIR / "run_021" / log_name(arm, seed)
        rows = read_log(saved.read_bytes())
        smooth.append(np.convolve([row[column] for row in rows],
                                  np.ones(width) / width, "valid"))
    return np.median(smooth, axis=0)


curves = run["curves"]["strict_rloo"]
learn, measure = run["learn"], run["measure"]
fig = new_figure(2.9, LAB_WIDTH)
ax = fig.subplots()
for split, column, name in (
        ("train", "pass_at_1", "train"),
        ("held_out", "held_out_pass_at_1", "held-out")):
    line = per_step("strict_rloo", column)
    drawn = ax.plot(np.arange(10, 10 + len(line)), line,
                    label=f"{name}, every step")
    points = curves[split]["pass@1"]
    steps = curves[split]["steps"]
    median = np.array([p["median"] for p in points])
    ax.errorbar(steps, median,
                yerr=[median - [p["min"] for p in points],
                      [p["max"] for p in points] - median],
                fmt="o", capsize=3, color=drawn[0].get_color(),
                label=f"{name}, checkpoints")
ax.set(xlabel="RL step", ylabel="strict pass@1", ylim=(0, 1))
ax.legend(loc="upper left", ncol=2)
last = {s: curves[s]["pass@1"][-1]["median"]
        for s in ("train", "held_out")}
show_figure(
    fig, 1,
    caption="Strict pass@1 of the transformer on train and held-out "
            "prompts during RL (leave-one-out baseline), median over "
            f"{len(run['seeds'])} seeds. Lines: each step's fresh "
            f"samples ({learn['prompts']} train prompts, "
            f"{measure['watch']} held-out, {learn['group']} samples "
            "each), averaged over 10 steps. Points: the checkpoints, "
            f"{measure['prompts']} prompts x {measure['samples']} "
            "samples, with the lowest and highest seed.",
    alt=f"Two rising lines that nearly coincide, train and held-out "
        f"strict pass@1 step by step, with points at the checkpoints "
        f"{steps} ending at {last['train']:.2f} and "
        f"{last['held_out']:.2f}.")

# %% [markdown]
# ## 2. Sharpen or expand?
#
# pass@k is the chance that at least one of k fresh samples is right. If RL only moved
# probability onto answers the base already wrote sometimes, pass@1 rises and pass@k at
# large k stays where it was: **sharpening**. If it taught answers the base never wrote,
# pass@k rises at every k: **expanding**.
#
# **Predict: sharpen or expand.** The table policy's pass@64 rose (its rows can learn a digit
# the snapshot never wrote for that prompt). For the transformer, after 200 steps: does
# pass@16 rise, stay, or fall, and does it solve prompts that its base never solved in 64
# samples?

# %%
print("table policy (run_009), train = eval prompts, "
      "median [min, max]")
for k in (1, 64):
    print(f"  pass@{k:<3} {spread(seeds[f'reference_pass_at_{k}'])}"
          f" -> {spread(seeds[f'trained_pass_at_{k}'])}")
gained, lost = seeds["prompts_gained"], seeds["prompts_lost"]
print(f"  prompts solved in 64 that the reference never solved: "
      f"{gained['median']:g} [{gained['min']:g}, {gained['max']:g}]")
print(f"  and the reverse: {lost['median']:g} "
      f"[{lost['min']:g}, {lost['max']:g}]")

rows, claims = rows_of("sharpen_or_expand", "strict_rloo, train")
print("transformer (run_021), train prompts, change at step "
      f"{run['steps']}")
for k in (1, 2, 4, 8, 16):
    print(f"  pass@{k:<3} {spread(rows[f'pass@{k} change'])}")
for name in ("never solved in 64, base",
             f"never solved in 64, step {run['steps']}"):
    print(f"  {name}: {spread(rows[name])}")
say(claims)

# %% [markdown]
# **Answer: sharpen or expand.** The transformer sharpens: pass@1 rises by more than a quarter
# and pass@16 stays within a hundredth of its base's, and in eight seeds of ten one train
# prompt is lost that the base solved at least once in 64 samples. Read it with its ceiling:
# with 64 samples this base already solves almost every sum, so a prompt the base never solves,
# which expansion needs, hardly exists here, and this run could not have shown expansion had it
# happened. What it shows is RL making the first sample right more often, on one base (every
# seed of run_021 starts from the same pre-trained base). This is the pattern Yue et al. (2025)
# report for RL with verifiable rewards on large models; the table policy, whose rows can learn
# a digit its snapshot never wrote for a prompt, expanded a little instead.

# %% [markdown]
# Figure 2 draws the whole pass@k curve before and after, computed here from the run's raw
# counts (for each prompt, how many of its 64 samples were right). Beyond k = 16 the trained
# model falls just below its base: the sharpening pattern, in miniature.

# %%
# pass@k from the raw counts: per prompt, how many of 64 fresh
# samples were right, at each checkpoint of each seed
ks = run["measure"]["ks"]
curve = {}                          # step -> seed -> pass@k by k
for _, row in read_jsonl(RUNS_DIR / "run_021" / "checkpoints.jsonl"):
    if row["arm"] == "strict_rloo" and row["split"] == "train":
        curve.setdefault(row["step"], {})[row["seed"]] = [
            np.mean([pass_at_k(row["samples"], c, k)
                     for c in row["correct"]]) for k in ks]

fig = new_figure(2.9, LAB_WIDTH)
ax = fig.subplots()
print(f"{'pass@k at k =':<20}", " ".join(f"{k:>5}" for k in ks))
for step, marker in ((0, "o"), (run["steps"], "s")):
    median = np.median(list(curve[step].values()), axis=0)
    name = "base" if step == 0 else f"after {step} RL steps"
    ax.plot(ks, median, marker=marker, label=name)
    print(f"{name:<20}", " ".join(f"{v:.3f}" for v in median))
ax.set(xscale="log", xlabel="k (samples)",
       ylabel="pass@k, train prompts", ylim=(0, 1.05))
ax.set_xticks(ks, [str(k) for k in ks])
ax.legend(loc="lower right")
base_16 = np.median(list(curve[0].values()), axis=0)[ks.index(16)]
show_figure(
    fig, 2,
    caption="pass@k of the transformer before and after RL on the "
            f"strict reward (median over {len(run['seeds'])} seeds): "
            "higher at small "
            "k, level at k = 16, just below the base's beyond.",
    alt=f"Two curves over k = {ks[0]} to {ks[-1]}: after RL, pass@1 "
        f"is well above the base's; from k = 16 on both are about "
        f"{base_16:.2f} or higher.")

# %% [markdown]
# ## 3. The exploit and the leash
#
# `answer_anywhere` pays a completion that contains the right number anywhere. A completion
# that writes several numbers (`Final: 84 85 86`) is paid more often than one that commits
# to one, so a policy optimising the proxy is pushed to write more numbers. The KL penalty
# β · log(π/π_ref) charges for drifting from the base.
#
# **Predict: the exploit and the leash.** The table policy at β = 0 raised its exploit share
# from about a sixth to under a half (run_011). The transformer starts at a few percent. At
# β = 0, where does it end, and what happens to its strict pass@1? At β = 0.1?

# %%
over = table_hack["over_seeds"]
print("table policy, answer_anywhere, median [min, max]")
print(f"  beta 0   (run_011) exploit share "
      f"{over['exploit_share_start']['median']:.3f} -> "
      f"{spread(over['exploit_share_end'])}")
print(f"  {'':<18} strict pass@1 "
      f"{over['strict_start']['median']:.3f} -> "
      f"{spread(over['strict_end'])}")
for row in table_sweep["betas"]:
    if row["beta"] in (0.1, 0.2):
        o = row["over_seeds"]
        print(f"  beta {row['beta']:<4}(run_012) exploit share "
              f"{o['final_exploit_share']['median']:.3f}, strict "
              f"{o['final_strict']['median']:.3f}, "
              f"KL {o['final_kl']['median']:.2f}")

print("transformer (run_021), step "
      f"{run['steps']}, median [min, max]")
for arm in ("proxy_beta_0", "proxy_beta_0.1", "proxy_beta_0.3"):
    rows, claims = rows_of("exploit_and_leash", arm)
    beta = run["arms"][arm]["beta"]
    print(f"  beta {beta}: exploit share "
          f"{rows['exploit share, base']['median']:.3f} -> "
          f"{spread(rows['exploit share, train'])}")
    print(f"  {'':<9}strict pass@1 "
          f"{rows['strict pass@1, base']['median']:.3f} -> "
          f"{spread(rows['strict pass@1, train'])}")
    print(f"  {'':<9}KL {spread(rows['KL (nats), last 10 steps'])}"
          f" nats, {rows['length, train']['median']:.1f} "
          f"characters")
    say(claims, indent=11)

# %% [markdown]
# **Answer: the exploit and the leash.** Unleashed, the transformer goes much further than the
# table did: most of its completions become exploits, on held-out prompts as much as on train
# prompts (the exploit transfers too), its strict pass@1 falls to zero, and its completions run
# to the length limit. The shared weights learned one habit, "write many numbers", and applied
# it everywhere. With β = 0.1 the leash holds: the exploit share stays near a tenth, and strict
# pass@1 still rises above the base's, because the right answer is one of the things the proxy
# pays.

# %% [markdown]
# ## 4. Does entropy collapse?
#
# **Predict: entropy.** As the strict reward rises, does the transformer's entropy per
# character fall? And under the unleashed proxy?

# %%
def fell(arm_runs):
    """Seeds whose entropy fell from the first checkpoint to
    the last, of a run_020 arm."""
    first, last = arm_runs[0]["entropy"], arm_runs[-1]["entropy"]
    return sum(b < a for a, b in zip(first["per_seed"],
                                     last["per_seed"]))


rloo = table_family["runs"]["strict"]["rloo"]
print("table policy, entropy of a completion (nats), median")
print(f"  strict (run_020) step {rloo[0]['step']} -> "
      f"{rloo[-1]['step']}: {rloo[0]['entropy']['median']:.2f} -> "
      f"{rloo[-1]['entropy']['median']:.2f}, fell in "
      f"{fell(rloo)} of {len(rloo[0]['entropy']['per_seed'])} seeds")
print(f"  answer_anywhere (run_011): "
      f"{over['entropy_start']['median']:.2f} -> "
      f"{over['entropy_end']['median']:.2f}")

print("transformer (run_021), per character, last 10 steps "
      "minus first 10")
for arm in run["arms"]:
    rows, claims = rows_of("entropy_and_reward", arm)
    both = claims[-1]
    print(f"  {arm:<15} reward "
          f"{rows['reward change']['median']:+.3f}, entropy "
          f"{rows['entropy change (batch)']['median']:+.3f}; "
          f"both: {both['count'].split(' (')[0]}")

# %% [markdown]
# **Answer: entropy.** On the strict reward, and on the proxy with a leash, the entropy falls
# as the reward rises in every seed: the policy concentrates on what pays. The unleashed proxy
# is the exception, and an instructive one: its completions grow into long lists of numbers,
# and which numbers it lists varies, so its entropy per character *rises* while its reward
# climbs, in nine seeds of ten (in the tenth it fell by less than a hundredth of a nat). A
# falling entropy is a symptom of optimisation, not a law; the number to watch is the one that
# says what the policy writes.

# %% [markdown]
# ## What the table could not teach
#
# The four answers side by side, read from the runs above:

# %%
def change(block, before, after):
    """The median after minus the median before."""
    return block[after]["median"] - block[before]["median"]


transfer = rows_of("transfer", "strict_rloo")[0]
expand = rows_of("sharpen_or_expand", "strict_rloo, train")[0]
hack0 = rows_of("exploit_and_leash", "proxy_beta_0")[0]
summary = [
    ("held-out pass@1 change",
     change(seeds, "held_out_reference_on_held_out_prompts",
            "held_out_trained_on_held_out_prompts"),
     transfer["gain, held-out"]["median"]),
    ("pass@k change, large k",
     change(seeds, "reference_pass_at_64", "trained_pass_at_64"),
     expand["pass@16 change"]["median"]),
    ("exploit share, beta 0",
     over["exploit_share_end"]["median"],
     hack0["exploit share, train"]["median"]),
    ("strict pass@1, beta 0",
     over["strict_end"]["median"],
     hack0["strict pass@1, train"]["median"]),
]
print(f"{'median over seeds':<24} {'table policy':>13} "
      f"{'transformer':>12}")
for name, table, transformer in summary:
    print(f"{name:<24} {table:>13.3f} {transformer:>12.3f}")
print("(large k: 64 for the table, 16 for the transformer)")

# %% [markdown]
# Sharing weights is what makes learning transfer, and it is also what makes an exploit
# spread: the same mechanism, pointed at a good or a bad reward. The table expanded a little,
# its rows learning digits that its snapshot never wrote; the transformer, whose base already
# solves almost every sum within 64 samples, only sharpened. And the KL leash, which the
# table needed only a little of, is what stands between the transformer and a strict pass
# rate of zero.
#
# ## Try it
#
# One arm of run_021 trains in about 40 seconds on one core:
#
# ```
# course learn --model tiny-lm --steps 200 --seed 0
# course learn --model tiny-lm --reward answer_anywhere --beta 0
# course learn --model tiny-lm --advantage grpo
# ```
#
# - Lower the temperature (`--temperature 0.7`): the base's pass@1 is higher there. Is
#   there still room to learn, and does pass@16 behave differently?
# - Train on `last_integer` or `contains_format` instead: which habit does the transformer
#   find, and does it transfer to held-out prompts?
# - Find the smallest β at which the `answer_anywhere` exploit share stays below 0.1.
