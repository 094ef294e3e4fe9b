"""The print edition (src/course_site/print_edition.py, `bash scripts/site.sh --print`).

Kept cheap: the course's book is printed from three pages of the session's strict build (a
lesson with formulas, answers and Predict boxes, the map with the most diagrams, a lab whose
Markdown cells hold `$` maths), not from all of it; the handouts come from a small teacher
edition built here around the real mkdocs.yml. What is checked is the PDF itself, read back
with pypdf: its pages, bookmarks and stamps, that no TeX is left raw and every folded answer
is printed, that the diagrams fit the page, and that the handouts are the teacher's sections
only and never come from the student edition.
"""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import pytest
from pypdf import PdfReader
from sitebuild import REPO, build_site, mini_repo, page_file

from course_site import print_edition
from course_site.print_edition import Sheet

PAGES = ("lessons/m1-reinforce/", "maps/family-tree/", "labs/lab_kl/")
DELIMITERS = re.compile(r"\\[()\[\]]|\$\$")
"""TeX's maths delimiters: `\\(`, `\\)`, `\\[`, `\\]` and `$$`, never on paper."""
_MATHS = re.compile(r'<span class="arithmatex">(.*?)</span>|<div class="arithmatex">(.*?)</div>'
                    r"|\$([^$\n]+)\$", re.S)
_COMMAND = re.compile(r"\\[A-Za-z]{2,}")


def tex_commands(html: str) -> set[str]:
    """The TeX commands (`\\frac`, `\\theta`, ...) in a built page's maths: each must be drawn,
    not printed as text."""
    return {command for found in _MATHS.finditer(html) for part in found.groups() if part
            for command in _COMMAND.findall(part)}


def read(pdf: bytes) -> tuple[PdfReader, list[str]]:
    """The PDF and the text of each page (ligatures such as "ﬁ" spelled out)."""
    reader = PdfReader(io.BytesIO(pdf))
    return reader, [unicodedata.normalize("NFKC", page.extract_text()) for page in reader.pages]


def blank(texts: list[str]) -> list[int]:
    """The pages that hold nothing but their stamp (`title  n / N` at the foot)."""
    return [number for number, text in enumerate(texts, start=1)
            if all(line.endswith(f"{number} / {len(texts)}") for line in text.split("\n")
                   if line.strip())]


def outline(reader: PdfReader) -> list[tuple[str, int]]:
    """The bookmarks, depth first: (title, first page) pairs, a part before its pages."""
    def walk(items) -> list[tuple[str, int]]:
        found = []
        for item in items:
            if isinstance(item, list):
                found += walk(item)
            else:
                found.append((item.title, reader.get_destination_page_number(item) + 1))
        return found
    return walk(reader.outline)


def test_the_course_prints_every_formula_diagram_and_answer(built_site, browser):
    site = built_site.site
    everything = print_edition.book(site)
    assert everything[0] == Sheet("", "Home")
    paths = [sheet.path for sheet in everything]
    assert set(PAGES) < set(paths) and len(paths) == len(set(paths)) > 40
    assert not [p for p in paths if p.startswith("teacher/")], "a guide page in the student book"
    parts = {sheet.path: sheet.part for sheet in everything}
    assert (parts["lessons/m1-reinforce/"], parts["maps/"], parts["maps/family-tree/"]) == (
        "Course", "Maps", "Maps")
    sheets = [sheet for sheet in everything if sheet.path in PAGES]

    pdf = print_edition.print_book(site, sheets, "The course", "three pages", browser=browser)
    reader, texts = read(pdf)
    total = len(texts)
    assert texts[0].startswith("The course") and total > 3 + 10
    for number, text in enumerate(texts, start=1):      # every page stamped with its number
        assert f"{number} / {total}" in text, (number, text[-200:])
    assert blank(texts) == []
    marks = outline(reader)
    assert [title for title, _ in marks] == ["Course", sheets[0].title, "Maps", sheets[1].title,
                                             "Labs", sheets[2].title], marks
    starts = [page for title, page in marks if title in {s.title for s in sheets}]
    assert starts[0] == 2 and starts == sorted(starts) and starts[-1] < total
    book = "\n".join(texts)
    for sheet in sheets:
        html = page_file(site, sheet.path).read_text(encoding="utf-8")
        commands = tex_commands(html)
        assert commands, f"{sheet.path}: no maths found to check"
        pages = texts[starts[sheets.index(sheet)] - 1:
                      [*starts, total + 1][sheets.index(sheet) + 1] - 1]
        raw = {c for c in commands if any(c in page for page in pages)}
        assert not raw, f"{sheet.path}: TeX printed raw: {sorted(raw)}"
        assert not [p for p in pages if DELIMITERS.search(p)], f"{sheet.path}: a TeX delimiter"
    # what a reader clicks open on screen is printed: an answer's body, a model answer's text
    assert "the freed probability is" in " ".join(book.split())
    assert "Teacher's checklist" not in book        # the lesson's teacher block: not a student's
    assert "Save my prediction" not in book         # buttons cannot be pressed on paper


PRINTED_WIDTHS = """() => [...document.querySelectorAll('div.mermaid')].map(host => {
  const svg = courseShadowRoot(host).querySelector('svg');
  return [svg.getBoundingClientRect().width, host.getBoundingClientRect().width];
})"""


A4 = 703
"""Pixels: the width of A4's column between the site's page margins (186 mm)."""
COLUMN = 560
"""Pixels: a column narrower than the widest diagram of the family tree (about 630 px; A4's
column holds every diagram of the course at its natural size)."""


def test_on_paper_each_diagram_fits_the_page_and_nothing_scrolls(site_url, browser):
    """As `beforeprint` leaves the page (print.js), and as `afterprint` gives it back."""
    tab = browser.new_page(viewport={"width": COLUMN, "height": 1000})
    try:
        tab.goto(site_url + "maps/family-tree/", wait_until="load")
        tab.wait_for_function(print_edition.READY)
        natural = tab.evaluate(PRINTED_WIDTHS)
        assert max(svg for svg, _ in natural) > COLUMN, "no diagram wider than the column"
        tab.emulate_media(media="print")
        tab.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        fitted = tab.evaluate(PRINTED_WIDTHS)
        assert all(svg <= host + 0.5 for svg, host in fitted), fitted
        tab.set_viewport_size({"width": A4, "height": 1000})
        assert tab.evaluate("document.documentElement.scrollWidth") <= A4   # tables too
        tab.evaluate("window.dispatchEvent(new Event('afterprint'))")
        shown = [svg for svg, _ in tab.evaluate(PRINTED_WIDTHS)]
        assert shown == [svg for svg, _ in natural]     # the screen as the reader left it
    finally:
        tab.close()


LESSON = """# Milestone 9: a lesson

Some maths: $\\frac{a}{b}$ and nothing more.

## Exercise

The exercise stays out of the handouts.

## Your deliverable

Hand in the folder runs/my_run/ and a note.

## Check yourself

- [ ] Not a handout either.

!!! teacher
    ## Teacher's checklist

    - [ ] The student says what $\\theta$ is.
"""
ORAL = """# The oral exam

Q1. What is a reward?

??? teacher "Model answer"
    The number the verifier returns for one completion.
"""
GUIDE = """# Teacher's guide

## Check-ins

Ask each group to explain one design choice.

## Grading

Not a handout.
"""


def test_the_handouts_are_the_teachers_sections_and_never_a_students(tmp_path, built_site,
                                                                    browser):
    with pytest.raises(SystemExit, match="is the student edition; the handouts come from"):
        print_edition.handouts(built_site.site)
    nav = ("nav:\n  - Home: index.md\n  - Lesson: lessons/m9.md\n  - Oral exam: oral-exam.md\n"
           "  - Runs: runs/index.md\n  - Teacher's guide:\n      - teacher/index.md\n")
    root = mini_repo(tmp_path / "repo", {"index.md": "# Home\n\nWelcome.\n",
                                         "lessons/m9.md": LESSON, "oral-exam.md": ORAL,
                                         "teacher/index.md": GUIDE}, nav=nav)
    (root / "docs" / "assets").symlink_to(REPO / "docs" / "assets")   # the site's scripts
    build = build_site(root / "site", extra_runs=None, config=root / "mkdocs.yml",
                       edition="teacher")
    assert build.returncode == 0, build.log
    sheets = print_edition.handouts(build.site)
    assert sheets == [
        Sheet("lessons/m9/", "Lesson: deliverable and teacher's checklist", "",
              ("your-deliverable", "teachers-checklist")),
        Sheet("oral-exam/", "Oral exam"),
        Sheet("teacher/", "Teacher's guide: check-ins", "Teacher's guide", ("check-ins",))]
    _, texts = read(print_edition.print_book(build.site, sheets, "Handouts", "",
                                             browser=browser))
    assert len(texts) == 4 and blank(texts) == []     # contents, lesson, oral exam, guide
    words = " ".join(" ".join(texts).split())
    for kept in ("Hand in the folder", "The student says what", "The number the verifier "
                 "returns", "Ask each group", "Milestone 9: a lesson"):
        assert kept in words, kept
    for dropped in ("The exercise stays out", "Not a handout"):
        assert dropped not in words, dropped
    assert not DELIMITERS.search(words) and "\\theta" not in words and "\\frac" not in words


def test_a_folder_without_a_built_site_is_named_in_one_line(tmp_path: Path):
    with pytest.raises(SystemExit, match=r"index\.html: no built site here"):
        print_edition.book(tmp_path)
