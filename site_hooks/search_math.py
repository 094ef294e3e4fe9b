"""Search previews show maths as text, without TeX delimiters.

Material's search plugin indexes the text of each page's HTML, and pymdownx.arithmatex
(generic mode) writes maths into that HTML as TeX between `\\(`...`\\)` or `\\[`...`\\]`, for
MathJax to typeset in the page; notebook markdown cells (mkdocs-jupyter) keep `$`...`$` and
`$$`...`$$`. A result preview is plain text, so it showed `\\(R(x, y)\\)`.

The pages stay as they are (MathJax needs its delimiters). Only the index changes: while the
pages are rendered, this hook records the maths of each page exactly where MathJax will typeset
it (see assets/javascripts/mathjax-config.js: inside `.arithmatex` and `.jp-RenderedMarkdown`,
never in code); after Material has written `search/search_index.json`, it replaces, in that
page's entries and outside `<code>`/`<pre>`, each recorded formula by its body without
delimiters: `\\(R(x, y)\\)` becomes `R(x, y)`. A dollar sign anywhere else (a completion shown
on a run page, a shell line in code) is text, and is left exactly as written.
"""

from __future__ import annotations

import json
import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path

from mkdocs.plugins import event_priority, get_plugin_logger

log = get_plugin_logger(__name__)

MATH_CLASSES = frozenset({"arithmatex", "jp-RenderedMarkdown"})
"""Classes whose text MathJax typesets (processHtmlClass in mathjax-config.js)."""

SKIPPED_TAGS = frozenset({"script", "noscript", "style", "textarea", "pre", "code"})
"""Elements MathJax never looks into (its default skipHtmlTags)."""

VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
                       "meta", "param", "source", "track", "wbr"})

FORMULA = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|(?<!\\)\$(.+?)(?<!\\)\$",
                     re.DOTALL)
"""One formula with its delimiters, as MathJax finds them (display before inline)."""

CODE = re.compile(r"(<code>.*?</code>|<pre>.*?</pre>)", re.DOTALL)
"""Code kept as markup in the index text: never rewritten."""


def indexed(text: str) -> str:
    """`text` as Material's search plugin stores text outside <pre>: newlines become spaces,
    then `<`, `>` and `&` are escaped."""
    return escape(text.replace("\n", " "), quote=False)


class _MathFinder(HTMLParser):
    """Every formula MathJax will typeset in an HTML fragment, in index form, mapped to its
    body without delimiters (also in index form)."""

    def __init__(self) -> None:
        super().__init__()   # convert_charrefs=True, as Material's parser: the same text runs
        self.open: list[tuple[str, bool]] = [("", False)]   # (tag, typeset?) from the root
        self.formulas: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        if tag in VOID_TAGS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        if tag in SKIPPED_TAGS:
            state = False
        elif classes:
            state = bool(classes & MATH_CLASSES)
        else:
            state = self.open[-1][1]
        self.open.append((tag, state))

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        # close up to the matching element (HTML lets some end tags be implied)
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth][0] == tag:
                del self.open[depth:]
                return

    def handle_data(self, data):
        if not self.open[-1][1]:
            return
        for match in FORMULA.finditer(data):
            body = next(group for group in match.groups() if group is not None)
            self.formulas[indexed(match.group())] = indexed(body.strip())


def formulas_in(html: str) -> dict[str, str]:
    """{formula as indexed, with delimiters: the same without} for one page's HTML."""
    finder = _MathFinder()
    finder.feed(html)
    finder.close()
    return {raw: text for raw, text in finder.formulas.items() if raw != text}


def without_delimiters(text: str, formulas: dict[str, str]) -> str:
    """Index text with each known formula outside code replaced by its body."""
    if not formulas or not text:
        return text
    pattern = re.compile("|".join(map(re.escape, sorted(formulas, key=len, reverse=True))))
    parts = CODE.split(text)
    for i in range(0, len(parts), 2):        # odd parts are the code spans and blocks
        parts[i] = pattern.sub(lambda m: formulas[m.group()], parts[i])
    return "".join(parts)


def rewrite_index(index: dict, formulas_by_page: dict[str, dict[str, str]]) -> int:
    """Rewrite the titles and texts of a search index in place; returns the entries changed."""
    changed = 0
    for doc in index.get("docs", []):
        formulas = formulas_by_page.get(doc.get("location", "").split("#", 1)[0])
        if not formulas:
            continue
        for field in ("title", "text"):
            if isinstance(doc.get(field), str):
                new = without_delimiters(doc[field], formulas)
                if new != doc[field]:
                    doc[field] = new
                    changed += 1
    return changed


# -- hooks -----------------------------------------------------------------------------------

_formulas_by_page: dict[str, dict[str, str]] = {}


def on_page_context(context, page, config, nav):
    # read-only: the same HTML Material's search plugin indexes in this event
    _formulas_by_page[page.url] = formulas_in(page.content or "")
    return context


@event_priority(-100)   # after Material's search plugin has written the index
def on_post_build(config):
    path = Path(config.site_dir) / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    changed = rewrite_index(index, _formulas_by_page)
    # written as Material writes it
    path.write_text(json.dumps(index, separators=(",", ":"), default=str), encoding="utf-8")
    log.debug(f"search index: TeX delimiters removed from {changed} titles and texts")
