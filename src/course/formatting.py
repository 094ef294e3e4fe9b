"""Numbers, tables and explanations as the course writes them, in runs, logs and reports.

One rule per kind of output, so two runs never differ by float noise and two tables never
differ in layout:

- `rounded`: a float stored in a summary or CSV, rounded to a fixed number of decimals;
- `fixed` and `vector`: a number (or a row of them) printed in a log, 3 decimals by default;
- `percent`: a rate printed as a percentage with one decimal;
- `markdown_table`, `code_span`, `plain_cell`: Markdown tables in run READMEs whose cells
  survive any completion text;
- `one_line`, `terminal_text`: the escaping rule for untrusted text on a terminal (below);
- `prose_text`, `inline_code`, `fence_text`: any other untrusted string (a problem id, a run
  note, a path) in a README, as inert text: in prose, in a code span, or on a line of a code
  fence. Each is built on `one_line`, and each returns ordinary text unchanged;
- `short_literal`, `short_number`, `fill`, `can_encode`: a terminal explanation a student
  reads (`course score`): any string as a short ASCII literal, a long integer cut short, labelled
  items wrapped to the terminal's width, and whether a stream can show a symbol at all;
- `COLUMNS`, `wrap`, `paragraph`, `literal_within`, `cut`, `numbered_legend`: every story, log and
  table a command prints fits `COLUMNS`: a sentence wraps between words with a hanging indent,
  a cell too long for its column is cut with a visible mark and its length, and a table whose
  headings are numbers says once what each number stands for.

The escaping rule. Text the course did not write (an id, a note, a completion, a prompt, a
line of a student's file or of their exception, a path) reaches a terminal, a log or a README
only with every character that is not printable (`str.isprintable()` is False: the C0 and C1
controls with ESC, CR, DEL and U+0085; the line and paragraph separators U+2028/U+2029; every
format character, such as the bidirectional controls U+202A-U+202E and U+2066-U+2069, the marks
U+200E/U+200F, the zero-width characters U+200B-U+200D and U+FEFF; spaces other than ` `;
surrogates, private-use and unassigned code points) written as its Python escape (`\\x1b`,
`\\r`, `\\u202e`), visibly, in ASCII. A printable character, whatever its script, is left as
it is. Three forms apply it:

- `one_line(value)`: a value on its own, reversibly: a backslash is doubled too, so the text
  reads back exactly as the body of a Python string literal;
- `repr(value)` (and `ascii`, which also escapes every non-ASCII character, for lookalikes):
  a string shown as a quoted literal, such as a completion; Python escapes exactly the same
  characters;
- `terminal_text(text)`: a message or report the course composed, whose values may not have
  gone through the above (an error line naming a path, a student's exception): line breaks
  `\\n` are kept, backslashes too (the values in it may already be literals); every other
  character that is not printable is escaped. A guard, not a notation to read back.

(`course tokens` draws a token piece's whitespace as symbols, `·`, `⏎`, `␍`, `⇥`, and any other
character that is not printable as `⟨U+XXXX⟩`, for its table: another notation, the same set of
characters, none printed raw. `tests/test_terminal_escapes.py` holds every form to the rule.)
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

def _escaped(text: str, also: str = "") -> str:
    """`text` with every character that is not printable, and every character of `also`,
    written as its Python escape (`repr` of the character, without the quotes)."""
    if text.isprintable() and not any(ch in text for ch in also):
        return text
    return "".join(ch if ch.isprintable() and ch not in also else repr(ch)[1:-1]
                   for ch in text)


def one_line(text: str) -> str:
    """`text` as one line of visible characters, in the notation of a Python string literal:
    a backslash is doubled and every character that is not printable (a line break of any
    kind, a tab, a control or format character, NBSP, ...) is written as its escape (`\\n`,
    `\\u2028`). Printable text without a backslash is returned as it is. The escaping rule
    for a value (module docstring): the escapes are those of a Python literal, so
    `ast.literal_eval('"' + shown.replace('"', '\\"') + '"')` gives `text` back."""
    return _escaped(text, "\\")


def terminal_text(text: str) -> str:
    """A text the course composed for a terminal (a report, an error line), safe to print:
    every character that is not printable is written as its Python escape, except the line
    break `\\n`; backslashes and printable text are left as they are, so a value already
    shown as a literal in it reads the same. Text without such a character is returned as it
    is. The escaping rule's guard for text whose values it cannot reach one by one."""
    return "\n".join(_escaped(line) for line in text.split("\n"))


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


COLUMNS = 80
"""The widest line a command prints (a story, a log, a table): a terminal's width, and what a
lesson page's output column holds. Run logs are written with the same lines."""


def _pack(first: str, hanging: str, pieces: Iterable[tuple[str, str]], width: int) -> list[str]:
    """Greedy line filling: each (gap, word) goes on the current line, `gap` before it, while
    the line stays within `width`; otherwise a new line starts with `hanging` and the word
    (its gap dropped). The first line starts with `first`."""
    lines: list[str] = []
    line, empty = first, True
    for gap, word in pieces:
        if not empty and len(line) + len(gap) + len(word) > width:
            lines.append(line)
            line, empty = hanging, True
        line += word if empty else gap + word
        empty = False
    lines.append(line)
    return lines


def fill(label: str, items: Sequence[str], width: int = 79, gap: str = "  ") -> list[str]:
    """`label` then `items` left to right, `gap` apart, as many to a line as fit in `width`;
    the next lines are indented to the first item. An item is never split (one longer than the
    line gets a line of its own)."""
    return _pack(label, " " * len(label), ((gap, item) for item in items), width)


_WORD = re.compile(r"[^\s\[]*\[[^\]\n]*\][^\s\[]*|\S+")
"""A word of `wrap`: a run of non-space characters, or a bracketed group such as the vector
`[0.250 0.250 0.250 0.250]` (with what touches it) as one word."""


def wrap(text: str, width: int = COLUMNS, indent: str = "", hanging: str | None = None
         ) -> list[str]:
    """`text` as lines of at most `width` characters, broken only between words: the first
    line starts with `indent`, the next ones with `hanging` (default: as many spaces as
    `indent`). The spaces between two words on the same line are kept as they are, so a text
    that fits is returned unchanged (after `indent`). A bracketed group is one word; a word
    longer than a whole line is the one thing split, at the line's end, never dropped."""
    hanging = " " * len(indent) if hanging is None else hanging
    room = max(1, width - max(len(indent), len(hanging)))
    pieces: list[tuple[str, str]] = []
    end = 0
    for match in _WORD.finditer(text):
        gap, word = text[end:match.start()], match.group()
        end = match.end()
        chunks = [word[i:i + room] for i in range(0, len(word), room)]
        pieces += [(gap, chunks[0]), *(("", chunk) for chunk in chunks[1:])]
    return _pack(indent, hanging, pieces, width)


def paragraph(text: str, indent: str = "", hanging: str = "  ", width: int = COLUMNS) -> str:
    """`wrap`'s lines joined: a sentence or two for a story or a legend, its later lines
    indented by `hanging` (two spaces) so the reader sees where the next one starts."""
    return "\n".join(wrap(text, width, indent, hanging))


def literal_within(value: object, width: int) -> str:
    """`ascii(value)` (for a string, an ASCII literal whose escapes show what is invisible or a
    lookalike) if it fits in `width` characters; otherwise as many characters of the value as
    fit, then `... (N chars)`: a table cell cut short says so, and says by how much."""
    shown = ascii(value)
    if len(shown) <= width:
        return shown
    size = len(value) if isinstance(value, (str, bytes)) else len(shown)
    tail = f"... ({size} chars)"
    if not isinstance(value, str):
        return shown[:max(0, width - len(tail))] + tail
    low, high = 0, len(value)            # ascii() of a longer start is never shorter
    while low < high:
        middle = (low + high + 1) // 2
        if len(ascii(value[:middle])) + len(tail) <= width:
            low = middle
        else:
            high = middle - 1
    return ascii(value[:low]) + tail


def cut(text: str, width: int) -> str:
    """`one_line(text)` (a name or an id for a table cell) if it fits in `width` characters,
    else its start and `...`: cut where a reader sees it was cut."""
    shown = one_line(text)
    return shown if len(shown) <= width else shown[:max(0, width - 3)] + "..."


def numbered_legend(names: Sequence[str], prefix: str = "", label: str = "columns: ",
                    width: int = COLUMNS) -> tuple[list[str], list[str]]:
    """Short headings for a wide table's columns and the legend that names them, once:
    `(["1", "2", ...], ["columns: 1 = strict  2 = answer_anywhere ...", ...])`, the keys
    numbered from 1 after `prefix` (`R1`, `R2`, ... with `prefix="R"`), the legend wrapped as
    `fill` wraps it."""
    keys = [f"{prefix}{number}" for number in range(1, len(names) + 1)]
    return keys, fill(label, [f"{key} = {name}" for key, name in zip(keys, names, strict=True)],
                      width)


def can_encode(text: str, encoding: str | None) -> bool:
    """Whether a stream with this `.encoding` can write `text` (None, as for a stream that does
    not say, counts as UTF-8); an encoding Python does not know counts as no."""
    try:
        text.encode(encoding or "utf-8")
    except (LookupError, UnicodeEncodeError):
        return False
    return True
