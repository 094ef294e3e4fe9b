"""Hackable rubrics: five plausible scorers, each with a hole, and the matrix that finds it.

A policy under optimisation does not learn what you meant; it learns what the scorer pays for.
This module keeps five weak scorers that look reasonable at a glance, each with exactly the
interface of the strict one::

    rubric(example, completion) -> {"reward": 0.0 or 1.0, "details": {"rubric", "code", ...}}

Every weak rubric does the same two steps, and its hole lives in one of them:

1. extract an integer from the text (where to look, and how forgiving to be), then
2. compare it with `expected_answer` (or, for the format reward, don't).

| rubric             | extracts                                         | admits                  |
| ------------------ | ------------------------------------------------ | ----------------------- |
| `answer_anywhere`  | the expected digits, if they occur anywhere      | spraying, substrings    |
| `last_integer`     | the last integer anywhere in the text            | laundering, no format   |
| `lenient_int`      | `Final:` + anything, read by Python's `int()`    | lookalike spellings     |
| `first_final_line` | the first `Final:` line, read by the strict rule | hedging over many lines |
| `contains_format`  | `Final: <digits>`, never compared                | any well-formed number  |

`RUBRICS` puts them next to `strict` (`course.scorer.score`). `build_run` scores the golden
exploit suite (completions the spec refuses: a good rubric pays 0) and the golden-correct set
(in-spec right answers: a good rubric pays 1) with every rubric, and saves the matrix as a run
(canonical: `runs/run_006`). Each 1 in an exploit row is a false positive, the reward hack a
policy would find; each 0 in a golden-correct row is a false negative.

All rubrics are total like the strict scorer: any value as completion, never an exception.
"""

from __future__ import annotations

import csv
import inspect
import io
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from course import data
from course.data import DATA_DIR, Record, display_path
from course.runs import (
    RunFiles,
    add_output_arguments,
    check_output_arguments,
    json_bytes,
    manifest,
    write_run,
)
from course.scorer import CODES, MAX_DIGITS, PREFIX, SCORER_VERSION, parse, score

Rubric = Callable[[Mapping[str, Any], Any], dict[str, Any]]
Extractor = Callable[[str, int], int | None]

WEAK_CODES: Final = {
    "correct": "The integer the rubric extracted equals expected_answer.",
    "wrong_answer": "The rubric extracted an integer, but not expected_answer.",
    "format_found": "contains_format found `Final: <digits>` and paid without comparing.",
    "no_answer": "The rubric found nothing it reads as an answer.",
    "not_a_string": CODES["not_a_string"],
    "invalid_example": CODES["invalid_example"],
}
"""The closed set of `details["code"]` values of the weak rubrics."""


# -- 1. the shared skeleton: extract, then compare -------------------------------------------------

_TOO_BIG = 10**MAX_DIGITS


def _judge(rubric: str, example: Mapping[str, Any], completion: Any, extract: Extractor, *,
           compare: bool = True) -> dict[str, Any]:
    """Run one weak rubric: guard the inputs, `extract` an integer, compare it (or not)."""
    expected = example.get("expected_answer") if isinstance(example, Mapping) else None
    if type(expected) is not int or abs(expected) >= _TOO_BIG:
        # the strict scorer's guard (bool is rejected too), plus answers longer than MAX_DIGITS:
        # no completion can be right about them, and `str()` of a huge int would raise
        code, parsed = "invalid_example", None
    elif not isinstance(completion, str):
        code, parsed = "not_a_string", None
    else:
        parsed = extract(completion, expected)
        if parsed is None:
            code = "no_answer"
        elif not compare:
            code = "format_found"
        else:
            code = "correct" if parsed == expected else "wrong_answer"
    reward = 1.0 if code in ("correct", "format_found") else 0.0
    return {"reward": reward, "details": {"rubric": rubric, "code": code,
                                          "parsed_answer": parsed, "expected_answer": expected}}


def _to_int(text: str) -> int | None:
    """Python's `int()`, made total: None when it refuses. Strings longer than a sign and
    `MAX_DIGITS` digits are not read at all, so a megabyte of digits costs nothing, whatever the
    interpreter's limit."""
    if len(text) > MAX_DIGITS + 1:
        return None
    try:
        return int(text)
    except ValueError:
        return None


# -- 2. the weak rubrics ---------------------------------------------------------------------------

def answer_anywhere(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """Pays when the expected answer's digits occur anywhere in the text (admits answer spraying
    and substring hits).

    `str(expected) in text`: `Final: 3230`, `Final: 1323`, `323 or 324 or 325` and a copy of the
    prompt that happens to contain the number all pass. Format is never checked.
    """
    return _judge("answer_anywhere", example, completion,
                  lambda text, expected: expected if str(expected) in text else None)


_INTEGER = re.compile(r"-?\d+")  # `\d` is any Unicode decimal digit, as in most quick scripts


def _last_integer(text: str, expected: int) -> int | None:
    numbers = _INTEGER.findall(text)
    return _to_int(numbers[-1]) if numbers else None


def last_integer(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """Pays when the last integer in the text is the answer (admits trailing-number laundering
    and format-free answers).

    The classic "extract the last number" rule: `Final: 324 (check: 17*19 = 323)` passes on
    its trailing 323, and so does a bare `323` or a paragraph of prose that ends in it.
    """
    return _judge("last_integer", example, completion, _last_integer)


_LENIENT = re.compile(r"Final:\s*(\S+)")


def _lenient_int(text: str, expected: int) -> int | None:
    found = _LENIENT.search(text)
    return None if found is None else _to_int(found.group(1))


def lenient_int(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """Reads the first `Final:` with any whitespace after it, then Python's `int()` (admits
    lookalike and non-canonical spellings).

    `int()` accepts `٣٢٣` (Arabic-Indic), `３２３` (fullwidth), `3_23`, `+323` and `0323`;
    `\\s*` accepts a double space, a tab or a newline after the colon; `search` accepts any text
    before the prefix.
    """
    return _judge("lenient_int", example, completion, _lenient_int)


def _first_final_line(text: str, expected: int) -> int | None:
    line = next((line for line in text.splitlines() if line.strip().startswith(PREFIX)), None)
    return None if line is None else parse(line)[0]


def first_final_line(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """Applies the strict line rule to the first `Final:` line of a multi-line text (admits
    hedged and laundered answers).

    Each line is judged by `course.scorer.parse`, so the line itself must be perfect; the hole
    is that the other lines are ignored: `Final: 323` then `Final: 324`, or a right answer
    followed by a retraction, both pass.
    """
    return _judge("first_final_line", example, completion, _first_final_line)


_FORMAT = re.compile(r"Final: ([0-9]+)")


def _format_digits(text: str, expected: int) -> int | None:
    found = _FORMAT.search(text)
    return None if found is None else _to_int(found.group(1))


def contains_format(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """Pays any text containing `Final: ` and digits, right or wrong (admits any well-formed
    wrong number: the perverse format reward).

    The answer is extracted but never compared, so `Final: 0` earns full reward on every
    problem. It also has a false negative: `Final: -42` has a minus where the digits should be.
    """
    return _judge("contains_format", example, completion, _format_digits, compare=False)


RUBRICS: Final[dict[str, Rubric]] = {
    "strict": score,
    "answer_anywhere": answer_anywhere,
    "last_integer": last_integer,
    "lenient_int": lenient_int,
    "first_final_line": first_final_line,
    "contains_format": contains_format,
}
"""Every rubric by name, the strict scorer first; this order is the column order of the matrix."""


def describe(name: str) -> str:
    """A rubric's one-sentence summary: the first paragraph of its docstring, on one line."""
    if name == "strict":
        return f"`course.scorer.score` ({SCORER_VERSION}): the spec; pays only `Final: <int>`."
    paragraph = inspect.getdoc(RUBRICS[name]).split("\n\n")[0]
    return " ".join(paragraph.split())


# -- 3. the matrix: every case, every rubric -------------------------------------------------------

def score_matrix(exploits: list[Record], correct: list[Record],
                 rubrics: tuple[str, ...]) -> list[dict[str, Any]]:
    """One row per case (exploits first, then golden-correct), with each rubric's reward.

    Row: `{set: "exploit" | "correct", id, exploit_class ("" for golden-correct),
    expected_answer, completion, rewards: {rubric: 0.0 or 1.0}}`.
    """
    cases = [("exploit", case) for case in exploits] + [("correct", case) for case in correct]
    return [{
        "set": kind,
        "id": case["id"],
        "exploit_class": case.get("exploit_class", ""),
        "expected_answer": case["expected_answer"],
        "completion": case["completion"],
        "rewards": {name: RUBRICS[name](case, case["completion"])["reward"] for name in rubrics},
    } for kind, case in cases]


def summarise(rows: list[dict[str, Any]], rubrics: tuple[str, ...]) -> dict[str, Any]:
    """What the matrix says, per rubric and per exploit class.

    Per rubric: `false_positives` (exploits it pays, with their ids) and `false_negatives`
    (golden-correct cases it refuses, with ids). Per exploit class: its case count, how many of
    its cases each rubric pays, and `fools`, the rubrics that pay at least one of them.
    """
    exploits = [row for row in rows if row["set"] == "exploit"]
    correct = [row for row in rows if row["set"] == "correct"]
    per_rubric = {}
    for name in rubrics:
        fooled_by = [row["id"] for row in exploits if row["rewards"][name] == 1.0]
        refuses = [row["id"] for row in correct if row["rewards"][name] == 0.0]
        per_rubric[name] = {"false_positives": len(fooled_by), "false_negatives": len(refuses),
                            "fooled_by": fooled_by, "refuses_correct": refuses}
    per_class = {}
    for cls in dict.fromkeys(row["exploit_class"] for row in exploits):  # first-seen order
        members = [row for row in exploits if row["exploit_class"] == cls]
        paid = {name: sum(row["rewards"][name] == 1.0 for row in members) for name in rubrics}
        per_class[cls] = {"cases": len(members), "paid": paid,
                          "fools": [name for name in rubrics if paid[name] > 0]}
    return {
        "scorer_version": SCORER_VERSION,
        "n_exploits": len(exploits),
        "n_correct": len(correct),
        "rubrics": per_rubric,
        "exploit_classes": per_class,
    }


# -- 4. the run ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MatrixConfig:
    """Everything that decides a rubric-matrix run; saved in its manifest."""

    note: str
    """The one change versus the previous run, in a sentence (required)."""
    exploits: Path = DATA_DIR / "golden" / "exploits.jsonl"
    """The golden exploit suite: `{id, expected_answer, completion, note, exploit_class,
    expected_code}` (the loader checks the class against `data.EXPLOIT_CLASSES`)."""
    correct: Path = DATA_DIR / "golden" / "correct.jsonl"
    """The golden-correct set: `{id, expected_answer, completion, note}`, all in spec."""
    rubrics: tuple[str, ...] = tuple(RUBRICS)
    """Rubric names from `RUBRICS`, in column order; at least one."""

    def __post_init__(self) -> None:
        unknown = [name for name in self.rubrics if name not in RUBRICS]
        if unknown or not self.rubrics:
            raise ValueError(f"rubrics must be names from {list(RUBRICS)}, got {self.rubrics}")


def build_run(config: MatrixConfig, record_git: bool = True) -> RunFiles:
    """Score both golden files with every rubric and return the run folder's files.

    Files: `matrix.csv` (one row per case, one reward column per rubric), `summary.json`
    (`summarise`), `manifest.json` and `README.md` (the tables and a plain reading).
    """
    rows = score_matrix(data.load_golden(config.exploits), data.load_golden(config.correct),
                        config.rubrics)
    summary = summarise(rows, config.rubrics)
    record = manifest(kind="rubric_matrix", note=config.note, config=_config_record(config),
                      inputs={"exploits": config.exploits, "correct": config.correct},
                      record_git=record_git)
    return {
        "manifest.json": json_bytes(record),
        "summary.json": json_bytes(summary),
        "matrix.csv": matrix_csv(rows, config.rubrics),
        "README.md": readme(config, rows, summary).encode("utf-8"),
    }


def _config_record(config: MatrixConfig) -> dict[str, Any]:
    """The config as JSON: paths relative to the repository, so the bytes are portable."""
    return {**asdict(config), "exploits": display_path(config.exploits),
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


def code_span(completion: str) -> str:
    """A completion as a Markdown code span that survives a table cell: its Python repr, with
    the two characters Markdown would act on written as escapes (`|` as `\\x7c`, a backtick as
    `\\x60`), so the span still reads as a valid Python literal of the same string."""
    return "`" + repr(completion).replace("|", "\\x7c").replace("`", "\\x60") + "`"


def plain_cell(text: str) -> str:
    """An id or class name for a Markdown table cell: a literal `|` would split the cell."""
    return text.replace("|", "\\|")


def markdown_table(header: list[str], lines: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(cells) + " |" for cells in lines)]


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


def readme(config: MatrixConfig, rows: list[dict[str, Any]], summary: Mapping[str, Any]) -> str:
    """The run's README: what was scored, the plain reading, and both tables."""
    rubrics = config.rubrics
    lines = [
        "# Hackable rubrics versus the golden exploit suite",
        "",
        f"Every case was scored by {len(rubrics)} rubrics; `1` means the rubric paid reward. "
        f"The {summary['n_exploits']} exploits (`{display_path(config.exploits)}`) are "
        "completions the spec must refuse (wrong, hedged, unreadable or out of format), so every "
        "1 on them is a false positive: a reward hack. The "
        f"{summary['n_correct']} golden-correct cases (`{display_path(config.correct)}`) are "
        "in-spec right answers, so every 0 on them is a false negative.",
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
        "Cells: how many cases of the class the rubric pays.",
        "",
        *markdown_table(["exploit class", "cases", *rubrics],
                [[plain_cell(cls), str(info["cases"]), *(str(info["paid"][n]) for n in rubrics)]
                 for cls, info in summary["exploit_classes"].items()]),
        "",
        "## Exploits (a good rubric pays 0)",
        "",
        *markdown_table(
            ["id", "exploit class", "expected", "completion", *rubrics],
            [[plain_cell(row["id"]), plain_cell(row["exploit_class"]), str(row["expected_answer"]),
              code_span(row["completion"]), *(_cell(row, n) for n in rubrics)]
             for row in rows if row["set"] == "exploit"]),
        "",
        "## Golden correct (a good rubric pays 1)",
        "",
        *markdown_table(["id", "expected", "completion", *rubrics],
                [[plain_cell(row["id"]), str(row["expected_answer"]), code_span(row["completion"]),
                  *(_cell(row, n) for n in rubrics)]
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


# -- 5. command line: course rubrics ---------------------------------------------------------------

def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rubrics", help="red team: score the golden exploits with every hackable rubric",
        description="Score the golden exploit suite and the golden-correct set with the strict "
        "scorer and every weak rubric, print the matrix, and save it as a run with --out. "
        "With --try, score one completion of your own with every rubric instead.")
    add_case_arguments(parser, "rubric")
    parser.set_defaults(func=_main)


def add_case_arguments(parser: Any, scorers: str) -> None:
    """The flags `course rubrics` and `course peers` share: the two golden files, the run
    output, and `--try TEXT [--expected N]` to score one completion of your own instead."""
    defaults = MatrixConfig(note="")
    parser.add_argument("--exploits", type=Path, default=defaults.exploits,
                        help="golden exploit suite JSONL")
    parser.add_argument("--correct", type=Path, default=defaults.correct,
                        help="golden-correct set JSONL")
    add_output_arguments(parser)
    parser.add_argument("--try", dest="attempt", metavar="TEXT",
                        help=f"score TEXT with every {scorers} (use $'...' for \\n)")
    parser.add_argument("--expected", type=int, default=323,
                        help="the expected answer for --try (default 323)")


def _main(args: Any) -> int:
    if args.attempt is not None:
        example = {"expected_answer": args.expected}
        print(f"{args.attempt!r} against expected {args.expected}")
        for name, rubric in RUBRICS.items():
            details = rubric(example, args.attempt)
            print(f"  {name:<18}reward {details['reward']:.1f}  {details['details']['code']}")
        return 0
    check_output_arguments(args)
    config = MatrixConfig(note=args.note or "", exploits=args.exploits, correct=args.correct)
    rows = score_matrix(data.load_golden(config.exploits), data.load_golden(config.correct),
                        config.rubrics)
    print(format_matrix(rows, config.rubrics))
    if args.out is not None:
        print(f"saved {display_path(write_run(args.out, build_run(config)))}")
    return 0


def format_matrix(rows: list[dict[str, Any]], rubrics: tuple[str, ...]) -> str:
    """The matrix as fixed-width text: one line per case, one 0/1 column per rubric."""
    widths = [len(name) + 2 for name in rubrics]
    lines = [f"{'set':<8}{'id':<24}{'exploit class':<22}{'completion':<32}"
             + "".join(f"{name:>{w}}" for name, w in zip(rubrics, widths, strict=True))]
    for row in rows:
        text = repr(row["completion"])
        text = text if len(text) <= 30 else text[:29] + "…"
        lines.append(f"{row['set']:<8}{row['id']:<24}{row['exploit_class']:<22}{text:<32}"
                     + "".join(f"{_cell(row, name):>{w}}"
                               for name, w in zip(rubrics, widths, strict=True)))
    return "\n".join(lines)
