"""Numbers, tables and explanations as the course writes them, in runs, logs and reports.

One rule per kind of output, so two runs never differ by float noise and two tables never
differ in layout:

- `rounded`: a float stored in a summary or CSV, rounded to a fixed number of decimals;
- `fixed` and `vector`: a number (or a row of them) printed in a log, 3 decimals by default;
- `percent`: a rate printed as a percentage with one decimal;
- `markdown_table`, `code_span`, `plain_cell`: Markdown tables in run READMEs whose cells
  survive any completion text;
- `prose_text`, `inline_code`, `fence_text`: any other untrusted string (a problem id, a run
  note, a path) in a README, as inert text: in prose, in a code span, or on a line of a code
  fence. Each is built on `one_line`, and each returns ordinary text unchanged;
- `short_literal`, `short_number`, `fill`, `can_encode`: a terminal explanation a student
  reads (`course score`): any string as a short ASCII literal, a long integer cut short, labelled
  items wrapped to the terminal's width, and whether a stream can show a symbol at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import SupportsFloat


def rounded(x: SupportsFloat, digits: int = 4) -> float:
    """x rounded to `digits` decimals for an artifact; -0.0 becomes 0.0 (`+ 0.0`), so the
    bytes of a summary never show a sign that means nothing."""
    return round(float(x), digits) + 0.0


def fixed(x: SupportsFloat, signed: bool = False, digits: int = 3) -> str:
    """x with `digits` decimals for a log line, `+`/`-` always shown when `signed`."""
    value = rounded(x, digits)
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def vector(values: Iterable[SupportsFloat], signed: bool = False) -> str:
    """A row of numbers as `[0.250 0.250 ...]`, each formatted by `fixed`."""
    return "[" + " ".join(fixed(v, signed) for v in values) + "]"


def percent(x: float) -> str:
    """A rate in [0, 1] as a percentage with one decimal: 0.5667 -> `56.7%`."""
    return f"{100 * x:.1f}%"


def code_span(completion: str) -> str:
    """A completion as a Markdown code span that survives a table cell: its Python repr, with
    the two characters Markdown would act on written as escapes (`|` as `\\x7c`, a backtick as
    `\\x60`), so the span still reads as a valid Python literal of the same string."""
    return "`" + repr(completion).replace("|", "\\x7c").replace("`", "\\x60") + "`"


def plain_cell(text: str) -> str:
    """An id or class name for a Markdown table cell: `prose_text`, which also escapes the
    `|` that would split the cell."""
    return prose_text(text)


def markdown_table(header: list[str], lines: list[list[str]]) -> list[str]:
    """A Markdown table as lines: the header, the separator, one line per row of cells."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(cells) + " |" for cells in lines)]


# -- untrusted strings in Markdown -------------------------------------------------------------

def one_line(text: str) -> str:
    """`text` as one line of visible characters, in the notation of a Python string literal:
    a backslash is doubled and every character that is not printable (a line break of any
    kind, a tab, a control or format character, NBSP, ...) is written as its escape (`\\n`,
    `\\u2028`). Printable text without a backslash is returned as it is."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(ch if ch.isprintable() and ch != "\\" else repr(ch)[1:-1] for ch in text)


_SNIPPET_MARK = re.compile(r"(?<=8)<(?=-)")


def _code_text(text: str) -> str:
    """`one_line(text)` with the `<` of a `--8<--` marker written `\\x3c`: the site's Markdown
    (pymdownx.snippets) acts on such a line before anything else, even inside code."""
    return _SNIPPET_MARK.sub(r"\\x3c", one_line(text))

_PROSE_ESCAPES = str.maketrans({"\\": "\\\\", "`": "\\`", "[": "\\[", "{": "\\{", "|": "\\|",
                                "$": "\\$", "#": "\\#", "<": "&lt;", "&": "&amp;"})


def prose_text(text: str) -> str:
    """`text` as inert Markdown prose, one line, shown as `one_line(text)`: no raw HTML
    (`<`, `&`), no link or image (`[`), no attribute list (`{`), no math (`$`), no code span,
    no table cell break (`|`). If the value begins a line, it cannot begin a block either
    (heading, list, quote, admonition, ...): a leading punctuation character becomes an HTML
    character reference, and `1.` becomes `1\\.`. Emphasis marks (`*`, `_`) are left alone:
    they can only style the text, and ids such as `multiple_answers` keep their bytes."""
    line = one_line(text).translate(_PROSE_ESCAPES)
    if line and not line[0].isalnum() and line[0] not in "\\&":
        line = f"&#{ord(line[0])};{line[1:]}"
    return re.sub(r"^(\d+)([.)])", r"\1\\\2", line)


def inline_code(text: str) -> str:
    """`text` as one Markdown code span, shown as `one_line(text)` (`--8<--` as `--8\\x3c--`):
    the delimiter is one backtick longer than any run of backticks inside, so nothing can close
    the span early."""
    shown = _code_text(text)
    ticks = "`" * (1 + max(map(len, re.findall("`+", shown)), default=0))
    pad = " " if shown[:1] == "`" or shown[-1:] == "`" or not shown.strip() else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def fence_text(text: str) -> str:
    """`text` for a line inside a Markdown code fence, shown as `one_line(text)`: it cannot end
    the line, close the fence (a leading run of three backticks or tildes starts with its
    escape, `\\x60` or `\\x7e`), or form a `--8<--` snippet marker (`<` there is `\\x3c`)."""
    line = _code_text(text)
    body = line.lstrip(" ")
    if body[:3] in ("```", "~~~"):
        line = f"{line[:len(line) - len(body)]}\\x{ord(body[0]):02x}{body[1:]}"
    return line


# -- explanations in a terminal ------------------------------------------------------------------

def short_literal(text: str, limit: int = 40) -> str:
    """`text` as an ASCII Python literal, `ascii(text)`, so that nothing in it is invisible or
    a lookalike (a line break reads `\\n`, a non-breaking space `\\xa0`, a fullwidth three
    `\\uff13`); longer than `limit` characters, only its first `limit // 2` are shown, then
    `... (N chars)`."""
    if len(text) <= limit:
        return ascii(text)
    return f"{text[:limit // 2]!a}... ({len(text)} chars)"


def short_number(value: int, limit: int = 40) -> str:
    """An integer in decimal; with more than `limit` digits, its sign and first `limit // 2`
    digits, then `... (N digits)`."""
    text = str(value)
    digits = text.lstrip("-")
    if len(digits) <= limit:
        return text
    return f"{text[:len(text) - len(digits)]}{digits[:limit // 2]}... ({len(digits)} digits)"


def fill(label: str, items: Sequence[str], width: int = 79, gap: str = "  ") -> list[str]:
    """`label` then `items` left to right, `gap` apart, as many to a line as fit in `width`;
    the next lines are indented to the first item. An item is never split (one longer than the
    line gets a line of its own)."""
    lines: list[str] = []
    line, empty = label, True
    for item in items:
        if not empty and len(line) + len(gap) + len(item) > width:
            lines.append(line)
            line, empty = " " * len(label), True
        line += item if empty else gap + item
        empty = False
    lines.append(line)
    return lines


def can_encode(text: str, encoding: str | None) -> bool:
    """Whether a stream with this `.encoding` can write `text` (None, as for a stream that does
    not say, counts as UTF-8); an encoding Python does not know counts as no."""
    try:
        text.encode(encoding or "utf-8")
    except (LookupError, UnicodeEncodeError):
        return False
    return True
