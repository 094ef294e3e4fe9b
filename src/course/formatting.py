"""Numbers and tables as the course writes them, in runs, logs and reports.

One rule per kind of output, so two runs never differ by float noise and two tables never
differ in layout:

- `rounded`: a float stored in a summary or CSV, rounded to a fixed number of decimals;
- `fixed` and `vector`: a number (or a row of them) printed in a log, 3 decimals by default;
- `percent`: a rate printed as a percentage with one decimal;
- `markdown_table`, `code_span`, `plain_cell`: Markdown tables in run READMEs whose cells
  survive any completion text.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    """An id or class name for a Markdown table cell: a literal `|` would split the cell."""
    return text.replace("|", "\\|")


def markdown_table(header: list[str], lines: list[list[str]]) -> list[str]:
    """A Markdown table as lines: the header, the separator, one line per row of cells."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(cells) + " |" for cells in lines)]
