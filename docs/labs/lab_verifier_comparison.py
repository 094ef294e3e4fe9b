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
import io

import matplotlib.pyplot as plt
from IPython.display import HTML, display

from course import peers
from course.reports import canonical
from course.paths import RUNS_DIR
from course.runs import read_json
from course.scorer import SCORER_VERSION, score

RUN = RUNS_DIR / "run_007"
summary = read_json(RUN, "summary.json")
with open(RUN / "comparison.csv", encoding="utf-8", newline="") as handle:
    rows = list(csv.DictReader(handle))
rules = list(summary["rules"])
for row in rows:  # the CSV stores each completion as a Python literal: read it back exactly
    row["completion"] = ast.literal_eval(row["completion"])

print(f"run_007: {summary['n_cases']} cases "
      f"({summary['n_in_spec']} in spec, {summary['n_out_of_spec']} out of spec), "
      f"{len(rules)} rules, scorer {SCORER_VERSION}")
print("math-verify:", summary["math_verify"])

# %% [markdown]
# A run is only evidence if it can be rebuilt. Before reading the numbers, rebuild run_007 in
# memory from today's code and data and compare it byte for byte with the committed folder.

# %%
differences = canonical.verify(["run_007"])["run_007"]
print("run_007 is byte-identical to a fresh rebuild" if not differences else differences)
assert differences == []

# %% [markdown]
# ## The counts
#
# For each rule: how many out-of-spec completions it pays (FP), how many in-spec ones it
# refuses (FN), and the agreement rate $1 - \frac{FP + FN}{n}$ over the $n$ cases.

# %%
def html_table(header: list[str], body: list[list[str]]) -> HTML:
    """A small HTML table; every cell is escaped (completions are untrusted text)."""
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    cells = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in line) + "</tr>"
                    for line in body)
    return HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")


display(html_table(
    ["rule", "false positives", "false negatives", "agreement"],
    [[f"<code>{name}</code>", str(stats["false_positives"]), str(stats["false_negatives"]),
      f"{stats['agreement_rate']:.4f}"] for name, stats in summary["rules"].items()]))
assert summary["rules"]["strict"]["false_positives"] == 0
assert summary["rules"]["strict"]["false_negatives"] == 0

# %%
fp = [summary["rules"][name]["false_positives"] for name in rules]
fn = [summary["rules"][name]["false_negatives"] for name in rules]
positions = range(len(rules))
fig, ax = plt.subplots(figsize=(7, 4.6))
ax.barh([p - 0.2 for p in positions], fp, height=0.4, color="tab:red",
        label=f"false positives (of {summary['n_out_of_spec']} out of spec)")
ax.barh([p + 0.2 for p in positions], fn, height=0.4, color="tab:blue",
        label=f"false negatives (of {summary['n_in_spec']} in spec)")
ax.set_yticks(list(positions), rules)
ax.invert_yaxis()
ax.set_xlabel("cases")
ax.set_title(f"Disagreements with our spec ({SCORER_VERSION}), run_007")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8, frameon=False)
fig.tight_layout()
plt.show()

# %% [markdown]
# Read the bars in pairs. A red bar alone means a rule **looser** than ours: everything we pay,
# it pays, plus more (each extra is a reward a policy can learn to collect). A blue bar means
# a rule that refuses our in-spec answers: `gsm8k_strict` and `r1_zero_style` refuse all of
# them, because they read another format altogether. That is not a bug in those projects; it
# is a reminder that "correct" is only defined relative to a spec.

# %% [markdown]
# ## The disagreement table
#
# Only the cases where at least one rule disagrees with our spec. Columns are numbered (legend
# below); a cell is `FP`, `FN`, or blank when the rule agrees with our spec. Completions are
# shown as Python literals, so invisible characters stay visible.

# %%
def mark(row: dict, rule: str) -> str:
    return peers.verdict(row["spec"] == "in_spec", float(row[rule]))


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


print("  ".join(f"[{i}] {name}" for i, name in enumerate(rules, start=1)))
flagged = [row for row in rows if any(mark(row, rule) for rule in rules)]
display(html_table(
    ["id", "spec", "expected", "completion", *(f"[{i}]" for i in range(1, len(rules) + 1))],
    [[html.escape(row["id"]), html.escape(row["spec"]),
      html.escape(short(row["expected_answer"], 16)),
      f"<code>{html.escape(short(repr(row['completion'])))}</code>",
      *(f"<strong>{mark(row, rule)}</strong>" for rule in rules)]
     for row in flagged]))
print(f"{len(flagged)} of {len(rows)} cases have at least one disagreement")
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
display(html_table(
    ["id", "spec", "completion", *peer_rules],
    [[html.escape(row["id"]), html.escape(row["spec"]),
      f"<code>{html.escape(repr(row['completion']))}</code>",
      *(f"{html.escape(row[rule])} <strong>{mark(row, rule)}</strong>"
        if rule in row else "n/a" for rule in peer_rules)]
     for row in near]))

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

in_spec = score({"expected_answer": expected}, my_completion)["reward"] == 1.0
print(f"{my_completion!r} against {expected}: our spec says "
      f"{'in spec' if in_spec else 'out of spec'}")
display(html_table(
    ["rule", "reward", "code", "extracted", "vs our spec"],
    [[f"<code>{found['rule']}</code>", f"{found['reward']:g}", html.escape(found["code"]),
      f"<code>{html.escape(repr(found['extracted']))}</code>",
      f"<strong>{peers.verdict(in_spec, found['reward'])}</strong>"]
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
