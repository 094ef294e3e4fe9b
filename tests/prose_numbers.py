"""Every number a page quotes in its prose is bound to a value the page computes or reads.

The convention, for a teacher editing a page under docs/:

- A number written in the prose (a decimal, a percentage, a signed change, an integer above 12)
  must equal, rounded to as many decimals as written, a value that the page's Python blocks
  compute, print or assert with `==`, a value in a file the page includes with `--8<--`, or a
  value in a file of a run folder its section names (`run_002`, `../runs/run_002/`).
- A number that is not a measurement (a year, a line count, a design constant, a made-up
  example) is exempted where it stands, by an HTML comment in the same paragraph, list or table
  (the contiguous non-blank lines around the comment), invisible on the site, seen in review:
  `<!-- unmeasured: 1992 400; a year and the length of the file -->` (numbers as written, then
  an optional reason after `;`). Naming a number that is not in that block is an error, so an
  exemption cannot outlive its number.
- A failure is one short line: the page, the line, the number, and the closest value computed
  in its section (what the section's blocks print and its included files hold; else the runs in
  its scope; else the whole page), preferring a value it would match with one digit mistyped.

Design decisions (tests/site/test_prose_numbers.py proves each one on small examples):

Prose is the page after tests/conftest.py's `lift_containers` (admonitions and tabs are prose
too, line numbers kept), minus: fenced and indented code, inline code, math (`$...$`,
`$$...$$`, `\\(...\\)`, `\\[...\\]`, `\\begin...\\end`), HTML comments and tags, link and image
targets, links to the bibliography (`[Williams (1992)](../references.md#...)`: a citation),
attribute lists, footnote markers, headings (titles and their numbering), ordered-list
markers and `--8<--` lines.

A numeric literal is: an optional sign (`-`, `+`, or `−` U+2212; a `-` right after a digit is
a range, not a sign), digits with optional thousands commas (`1,920`), optional decimals, and
an optional unit: `%`, `pp`, `points` or `percentage points` (all read as percentages). Not
numbers: digits glued to a letter, `_`, `@`, `#`, `$` or a dotted version on either side, or
joined by `-`, `:` or `+` to a word before them: `run_001`, `dev-018`, `M4`, `Q6`, `cl100k`,
`v1`, `2x`, `1st`, `3.11.2`, `step-100`, `arXiv:1707.06347`, `U+2212`, and `pass@64`, whose 64
is the k of an estimator, a setting. Nor is a number after a label word (LABEL_WORDS:
`Milestone 0.5`, `rule 11`, `sections 13.3 and 13.4`, `line 466`): a name, not a quantity. A
fraction `34/60` is two numbers.

Exempt without a marker: integers from 0 to 12 without a unit. They are the counts the text
sets up itself (N = 8, 10 kata examples, 11 rules, 12 months). On a lesson, whose blocks and
runs hold hundreds of values, every one of them is among the values (measured: all of 0-12 on
each lesson), so binding them would check nothing; on a page without code each would need a
marker for nothing. A count above 12 is checked.

Matching: a literal with d decimals matches a value v when v rounds to it at d decimals, with
either rounding convention (the half-way point counts both ways); an integer (d = 0, no unit)
must equal v exactly; a percentage p matches v when v or 100 v rounds to p. A literal written
without a sign matches v or -v ("falls by 0.19" quotes a change of -0.19); a literal written
with a sign must match with that sign.

Where values come from (collected once per page, and once per run, per process):

- the page's runnable Python blocks, extracted by pytest-markdown-docs with the course's parser
  (fresh namespace per block, a `continuation` block re-runs the blocks it continues, `notest`
  skipped), executed in an empty temporary folder (as the site runs them): every number printed,
  every number left in the block's namespace (ints, floats, numpy scalars and arrays up to
  5,000 elements, numbers inside strings, through dicts, lists, tuples, sets, dataclasses and
  the attributes of course objects; at most 200,000 values per block), and, in a block that
  ran to its end, the literals an `assert` compares with `==` (the assertion held, so the
  literal is a computed value) and every other number written in the code (a setting the
  code uses: the prose's "a 100,000-digit answer" is bound to `"2" * 100_000`). These count
  for the whole page. A block that raises is named in the failure message: the values it did
  not reach are missing;
- every file the page includes with `--8<--` (the line range if given), for the whole page;
- every file of a run folder (JSON and JSONL leaves, keys, numbers inside strings; numbers in
  text files; binary files skipped; each file read up to 2 MB), for the numbers of the section
  that names the run outside fenced code (sections start at `#` and `##` headings) and, when
  the introduction (before the first `##`) names it, for the whole page. A run written in a
  shell command (`--out runs/run_007`) is not a citation. The scope keeps the check sharp: a
  cited run holds hundreds of values, and a four-decimal typo matches one of them by chance
  more often than one would think.

The check is as strong as the literal is precise: "0.5146" is bound tightly, while "0.5" or
"24%" matches anything that rounds to it among the values in scope.

On a lesson and on the rules page (SHOWN_PAGES), where the reader sees every block's output, a
matched number must also be **shown near it, unambiguously** (`near_check`), inside prediction
and answer boxes as in the plain prose:

- shown: some number that the page shows the reader in the same part of the page matches it;
  shown means printed by a block (the output the site puts under it) or held by a file the
  page includes with `--8<--`; the part is the text between two headings of level 1 to 3, and
  for a number in the introduction (before the first `##`), the whole page;
- unambiguous: moving its last written digit by one (0.192 -> 0.191 or 0.193, 60 -> 59 or 61)
  matches nothing shown there, so a hand edit of one digit fails the test. Where a neighbour is
  shown too, quote more digits.

A value computed only inside a block's namespace, or read from a cited run without being shown,
still binds a number on other pages (the maps, the context pages); on a lesson it is not enough:
the reader should see the computation and its output.

Pages not checked at all are listed, with the reason, in NOT_CHECKED (the labs, the API
reference, the bibliography).

`python tests/prose_numbers.py [PAGE ...] [--report FILE]` prints a report of every page:
counts, and each unmatched number with its context and nearest values.
"""

from __future__ import annotations

import ast
import bisect
import concurrent.futures
import contextlib
import dataclasses
import functools
import importlib.util
import json
import math
import os
import re
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from course_site.fences import included, snippets
from course_site.outputs import execute, runnable_blocks
from course_site.run_blocks import chains, leaves

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
RUNS = REPO / "runs"

AUTO_EXEMPT_UP_TO = 12
"""Integers 0..12 written without a unit are not checked (see the module docstring)."""

MAX_VALUES = 200_000       # values taken from one file
MAX_TEXT = 2_000_000       # characters read from one file or one string

LABEL_WORDS = frozenset({
    "milestone", "milestones", "rule", "rules", "section", "sections", "chapter", "part",
    "figure", "question", "exercise", "lesson", "module", "appendix", "python", "version",
    "line", "lines",
})
"""A number right after one of these words names something; it is not a quantity."""


# ---------------------------------------------------------------------------------------------
# Prose: the page with code, math and markup blanked out, same lines and columns.
# ---------------------------------------------------------------------------------------------

@functools.cache
def course_conftest() -> types.ModuleType:
    """tests/conftest.py (the course's Markdown parser), loaded by path under a name of its own:
    tests/ is not a package and tests/site/ has a conftest.py too."""
    spec = importlib.util.spec_from_file_location("_course_docs_conftest",
                                                  REPO / "tests" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lift_containers(markdown: str) -> str:
    return course_conftest().lift_containers(markdown)


def _blank(match: re.Match[str]) -> str:
    """The match with every character but newlines turned into a space."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _blank_lines(text: str, ranges: Iterable[tuple[int, int]]) -> str:
    """Blank the 0-based line ranges [start, end)."""
    lines = text.split("\n")
    for start, end in ranges:
        for i in range(start, min(end, len(lines))):
            lines[i] = " " * len(lines[i])
    return "\n".join(lines)


def _tokens(text: str) -> list[Any]:
    from markdown_it import MarkdownIt

    return [token for token in MarkdownIt("commonmark").parse(text) if token.map]


def _block_ranges(text: str, kinds: set[str]) -> list[tuple[int, int]]:
    """Line ranges of the CommonMark blocks of the given token types (fences, code, headings)."""
    return [(token.map[0], token.map[1]) for token in _tokens(text) if token.type in kinds]


def _blank_list_numbers(text: str) -> str:
    """Blank the number of each ordered-list item (`1.`, `2)`), wherever the item starts."""
    lines = text.split("\n")
    for token in _tokens(text):
        if token.type == "list_item_open" and token.markup in (".", ")"):
            i = token.map[0]
            lines[i] = re.sub(r"[0-9]+[.)](?=\s|$)", _blank, lines[i], count=1)
    return "\n".join(lines)


_PARA_CHAR = r"(?:(?!\n[ \t]*\n)[\s\S])"   # any character, but never across a blank line
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_INLINE_CODE = re.compile(rf"(?<!`)(`+)(?!`){_PARA_CHAR}+?(?<!`)\1(?!`)")
_MATH = [
    re.compile(r"\$\$[\s\S]*?\$\$"),
    re.compile(r"\\\[[\s\S]*?\\\]"),
    re.compile(r"\\\([\s\S]*?\\\)"),
    re.compile(r"\\begin\{(\w+\*?)\}[\s\S]*?\\end\{\1\}"),
    re.compile(r"(?<![\\$])\$(?=\S)(?:\\\$|[^$\n]|\n(?![ \t]*\n))+?(?<=\S)(?<!\\)\$(?!\$)"),
]
_MARKUP = [
    re.compile(r"\[[^\]\n]*\]\((?:[^()\s]*/)?references\.md(?:#[^()\s]*)?\)"),  # citations
    re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)"),   # ](target "title")
    re.compile(r"\]\[[^\]\n]*\]"),                                     # ][reference]
    re.compile(r"^[ \t]*\[(?!\^)[^\]\n]+\]:[ \t]+\S.*$", re.M),          # [ref]: target
    re.compile(r"\[\^[^\]\n]+\]:?"),                                   # footnote markers
    re.compile(r"<https?://[^>\n]*>|https?://[^\s)>\]]+"),             # addresses
    re.compile(r"</?[A-Za-z][^<>\n]*>"),                               # HTML tags
    re.compile(r"\{\s*[:.#][^}\n]*\}|\{[^}\n]*=[^}\n]*\}"),           # attribute lists
    re.compile(r"^.*--8<--.*$", re.M),                                 # snippet lines
]


def code_blanked(markdown: str) -> str:
    """The page lifted out of its containers, with fenced and indented code blanked."""
    lifted = lift_containers(markdown)
    return _blank_lines(lifted, _block_ranges(lifted, {"fence", "code_block"}))


def prose_of(markdown: str) -> str:
    """The prose of a page: same lines and columns, everything that is not prose blanked."""
    text = code_blanked(markdown)
    text = _blank_list_numbers(_blank_lines(text, _block_ranges(text, {"heading_open"})))
    for pattern in (_COMMENT, _INLINE_CODE, *_MATH, *_MARKUP):
        text = pattern.sub(_blank, text)
    return text


# ---------------------------------------------------------------------------------------------
# Numeric literals in prose.
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Literal:
    """A number as written in the prose."""

    line: int          # 1-based line of the page
    text: str          # as written: "−0.19", "56.7%", "1,920", "+12.5 points"
    value: float       # signed value of the digits (56.7 for "56.7%")
    decimals: int
    signed: bool       # an explicit sign was written
    percent: bool      # %, pp, points, percentage points

    @property
    def key(self) -> str:
        """The literal as an exemption names it: ASCII minus, no thousands commas, `%` kept
        (`−1,920` -> `-1920`, `56.7%` -> `56.7%`, `12.5 points` -> `12.5`)."""
        return normalise(self.text)

    @property
    def auto_exempt(self) -> bool:
        return self.decimals == 0 and not self.percent and abs(self.value) <= AUTO_EXEMPT_UP_TO


_NUMBER = re.compile(r"""
    (?P<sign>[-+\u2212])?
    (?P<int>[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)
    (?P<frac>\.[0-9]+)?
    (?P<unit>[ \t]?%|[ \t]+pp\b|[ \t]+(?:percentage[ \t]+)?points?\b)?
""", re.X)
_GLUE = set("_@#$")        # characters that make digits part of a name


def normalise(text: str) -> str:
    """A literal's text without thousands commas, spaces or a points unit, with ASCII minus."""
    text = text.replace("\u2212", "-").replace(",", "").removeprefix("+")
    text = re.sub(r"[ \t]*(?:pp|(?:percentage[ \t]+)?points?)$", "", text)
    return re.sub(r"[ \t]+", "", text)


_LABELLED = re.compile(
    r"(?i)\b(?:" + "|".join(sorted(LABEL_WORDS)) + r")\s+"
    r"(?:\[?[0-9.]+\]?\s*(?:,\s*(?:and\s+|or\s+)?|\band\s+|\bor\s+|\bto\s+|[-\u2013]\s*))*"
    r"\[?$")
"""A label word, then numbers joined by commas, `and`, `or`, `to` or a dash, up to here:
`sections 13.3 and 13.4`, `Milestones [0](...), [0.5](...)` (the link targets blanked)."""


def _glued(text: str, start: int, end: int) -> bool:
    """Whether the digits text[start:end] are glued to a name: `run_001`, `M4`, `cl100k`,
    `pass@64`, `v1`, `2x`, `3.11.2`, `dev-018`, `arXiv:1707.06347`, `U+2212`."""
    before = text[start - 1] if start > 0 else " "
    before2 = text[start - 2] if start > 1 else " "
    after = text[end] if end < len(text) else " "
    after2 = text[end + 1] if end + 1 < len(text) else " "
    return (before.isalnum() or before in _GLUE or after.isalnum() or after in _GLUE
            or (before == "." and before2.isdigit())               # 3.11.2: a version
            or (after == "." and after2.isdigit())
            or (before in "-\u2011:+" and before2.isalpha()))  # dev-018, arXiv:1707.06347, U+2212


def _is_name(text: str, start: int, end: int) -> bool:
    """Whether the digits text[start:end] name something rather than count or measure it:
    glued to a name, or after a label word (`Milestone 0.5`, `sections 13.3 and 13.4`)."""
    return _glued(text, start, end) or bool(_LABELLED.search(text[max(0, start - 300):start]))


def literals_in(prose: str, first_line: int = 1) -> list[Literal]:
    """The numeric literals of a piece of prose (already blanked of code and markup), each
    with its line number, counting the first line of `prose` as `first_line`."""
    found = []
    line_starts = [0] + [m.end() for m in re.finditer("\n", prose)]
    for match in _NUMBER.finditer(prose):
        sign, start = match["sign"], match.start()
        if sign:
            before = prose[start - 1] if start > 0 else " "
            if before.isalnum() or before in ")]}.":
                sign, start = None, match.start("int")           # a range or an operator
        if _is_name(prose, start, match.end("frac") if match["frac"] else match.end("int")):
            continue
        digits = match["int"].replace(",", "") + (match["frac"] or "")
        value = float(digits) * (-1 if sign in ("-", "\u2212") else 1)
        line = first_line - 1 + bisect.bisect_right(line_starts, start)
        found.append(Literal(line=line, text=prose[start:match.end()].strip(), value=value,
                             decimals=len(match["frac"] or ".") - 1, signed=bool(sign),
                             percent=bool(match["unit"])))
    return found


def literal_of(text: str) -> Literal:
    """The one literal a short text holds (`literal_of("56.7%")`)."""
    (found,) = literals_in(text)
    return found


def prose_literals(markdown: str) -> list[Literal]:
    """Every numeric literal in the prose of a page, with its line number."""
    return literals_in(prose_of(markdown))


# ---------------------------------------------------------------------------------------------
# Exemption markers: <!-- unmeasured: 1992 400; why -->
# ---------------------------------------------------------------------------------------------

_MARKER = re.compile(r"<!--\s*unmeasured\s*:(?P<body>[\s\S]*?)-->")
_MARKER_ITEM = re.compile(r"[-+\u2212]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?%?")


@dataclasses.dataclass(frozen=True)
class Marker:
    line: int                   # 1-based line of the comment
    keys: tuple[str, ...]       # the literals it exempts, normalised
    block: tuple[int, int]      # first and last line (1-based) of its block


def block_around(lines: list[str], index: int) -> tuple[int, int]:
    """The contiguous non-blank lines around 0-based `index`, as 1-based (first, last)."""
    first = last = index
    while first > 0 and lines[first - 1].strip():
        first -= 1
    while last + 1 < len(lines) and lines[last + 1].strip():
        last += 1
    return first + 1, last + 1


def markers(markdown: str) -> tuple[list[Marker], list[str]]:
    """The exemption markers of a page (outside code) and the errors in how they are written,
    as `(line, message)` strings."""
    text = code_blanked(markdown)
    lines = text.split("\n")
    found, errors = [], []
    for match in _MARKER.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        items = re.split(r",?\s+", match["body"].split(";", 1)[0].strip().rstrip(","))
        items = [item for item in items if item]
        bad = [item for item in items if not _MARKER_ITEM.fullmatch(item)]
        if not items or bad:
            errors.append(f"{line}: the marker {match.group(0)!r} must list numbers before "
                          "an optional '; reason'" + (f" (not a number: {bad})" if bad else ""))
            continue
        found.append(Marker(line, tuple(normalise(item) for item in items),
                            block_around(lines, line - 1)))
    return found, errors


# ---------------------------------------------------------------------------------------------
# Sources: the values a page computes or reads, each with where it came from.
# ---------------------------------------------------------------------------------------------

_TEXT_NUMBER = re.compile(r"(?P<sign>[-+\u2212])?(?P<num>[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?"
                          r"(?:[eE][-+]?[0-9]+)?)(?P<pct>[ \t]?%)?")


def numbers_in_text(text: str) -> Iterator[tuple[float, int]]:
    """`(value, line number)` for every number in a text that is not glued to a name (the
    rule of the prose, so `dev-053` gives nothing), in scientific notation too; a percentage
    also as a fraction, `1,920` also as 1 and 920, a negative number also without its sign."""
    text = text[:MAX_TEXT]
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for match in _TEXT_NUMBER.finditer(text):
        sign = match["sign"] if match["sign"] and (
            match.start() == 0 or not text[match.start() - 1].isalnum()) else None
        if _glued(text, match.start() if sign else match.start("num"), match.end("num")):
            continue
        line = bisect.bisect_right(line_starts, match.start())
        parts = [match["num"].replace(",", "")]
        if "," in match["num"]:
            parts += match["num"].split(",")
        for part in parts:
            value = float(part)
            if not math.isfinite(value):
                continue
            values = [value, -value] if sign in ("-", "\u2212") else [value]
            if match["pct"]:
                values += [float(Decimal(repr(v)) / 100) for v in values]   # 0.567, exactly
            for v in values:
                yield v, line


class Sources:
    """A page's values, each remembered with the first place it was found; a number found as
    a value (or printed, or in a file) is preferred to one found inside a string value."""

    def __init__(self) -> None:
        self._label: dict[float, str] = {}
        self._in_strings: set[float] = set()    # values so far only seen inside strings
        self._sorted: list[float] | None = None
        self.notes: list[str] = []          # blocks that raised, files that could not be read
        # what the page shows a reader, where: (1-based line, text) of each block's printed
        # output (at its fence line) and of each file it includes (at its --8<-- line)
        self.shown: list[tuple[int, str]] = []

    def add(self, value: float, label: str | Callable[[], str], in_string: bool = False) -> None:
        if value != value or value in (math.inf, -math.inf):
            return
        value = float(value) + 0.0           # -0.0 and 0.0 are one value
        if value not in self._label or (value in self._in_strings and not in_string):
            self._label[value] = label() if callable(label) else label
            self._sorted = None
            if in_string:
                self._in_strings.add(value)
            else:
                self._in_strings.discard(value)

    def only_in_strings(self, value: float) -> bool:
        return value in self._in_strings

    def between(self, lo: float, hi: float) -> list[float]:
        values = self.values
        return values[bisect.bisect_left(values, lo):bisect.bisect_right(values, hi)]

    def add_text(self, text: str, label: str) -> None:
        for value, line in numbers_in_text(text):
            self.add(value, f"{label}:{line}")

    def __len__(self) -> int:
        return len(self._label)

    @property
    def values(self) -> list[float]:
        if self._sorted is None:
            self._sorted = sorted(self._label)
        return self._sorted

    def label(self, value: float) -> str:
        return self._label[value]

    def any_in(self, lo: float, hi: float) -> bool:
        values = self.values
        i = bisect.bisect_left(values, lo)
        return i < len(values) and values[i] <= hi

    def near(self, target: float, k: int = 2) -> list[float]:
        values = self.values
        i = bisect.bisect_left(values, target)
        return values[max(0, i - k):i + k]


# ---------------------------------------------------------------------------------------------
# Matching.
# ---------------------------------------------------------------------------------------------

def _targets(literal: Literal) -> list[tuple[float, float]]:
    """`(target, scale)` pairs: the literal matches a value v when v * scale rounds to target."""
    signs = [1.0] if literal.signed else [1.0, -1.0]
    scales = [1.0, 100.0] if literal.percent else [1.0]
    return [(sign * literal.value, scale) for sign in signs for scale in scales]


def windows(literal: Literal) -> list[tuple[float, float]]:
    """The closed intervals of values a literal matches (both ends included: either rounding
    convention is accepted at the half-way point)."""
    exact = literal.decimals == 0 and not literal.percent
    half = 0.0 if exact else 0.5 * 10.0 ** -literal.decimals
    out = []
    for target, scale in _targets(literal):
        slack = 1e-9 * max(1.0, abs(target))
        out.append(((target - half - slack) / scale, (target + half + slack) / scale))
    return out


def matches(literal: Literal, *sources: Sources) -> bool:
    return any(found.any_in(lo, hi) for found in sources for lo, hi in windows(literal))


def _show(value: float) -> str:
    return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.0f}"


def one_keystroke_away(text: str) -> Iterator[str]:
    """The literals one typing slip from `text`: a digit replaced, or two neighbours swapped."""
    for i, char in enumerate(text):
        if not char.isdigit():
            continue
        for digit in "0123456789":
            if digit != char:
                yield text[:i] + digit + text[i + 1:]
        if i + 1 < len(text) and text[i + 1].isdigit() and text[i + 1] != char:
            yield text[:i] + text[i + 1] + char + text[i + 2:]


def _closest(literal: Literal, sources: Iterable[Sources], k: int) -> list[tuple[float, str]]:
    """The k values closest to the literal, in its own scale, each with its source."""
    scored: dict[float, tuple[float, str]] = {}
    for found in sources:
        for target, scale in _targets(literal):
            for value in found.near(target / scale):
                distance = abs(value * scale - target)
                if distance < scored.get(value, (math.inf, ""))[0]:
                    scored[value] = (distance, found.label(value))
    best = sorted(scored, key=lambda value: scored[value][0])[:k]
    return [(value, scored[value][1]) for value in best]


def significant_digits(text: str) -> int:
    return len(re.sub(r"[^0-9]", "", normalise(text)).lstrip("0"))


def nearest(literal: Literal, *sources: Sources, k: int = 2) -> list[str]:
    """What the teacher probably meant, at most k + 1 values with where each comes from: for
    a literal of three significant digits or more, the values it would match with one digit
    mistyped (a slip in a shorter literal matches something by chance), then the k closest."""
    shown: dict[str, str] = {}
    precision = significant_digits(literal.text)
    slips = one_keystroke_away(literal.text) if precision >= 3 else iter(())
    for slip in slips:
        typed = literals_in(slip)
        if (len(typed) == 1 and significant_digits(slip) == precision and len(shown) < k
                and matches(typed[0], *sources)):
            for value, label in _closest(typed[0], sources, 1):
                shown.setdefault(_show(value), f"{label} (one keystroke away)")
    for value, label in _closest(literal, sources, k):
        shown.setdefault(_show(value), label)
    return [f"{value} from {label}" for value, label in list(shown.items())[:k + 1]]


def closest(literal: Literal, *sources: Sources) -> tuple[float, str, bool] | None:
    """The one value a teacher most probably meant, with where it is and whether it is a slip:
    for a literal of three significant digits or more, a value it would match with one digit
    mistyped (a slip in a shorter literal matches something by chance), else the value nearest
    to it. None when the sources hold no value."""
    def distance(value: float) -> float:
        return min(abs(value * scale - target) for target, scale in _targets(literal))

    precision = significant_digits(literal.text)
    slips = []
    for slip in one_keystroke_away(literal.text) if precision >= 3 else iter(()):
        typed = literals_in(slip)
        if (len(typed) == 1 and significant_digits(slip) == precision
                and matches(typed[0], *sources)):
            slips += _closest(typed[0], sources, 1)
    if slips:                                   # of several slips, the smallest change
        value, label = min(slips, key=lambda found: distance(found[0]))
        return value, label, True
    for value, label in _closest(literal, sources, 1):
        return value, label, False
    return None


# ---------------------------------------------------------------------------------------------
# Which runs a number may be read from: those named in its section, or in the introduction.
# ---------------------------------------------------------------------------------------------

_RUN = re.compile(r"(?<![A-Za-z0-9])run_(\d{3})(?![0-9])")
_SECTION_HEADING = re.compile(r"^#{1,2}(?:[ \t]|$)")


@dataclasses.dataclass(frozen=True)
class Section:
    first: int                  # 1-based first line
    last: int
    runs: tuple[str, ...]       # runs named in it outside fenced code


def sections(markdown: str) -> list[Section]:
    """The page cut before each `#` and `##` heading; the first part is the introduction."""
    lines = code_blanked(markdown).split("\n")
    starts = [0] + [i for i, line in enumerate(lines) if i and _SECTION_HEADING.match(line)]
    return [Section(first + 1, end, tuple(sorted({f"run_{n}" for n in
                                                  _RUN.findall("\n".join(lines[first:end]))})))
            for first, end in zip(starts, [*starts[1:], len(lines)], strict=True)]


def runs_in_scope(parts: list[Section], line: int) -> tuple[str, ...]:
    """The runs a number on `line` may be read from: those its section names, and those the
    introduction (the part before the first `##` heading) names."""
    own = next((part.runs for part in parts if part.first <= line <= part.last), ())
    return tuple(sorted({*parts[0].runs, *own})) if parts else ()


# ---------------------------------------------------------------------------------------------
# Shown near it: on a lesson, a measured number is printed where the reader meets it.
# ---------------------------------------------------------------------------------------------

SHOWN_PAGES = ("docs/lessons/", "docs/rules.md")
"""Pages whose measured numbers must also be shown near them, unambiguously (`near_check`)."""

_NEAR_HEADING = re.compile(r"^#{1,3}[ \t]")


def near_spans(markdown: str) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """The introduction (before the first `##` heading) and the parts of the page cut before
    each heading of level 1 to 3, as 1-based `(first, last)` lines."""
    lines = code_blanked(markdown).split("\n")
    starts = [0] + [i for i, line in enumerate(lines) if i and _NEAR_HEADING.match(line)]
    parts = [(a + 1, b) for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    intro = sections(markdown)[0]
    return (intro.first, intro.last), parts


def span_of(markdown_spans: tuple[tuple[int, int], list[tuple[int, int]]],
            line: int, page_lines: int) -> tuple[int, int]:
    """Where a number on `line` must be shown: its part of the page; the whole page for a
    number in the introduction (a goal may quote what a later section prints)."""
    intro, parts = markdown_spans
    if intro[0] <= line <= intro[1]:
        return 1, page_lines
    return next(part for part in parts if part[0] <= line <= part[1])


def one_unit_away(literal: Literal) -> list[Literal]:
    """The literal with its last written digit moved by one either way, the slip a hand edit
    makes: 0.192 -> 0.191 and 0.193, 60 -> 59 and 61, 5% -> 4% and 6%."""
    unit = 10.0 ** -literal.decimals
    return [dataclasses.replace(literal, value=round(literal.value + step * unit,
                                                     literal.decimals)) for step in (-1, 1)]


def near_check(literal: Literal, span: tuple[int, int], near: Sources) -> str | None:
    """Why `literal` is not shown unambiguously in `span` (None when it is). `near` holds the
    numbers the page shows there: the printed output of its blocks, the files it includes."""
    where = f"lines {span[0]}-{span[1]}"
    if not matches(literal, near):
        return (f'"{literal.text}" is not shown near it: no block output or included file in '
                f"{where} holds it; print it there, or quote it where a block prints it")
    for slip in one_unit_away(literal):
        for lo, hi in windows(slip):
            if found := near.between(lo, hi):
                return (f'"{literal.text}" is ambiguous where it is shown ({where}): '
                        f"{_show(found[0])} is shown there too ({near.label(found[0])}), so a "
                        "slip of one in its last digit would still pass; quote more digits")
    return None


# ---------------------------------------------------------------------------------------------
# Checking a page.
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Unmatched:
    literal: Literal
    runs: tuple[str, ...]       # the runs it was compared with
    nearest: list[str]          # for the review report: a few values, with their sources
    closest: str = ""           # for the failure: the closest value in its section, and where


@dataclasses.dataclass
class PageCheck:
    page: str
    checked: int = 0            # literals that had to match a source
    matched: int = 0
    auto_exempt: int = 0        # integers 0..12
    marked: int = 0             # exempted by a marker
    unmatched: list[Unmatched] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)   # `line: message`, markers
    notes: list[str] = dataclasses.field(default_factory=list)    # blocks that raised, ...
    # matched only by numbers inside strings (a prompt, a completion): reported, not failed
    weak: list[tuple[Literal, str]] = dataclasses.field(default_factory=list)
    # on a lesson: matched, but not shown near it, or ambiguous there (`near_check`)
    hidden: list[str] = dataclasses.field(default_factory=list)

    def failures(self) -> list[str]:
        """One line per problem, `page:line: message`."""
        lines = []
        for miss in self.unmatched:
            lines.append(f'{self.page}:{miss.literal.line}: "{miss.literal.text}" matches '
                         f"nothing computed; {miss.closest or 'no value computed on the page'}")
        return lines + [f"{self.page}:{error}" for error in self.errors + self.hidden]


def exemptions(literals: list[Literal], found: list[Marker]) -> tuple[set[tuple[int, str]],
                                                                         list[str]]:
    """`(line, key)` pairs the markers exempt, and an error for each stale exemption."""
    exempt, errors = set(), []
    for marker in found:
        first, last = marker.block
        present = {lit.key for lit in literals if first <= lit.line <= last}
        for key in marker.keys:
            if key not in present:
                errors.append(f'{marker.line}: stale exemption: "{key}" is not a number in the '
                              f"prose of lines {first}-{last}; remove it from the marker")
            exempt |= {(line, key) for line in range(first, last + 1)}
    return exempt, errors


def check(page: str, markdown: str, computed: Sources,
          runs: Mapping[str, Sources] | None = None, shown: bool = False) -> PageCheck:
    """Every prose literal of `markdown` against what the page computes and the runs in its
    scope (`runs` maps a run's name to its values), with the page's markers applied; with
    `shown`, each matched literal must also be shown near it (`near_check`, against
    `computed.shown`)."""
    runs = runs or {}
    spans = near_spans(markdown)
    page_lines = markdown.count("\n") + 1
    near: dict[tuple[int, int], Sources] = {}
    section: dict[tuple[int, int], Sources] = {}   # what each part shows, for a failure
    result = PageCheck(page=page, notes=list(computed.notes))
    literals = prose_literals(markdown)
    found, result.errors = markers(markdown)
    exempt, stale = exemptions(literals, found)
    result.errors += stale
    parts = sections(markdown)
    for literal in literals:
        if literal.auto_exempt:
            result.auto_exempt += 1
        elif (literal.line, literal.key) in exempt:
            result.marked += 1
        else:
            result.checked += 1
            scope = tuple(run for run in runs_in_scope(parts, literal.line) if run in runs)
            candidates = [computed, *(runs[run] for run in scope)]
            if matches(literal, *candidates):
                result.matched += 1
                found = [(value, source) for source in candidates for lo, hi in windows(literal)
                         for value in source.between(lo, hi)]
                if all(source.only_in_strings(value) for value, source in found):
                    result.weak.append((literal, found[0][1].label(found[0][0])))
                if shown:
                    span = span_of(spans, literal.line, page_lines)
                    if span not in near:
                        near[span] = Sources()
                        for line, text in computed.shown:
                            if span[0] <= line <= span[1]:
                                near[span].add_text(text, f"shown at line {line}, its line")
                    if why := near_check(literal, span, near[span]):
                        result.hidden.append(f"{literal.line}: {why}")
            else:
                span = span_of(spans, literal.line, page_lines)
                if span not in section:
                    section[span] = Sources()
                    for line, text in computed.shown:
                        if span[0] <= line <= span[1]:
                            for value, _ in numbers_in_text(text):
                                section[span].add(value, f"shown at line {line}")
                result.unmatched.append(Unmatched(
                    literal, scope, nearest(literal, *candidates),
                    _closest_words(literal, section[span], [runs[run] for run in scope],
                                   computed)))
    return result


def _closest_words(literal: Literal, shown: Sources, runs: list[Sources],
                   computed: Sources) -> str:
    """`closest in its section: 0.8498 (shown at line 401; one digit off)`: from what the
    section shows, else from the runs in its scope, else from anything the page computes."""
    for where, pool in (("in its section", [shown]), ("in its section", runs),
                        ("on the page", [computed])):
        if (found := closest(literal, *pool)) is not None:
            value, label, slip = found
            return (f"closest {where}: {_show(value)} ({label}"
                    f"{'; one digit off' if slip else ''})")
    return ""


# ---------------------------------------------------------------------------------------------
# Collecting a page's sources.
# ---------------------------------------------------------------------------------------------

def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def asserted_literals(source: str) -> Iterator[tuple[float, int]]:
    """`(value, line)` for each number literal an `assert` compares with `==`."""
    def literal_numbers(node: ast.AST) -> Iterator[float]:
        if isinstance(node, ast.Constant) and _is_number(node.value):
            yield float(node.value)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            for value in literal_numbers(node.operand):
                yield -value if isinstance(node.op, ast.USub) else value
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            for element in node.elts:
                yield from literal_numbers(element)
        elif isinstance(node, ast.Dict):
            for element in [*node.keys, *node.values]:
                if element is not None:
                    yield from literal_numbers(element)

    for statement in ast.walk(ast.parse(source)):
        if not isinstance(statement, ast.Assert):
            continue
        for compare in ast.walk(statement.test):
            if isinstance(compare, ast.Compare) and any(isinstance(op, ast.Eq)
                                                        for op in compare.ops):
                for operand in [compare.left, *compare.comparators]:
                    for value in literal_numbers(operand):
                        yield value, compare.lineno


def written_literals(source: str) -> Iterator[tuple[float, int]]:
    """`(value, line)` for every number literal written in the code: a setting the code uses,
    such as the 100_000 of `"2" * 100_000` (a negative literal also gives its minus)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and _is_number(node.value):
            yield float(node.value), node.lineno
        elif (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
              and isinstance(node.operand, ast.Constant) and _is_number(node.operand.value)):
            yield -float(node.operand.value), node.lineno


_RECORD: dict[str, list[dict[str, Any]]] = {}
"""What a site build recorded of every block it ran, per page (`use_record`)."""


def use_record(path: Path) -> None:
    """Read the blocks' results from a build's record (course_site.outputs.RECORD_ENV) instead
    of running them: the test command builds the site once and runs each block there."""
    _RECORD.update(json.loads(path.read_text(encoding="utf-8")))


def block_results(markdown: str, path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """(fence line, code, result of course_site/run_blocks.py) for each runnable block of the page,
    found as the site finds them: a chain whose blocks the record holds, in order, is read from
    it; any other (no record, a teacher block the student build left out) is run now."""
    where = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
    found = runnable_blocks(markdown.split("\n"), where)
    recorded = _RECORD.get(where, [])
    at = 0                                  # the next recorded block not yet matched
    results: dict[int, dict[str, Any]] = {}
    missing: list[int] = []
    for chain in chains([block["continuation"] for _, block in found]):
        kept = recorded[at:at + len(chain)]
        if [r["code"] for r in kept] == [found[i][1]["code"] for i in chain]:
            results.update(zip(chain, kept, strict=True))
            at += len(chain)
        else:
            missing += chain
    if missing:
        results.update(zip(missing, execute([found[i][1] for i in missing]), strict=True))
    return [(fence.open + 1, block["code"], results[i]) for i, (fence, block) in enumerate(found)]


def add_block_values(markdown: str, path: Path, sources: Sources) -> None:
    """Add what the page's blocks print, leave in their namespace and assert."""
    for line, code, result in block_results(markdown, path):
        label = f"the block at line {line}"
        if result["error"]:
            raised = result["error"].rstrip().split("\n")[-1]
            sources.notes.append(f"{label} raised {raised}"[:300])
        sources.add_text(result["stdout"], f"the output of {label}, output line")
        sources.shown.append((line, result["stdout"]))
        for value, name in result["numbers"]:
            sources.add(value, f"{label}: {name}")
        for text, name in result["texts"]:
            for value, _ in numbers_in_text(text):
                sources.add(value, f"{label}: {name} (in the text)", True)
        if result["completed"]:
            for value, at in asserted_literals(code):
                sources.add(value, f"an assert at line {at}")
            for value, at in written_literals(code):
                sources.add(value, f"a number written in the code at line {at}")


def cited_runs(markdown: str) -> list[str]:
    """The runs the page names outside fenced code (in any section)."""
    return sorted({run for part in sections(markdown) for run in part.runs})


def _json_leaves(data: Any, where: str, sources: Sources) -> None:
    for name, leaf in leaves(data, where, [MAX_VALUES]):
        if isinstance(leaf, str):
            for value, _ in numbers_in_text(leaf):
                sources.add(value, f"{name} (in the text)", True)
        else:
            sources.add(leaf, name)


def add_file_values(path: Path, sources: Sources, first: int | None = None,
                    last: int | None = None) -> None:
    """The numbers of one file: JSON leaves for .json/.jsonl, numbers in the text otherwise."""
    name = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
    raw = path.read_bytes()[:MAX_TEXT]
    if b"\0" in raw[:4096]:
        return                                             # a picture or other binary
    text = raw.decode("utf-8", errors="replace")
    text = included(text, first, last)
    if path.suffix == ".json":
        try:
            _json_leaves(json.loads(text), f"{name} $", sources)
            return
        except json.JSONDecodeError:
            pass
    elif path.suffix == ".jsonl":
        for number, line in enumerate(text.split("\n"), start=1):
            with contextlib.suppress(json.JSONDecodeError):
                if line.strip():
                    _json_leaves(json.loads(line), f"{name}:{number} $", sources)
        return
    sources.add_text(text, name)


def collect_sources(markdown: str, path: Path) -> Sources:
    """What a page computes: its blocks and its snippets (see the module docstring)."""
    sources = Sources()
    add_block_values(markdown, path, sources)
    for snippet, first, last, line in snippets(markdown):
        file = REPO / snippet
        if file.is_file():
            add_file_values(file, sources, first, last)
            text = file.read_text(encoding="utf-8", errors="replace")[:MAX_TEXT]
            sources.shown.append((line, included(text, first, last)))
        else:
            sources.notes.append(f"the snippet {snippet} does not exist")
    return sources


@functools.cache
def run_sources(run: str) -> Sources:
    """Every number in every file of runs/<run>/, read once per process."""
    sources = Sources()
    folder = RUNS / run
    if not folder.is_dir():
        sources.notes.append(f"runs/{run} does not exist")
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            add_file_values(file, sources)
    return sources


@functools.cache
def page_sources(page: str) -> Sources:
    """What a page of the repository (`docs/...md`) computes, once per process."""
    path = REPO / page
    return collect_sources(path.read_text(encoding="utf-8"), path)


def check_page(page: str, markdown: str | None = None) -> PageCheck:
    """Check a page of the repository; `markdown` replaces its text (the values stay those
    the page on disk computes, so an edit to the prose alone is what is tested)."""
    text = (REPO / page).read_text(encoding="utf-8") if markdown is None else markdown
    runs = {run: run_sources(run) for run in cited_runs(text)}
    result = check(page, text, page_sources(page), runs, shown=page.startswith(SHOWN_PAGES))
    result.notes += [note for found in runs.values() for note in found.notes]
    return result


NOT_CHECKED = {
    "docs/labs/": "the lab notebooks are executed by the site build, their index only links",
    "docs/reference/api.md": "generated from the docstrings of src/",
    "docs/references.md": "the bibliography: years, volumes, pages and arXiv numbers",
}
"""Pages (or folders) whose prose is not checked, each with the reason."""


def pages() -> list[str]:
    """Every page whose prose is checked: docs/**/*.md but NOT_CHECKED."""
    found = (path.relative_to(REPO).as_posix() for path in DOCS.rglob("*.md"))
    return sorted(page for page in found if not any(page.startswith(skip)
                                                    for skip in NOT_CHECKED))


# ---------------------------------------------------------------------------------------------
# A report of every page, for review: `python tests/prose_numbers.py --report FILE`.
# ---------------------------------------------------------------------------------------------

def report(selected: list[str]) -> str:
    out, total = [], [0, 0, 0, 0, 0]
    started = time.perf_counter()
    for page in selected:
        t0 = time.perf_counter()
        result = check_page(page)
        seconds = time.perf_counter() - t0
        counts = [result.checked, result.matched, len(result.unmatched), result.auto_exempt,
                  result.marked]
        total = [a + b for a, b in zip(total, counts, strict=True)]
        out.append(f"== {page}: {counts[0]} checked, {counts[1]} matched, {counts[2]} unmatched,"
                   f" {counts[3]} small integers, {counts[4]} marked; "
                   f"{len(page_sources(page))} values computed, runs "
                   f"{', '.join(cited_runs((REPO / page).read_text(encoding='utf-8'))) or '-'};"
                   f" {seconds:.1f} s")
        out += [f"   note: {note}" for note in result.notes]
        lines = (REPO / page).read_text(encoding="utf-8").split("\n")
        for miss in result.unmatched:
            context = " ".join(lines[miss.literal.line - 1].split())
            out.append(f"{page}:{miss.literal.line}: {miss.literal.text}  |  {context}  |  "
                       f"runs in scope: {', '.join(miss.runs) or '-'}  |  nearest: "
                       f"{'; '.join(miss.nearest)}")
        out += [f"{page}:{error}" for error in result.errors]
        out += [f"   weak match {page}:{literal.line}: {literal.text} only inside a string: "
                f"{label}" for literal, label in result.weak]
        out.append("")
    out.append(f"TOTAL: {total[0]} checked, {total[1]} matched, {total[2]} unmatched, "
               f"{total[3]} small integers, {total[4]} marked; "
               f"{time.perf_counter() - started:.1f} s")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# After a change that moves numbers (a scorer change, runs regenerated): every stale number of
# every page, in one pass. `python tests/prose_numbers.py --stale [PAGE ...]`.
# ---------------------------------------------------------------------------------------------

def stale_lines(page: str, markdown: str | None = None) -> list[str]:
    """One line per number of `page` (its text: `markdown`, or the file's) that matches
    nothing the page now computes, with the value closest to it in its section and where that
    value comes from; then the page's other problems (a stale exemption, a hidden number)."""
    result = check_page(page, markdown)
    lines = [f'{page}:{miss.literal.line}: "{miss.literal.text}" is stale; '
             f"{miss.closest or 'nothing is computed near it'}" for miss in result.unmatched]
    return lines + [f"{page}:{error}" for error in result.errors + result.hidden]


def stale(selected: list[str]) -> int:
    """Print `stale_lines` for every page of `selected`, in their order, each page checked in
    a process of its own, as many at once as the machine has cores (its blocks run once);
    exit status 1 when any number is stale, 0 when every one still matches."""
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        found = list(pool.map(stale_lines, selected))
    for lines in found:
        for line in lines:
            print(line, flush=True)
    count = sum(map(len, found))
    print(f"{count} stale number(s) on {sum(1 for lines in found if lines)} of {len(selected)} "
          f"pages ({time.perf_counter() - started:.0f} s)")
    return 1 if count else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--stale"]:
        sys.exit(stale(args[1:] or pages()))
    target = None
    if "--report" in args:
        i = args.index("--report")
        target = args[i + 1]
        del args[i:i + 2]
    text = report(args or pages())
    if target:
        Path(target).write_text(text + "\n", encoding="utf-8")
    print(text)
