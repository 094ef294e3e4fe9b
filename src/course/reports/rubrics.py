"""The red-team matrix run (`runs/run_006`): every golden case under every rubric, as CSV,
as Markdown tables, and as a plain reading of who is fooled by what."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from typing import Any

from course import data
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
from course.rubrics import MatrixConfig, describe, score_matrix, summarise
from course.runs import RunFiles, manifest


def build_run(config: MatrixConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Score both golden files with every rubric and return the run folder's files.

    Files: `matrix.csv` (one row per case, one reward column per rubric), `summary.json`
    (`summarise`), `manifest.json` and `README.md` (the tables and a plain reading).
    """
    rows = score_matrix(data.load_golden(config.exploits), data.load_golden(config.correct),
                        config.rubrics)
    summary = summarise(rows, config.rubrics)
    record = manifest(kind="rubric_matrix", note=note, config=_config_record(config, note),
                      inputs={"exploits": config.exploits, "correct": config.correct},
                      record_git=record_git)
    return {
        "manifest.json": json_bytes(record),
        "summary.json": json_bytes(summary),
        "matrix.csv": matrix_csv(rows, config.rubrics),
        "README.md": render_readme(config, rows, summary).encode("utf-8"),
    }


def _config_record(config: MatrixConfig, note: str) -> dict[str, Any]:
    """The config as JSON: paths relative to the repository, so the bytes are portable. The
    note leads the record, as in every matrix manifest since run_006."""
    return {"note": note, **asdict(config), "exploits": display_path(config.exploits),
            "correct": display_path(config.correct), "rubrics": list(config.rubrics)}


def matrix_csv(rows: list[dict[str, Any]], rubrics: tuple[str, ...]) -> bytes:
    """The matrix as CSV: set, id, exploit_class, expected_answer, completion (Python repr, so
    invisible characters stay visible), then one 0/1 reward column per rubric."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["set", "id", "exploit_class", "expected_answer", "completion", *rubrics])
    for row in rows:
        writer.writerow([row["set"], row["id"], row["exploit_class"], row["expected_answer"],
                         repr(row["completion"]), *(int(row["rewards"][n]) for n in rubrics)])
    return buffer.getvalue().encode("utf-8")


def reading(summary: Mapping[str, Any]) -> list[str]:
    """The plain-words reading of a summary, one bullet per rubric, derived from the numbers."""
    n_exploits, n_correct = summary["n_exploits"], summary["n_correct"]
    bullets = []
    for name, stats in summary["rubrics"].items():
        classes = [cls for cls, info in summary["exploit_classes"].items() if name in info["fools"]]
        fooled = (f"is fooled by {stats['false_positives']} of {n_exploits} exploits "
                  f"(classes: {', '.join(plain_cell(cls) for cls in classes)})" if classes
                  else f"pays 0 of {n_exploits} exploits: it resists every exploit class")
        refused = (f"it refuses {stats['false_negatives']} of {n_correct} golden-correct cases "
                   f"({', '.join(plain_cell(i) for i in stats['refuses_correct'])}), each one a "
                   "false negative" if stats["false_negatives"]
                   else f"it pays all {n_correct} golden-correct cases (no false negative)")
        bullets.append(f"- `{name}` {fooled}; {refused}.")
    unpaid = [cls for cls, info in summary["exploit_classes"].items() if not info["fools"]]
    if unpaid:
        bullets.append(f"- Exploit classes that fool none of these rubrics: "
                       f"{', '.join(map(plain_cell, unpaid))}. They stay in the suite as "
                       "regression cases: any future rubric must refuse them too.")
    return bullets


def render_readme(config: MatrixConfig, rows: list[dict[str, Any]],
                  summary: Mapping[str, Any]) -> str:
    """The run's README: what was scored, the plain reading, and both tables."""
    rubrics = config.rubrics
    lines = [
        "# Hackable rubrics versus the golden exploit suite",
        "",
        f"Every case was scored by {len(rubrics)} rubrics. "
        f"The {summary['n_exploits']} exploits ({inline_code(display_path(config.exploits))}) "
        "are completions the spec must refuse (wrong, hedged, unreadable or out of format), so "
        "a rubric that pays one has a false positive: a reward hack. The "
        f"{summary['n_correct']} golden-correct cases "
        f"({inline_code(display_path(config.correct))}) are in-spec right answers, so a rubric "
        "that refuses one has a false negative. The tables name, case by case, the rubrics "
        "that got it wrong; `matrix.csv` holds every 0 and 1.",
        "",
        "## The rubrics",
        "",
        *(f"- `{name}`: {describe(name)}" for name in rubrics),
        "",
        "## Reading",
        "",
        *reading(summary),
        "",
        "## Which rubric each exploit class fools",
        "",
        *markdown_table(["exploit class", "cases", "paid by (cases paid)"],
                [[plain_cell(cls), str(info["cases"]),
                  _names(f"{inline_code(n)} ({info['paid'][n]})" for n in rubrics
                         if info["paid"][n])]
                 for cls, info in summary["exploit_classes"].items()]),
        "",
        "## Exploits (a good rubric pays none)",
        "",
        *markdown_table(
            ["id", "exploit class", "expected", "completion", "paid by"],
            [[plain_cell(row["id"]), plain_cell(row["exploit_class"]), _expected(row),
              code_span(row["completion"]), _names(_paying(row, rubrics, paid=True))]
             for row in rows if row["set"] == "exploit"]),
        "",
        "## Golden correct (a good rubric refuses none)",
        "",
        *markdown_table(["id", "expected", "completion", "refused by"],
                [[plain_cell(row["id"]), _expected(row), code_span(row["completion"]),
                  _names(_paying(row, rubrics, paid=False))]
                 for row in rows if row["set"] == "correct"]),
        "",
        "## Files",
        "",
        "- `matrix.csv`: the same matrix, completions as Python literals.",
        "- `summary.json`: per rubric, false positives and false negatives with case ids; per "
        "exploit class, the rubrics it fools.",
        "- `manifest.json`: inputs with sha256, scorer version, config.",
        "",
    ]
    return "\n".join(lines)


def _cell(row: Mapping[str, Any], rubric: str) -> str:
    return str(int(row["rewards"][rubric]))


def _expected(row: Mapping[str, Any]) -> str:
    """The expected answer as a code span: a 1000-digit one then wraps in its cell."""
    return inline_code(str(row["expected_answer"]))


def _paying(row: Mapping[str, Any], rubrics: tuple[str, ...], paid: bool) -> Iterator[str]:
    """The rubrics that paid the case (`paid`), or that refused it, as code spans."""
    return (inline_code(name) for name in rubrics if bool(row["rewards"][name]) is paid)


def _names(names: Iterable[str]) -> str:
    """Names for one table cell, comma-separated; "none" when there are none."""
    return ", ".join(names) or "none"


MATRIX_NOTE = paragraph(
    "cells: 1 = the rubric pays (reward 1), 0 = it refuses. Completions are ASCII literals "
    "(escapes show lookalikes); one cut short ends with ... (N chars).")
"""Printed once, under the column legend of `format_matrix`."""

ID_WIDTH = 24
"""The widest case id the matrix shows whole (the golden ids are 10 characters at most)."""


def format_matrix(rows: list[dict[str, Any]], rubrics: tuple[str, ...]) -> str:
    """The matrix as text within 80 columns: the rubrics are columns R1, R2, ... named once in a
    legend, a line per case (its id, its completion, a 0/1 per rubric) under a line naming its
    set and exploit class."""
    keys, legend = numbered_legend(rubrics, prefix="R")
    cell = max(map(len, keys)) + 2
    id_width = min(max((len(one_line(row["id"])) for row in rows), default=2), ID_WIDTH) + 2
    text_width = max(COLUMNS - id_width - cell * len(keys), 20)
    lines = [*legend, MATRIX_NOTE, "",
             f"{'id':<{id_width}}{'completion':<{text_width}}"
             + "".join(f"{key:>{cell}}" for key in keys)]
    group = None
    for row in rows:
        if (row["set"], row["exploit_class"]) != group:
            group = (row["set"], row["exploit_class"])
            kind = f", class {row['exploit_class']}" if row["exploit_class"] else ""
            lines.append(cut(f"-- {row['set']} set{kind}", COLUMNS))
        text = literal_within(row["completion"], text_width - 1)
        lines.append(f"{cut(row['id'], id_width - 2):<{id_width}}{text:<{text_width}}"
                     + "".join(f"{_cell(row, name):>{cell}}" for name in rubrics))
    return "\n".join(lines)
