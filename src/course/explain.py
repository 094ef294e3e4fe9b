"""What `course score` prints, in a module of the standard library only.

`explain` turns one result of `course.scorer.score` into the lines `course score` shows;
`spec_table` is `course score --spec`. The command line (`course.commands.score`) prints them,
and the site's Try-it boxes run this same file, with the scorer, in the browser (the site's
Pyodide has no numpy, whose browser wheel is on a CDN only, so nothing imported here may need
it).
"""

from __future__ import annotations

import textwrap
import unicodedata
from typing import Any

from course.formatting import fill, literal_within, paragraph, short_literal, short_number, wrap
from course.scorer import CHECKS, SPEC_DECISIONS, ScoreResult

MARKS = ("\u2713", "\u2717")
"""How a check that passed and one that failed are marked: a check mark and a ballot X."""

ASCII_MARKS = ("ok", "FAIL")
"""The same marks for a terminal that cannot show the two symbols (an ASCII or Latin-1 one)."""


def explain(result: ScoreResult, completion: str, marks: tuple[str, str] = MARKS,
            width: int = 79) -> list[str]:
    """The lines `course score` prints for one result of `score(example, completion)`.

    Reward and code first, then the reason (`details["message"]`), the checks in the order
    they ran, each marked passed or failed, with where they stopped and how many never ran,
    the completion as an ASCII literal (a line break or a lookalike character is visible in
    it; the first non-ASCII character is named), and the answer read next to the one expected.
    Six to eight lines of at most `width` characters, whatever the completion; only the two
    `marks` can be non-ASCII.
    """
    details = result["details"]
    passed, failed = marks
    code = details["code"]
    lines = [f"reward {result['reward']:.1f}  code {code}  (scorer {details['scorer_version']})"]
    lines += textwrap.wrap(details["message"], width, initial_indent="why: ",
                           subsequent_indent="     ", break_on_hyphens=False)
    trail = details["checks"]
    items = [f"{name} {passed if ok else failed}" for name, ok in trail]
    not_run = len(CHECKS) - len(trail)
    if not trail:
        items = ["none ran: the example itself is unusable"]
    elif not_run:
        items.append(f"<- stopped here, {not_run} later check{'s' * (not_run > 1)} not run")
    lines += fill("checks: ", items, width)
    shown = f"completion: {short_literal(completion, 50)}"
    odd = next((ch for ch in completion if not ch.isascii()), None)
    if code == "non_ascii_character" and odd is not None:
        shown += f"  (U+{ord(odd):04X} is {unicodedata.name(odd, 'an unnamed character')})"
    lines.append(shown)
    lines.append(f"parsed answer: {_answer(details['parsed_answer'])}   "
                 f"expected: {_answer(details['expected_answer'])}")
    return lines


SPEC_LEGEND = paragraph(
    "One decision of the spec per row: the case, the completion (an ASCII literal: escapes "
    "show what is invisible or a lookalike), the code score() must return; its reason "
    "follows, indented.")
"""Printed once, above `course score --spec`'s table."""


def spec_table() -> list[str]:
    """`SPEC_DECISIONS` as `course score --spec` prints them, within 80 columns: the legend,
    the headings, then per decision its case, completion and code, and its reason wrapped
    under them."""
    lines = [*SPEC_LEGEND.splitlines(), f"{'case':<24} {'completion':<30} code"]
    for case, completion, code, reason in SPEC_DECISIONS:
        lines.append(f"{case:<24} {literal_within(completion, 30):<30} {code}")
        lines += wrap(reason, indent="    ")
    return lines


def _answer(value: Any) -> str:
    """An answer as the explanation shows it: `none` when there is none, an int in decimal
    (cut short when very long), anything else (a broken example's value) as its ASCII repr."""
    if value is None:
        return "none"
    if type(value) is int:
        return short_number(value)
    shown = ascii(value)
    return shown if len(shown) <= 40 else f"{shown[:20]}... ({type(value).__name__})"
