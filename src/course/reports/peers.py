"""The verifier-comparison run (`runs/run_007`): our spec beside the rubrics and four peer
rules, every case as CSV, the disagreements as Markdown, and a plain reading."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, Final

from course.data import Record
from course.formatting import (
    COLUMNS,
    code_span,
    cut,
    inline_code,
    literal_within,
    markdown_table,
    numbered_legend,
    one_line,
    paragraph,
    plain_cell,
)
from course.jsonfiles import json_bytes
from course.paths import display_path
from course.peers import (
    SOURCES,
    ComparisonConfig,
    describe,
    load_cases,
    math_verify_status,
    score_cases,
    usable_rules,
    verdict,
)
from course.runs import RunFiles, manifest
from course.scorer import SCORER_VERSION


def summarise(rows: list[Record], rules: tuple[str, ...],
              unavailable: tuple[str, ...] = ()) -> dict[str, Any]:
    """Per rule: false positives and false negatives (with case ids) and the agreement rate
    `1 - (FP + FN) / n_cases` in [0, 1], rounded to 4 decimals; plus the case counts and the
    math-verify status this machine produced them with."""
    per_rule = {}
    for name in rules:
        fp = [row["id"] for row in rows if verdict(row["in_spec"], row["rewards"][name]) == "FP"]
        fn = [row["id"] for row in rows if verdict(row["in_spec"], row["rewards"][name]) == "FN"]
        per_rule[name] = {"false_positives": len(fp), "false_negatives": len(fn),
                          "agreement_rate": round(1 - (len(fp) + len(fn)) / len(rows), 4),
                          "pays_out_of_spec": fp, "refuses_in_spec": fn}
    return {
        "scorer_version": SCORER_VERSION,
        "n_cases": len(rows),
        "n_in_spec": sum(row["in_spec"] for row in rows),
        "n_out_of_spec": sum(not row["in_spec"] for row in rows),
        "cases_by_source": {source: sum(row["source"] == source for row in rows)
                            for source in SOURCES},
        "n_disagreement_rows": sum(any(verdict(row["in_spec"], row["rewards"][name])
                                       for name in rules) for row in rows),
        "math_verify": math_verify_status(),
        "unavailable_rules": list(unavailable),
        "rules": per_rule,
    }


def build_run(config: ComparisonConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Score the case set with every rule and return the run folder's files.

    Files: `comparison.csv` (every case), `disagreements.md` (the cases some rule scores
    against our spec), `summary.json` (`summarise`), `manifest.json`, `README.md`.
    """
    rules, unavailable = usable_rules(config.rules)
    rows = score_cases(load_cases(config.exploits, config.correct), rules)
    summary = summarise(rows, rules, unavailable)
    record = manifest(kind="verifier_comparison", note=note,
                      config={"note": note, **asdict(config),
                              "exploits": display_path(config.exploits),
                              "correct": display_path(config.correct),
                              "rules": list(config.rules)},
                      inputs={"exploits": config.exploits, "correct": config.correct},
                      record_git=record_git)
    return {
        "manifest.json": json_bytes(record),
        "summary.json": json_bytes(summary),
        "comparison.csv": comparison_csv(rows, rules),
        "disagreements.md": disagreements_markdown(rows, rules).encode("utf-8"),
        "README.md": render_readme(config, summary).encode("utf-8"),
    }


def reward_text(reward: float) -> str:
    return f"{reward:g}"  # 0, 1 or 2: every reward here is a whole number


def comparison_csv(rows: list[Record], rules: tuple[str, ...]) -> bytes:
    """id, source, spec (`in_spec` / `out_of_spec`), expected_answer, completion (Python repr,
    so invisible characters stay visible), then one reward column per rule."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "source", "spec", "expected_answer", "completion", *rules])
    for row in rows:
        writer.writerow([row["id"], row["source"], _spec_text(row), row["expected_answer"],
                         repr(row["completion"]),
                         *(reward_text(row["rewards"][name]) for name in rules)])
    return buffer.getvalue().encode("utf-8")


def _spec_text(row: Mapping[str, Any]) -> str:
    return "in_spec" if row["in_spec"] else "out_of_spec"


LONG_TEXT: Final = 60
"""Completions and answers longer than this many characters are shortened in Markdown tables
(the CSV keeps every one whole)."""


def _short_span(completion: str) -> str:
    if len(completion) <= LONG_TEXT:
        return code_span(completion)
    return f"{code_span(completion[:24])}… ({len(completion)} characters)"


def _short_number(value: int) -> str:
    text = str(value)
    return text if len(text) <= LONG_TEXT else f"{text[:12]}… ({len(text)} characters)"


def disagreement_table(rows: list[Record], rules: tuple[str, ...]) -> list[str]:
    """Markdown table lines: one row per case that some rule scores against our spec; each rule
    cell is its reward, marked `FP` or `FN` when it disagrees with our spec."""
    def cell(row: Mapping[str, Any], name: str) -> str:
        mark = verdict(row["in_spec"], row["rewards"][name])
        return reward_text(row["rewards"][name]) + (f" **{mark}**" if mark else "")

    flagged = [row for row in rows
               if any(verdict(row["in_spec"], row["rewards"][name]) for name in rules)]
    return markdown_table(["id", "spec", "expected", "completion", *rules],
                  [[plain_cell(row["id"]), _spec_text(row), _short_number(row["expected_answer"]),
                    _short_span(row["completion"]), *(cell(row, name) for name in rules)]
                   for row in flagged])


def disagreements_markdown(rows: list[Record], rules: tuple[str, ...]) -> str:
    return "\n".join([
        "# Where the verifiers disagree with our spec",
        "",
        f"Only the cases where at least one rule disagrees with spec {SCORER_VERSION}. A cell is "
        "the rule's reward; **FP** marks a false positive (the rule pays a completion our spec "
        "rejects), **FN** a false negative (it refuses one our spec accepts). False means "
        "false *relative to our spec*: the other projects chose other specs on purpose.",
        "",
        *disagreement_table(rows, rules),
        "",
    ])


def reading(summary: Mapping[str, Any]) -> list[str]:
    """One bullet per rule, worded from its counts: looser than our spec (false positives
    only), stricter (false negatives only), a different spec (both), or in agreement."""
    n_in, n_out = summary["n_in_spec"], summary["n_out_of_spec"]
    bullets = []
    for name, stats in summary["rules"].items():
        fp, fn = stats["false_positives"], stats["false_negatives"]
        pays_text = f"pays {fp} of {n_out} out-of-spec completions"
        refuses_text = f"refuses {fn} of {n_in} in-spec ones"
        if fp and fn:
            verdict_text = ("a different spec: it is looser than ours in some places and "
                            f"stricter in others ({pays_text}, {refuses_text})")
        elif fp:
            verdict_text = (f"looser than our spec: it {pays_text} (each one a reward a policy "
                            f"could learn to collect) and refuses none of the {n_in} in-spec ones")
        elif fn:
            verdict_text = (f"stricter than (or blind to) our format: it pays no out-of-spec "
                            f"completion but {refuses_text}; a policy trained on it would "
                            "learn another format")
        else:
            verdict_text = f"agrees with our spec on all {summary['n_cases']} cases"
        examples = stats["pays_out_of_spec"][:3] + stats["refuses_in_spec"][:3]
        shown = f" Examples: {', '.join(map(plain_cell, examples))}." if examples else ""
        bullets.append(f"- `{name}`: {verdict_text}; agreement {stats['agreement_rate']:.4f}."
                       + shown)
    for name in summary["unavailable_rules"]:
        bullets.append(f"- `{name}` was not run: math-verify is not installed here.")
    return bullets


def render_readme(config: ComparisonConfig, summary: Mapping[str, Any]) -> str:
    """The run's README: what was scored, by which rules (with their origins), the reading."""
    status = summary["math_verify"]
    versions = ", ".join(f"{name} {version or 'not installed'}"
                         for name, version in status["versions"].items())
    by_source = summary["cases_by_source"]
    lines = [
        "# Our verifier versus other projects' verifiers",
        "",
        f"{summary['n_cases']} cases ({by_source['exploits']} golden exploits from "
        f"{inline_code(display_path(config.exploits))}, {by_source['correct']} golden-correct "
        f"cases from {inline_code(display_path(config.correct))}, {by_source['near_miss']} "
        "near misses defined in "
        "`course.peers.NEAR_MISSES`) were scored by every rule below. Each case carries the "
        f"verdict of our spec ({SCORER_VERSION}): {summary['n_in_spec']} in spec, "
        f"{summary['n_out_of_spec']} out of spec. A rule that pays (reward > 0) an out-of-spec "
        "case has a false positive; a rule that refuses an in-spec case has a false negative. "
        "Both are relative to OUR spec: the other projects chose other specs on purpose, and "
        "the disagreements show what each choice would teach a policy.",
        "",
        "## The rules and where they come from",
        "",
        *(f"- `{name}`: {describe(name)}" for name in config.rules),
        "",
        f"math-verify available: {'yes' if status['available'] else 'no'} ({versions}).",
        "",
        "## Reading",
        "",
        *reading(summary),
        "",
        "## Counts",
        "",
        *markdown_table(["rule", "false positives", "false negatives", "agreement"],
                [[f"`{name}`", str(stats["false_positives"]), str(stats["false_negatives"]),
                  f"{stats['agreement_rate']:.4f}"]
                 for name, stats in summary["rules"].items()]),
        "",
        "## Files",
        "",
        f"- `disagreements.md`: the {summary['n_disagreement_rows']} cases where some rule "
        "disagrees with our spec, each cell marked FP or FN.",
        "- `comparison.csv`: every case, one reward column per rule, completions as Python "
        "literals.",
        "- `summary.json`: per rule, false positives and false negatives with case ids, the "
        "agreement rate, and the math-verify versions.",
        "- `manifest.json`: inputs with sha256, scorer version, config.",
        "",
    ]
    return "\n".join(lines)


DISAGREEMENT_NOTE = paragraph(
    "spec: in = our spec accepts the completion, out = it refuses it. Cells: FP = the rule pays "
    "what our spec refuses, FN = it refuses what our spec accepts, . = it agrees with our "
    "spec. Completions are ASCII literals; one cut short ends with ... (N chars).")
"""Printed once, under the column legend of `format_disagreements`."""


def format_disagreements(rows: list[Record], rules: tuple[str, ...]) -> str:
    """The rows where some rule disagrees with our spec, as text within 80 columns. Rules are
    numbered columns, named once in a legend; a cell is `FP`, `FN`, or `.` when the rule
    agrees with our spec."""
    keys, legend = numbered_legend(rules)
    cell = max(map(len, keys)) + 1
    flagged = [(row, [verdict(row["in_spec"], row["rewards"][name]) for name in rules])
               for row in rows]
    flagged = [(row, marks) for row, marks in flagged if any(marks)]
    id_width = min(max((len(one_line(row["id"])) for row, _ in flagged), default=2), 24) + 2
    text_width = max(COLUMNS - id_width - 5 - cell * len(keys), 20)
    lines = [*legend, DISAGREEMENT_NOTE, "",
             f"{'id':<{id_width}}{'spec':<5}{'completion':<{text_width}}"
             + "".join(f"{key:>{cell}}" for key in keys)]
    for row, marks in flagged:
        text = literal_within(row["completion"], text_width - 1)
        lines.append(f"{cut(row['id'], id_width - 2):<{id_width}}"
                     f"{'in' if row['in_spec'] else 'out':<5}{text:<{text_width}}"
                     + "".join(f"{mark or '.':>{cell}}" for mark in marks))
    return "\n".join(lines)
