"""Code-fence options that both the tests and the rendered site understand.

Every Python block in docs/ is a test (pytest-markdown-docs, run with
`--markdown-docs-syntax=superfences`). A block opts out or chains with the brace form:

    ```{.python notest}          shown, never run
    ```{.python continuation}    run after the previous block of the page, in its namespace

Material renders the brace form well but silently drops a bare word such as `notest`, so the
built HTML could not tell the copy-paste test (tests/site/test_copy_paste.py) which blocks to
skip. This hook turns those words into classes before rendering: `{.python .notest}`. The
pytest side accepts both spellings (tests/conftest.py).

The other spelling pytest-markdown-docs knows, a bare word after the language (```python
notest), breaks Material's highlighting, so it is refused with a warning (a failure under
--strict) that says what to write instead.
"""

from __future__ import annotations

import re

from mkdocs.plugins import get_plugin_logger

log = get_plugin_logger(__name__)

OPTION_WORDS = ("notest", "continuation")
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_BRACE_INFO = re.compile(r"^\s*\{(?P<inner>[^}]*)\}\s*$")
_BARE_OPTION = re.compile(r"^\s*(?:python|py|python3)\s+\S")


def rewrite_fences(markdown: str, where: str = "") -> tuple[str, list[str]]:
    """Return `markdown` with `{.python notest}` rewritten to `{.python .notest}` (same for
    `continuation`), and the problems found (a bare option after the language)."""
    lines = markdown.split("\n")
    problems: list[str] = []
    open_fence: str | None = None  # the fence characters of the block we are inside
    for number, line in enumerate(lines, start=1):
        match = _FENCE_OPEN.match(line)
        if open_fence is not None:
            if match and match["fence"][0] == open_fence[0] \
                    and len(match["fence"]) >= len(open_fence) and not match["info"].strip():
                open_fence = None
            continue
        if not match or (match["fence"][0] == "`" and "`" in match["info"]):
            continue
        open_fence = match["fence"]
        info = match["info"]
        if brace := _BRACE_INFO.match(info):
            words = [f".{w}" if w in OPTION_WORDS else w for w in brace["inner"].split()]
            lines[number - 1] = f"{match['indent']}{match['fence']}{{{' '.join(words)}}}"
        elif _BARE_OPTION.match(info):
            problems.append(f"{where}:{number}: write ```{{.python {info.split(None, 1)[1]}}}"
                            f" instead of ```{info.strip()} (Material cannot render the "
                            "bare-word form)")
    return "\n".join(lines), problems


def on_page_markdown(markdown: str, page, config, files) -> str:
    rewritten, problems = rewrite_fences(markdown, page.file.src_uri)
    for problem in problems:
        log.warning(problem)
    return rewritten
