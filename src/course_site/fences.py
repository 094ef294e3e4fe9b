"""Code-fence options that both the tests and the rendered site understand.

Every Python block in docs/ is a test (pytest-markdown-docs, run with
`--markdown-docs-syntax=superfences`). A block opts out or chains with the brace form:

    ```{.python notest}          shown, never run
    ```{.python continuation}    run after the previous block of the page, in its namespace

Material renders the brace form well but silently drops a bare word such as `notest`, so the
built HTML could not tell the copy-paste test (tests/site/test_copy_paste.py) which blocks to
skip. This module turns those words into classes before rendering: `{.python .notest}`. The
pytest side accepts both spellings (tests/conftest.py).

The other spelling pytest-markdown-docs knows, a bare word after the language (```python
notest), breaks Material's highlighting, so it is refused with a warning (a failure under
--strict) that says what to write instead.

`fenced_blocks` is the one reader of fences of the site: course_site/outputs.py finds the
blocks it runs with it too.

Why a module: pytest-markdown-docs and Material read fence options differently; nothing maps
one onto the other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from mkdocs.plugins import get_plugin_logger

log = get_plugin_logger(__name__)

OPTION_WORDS = ("notest", "continuation")
PYTHON = ("python", "py", "python3")
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_BRACE_INFO = re.compile(r"^\s*\{(?P<inner>[^}]*)\}\s*$")
_BARE_OPTION = re.compile(r"^\s*(?:python|py|python3)\s+\S")


@dataclass(frozen=True)
class Fence:
    """One fenced block of a page: where it opens and closes (0-based line indexes), how far
    it is indented (inside an admonition or a tab), its fence characters and its info string."""

    open: int
    close: int
    indent: str
    fence: str
    info: str

    def words(self) -> list[str]:
        """The info string as words, brace or not: `{.python .notest}` -> python, notest."""
        brace = _BRACE_INFO.match(self.info)
        inner = brace["inner"] if brace else self.info
        return [word.lstrip(".") for word in inner.split()]

    def is_python(self) -> bool:
        return (self.words() or [""])[0] in PYTHON

    def code(self, lines: list[str]) -> str:
        """The block's text, with the indentation of its container taken off."""
        body = lines[self.open + 1:self.close]
        return "\n".join(line[len(self.indent):] if line.startswith(self.indent) else
                         line.lstrip(" \t") for line in body)


def fenced_blocks(lines: list[str]) -> Iterator[Fence]:
    """Every fenced block of a page, in order, at any indentation. A fence left open at the end
    of the page runs to the end (as Markdown reads it). Inline code spans that start a line
    with three backticks (```` ```x``` ````) are not fences."""
    opened: re.Match | None = None
    start = 0
    for number, line in enumerate(lines):
        match = _FENCE_OPEN.match(line)
        if opened is not None:
            if match and match["fence"][0] == opened["fence"][0] \
                    and len(match["fence"]) >= len(opened["fence"]) and not match["info"].strip():
                yield Fence(start, number, opened["indent"], opened["fence"], opened["info"])
                opened = None
            continue
        if match and not (match["fence"][0] == "`" and "`" in match["info"]):
            opened, start = match, number
    if opened is not None:
        yield Fence(start, len(lines), opened["indent"], opened["fence"], opened["info"])


def rewrite_fences(markdown: str, where: str = "") -> tuple[str, list[str]]:
    """Return `markdown` with `{.python notest}` rewritten to `{.python .notest}` (same for
    `continuation`), and the problems found (a bare option after the language)."""
    lines = markdown.split("\n")
    problems: list[str] = []
    for fence in fenced_blocks(lines):
        if brace := _BRACE_INFO.match(fence.info):
            words = [f".{w}" if w in OPTION_WORDS else w for w in brace["inner"].split()]
            lines[fence.open] = f"{fence.indent}{fence.fence}{{{' '.join(words)}}}"
        elif _BARE_OPTION.match(fence.info):
            problems.append(f"{where}:{fence.open + 1}: write ```{{.python "
                            f"{fence.info.split(None, 1)[1]}}} instead of ```"
                            f"{fence.info.strip()} (Material cannot render the bare-word form)")
    return "\n".join(lines), problems


def warned(markdown: str, problems: list[str]) -> str:
    """`markdown`, once each problem found in it is logged (a warning fails the strict build)."""
    for problem in problems:
        log.warning(problem)
    return markdown


# -- snippets: `--8<--` includes ----------------------------------------------------------------

SNIPPET = re.compile(r"--8<--\s+\"(?P<path>[^\"]+?)(?::(?P<start>\d+)(?::(?P<end>\d+))?)?\"")
"""A pymdownx.snippets include as the pages write it: `--8<-- "file"`, `"file:first"` or
`"file:first:last"` (1-based lines, a path from the repository root)."""


def snippets(markdown: str) -> list[tuple[str, int | None, int | None, int]]:
    """`(path, first line, last line, line of the page)` of every `--8<--` include."""
    return [(m["path"], int(m["start"]) if m["start"] else None,
             int(m["end"]) if m["end"] else None, markdown.count("\n", 0, m.start()) + 1)
            for m in SNIPPET.finditer(markdown)]


def included(text: str, first: int | None, last: int | None) -> str:
    """The part of a file's `text` that an include of lines `first` to `last` brings in."""
    return text if first is None else "\n".join(text.split("\n")[first - 1:last])

