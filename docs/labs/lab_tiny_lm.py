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
# and two that any claim about RL on a language model owes its reader:
#
# 5. Did RL do more than **a lower temperature** would have done?
# 6. How far does the **first step** take the policy from its base?
#
# This lab asks them of a real language model, small enough for a laptop's CPU: a
# character-level, decoder-only transformer written in numpy (`course.tiny_lm`, forward and
# backward by hand), pre-trained on text from a scripted writer that makes the frozen
# rollouts' mistakes, then trained by the course's Loop C with `score()` as the reward. The
# prompts are two-digit sums (`47+38=`); the answer format is the course's, `Final: 85`.
#
# The runs behind the answers take about an hour of one core, so this page does not train:
# it reads the canonical run [run_021](../../runs/run_021/) and, for the table policy, runs
# 009, 011, 012 and 020. run_021 pre-trains the transformer from three seeds (three bases of
# one recipe: other initial weights, another order of the same text) and trains each base in
# five settings with six RL seeds: every claim below is a count over those 18 runs, with its
# interval, then base by base. Every number is read from those files or computed here.
# Download this notebook (links above) to run it next to the repository; the last section
# says how to train one arm yourself.
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
from course.reports.learn_tiny import log_name
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.reports.tiny_steps import read_log
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
    """'median [min, max]' of a number over seeds (or runs), at
    the digits of run_021's rows (which carry theirs), else 3."""
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


def by_base(row):
    """A run_021 row base by base: 'smallest to largest' over
    each base's seeds (runs are listed base by base)."""
    per, values = len(run["seeds"]), row["per_seed"]
    d = row.get("digits", 3)
    return "; ".join(
        f"base {b}: {min(part):.{d}f} to {max(part):.{d}f}"
        for b, part in zip(run["bases"], (
            values[i:i + per] for i in range(0, len(values), per))))


def say(claims, indent=2):
    """Each claim and its count over runs, then base by base,
    wrapped to the page's 73 columns."""
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
runs_021 = len(run["bases"]) * len(run["seeds"])
print(f"transformer (run_021), strict pass@1, {runs_021} runs "
      f"({len(run['bases'])} bases), step 0 -> {run['steps']}")
for split, name in (("train", "train prompts"),
                    ("held-out", "held-out prompts")):
    start = rows[f"{split}, step 0"]
    end = rows[f"{split}, step {run['steps']}"]
    print(f"  {name:<17} {spread(start)} -> {spread(end)}")
for when in ("first", "last"):
    watch = rows[f"held-out, every step: {when} 10"]
    print(f"  held-out, {when} 10 steps' watch batches: "
          f"{spread(watch)}")
say(claims)

# %% [markdown]
# **Answer: transfer.** The transformer's held-out prompts gain about as much as its train
# prompts: held-out pass@1 rose in 18 of 18 runs, by at least half the train gain in 17 of
# 18, by as much or more in 6 of 18, all six of them on one base. The watch batches say the
# same step by step: scored at every step on held-out prompts the run never learns from, their
# pass@1 climbs with the train batches' in every run. (The interval after each count is what
# 18 runs can show: even 18 of 18 leaves room for a rate near its lower end, on bases and seeds
# not run.) What RL moved was shared, the format and the carrying that every sum uses; the
# table policy moved rows that only its trained prompts read.

# %% [markdown]
# Figure 1 follows both splits step by step and at the checkpoints. At every step, besides
# the batch of train prompts it learns from, the run samples a batch of held-out prompts in
# the same way and only scores it: the held-out line is the policy of that very step,
# measured on prompts it never trains on.

# %%
def logged(arm, column):
    """A step-log column of run_021: one row per run (base by
    base, seed by seed), one value per step."""
    folder = RUNS_DIR / "run_021"
    return np.array([
        [row[column] for row in read_log(
            (folder / log_name(arm, b, s)).read_bytes())]
        for b in run["bases"] for s in run["seeds"]])


def per_step(arm, column, width=10):
    """A step-log column of run_021, each run's averaged over
    `width` steps in a row (one batch is noisy), then the median
    over runs: (steps - width + 1,) values, for steps width.."""
    smooth = [np.convolve(values, np.ones(width) / width, "valid")
              for values in logged(arm, column)]
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
            f"{runs_021} runs. Lines: each step's fresh "
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

print("transformer (run_021): its bases on the held-out prompts")
print(f"  {'base':<5}{'pass@1':>8}{'greedy':>8}{'pass@64':>9}"
      f"{'never solved in 64':>20}")
for b, measured_base in run["base"].items():
    held = measured_base["held_out"]
    print(f"  {b:<5}{held['pass_at']['1']:>8.3f}"
          f"{measured_base['held_out_greedy']['1']:>8.3f}"
          f"{held['pass_at']['64']:>9.3f}{held['never_solved']:>20}")

rows, claims = rows_of("sharpen_or_expand", "strict_rloo, held-out")
print("held-out prompts, change at step "
      f"{run['steps']}, median [min, max] over runs")
for k in run["measure"]["ks"]:
    print(f"  pass@{k:<3} {spread(rows[f'pass@{k} change'])}")
for name in rows:
    if name.startswith(("never", "rare", "of them", "pass@64 c")):
        print(textwrap.fill(f"{name}, base by base: "
                            f"{by_base(rows[name])}", 73,
                            initial_indent="  ",
                            subsequent_indent="      "))
say(claims)

# %% [markdown]
# **Answer: sharpen or expand.** Sharpen, and where the base leaves room, narrow. On every
# base pass@1 rises (18 of 18 runs) and the gain shrinks as k grows. The lessons' base (base 0)
# solves every held-out prompt within 64 samples and has no rare one: expansion could not
# show there. Base 2 leaves room, 3 prompts never solved and 30 that it solves in at most 2 of
# 64 samples; that is where expansion would show, and the opposite does. After RL it never
# solves 20 to 38 prompts instead of 3, its pass@64 falls in all six runs, and of its 30 rare
# prompts it solves fewer at least once (13 to 23) than the base does when measured a second
# time (29): fewer in 12 of 12 runs on the two bases that have rare prompts. (The second
# measurement is the fair yardstick: prompts chosen for a low first count score higher on any
# second count, by chance alone.) RL made the first sample right more often and spent the
# variety that let 64 samples find a rare answer. This is the pattern Yue et al. (2025) report
# for RL with verifiable rewards on large models; the table policy, whose rows can learn a
# digit its snapshot never wrote for a prompt, expanded a little instead.

# %% [markdown]
# Figure 2 draws the whole held-out pass@k curve of each base before and after, computed here
# from the run's raw counts (for each prompt, how many of its 64 samples were right). The
# curves cross: above the base at small k, below it at large k where the base has room.

# %%
# pass@k from the raw counts: per prompt, how many of 64 fresh
# samples were right, on held-out prompts, per base and seed
ks = run["measure"]["ks"]
curve = {}              # (base, step) -> a pass@k curve a seed
for _, row in read_jsonl(RUNS_DIR / "run_021" / "checkpoints.jsonl"):
    if row["arm"] == "strict_rloo" and row["split"] == "held_out":
        curve.setdefault((row["base"], row["step"]), []).append(
            [np.mean([pass_at_k(row["samples"], c, k)
                      for c in row["correct"]]) for k in ks])

fig = new_figure(3.4, LAB_WIDTH)
ax = fig.subplots()
print(f"{'held-out pass@k, k =':<21}",
      " ".join(f"{k:>5}" for k in ks))
for b in run["bases"]:
    for step, style in ((0, "o--"), (run["steps"], "s-")):
        median = np.median(curve[(b, step)], axis=0)
        name = f"base {b}, " + ("before" if step == 0 else "after")
        ax.plot(ks, median, style, color=f"C{b}", label=name)
        print(f"{name:<21}", " ".join(f"{v:.3f}" for v in median))
ax.set(xscale="log", xlabel="k (samples)",
       ylabel="pass@k, held-out prompts", ylim=(0, 1.05))
ax.set_xticks(ks, [str(k) for k in ks])
ax.legend(loc="lower right", ncol=3)
last_base = run["bases"][-1]
weakest = {step: np.median(curve[(last_base, step)], axis=0)[-1]
           for step in (0, run["steps"])}
show_figure(
    fig, 2,
    caption="Held-out pass@k of the transformer before RL (dashed) "
            f"and after {run['steps']} steps on the strict reward "
            "(solid), per pre-trained base, median over its "
            f"{len(run['seeds'])} seeds: higher at small k on every "
            "base; at k = 64 level where the base solves every "
            "prompt, lower where it does not.",
    alt=f"Six curves over k = {ks[0]} to {ks[-1]}, a pair per base: "
        "after RL, pass@1 is higher on every base; at k = 64 bases 0 "
        "and 1 end near 1 before and after, and base "
        f"{last_base} ends at {weakest[run['steps']]:.2f} after RL "
        f"against {weakest[0]:.2f} before.")

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
    print(f"  {'':<9}held-out exploit share "
          f"{spread(rows['exploit share, held-out'])}")
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
# as the reward rises, in 18 of 18 runs of each: the policy concentrates on what pays. The
# unleashed proxy is the exception, and an instructive one: its completions grow into long
# lists of numbers, and which numbers it lists varies, so its entropy per character *rises*
# while its reward climbs (both at once in 0 of 18 runs). A falling entropy is a symptom of
# optimisation, not a law; the number to watch is the one that says what the policy writes.

# %% [markdown]
# ## 5. More than a lower temperature?
#
# Training on a strict reward lowers the entropy (section 4), and so does lowering the
# sampling temperature, with no training at all. The base decoded greedily (τ = 0, the most
# likely character each time) already did better than sampled at τ = 1 in the first cell. So
# a fair question of any RL result is what it did beyond what a colder decoder of the base
# does. run_021 measures three controls on the held-out prompts: the base decoded greedily,
# the trained policy decoded greedily, and the base sampled at the temperature whose entropy
# per character equals the trained policy's (found on a grid of temperatures from 0.2 to 1,
# between two measured points).
#
# **Predict: a lower temperature.** After 200 steps of RL, sampled at τ = 1, against its own
# base sampled at the temperature that gives the same entropy: is the trained policy's
# held-out pass@1 higher in at least 3 runs of 4, lower in at least 3 of 4, or neither?
#
# ```predict
# choice: RL against its base at the same entropy
# options: higher in at least 3 of 4 runs | neither | lower in at least 3 of 4 runs
# key: "RL sampled, against the base at the same entropy: {}"
# ```

# %%
steps = run["steps"]
for arm in ("strict_rloo", "strict_grpo"):
    rows, claims = rows_of("decoding",
                           f"{arm}, held-out, step {steps}")
    print(f"{arm}, held-out pass@1 at step {steps}, "
          "median [min, max]")
    for name in ("base sampled (τ = 1): pass@1",
                 "base greedy: pass@1",
                 "base's temperature of that entropy",
                 "base at that temperature: pass@1",
                 "RL sampled (τ = 1): pass@1",
                 "RL greedy: pass@1"):
        print(f"  {name:<36} {spread(rows[name])}")
    for name in ("RL sampled minus the base at that temperature",
                 "RL greedy: pass@1"):
        print(textwrap.fill(f"{name}, base by base: "
                            f"{by_base(rows[name])}", 73,
                            initial_indent="  ",
                            subsequent_indent="      "))
    say(claims)
matched = rows_of("decoding",
                  f"strict_rloo, held-out, step {steps}")[1][0]
share = sum(filter(None, matched["holds"])) / sum(
    h is not None for h in matched["holds"])
print("RL sampled, against the base at the same entropy:",
      "higher in at least 3 of 4 runs" if share >= 0.75 else
      "lower in at least 3 of 4 runs" if share <= 0.25 else "neither")

# %% [markdown]
# **Answer: a lower temperature.** Neither, and the split is by base. The trained policy's
# entropy per character is the base's at a temperature between 0.41 and 0.63 (RLOO). Against
# the base at that temperature, RL sampled is from 0.056 behind to 0.081 ahead on bases 0 and
# 2 (ahead in 2 and 3 of their six runs), while on base 1 it is ahead in all six, by 0.022 to
# 0.143. Much of what 200 steps of RL bought here, a colder sampler of the same base buys too.
# Greedy decoding says it from the other end: the lessons' base decoded greedily beats RL
# sampled at τ = 1 in all six of its runs; decoded greedily itself, the trained policy beats
# the base's greedy on bases 1 and 2 (6 of 6 and 5 of 6) but not on the lessons' base (2 of
# 6), which greedily already solves most held-out sums. A Loop C result reported without these
# controls can be crediting RL with what a temperature does; Milestone 0.5 asks the same of
# Loop B.

# %% [markdown]
# ## 6. The first step
#
# Adam divides each weight's gradient by a running estimate of its own size, and that
# estimate starts at zero: on the first update, nearly every weight moves by the whole step
# size, whatever its gradient. Trained at a constant step size, the first update is the
# biggest the run ever takes. `course.tiny_learn` therefore warms the step size up over 20
# steps, from a twentieth of `lr` to `lr`.
#
# **Predict: the first step.** Without the warm-up, how much of the KL that a whole run ends
# with does the first update alone spend: under a tenth, between a tenth and three quarters,
# or more than three quarters?
#
# ```predict
# choice: the first update's KL without a warm-up, against a whole run's
# options: under a tenth | a tenth to three quarters | more than three quarters
# key: "without a warm-up, one update spends {} of it"
# ```

# %%
from dataclasses import replace

from course.reports.learn_tiny import CONFIG, train_arm

kl = logged("strict_rloo", "kl")     # row u: after u updates
print("strict_rloo, KL from the base (nats), median [min, max]")
for updates in (0, 1, 2, 5, 10, 20, 50, 100, kl.shape[1] - 1):
    values = kl[:, updates]
    print(f"  after {updates:>3} update{'s' * (updates != 1):<1}  "
          f"{np.median(values):.3f} "
          f"[{values.min():.3f}, {values.max():.3f}]")
say(rows_of("first_steps", "strict_rloo")[1])

# one update from the lessons' base, seed 0, with and without
first = {}
for warmup in (20, 0):
    config = replace(CONFIG.arm_config("strict_rloo", 0), steps=2,
                     warmup=warmup)
    logs = train_arm(config, model, base, (), CONFIG.measure).logs
    first[warmup] = logs[1].kl       # measured after one update
    print(f"warm-up of {warmup:>2} steps: KL after one update "
          f"{first[warmup]:.3f} nats")
end = np.median(kl[:, -10:].mean(axis=1))
ratio = first[0] / end
print(f"a whole run ends at {end:.3f} (median of the last 10 steps)")
print("without a warm-up, one update spends",
      "under a tenth" if ratio < 0.1 else
      "more than three quarters" if ratio > 0.75 else
      "a tenth to three quarters", "of it")

# %% [markdown]
# **Answer: the first step.** Between a tenth and three quarters: about half. From the
# lessons' base, one update at the full step size spends 0.476 nats of KL, where a whole run
# of 200 updates ends at 0.935 (the median of the last 10 steps). Adam gave that first step
# no sense of scale, so it moved every weight as far as a well-measured step would. With the
# warm-up, the same update spends 0.004 nats, the median run 0.242 after 10 updates and 0.351
# after 20: the path from step 0 rises over the warm-up instead of jumping at the first
# update.

# %% [markdown]
# ## What the table could not teach
#
# The four answers side by side, read from the runs above:

# %%
def change(block, before, after):
    """The median after minus the median before."""
    return block[after]["median"] - block[before]["median"]


transfer = rows_of("transfer", "strict_rloo")[0]
expand = rows_of("sharpen_or_expand", "strict_rloo, held-out")[0]
hack0 = rows_of("exploit_and_leash", "proxy_beta_0")[0]
summary = [
    ("held-out pass@1 change",
     change(seeds, "held_out_reference_on_held_out_prompts",
            "held_out_trained_on_held_out_prompts"),
     transfer["gain, held-out"]["median"]),
    ("pass@k change, large k",
     change(seeds, "reference_pass_at_64", "trained_pass_at_64"),
     expand["pass@64 change"]["median"]),
    ("exploit share, beta 0",
     over["exploit_share_end"]["median"],
     hack0["exploit share, train"]["median"]),
    ("strict pass@1, beta 0",
     over["strict_end"]["median"],
     hack0["strict pass@1, train"]["median"]),
]
print(f"{'median over runs':<24} {'table policy':>13} "
      f"{'transformer':>12}")
for name, table, transformer in summary:
    print(f"{name:<24} {table:>13.3f} {transformer:>12.3f}")
print("(large k: 64 for both; the transformer's on held-out "
      "prompts)")

# %% [markdown]
# Sharing weights is what makes learning transfer, and it is also what makes an exploit
# spread: the same mechanism, pointed at a good or a bad reward. The table expanded a little,
# its rows learning digits that its snapshot never wrote; the transformer sharpened on every
# base, and where its base left room, it narrowed: prompts the base solved now and then, it
# stopped solving. Part of what it gained, a colder sampler of the base gains too. And the KL
# leash, which the table needed only a little of, is what stands between the transformer and
# a strict pass rate of zero.
#
# ## Try it
#
# One arm of run_021 trains in about 40 seconds on one core:
#
# ```
# course learn --model tiny-lm --steps 200 --seed 0
# course learn --model tiny-lm --base 2 --seed 0
# course learn --model tiny-lm --reward answer_anywhere --beta 0
# course learn --model tiny-lm --advantage grpo
# ```
#
# - Lower the temperature (`--temperature 0.7`): the base's pass@1 is higher there. Is
#   there still room to learn, and does pass@16 behave differently?
# - Train on `last_integer` or `contains_format` instead: which habit does the transformer
#   find, and does it transfer to held-out prompts?
# - Find the smallest β at which the `answer_anywhere` exploit share stays below 0.1.
