"""What the search box finds, and what its previews show.

Material's search plugin indexes each page's HTML, one entry per section, and ranks entries with
lunr. Left alone it ranked References and raw run data above the lessons, showed TeX source in
previews, and opened each lab's preview with Jupyter's prompts. This module fixes the index in
three ways; the pages themselves never change.

1. **Teaching pages first** (`BOOSTS`). Each page gets a search boost by where it sits: the
   lessons, which teach a term, first; the references and the run pages last. A lesson still
   loses to a run page on a word only the run page contains.
2. **Maths as text** (`tex_to_text`). pymdownx.arithmatex (generic mode) writes maths into the
   HTML as TeX between `\\(`...`\\)` or `\\[`...`\\]`, for MathJax to typeset; notebook
   markdown cells (mkdocs-jupyter) keep `$`...`$` and `$$`...`$$`. While the pages are rendered,
   this module records each page's maths exactly where MathJax will typeset it (see
   assets/javascripts/mathjax-config.js: inside `.arithmatex` and `.jp-RenderedMarkdown`, never
   in code); after Material has written `search/search_index.json`, it replaces, in that page's
   entries and outside `<code>`/`<pre>`, each recorded formula by plain text:
   `\\(\\pi_{\\text{ref}}(a)\\)` becomes `π_ref(a)`. A dollar sign anywhere else (a completion
   shown on a run page, a shell line in code) is text, and is left exactly as written.
3. **Lab previews start with the lab's text** (`merge_notebook_title`). A notebook's title sits
   inside a cell, so Material files the lab's code cells under the page's own entry and the
   title's text under a second entry of the same name; the two are merged, the title's text
   first. (course_site/notebooks.py keeps Jupyter's prompts and copy buttons out of the index.)

Why a module: Material's search plugin has no option to rank pages or to index maths as text.
Why our own TeX-to-text rather than pylatexenc, the maintained library for it: measured on every
formula of the pages (benchmarks/bench_tex_to_text.py), pylatexenc's text drops what a preview
needs (`j \\ne i` becomes `j i`, `\\binom{n-c}{k}` becomes `n-ck`, `\\Pr` disappears, `\\nabla
\\log \\pi` becomes `∇logπ`), and this table of the commands the course writes is short.
"""

from __future__ import annotations

import json
import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils.templates import TemplateContext

# -- 1. teaching pages first -----------------------------------------------------------------

BOOSTS = {                      # the URL's first folder or page: its boost
    "lessons": 4.0,             # where a term is taught
    "maps": 2.0, "rules": 2.0, "oral-exam": 2.0,
    "labs": 1.5,                # a lab's title names its lesson's term: the lesson still first
    "exercises": 1.0, "context": 1.0,
    "references": 0.5,          # a reference's summary names every term of its paper
    "runs": 0.25,               # raw numbers and completions: found, never first
    "reference": 0.25,          # the API reference: docstrings name every term too
}
"""Search boost by the page's URL; any other page (the home page, the errata) gets 1. lunr
multiplies an entry's score by its page's boost; a word in a section's title still counts a
thousand times a word in its text (mkdocs.yml)."""


def boost_of(url: str) -> float:
    """The boost of the page at `url` (a site-relative URL such as `lessons/m1-reinforce/`)."""
    return BOOSTS.get(url.split("/", 1)[0], 1.0)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    # Material's search plugin reads `search.boost` from the page's metadata (as front matter
    # would set it) when it indexes the page, after this event.
    page.meta.setdefault("search", {}).setdefault("boost", boost_of(page.url))
    return markdown


# -- 2. maths as text ------------------------------------------------------------------------

SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "Delta": "Δ", "epsilon": "ε",
    "varepsilon": "ε", "eta": "η", "theta": "θ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "phi": "φ", "approx": "≈", "cdot": "·", "dots": "…", "ge": "≥", "le": "≤", "ne": "≠",
    "in": "∈", "infty": "∞", "leftarrow": "←", "to": "→", "mid": "|", "nabla": "∇",
    "odot": "⊙", "pm": "±", "prod": "∏", "propto": "∝", "sim": "~", "star": "*",
    "succ": "≻", "sum": "Σ", "times": "×", "|": "‖", "Vert": "‖", "lVert": "‖", "rVert": "‖",
    "lvert": "|", "rvert": "|", "{": "{", "}": "}", "\\": "; ",
    "log": "log ", "max": "max ", "min": "min ", "arg": "arg ", "Pr": "Pr ",
    ",": " ", ";": " ", " ": " ", "quad": " ", "qquad": " ",
    "left": "", "right": "", "big": "", "Big": "",
}
"""Commands without arguments, as text (a word operator keeps a space after it)."""
ARGUMENTS = {
    "frac": "({})/({})", "binom": "C({}, {})", "sqrt": "√({})",
    "hat": "{}\u0302", "widehat": "{}\u0302", "bar": "{}\u0304", "tilde": "{}\u0303",
    **dict.fromkeys(("text", "mathrm", "mathbf", "mathcal", "mathbb", "operatorname", "boxed",
                     "underbrace"), "{}"),
}
r"""Commands with arguments, as templates with one `{}` an argument: `\mathbb{E}` is E, and an
accent is a combining character (`\bar r` is r̄)."""
_COMMAND = re.compile(r"\\([a-zA-Z]+|.)")
_BRACE = re.compile(r"\\.|[{}]")      # `\{` and `\}` are characters, not a group's braces


def _argument(tex: str, i: int) -> tuple[str, int]:
    """The argument starting at tex[i] (a `{...}` group, a command or one character), as text,
    and the index after it."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if tex[i:i + 1] == "{":
        depth = 0
        for brace in _BRACE.finditer(tex, i):
            depth += {"{": 1, "}": -1}.get(brace[0], 0)
            if depth == 0:
                return tex_to_text(tex[i + 1:brace.start()]), brace.end()
        return tex_to_text(tex[i + 1:]), len(tex)
    command = _COMMAND.match(tex, i)
    end = command.end() if command else i + 1
    return tex_to_text(tex[i:end]), end


def tex_to_text(tex: str) -> str:
    r"""A formula's TeX as plain text for a search preview: Greek letters and operators as their
    characters, `\frac{a}{b}` as (a)/(b), groups without braces, spacing and sizing dropped.
    `\pi_{\text{ref}}(a)` becomes `π_ref(a)`; no backslash command is left."""
    out: list[str] = []
    i = 0
    while i < len(tex):
        char = tex[i]
        if char == "\\":
            command = _COMMAND.match(tex, i)
            assert command is not None      # a backslash always starts a command
            name, i = command[1], command.end()
            if name in ARGUMENTS:
                texts = []
                for _ in range(ARGUMENTS[name].count("{}")):
                    text, i = _argument(tex, i)
                    texts.append(text)
                out.append(ARGUMENTS[name].format(*texts))
                if name == "underbrace" and tex[i:i + 1] == "_":    # the brace's label
                    _, i = _argument(tex, i + 1)
            elif name in ("begin", "end"):
                _, i = _argument(tex, i)                              # the environment's name
            else:
                out.append(SYMBOLS.get(name, name))
        elif char in "_^":
            text, i = _argument(tex, i + 1)
            out.append(f"^({text})" if char == "^" and len(text) > 1 else char + text)
        elif char == "{":
            text, i = _argument(tex, i)
            out.append(text)
        else:
            out.append(" " if char in "&~" else char)
            i += 1
    return re.sub(r" {2,}", " ", "".join(out)).strip()


MATH_CLASSES = frozenset({"arithmatex", "jp-RenderedMarkdown"})
"""Classes whose text MathJax typesets (processHtmlClass in mathjax-config.js)."""

SKIPPED_TAGS = frozenset({"script", "noscript", "style", "textarea", "pre", "code"})
"""Elements MathJax never looks into (its default skipHtmlTags)."""

VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
                       "meta", "param", "source", "track", "wbr"})

FORMULA = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|(?<!\\)\$(.+?)(?<!\\)\$",
                     re.DOTALL)
"""One formula with its delimiters, as MathJax finds them (display before inline)."""

CODE = r"(<code>.*?</code>|<pre>.*?</pre>)"
"""Code kept as markup in the index text: never rewritten."""


def indexed(text: str) -> str:
    """`text` as Material's search plugin stores text outside <pre>."""
    return escape(text.replace("\n", " "), quote=False)


class _MathFinder(HTMLParser):
    """Every formula MathJax will typeset in an HTML fragment, in index form, mapped to its
    body without delimiters (also in index form)."""

    def __init__(self) -> None:
        super().__init__()   # convert_charrefs=True, as Material's parser: the same text runs
        self.open: list[tuple[str, bool]] = [("", False)]   # (tag, typeset?) from the root
        self.formulas: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        if tag not in VOID_TAGS:      # a void element has no end tag and holds no text
            classes = set((dict(attrs).get("class") or "").split())
            typeset = bool(classes & MATH_CLASSES) if classes else self.open[-1][1]
            self.open.append((tag, typeset and tag not in SKIPPED_TAGS))

    def handle_endtag(self, tag):
        # close up to the matching element (HTML lets some end tags be implied)
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth][0] == tag:
                del self.open[depth:]
                return

    def handle_data(self, data):
        if self.open[-1][1]:
            for match in FORMULA.finditer(data):
                body = next(group for group in match.groups() if group is not None)
                self.formulas[indexed(match.group())] = indexed(tex_to_text(body))


def formulas_in(html: str) -> dict[str, str]:
    """{formula as indexed, with delimiters: the same without} for one page's HTML."""
    finder = _MathFinder()
    finder.feed(html)
    finder.close()
    return {raw: text for raw, text in finder.formulas.items() if raw != text}


def without_delimiters(text: str, formulas: dict[str, str]) -> str:
    """Index text with each known formula outside code replaced by its body."""
    if not formulas:
        return text
    # code first at each place, and a longer formula before its prefix (`$$x$$` before `$x$`)
    formula = "|".join(map(re.escape, sorted(formulas, key=len, reverse=True)))
    return re.sub(f"{CODE}|{formula}", lambda m: m[1] or formulas[m[0]], text, flags=re.DOTALL)


# -- 3. lab previews start with the lab's text -----------------------------------------------

def merge_notebook_title(docs: list[dict]) -> list[dict]:
    """The entries with each notebook's title entry merged into its page entry, the title's
    text first; titles lose the `¶` of a notebook heading's anchor link."""
    merged: list[dict] = []
    for doc in docs:
        doc = {**doc, "title": str(doc.get("title", "")).removesuffix("¶")}
        page = merged[-1] if merged else {}
        if ("#" not in page.get("location", "#") and doc["title"] == page["title"]
                and str(doc.get("location", "")).startswith(page["location"] + "#")):
            page["text"] = f"{doc.get('text', '')} {page.get('text', '')}".strip()
            continue
        merged.append(doc)
    return merged


# -- the build's events (called by plugin.py) --------------------------------------------

_formulas_by_page: dict[str, dict[str, str]] = {}


def on_page_context(context: TemplateContext, page: Page, config: MkDocsConfig,
                    nav: Navigation) -> TemplateContext:
    # read-only: the same HTML Material's search plugin indexes in this event
    _formulas_by_page[page.url] = formulas_in(page.content or "")
    return context


def on_post_build(config: MkDocsConfig) -> None:
    """Rewrite the index Material has written: notebook titles merged, recorded maths as text."""
    path = Path(config.site_dir) / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    index["docs"] = merge_notebook_title(index.get("docs", []))
    for doc in index["docs"]:
        formulas = _formulas_by_page.get(doc.get("location", "").split("#", 1)[0], {})
        for field in ("title", "text"):
            if isinstance(doc.get(field), str):
                doc[field] = without_delimiters(doc[field], formulas)
    # written as Material writes it
    path.write_text(json.dumps(index, separators=(",", ":"), default=str), encoding="utf-8")
