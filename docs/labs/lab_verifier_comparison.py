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
# # Lab: our verifier versus other projects' verifiers
#
# This notebook is executed every time the site is built. Download it (links above), run it
# next to the repository, and change things.
#
# Our spec pays one spelling, `Final: <int>`. Other projects check answers differently, on
# purpose: the GSM8K task of lm-evaluation-harness reads `#### 323` or the last number in the
# text, DeepSeek-R1-Zero-style rewards pay a `<think>…</think><answer>…</answer>` layout, and
# Hugging Face's math-verify accepts anything mathematically equal to the answer. Here the same
# completions go through ten rules: our strict scorer, the five hackable rubrics of the red-team
# milestone, and four reimplemented peer rules (`course.peers`).
#
# Every case carries the verdict of **our** spec, so each disagreement has a direction:
#
# - **FP**, a false positive: the rule pays ($r > 0$) a completion our spec rejects;
# - **FN**, a false negative: the rule pays nothing ($r = 0$) for a completion our spec accepts.
#
# "False" is relative to our spec only. A harness that pays `#### 323` is not broken: it
# implements another spec. What the table shows is what each rule would teach a policy that is
# optimised against it.

# %%
import ast
import csv
import html

import matplotlib
from IPython.display import HTML, display

from course import peers
from course.formatting import fill
from course.paths import RUNS_DIR
from course.reports import canonical
from course.reports.png import (
    LAB_WIDTH, STYLE, new_figure, show_figure)
from course.runs import read_json
from course.scorer import SCORER_VERSION, score

# the course's figure style, for every plot of this lab
matplotlib.rcParams.update(STYLE)
WIDTH = 73      # characters: what this page's output box shows whole

RUN = RUNS_DIR / "run_007"
summary = read_json(RUN, "summary.json")
table = RUN / "comparison.csv"
with open(table, encoding="utf-8", newline="") as file:
    rows = list(csv.DictReader(file))
rules = list(summary["rules"])
# the CSV stores each completion as a Python literal: read it back
for row in rows:
    row["completion"] = ast.literal_eval(row["completion"])

print(f"run_007: {summary['n_cases']} cases "
      f"({summary['n_in_spec']} in spec, "
      f"{summary['n_out_of_spec']} out of spec)")
print(f"{len(rules)} rules, scorer {SCORER_VERSION}")
versions = summary["math_verify"]["versions"]
print("versions:", ", ".join(f"{name} {version}"
                             for name, version in versions.items()))

# %% [markdown]
# A run is only evidence if it can be rebuilt. Before reading the numbers, rebuild run_007 in
# memory from today's code and data and compare it byte for byte with the committed folder.

# %%
differences = canonical.verify(["run_007"])["run_007"]
print(differences or "run_007 is byte-identical to a fresh rebuild")
assert differences == []

# %% [markdown]
# ## The counts
#
# For each rule: how many out-of-spec completions it pays (FP), how many in-spec ones it
# refuses (FN), and the agreement rate $1 - \frac{FP + FN}{n}$ over the $n$ cases.

# %%
def html_table(header: list[str], body: list[list[str]]) -> HTML:
    """A small HTML table; every cell is escaped (completions are
    untrusted text)."""
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    cells = "".join(
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in line)
        + "</tr>" for line in body)
    return HTML(f"<table><thead><tr>{head}</tr></thead>"
                f"<tbody>{cells}</tbody></table>")


display(html_table(
    ["rule", "false positives", "false negatives", "agreement"],
    [[f"<code>{name}</code>", str(stats["false_positives"]),
      str(stats["false_negatives"]), f"{stats['agreement_rate']:.4f}"]
     for name, stats in summary["rules"].items()]))
assert summary["rules"]["strict"]["false_positives"] == 0
assert summary["rules"]["strict"]["false_negatives"] == 0

# %%
fp = [summary["rules"][name]["false_positives"] for name in rules]
fn = [summary["rules"][name]["false_negatives"] for name in rules]
positions = range(len(rules))
fig = new_figure(4.6, LAB_WIDTH)
ax = fig.subplots()
ax.barh([p - 0.2 for p in positions], fp, height=0.4, color="tab:red",
        label=f"false positives (of {summary['n_out_of_spec']} "
              f"out of spec)")
ax.barh([p + 0.2 for p in positions], fn, height=0.4,
        color="tab:blue",
        label=f"false negatives (of {summary['n_in_spec']} in spec)")
ax.set_yticks(list(positions), rules)
ax.invert_yaxis()
ax.set_xlabel("cases")
ax.set_title(f"Disagreements with our spec ({SCORER_VERSION}), "
             f"run_007")
ax.legend(loc="lower right")
looser = [name for name, n in zip(rules, fp, strict=True) if n]
refusing = [name for name, n in zip(rules, fn, strict=True) if n]
show_figure(
    fig, 1,
    caption=f"How often each rule disagrees with our spec on the "
            f"{summary['n_cases']} cases of run_007: false positives "
            f"in red, false negatives in blue.",
    alt=f"Paired horizontal bars, one pair per rule, of its false "
        f"positives and false negatives. strict has none of either. "
        f"Most false positives: {rules[fp.index(max(fp))]}, "
        f"{max(fp)} of {summary['n_out_of_spec']}; "
        f"{len(looser)} of the {len(rules)} rules pay something "
        f"our spec rejects. False negatives only under "
        + ", ".join(f"{name} ({n})" for name, n
                    in zip(rules, fn, strict=True) if n)
        + f", of {summary['n_in_spec']} in spec.")

# %% [markdown]
# Read the bars of Figure 1 in pairs. A red bar alone means a rule **looser** than ours:
# everything we pay, it pays, plus more (each extra is a reward a policy can learn to
# collect). A blue bar means a rule that refuses our in-spec answers: `gsm8k_strict` and
# `r1_zero_style` refuse all of them, because they read another format altogether. That is not
# a bug in those projects; it is a reminder that "correct" is only defined relative to a spec.

# %% [markdown]
# ## The disagreement table
#
# Only the cases where at least one rule disagrees with our spec. The rules are numbered (the
# legend is printed above the table); each row lists the rules that pay the completion though
# our spec rejects it (`FP`), or those that refuse it though our spec accepts it (`FN`).
# Completions are shown as Python literals, so invisible characters stay visible (cut at 28
# characters, with `…`).

# %%
def mark(row: dict, rule: str) -> str:
    return peers.verdict(row["spec"] == "in_spec", float(row[rule]))


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def disagreeing(row: dict) -> str:
    """The rules (by number) that disagree with our spec on `row`:
    FP when our spec rejects it, FN when our spec accepts it."""
    marked = [(i, mark(row, rule))
              for i, rule in enumerate(rules, start=1)]
    verdicts = {verdict for _, verdict in marked if verdict}
    return " ".join(f"{verdict}: " + " ".join(
        str(i) for i, mark_ in marked if mark_ == verdict)
        for verdict in sorted(verdicts))


numbered = [f"[{i}] {name}" for i, name in enumerate(rules, start=1)]
print("\n".join(fill("rules: ", numbered, WIDTH)))
flagged = [row for row in rows
           if any(mark(row, rule) for rule in rules)]
display(html_table(
    ["case (expected)", "completion", "rules that disagree"],
    [[f"{html.escape(row['id'])} "
      f"({html.escape(short(row['expected_answer'], 12))})",
      f"<code>{html.escape(short(repr(row['completion']), 28))}"
      f"</code>", disagreeing(row)]
     for row in flagged]))
print(f"{len(flagged)} of {len(rows)} cases have at least one "
      f"disagreement")
assert len(flagged) == summary["n_disagreement_rows"]

# %% [markdown]
# Look at the near misses (`near-*` rows) first: they are the spellings other projects were
# designed for. `#### 3,23` pays under both GSM8K rules (the harness deletes every comma
# before comparing), `Final: −323` with a U+2212 minus pays under flexible-extract (its regex
# sees only the ASCII digits), and `Final: 17*19` pays under math-verify (it compares
# mathematics, not text).

# %%
near = [row for row in rows if row["source"] == "near_miss"]
peer_rules = list(peers.PEERS)
numbers = [rules.index(rule) + 1 for rule in peer_rules]
named = [f"[{i}] {rule}"
         for i, rule in zip(numbers, peer_rules, strict=True)]
print("\n".join(fill("columns: ", named, WIDTH)))
print(f"{'case':<7}  {'spec':<4}  {'completion':<26}  "
      + "  ".join(f"{f'[{i}]':<5}" for i in numbers).rstrip())
for row in near:
    # each peer rule's reward, and FP or FN where it disagrees
    cells = [f"{float(row[rule]):g} {mark(row, rule)}"
             if rule in row else "n/a" for rule in peer_rules]
    spec = "in" if row["spec"] == "in_spec" else "out"
    print(f"{row['id']:<7}  {spec:<4}  "
          f"{short(repr(row['completion']), 26):<26}  "
          + "  ".join(f"{cell:<5}" for cell in cells).rstrip())
print("The completions cut short above, whole:")
for row in near:
    if len(repr(row["completion"])) > 26:
        print(f"{row['id']:<7}  {row['completion']!r}")

# %% [markdown]
# ## Try your own completion
#
# Change `my_completion` and `expected` and re-run the cell. Some ideas: `"#### 323"`,
# `"\\boxed{323}"`, `"<think>easy</think><answer>323</answer>"`, `"Final: 323.0"`,
# `"Final: 324 (no, 323)"`, `"Final: ３２３"` (fullwidth digits). Which rules pay it? Which
# of those payments would you be happy to see a policy learn?

# %%
my_completion = "<think>17*19 = 323</think><answer>323</answer>"
expected = 323

in_spec = score({"expected_answer": expected},
                my_completion)["reward"] == 1.0
print(f"{my_completion!r} against {expected}:")
print(f"our spec says {'in spec' if in_spec else 'out of spec'}")
display(html_table(
    ["rule", "reward", "code", "extracted"],
    [[f"<code>{found['rule']}</code>",
      f"{found['reward']:g} "
      f"<strong>{peers.verdict(in_spec, found['reward'])}</strong>",
      html.escape(found["code"]),
      f"<code>{html.escape(repr(found['extracted']))}</code>"]
     for found in peers.try_completion(my_completion, expected)]))

# %% [markdown]
# ## Questions
#
# 1. Which rule has the fewest false positives apart from `strict`? What would a policy trained
#    on it still learn that our spec forbids?
# 2. `r1_zero_style` adds a format reward to an answer reward. Find a completion that earns the
#    format reward with a wrong answer. Why does paying for format alone invite reward hacking
#    (compare `contains_format`)?
# 3. math-verify pays `Final: 17*19`. For an evaluation of arithmetic, is that a false
#    positive or a feature? Would your answer change for a benchmark of algebra problems?
