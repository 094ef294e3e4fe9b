"""What the strict build would refuse in one page, found in a fraction of a second.

    .venv/bin/python scripts/check_page.py docs/lessons/m1-reinforce.md [more pages]

`scripts/test_page.sh` runs it before the page's tests. Each problem is one line,
`page:line: what is wrong (what it is about)`; the exit status is 1 if there is any. It checks:

- the nav: the page is listed in mkdocs.yml's `nav`, read as mkdocs reads the file; the nav as
  written is the teacher edition's, and the student edition's is the same without the pages
  under teacher/ (course_site.editions), so a page is in one edition or the other exactly
  when it is listed there;
- its Try-it boxes, with `try_it.problems` (course_site.try_it), the build's own parser;
- its relative links: the target exists, as a file under docs/ or as a page or figure the build
  generates (a run's page and files from runs/, a concept figure), and an anchor `#x` is an id
  on a Markdown target: a heading's, as Python-Markdown's toc extension makes it (its
  `slugify`, duplicates numbered by its `unique`), a `{#x}` attribute or an HTML `id="x"`
  (not on an API page, whose ids mkdocstrings makes from the code);
- its code lines fit the column: at most `CODE_COLUMNS` characters from the block's own
  indentation (PEP 8's 79, and what a 1280-px window shows of a code block without scrolling),
  the lines a snippet line (`--8<-- "file"`) brings in included, a diagram's source not (it
  is drawn, not shown); the browser tests measure
  the built pages themselves (tests/site/test_browser.py);
- for a lesson page (docs/lessons/), one sitting (`over_a_sitting`): `minutes`, the estimate
  tests/site/test_sitting.py holds every lesson to, is at most `SITTING_MINUTES`.

A student reads prose at about 200 words a minute and reads, runs and compares a code block's
lines with their output at about 8 lines a minute. HTML comments are for the tests, not the
reader, and are not counted; nor is a picture's alt text, which a screen reader reads in place
of the picture (its caption is counted), nor a teacher-only block, which the student edition
leaves out. A milestone longer than a sitting is split into parts
(`m4-reward-as-spec.md`, then `m4b-failure-forensics.md`), each a page of its own.

Not checked here: the links and anchors of one edition only (a student page linking into the
teacher's guide), and what only rendering shows; the strict build (`bash
scripts/build_site.sh`) checks those.
"""

from __future__ import annotations

import functools
import html
import posixpath
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

from markdown.extensions.toc import slugify, unique
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.utils.yaml import get_yaml_loader, yaml_load

from course.paths import RUNS_DIR
from course.reports.figures import FIGURES
from course_site import try_it
from course_site.editions import student_markdown
from course_site.fences import SNIPPET, fenced_blocks, included, snippets
from course_site.figures import FOLDER as FIGURES_FOLDER
from course_site.run_pages import SITE_FOLDER as RUNS_FOLDER

REPO = Path(__file__).resolve().parents[1]

DOCS = REPO / "docs"
CONFIG = REPO / "mkdocs.yml"
SITTING_MINUTES = 45
WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 8
CODE_COLUMNS = 79

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|//")
_HEADING = re.compile(r"^ *#{1,6}[ \t]+(?P<text>.*?)(?:[ \t]+#+)?[ \t]*$")
_ATTR_ID = re.compile(r"\{:?[^}\n]*?#(?P<id>[\w-]+)[^}\n]*\}")
_HTML_ID = re.compile(r"""\bid=["'](?P<id>[^"']+)["']""")
_PICTURE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")   # a picture: `![alt](src)`
_AUTODOC = re.compile(r"^::: ", re.M)   # mkdocstrings: the ids come from the code
_UNDERSCORES = re.compile(r"(?<!\w)_+|_+(?!\w)")   # emphasis; `snake_case` keeps its own


def minutes(markdown: str) -> float:
    """Estimated minutes for a student to read `markdown` and run its code blocks: its student
    edition, without the teacher-only parts (`course_site.editions`)."""
    student, _ = student_markdown(markdown)
    lines = _PICTURE.sub("", _COMMENT.sub("", student)).split("\n")
    blocks = list(fenced_blocks(lines))
    fences = [range(fence.open, fence.close + 1) for fence in blocks]
    # without the fence lines; a ```predict block is a prediction box's form, not code to read
    code_lines = sum(len(fence) - 2 for fence, block in zip(fences, blocks, strict=True)
                     if block.words()[:1] != ["predict"])
    in_code = {number for fence in fences for number in fence}
    words = sum(len(line.split()) for number, line in enumerate(lines) if number not in in_code)
    return words / WORDS_PER_MINUTE + code_lines / CODE_LINES_PER_MINUTE


def over_a_sitting(markdown: str, where: str) -> str | None:
    """The problem, if the lesson `markdown` (the page `where`) is longer than one sitting."""
    estimate = minutes(markdown)
    if estimate <= SITTING_MINUTES:
        return None
    return (f"{where}:1: about {estimate:.0f} minutes of reading and running, more than one "
            f"sitting ({SITTING_MINUTES}): cut it, or split the milestone into parts (sitting)")


def snippet_lines(line: str, repo: Path) -> list[str] | None:
    """The lines a snippet line (`--8<-- "file"`, `"file:first:last"`: `fences.snippets`)
    brings into a block, or None if `line` is not one (or names no file)."""
    if not SNIPPET.fullmatch(line.strip()):            # a marker is a line of its own
        return None
    [(path, first, last, _)] = snippets(line)
    if not (repo / path).is_file():
        return None
    return included((repo / path).read_text(encoding="utf-8"), first, last).split("\n")


def wide_code(markdown: str, where: str, repo: Path = REPO) -> Iterator[str]:
    """Each code line of `markdown` (the page `where`) longer than `CODE_COLUMNS` characters
    from its block's indentation: on the site that block would scroll sideways at 1280 px."""
    lines = markdown.split("\n")
    for fence in fenced_blocks(lines):
        if fence.words()[:1] in (["mermaid"], ["predict"]):   # a diagram, a box's form
            continue
        for number in range(fence.open + 1, fence.close):
            line = lines[number].removeprefix(fence.indent)
            included = snippet_lines(line, repo)
            for text, origin in ([(line, "")] if included is None else
                                 [(text, f" (from {line.strip()})") for text in included]):
                if len(text) > CODE_COLUMNS:
                    yield (f"{where}:{number + 1}: a code line of {len(text)} characters"
                           f"{origin}, more than the column's {CODE_COLUMNS}: break it "
                           f"(code width) {text.strip()[:40]!r}")


def _blank(match: re.Match[str]) -> str:
    """The matched text as spaces, its line breaks kept: line numbers do not move."""
    return re.sub(r"[^\n]", " ", match[0])


def without_blocks(markdown: str) -> str:
    """`markdown` without its fenced blocks and HTML comments, blanked so that every line keeps
    its number: the text whose headings are headings."""
    lines = markdown.split("\n")
    for fence in fenced_blocks(lines):
        lines[fence.open:fence.close + 1] = [""] * (fence.close + 1 - fence.open)
    return _COMMENT.sub(_blank, "\n".join(lines))


def prose(markdown: str) -> str:
    """`without_blocks(markdown)` without its code spans too: the text whose links are links."""
    return _CODE_SPAN.sub(_blank, without_blocks(markdown))


def heading_text(source: str) -> str:
    """A heading's text as the toc extension reads it once rendered: code spans verbatim, link
    targets, emphasis marks, HTML tags and an attribute list left out, entities decoded."""
    source = re.sub(r"\{:?[^}]*\}\s*$", "", source)
    parts = re.split(r"(`+)(.+?)\1", source)
    text = ""
    for index, part in enumerate(parts):
        if index % 3 == 2:                       # a code span's content
            text += part
        elif index % 3 == 0:                     # outside code spans
            part = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", part)
            text += _UNDERSCORES.sub("", re.sub(r"<[^>]+>|\*+", "", part))
    return html.unescape(text)


@functools.cache
def anchors(page: Path) -> frozenset[str]:
    """Every id a link may name on the Markdown page `page`: its headings' (as the toc extension
    makes them), `{#id}` attributes and HTML `id="..."` attributes."""
    text = without_blocks(page.read_text(encoding="utf-8"))
    ids = {match["id"] for pattern in (_ATTR_ID, _HTML_ID) for match in pattern.finditer(text)}
    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if heading and not _ATTR_ID.search(heading["text"]):
            ids.add(unique(slugify(heading_text(heading["text"]), "-"), ids))
    return frozenset(ids)


def _generated(path: str) -> bool:
    """Whether the build generates `path` (relative to docs/): a run's page or file, the runs
    index, a concept figure."""
    folder, _, name = path.partition("/")
    if folder == RUNS_FOLDER:
        run = Path(name)
        return (name == "index.md" or (RUNS_DIR / run).is_file()
                or (run.name == "index.md" and (RUNS_DIR / run.parent).is_dir()))
    return path.startswith(f"{FIGURES_FOLDER}/") and path.rpartition("/")[2] in FIGURES


def link_problems(markdown: str, source: str, docs: Path, where: str) -> Iterator[str]:
    """Each relative link of the page `markdown` (docs/`source`) whose target or anchor does not
    exist, one line each."""
    text = prose(markdown)
    for match in _LINK.finditer(text):
        target = match["target"].strip("<>")
        if _SCHEME.match(target):
            continue
        number = text.count("\n", 0, match.start("target")) + 1   # the target's line
        line = f"{where}:{number}"
        address, _, anchor = unquote(target).partition("#")
        if address.startswith("/"):
            yield f"{line}: an absolute link; write it relative to this page (link {target})"
            continue
        path = posixpath.normpath(posixpath.join(posixpath.dirname(source), address or
                                                 posixpath.basename(source)))
        if path.startswith("../"):
            yield f"{line}: the target is outside docs/ (link {target})"
        elif not (docs / path).is_file():
            if not _generated(path):
                yield f"{line}: no file docs/{path} (link {target})"
        elif anchor and path.endswith(".md") and anchor not in anchors(docs / path) \
                and not _AUTODOC.search((docs / path).read_text(encoding="utf-8")):
            known = sorted(anchors(docs / path))
            yield (f"{line}: docs/{path} has no heading or anchor with the id {anchor!r}"
                   f"{try_it._closest(anchor, known)} (link {target})")


def _nav_pages(nav: object) -> Iterator[str]:
    """Every page a nav (or a part of one) lists."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)


@functools.cache
def nav_pages(config: Path) -> frozenset[str]:
    """The pages the nav of `config` lists (the teacher edition's nav: every page), read with
    mkdocs's own YAML loader (`!ENV`, `!relative`)."""
    with config.open(encoding="utf-8") as stream:
        loaded = yaml_load(stream, get_yaml_loader(config=MkDocsConfig()))
    return frozenset(_nav_pages(loaded.get("nav", [])))


def problems(page: Path, docs: Path = DOCS, config: Path = CONFIG) -> list[str]:
    """What is wrong with `page` (a file under `docs`), one line each, named as the path from
    the folder holding `docs` (`docs/lessons/m1-reinforce.md`)."""
    where = page.relative_to(docs.parent).as_posix()
    source = page.relative_to(docs).as_posix()
    found = []
    if source not in nav_pages(config):
        found.append(f"{where}:1: not listed in {config.name}'s nav, so the strict build fails; "
                     f"add `- Title: {source}` in its section (nav)")
    if page.suffix != ".md":
        return found
    markdown = page.read_text(encoding="utf-8")
    found += try_it.problems(markdown, where)
    found += link_problems(markdown, source, docs, where)
    found += wide_code(markdown, where, docs.parent)
    if source.startswith("lessons/") and (long := over_a_sitting(markdown, where)):
        found.append(long)
    return found


def main(pages: list[str]) -> int:
    """Print the problems of each page; 1 if there is any."""
    found = [problem for page in pages for problem in problems(Path(page).resolve())]
    print("\n".join(found), file=sys.stderr, end="\n" if found else "")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
