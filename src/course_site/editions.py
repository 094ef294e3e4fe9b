"""Two editions of the site from one source: the student edition (the default) and the teacher's.

Teacher-only text is an admonition of type `teacher`, its body indented as usual:

    !!! teacher "Teacher's checklist"
        - [ ] Names the agent, ...

    ??? teacher "Model answer and red flags"
        In the macro view ...

(A section whose heading other pages link to keeps the heading inside the block, as the block's
first line: its anchor then exists in the teacher edition, and a student page that links to it
fails the student edition's strict build.) Where admonitions do not render, in the README read on
GitHub, a region between the lines `<!-- teacher-only -->` and `<!-- /teacher-only -->` is
teacher-only too.

mkdocs.yml sets `extra.edition` from COURSE_EDITION: `student` unless it says `teacher`. In the
student edition this module drops every teacher part from every page before anything else reads
the page, and drops the teacher's guide (the pages under docs/teacher/) from the files and the
nav, so none of it reaches a page, the search index, the sitemap or a download. In the teacher
edition everything is built; teacher blocks have their own style (course.css) and
overrides/main.html marks every page "Teacher edition".

A malformed marker (`!!!teacher`, `!!! Teacher`, `??? teacher "an unclosed title`, a block with
no indented body or with a fence left open in it, an unclosed region) is a warning naming the page
and the line, so it fails the strict build of either edition; the student edition drops the block
all the same.

`teacher_parts` is the one reader of the markers and `student_markdown` the one implementation
of "drop the teacher-only parts": this module, scripts/student_copy.sh (`python -m
course_site.editions FILE...` rewrites each Markdown file in place) and the leak test
(tests/site/test_editions.py, which takes the texts of the parts as what must not leak) all use
them.

Why not a plugin: the maintained ones that drop content (mkdocs-exclude, Material's `draft`
pages, `exclude_docs`) work on whole files; here a block inside a page is teacher-only.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from course_site.fences import fenced_blocks, warned

EDITIONS = ("student", "teacher")
GUIDE = "teacher/"
"""The teacher's guide: its pages under docs/, and their nav entries, are teacher-only."""
_OPENER = re.compile(r"^(?P<indent> *)(?P<marker>!!!|\?\?\?\+?)(?P<rest>.*)$")
_TEACHER_OPENER = re.compile(r'^ teacher(?: "[^"]*")? *$')
REGION_OPEN, REGION_CLOSE = "<!-- teacher-only -->", "<!-- /teacher-only -->"


def _blocks(lines: list[str], where: str, problems: list[str]) -> Iterator[range]:
    """The line ranges of the teacher blocks: an opener and its indented body (blank lines
    after the body are left out). Openers shown inside a fenced block are not openers."""
    fenced = {n for fence in fenced_blocks(lines) for n in range(fence.open, fence.close + 1)}
    number = 0
    while number < len(lines):
        opener = _OPENER.match(lines[number])
        if number in fenced or not opener or "teacher" not in opener["rest"].split('"')[0].lower():
            number += 1
            continue
        where_line = f"{where}:{number + 1}"
        if not _TEACHER_OPENER.match(opener["rest"]):
            problems.append(f"{where_line}: write `{opener['marker']} teacher \"Title\"` (lower "
                            f"case, one space, the title in double quotes), not "
                            f"`{lines[number].strip()}`")
        body_indent = " " * (len(opener["indent"]) + 4)
        last = number
        for later in range(number + 1, len(lines)):
            if lines[later].strip():
                if not lines[later].startswith(body_indent):
                    break
                last = later
        if last == number:
            problems.append(f"{where_line}: the teacher block has no body: indent its text four "
                            "spaces under the opener")
        body = lines[number + 1:last + 1]
        if any(fence.close == len(body) for fence in fenced_blocks(body)):
            problems.append(f"{where_line}: a fence opened in this teacher block is not closed "
                            "inside it")
        yield range(number, last + 1)
        number = last + 1


def _regions(lines: list[str], where: str, problems: list[str]) -> Iterator[range]:
    """Each teacher-only region's line range, markers included (an unclosed one runs to the end)."""
    start: int | None = None
    for number, line in enumerate(lines):
        if line.strip() == REGION_OPEN and start is None:
            start = number
        elif line.strip() == REGION_CLOSE and start is not None:
            yield range(start, number + 1)
            start = None
        elif line.strip() in (REGION_OPEN, REGION_CLOSE):
            problems.append(f"{where}:{number + 1}: `{line.strip()}` without its other half")
    if start is not None:
        problems.append(f"{where}:{start + 1}: `{REGION_OPEN}` is never closed by "
                        f"`{REGION_CLOSE}`")
        yield range(start, len(lines))


def teacher_parts(markdown: str, where: str = "") -> tuple[list[range], list[str]]:
    """The teacher-only parts of a page (0-based line ranges) and the problems with their
    markers, each one line naming `where` and the line."""
    lines = markdown.split("\n")
    problems: list[str] = []
    return [*_regions(lines, where, problems), *_blocks(lines, where, problems)], problems


def student_markdown(markdown: str, where: str = "",
                     keep_line_numbers: bool = True) -> tuple[str, list[str]]:
    """`markdown` without its teacher-only parts, and the problems with the markers. A part's
    lines are blanked, so that a later warning names the line of the source, or removed."""
    parts, problems = teacher_parts(markdown, where)
    dropped = {number for part in parts for number in part}
    lines = ["" if number in dropped else line
             for number, line in enumerate(markdown.split("\n"))
             if keep_line_numbers or number not in dropped]
    return "\n".join(lines), problems


def edition(config: MkDocsConfig) -> str:
    """The edition being built: mkdocs.yml's `extra.edition` (COURSE_EDITION)."""
    value = config.extra.get("edition", "student")
    if value not in EDITIONS:
        raise PluginError(f"mkdocs.yml: extra.edition (COURSE_EDITION) is {value!r}; write "
                          "student or teacher")
    return value


def student_nav(nav: list) -> list:
    """`nav` without the teacher's guide: its pages, and a section they leave empty."""
    kept = []
    for item in nav:
        title, value = next(iter(item.items())) if isinstance(item, dict) else (None, item)
        if isinstance(value, list):
            value = student_nav(value)
            if not value:
                continue
        elif value.startswith(GUIDE):
            continue
        kept.append(value if title is None else {title: value})
    return kept


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if edition(config) == "student" and config.nav:
        config.nav = student_nav(config.nav)
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    if edition(config) == "student":
        for file in [f for f in files if f.src_uri.startswith(GUIDE)]:
            files.remove(file)
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    student = warned(*student_markdown(markdown, page.file.src_uri))
    return student if edition(config) == "student" else markdown


def main(paths: list[str]) -> int:
    """Strip each Markdown file of its teacher-only parts; exit 1 after naming each bad marker."""
    status = 0
    for name in paths:
        path = Path(name)
        text, problems = student_markdown(path.read_text(encoding="utf-8"), name,
                                          keep_line_numbers=False)
        for problem in problems:
            print(problem, file=sys.stderr)
            status = 1
        path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")   # no blank tail left
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
