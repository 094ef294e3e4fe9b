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

`RUBRICS` puts them next to `strict` (`course.scorer.score`). `score_matrix` scores the golden
exploit suite (completions the spec refuses: a good rubric pays 0) and the golden-correct set
(in-spec right answers: a good rubric pays 1) with every rubric. Each 1 in an exploit row is a
false positive, the reward hack a policy would find; each 0 in a golden-correct row is a false
negative. The matrix is saved as a run (canonical: `runs/run_006`) by `course.reports.rubrics`;
the command is `course rubrics` (`course.commands.rubrics`).

All rubrics are total like the strict scorer: any value as completion, never an exception.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from course.data import Record
from course.paths import DATA_DIR
from course.scorer import CODES, MAX_DIGITS, PREFIX, SCORER_VERSION, parse, score

Rubric = Callable[[Mapping[str, Any], Any], Mapping[str, Any]]
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


# -- 2. the weak rubrics --------------------------------------------------------------------------

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
    paragraph = (inspect.getdoc(RUBRICS[name]) or "").split("\n\n")[0]
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


# -- 4. the experiment ----------------------------------------------------------------------------

@dataclass(frozen=True)
class MatrixConfig:
    """Everything that decides a rubric-matrix run; saved in its manifest."""

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
