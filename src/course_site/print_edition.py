"""The course on paper: a built edition, printed page by page by Chromium, bound into one PDF.

Two books come out of the two editions (`bash scripts/site.sh --print` makes both):

- **the course** (`book`): every page of the student edition in the order of its navigation,
  with a contents page, a bookmark per page and the page numbers of the whole book;
- **the teacher's handouts** (`handouts`): from the teacher edition only, what a teacher hands
  out or takes to a check-in: each milestone's deliverable and teacher's checklist, the oral
  exam with its model answers, and the check-in prompts.

How a page gets onto paper:

1. The built site is served on 127.0.0.1 (`served`): MathJax typesets on Material's page
   event, which never fires from a `file://` address, and Mermaid draws in the browser, so
   the page must be opened as a reader opens it.
2. Debian's Chromium opens it (the browser the tests drive) and waits until every formula is
   typeset and every diagram drawn (`READY`).
3. Chromium prints it on A4 with the site's print style (`docs/assets/stylesheets/course.css`,
   "On paper") after the site's `beforeprint` script has opened every folded box and fitted
   each diagram to the page's width (`docs/assets/javascripts/print.js`); a handout keeps only
   its sections of the page (`KEEP_SECTIONS`).
4. pypdf binds the pages: a contents page first, then each page's sheets, each page of the
   book stamped with its title and number (`bind`).

Why not mkdocs-print-site-plugin, which makes one printable page of a Material site: it adds
that page to the edition itself, a second copy of every lesson that the site's search, its
link checks and the every-page browser tests would then carry, and it prints whole pages,
while a handout is a few sections of a page. WeasyPrint runs no JavaScript (the formulas
stay raw TeX). Nothing else here is new: the print rules are the site's stylesheet and one
script, and a reader who prints a page from the browser gets the same paper.

`python -m course_site.print_edition book SITE OUT.pdf` and `... handouts SITE OUT.pdf` print
one book from a built edition, and say how long it took.
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import io
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's Chromium (apt-get install chromium), never a browser Playwright downloads."""
PAPER = "A4"
"""Chromium's paper: A4 (210 x 297 mm). The margins are the site's (`@page` in course.css),
which Chromium prefers to its own."""
WAIT_MS = 120_000
"""The longest wait for one page to be ready, in milliseconds: a healthy lesson takes under two
seconds on a quiet machine; a page that takes two minutes will not get there."""
HANDOUT_PAGES = ("oral-exam/",)
"""Pages the handouts print whole (the teacher edition's: with every model answer)."""
HANDOUT_SECTIONS = {"your-deliverable": "deliverable", "teachers-checklist": "teacher's checklist",
                    "check-ins": "check-ins"}
"""The sections (`## ` headings, by id) the handouts take from any other page, and what the
contents call each: a milestone's deliverable and teacher's checklist, the guide's check-in
prompts."""
TEACHER_MARK = 'class="course-teacher-edition"'
"""What every page of the teacher edition holds (overrides/main.html), and no student page."""

NO_SEARCH_WORKER = """(() => {
  const Real = window.Worker;
  window.Worker = function (url, options) {
    if (!String(url).includes('/workers/search.')) return new Real(url, options);
    return {postMessage() {}, addEventListener() {}, removeEventListener() {}, terminate() {}};
  };
})();"""
"""A script run before each page's own: Material's search worker is never started, so the
site's search index (1.5 MB) is not indexed at every page load, 0.44 CPU-seconds a page (71
against 37 CPU-seconds for 77 pages, measured on 2 cores); paper has no search box to use."""
READY = """() => {
  if (document.readyState !== 'complete' || !window.courseShadowRoot) return false;
  const typeset = [...document.querySelectorAll('.arithmatex')]
    .every(math => math.querySelector('mjx-container'));
  const notebookTex = [...document.querySelectorAll('.jp-RenderedMarkdown')]
    .some(cell => /\\$[^$\\s][^$]*\\$/.test(cell.textContent));
  const drawn = document.querySelectorAll('pre.mermaid').length === 0 &&
    [...document.querySelectorAll('div.mermaid')]
      .every(host => courseShadowRoot(host)?.querySelector('svg'));
  return typeset && !notebookTex && drawn;
}"""
"""True once the page is loaded, every formula typeset (an `.arithmatex` span holds MathJax's
output; no `$...$` is left in a lab's Markdown cell) and every diagram drawn (Material
replaces each `pre.mermaid` by a `div.mermaid` whose shadow root holds the SVG)."""

KEEP_SECTIONS = """ids => {
  const article = document.querySelector('.md-content article');
  const kept = new Set();
  for (const id of ids) {
    const heading = document.getElementById(id);
    if (!heading) continue;
    let block = heading;
    while (block.parentElement !== article) block = block.parentElement;
    kept.add(block);
    for (let next = block.nextElementSibling; next; next = next.nextElementSibling) {
      if (next.matches('h1, h2') || next.querySelector('h2')) break;
      kept.add(next);
    }
  }
  for (const child of [...article.children]) {
    if (!kept.has(child) && !child.matches('h1')) child.remove();
  }
}"""
"""Keep, of the page's article, its title and each section named by an id: the top-level
block holding that heading, up to the next block that is or holds a `## ` heading."""

STAMP = """<!doctype html><meta charset="utf-8"><style>
@page {{ size: A4; margin: 0 }}
body {{ margin: 0; font: 8pt sans-serif; color: #555 }}
div {{ height: 297mm; position: relative; break-after: page }}
span {{ position: absolute; bottom: 8mm }}
.title {{ left: 16mm; right: 40mm; overflow: hidden; white-space: nowrap }}
.number {{ right: 16mm }}
</style>{pages}"""
"""One transparent A4 page per page of the book: its title and its number, at the foot."""

CONTENTS = """<!doctype html><meta charset="utf-8"><style>
@page {{ margin: 20mm 16mm }}
body {{ font: 11pt sans-serif; margin: 0 }}
h1 {{ font-size: 20pt; font-weight: 400 }}
p {{ color: #555 }}
table {{ width: 100%; border-collapse: collapse }}
td {{ padding: 2pt 0; border-bottom: 0.5pt dotted #bbb }}
td:last-child {{ text-align: right; width: 3em }}
tr.part td {{ padding-top: 8pt; font-weight: 700; border: 0; text-align: left }}
td.in-part {{ padding-left: 1.2em }}
</style><h1>{title}</h1><p>{subtitle}</p><table>{rows}</table>"""
"""The contents page: each sheet's title and the page it starts on."""


@dataclass(frozen=True)
class Sheet:
    """One page of the site as it goes on paper."""

    path: str
    """The page's address under the site's root, as its navigation links it (`lessons/m1/`)."""
    title: str
    """Its title in the navigation: the bookmark, the contents line and the stamp."""
    part: str = ""
    """The top-level section of the navigation it is in (`Course`); empty: none."""
    sections: tuple[str, ...] = ()
    """The ids of the sections kept (`HANDOUT_SECTIONS`); empty: the whole page."""


class _Navigation(HTMLParser):
    """The links of Material's primary navigation, in order, each with the title of the
    top-level section it sits in (`Course`, `Maps`; empty for a page at the top level). A
    section's own page (navigation.indexes) is linked just before its section opens, and
    belongs to it."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str]] = []   # (address, title, section)
        self._navs: list[str | None] = []   # the <nav> elements open, each one's data-md-level
        self._section = ""
        self._reading: str | None = None     # "link" or "section": whose text is being read
        self._href = ""
        self._text: list[str] = []
        self._index = False                  # a section's own page is being linked
        self._owned = False                  # the <nav> just opened is that page's section

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if tag == "nav" and (self._navs or "md-nav--primary" in classes):
            self._navs.append(values.get("data-md-level"))
            self._owned, self._index = self._index, False
        elif not self._navs:
            return
        elif tag == "div" and "md-nav__container" in classes:
            self._index = True
        elif tag == "label" and "md-nav__title" in classes and self._navs[-1] == "1":
            self._reading, self._text = "section", []
        elif tag == "a" and "md-nav__link" in classes:
            self._reading, self._href, self._text = "link", values.get("href") or "", []

    def handle_endtag(self, tag: str) -> None:
        text = " ".join("".join(self._text).split())
        if tag == "nav" and self._navs:
            if self._navs.pop() == "1":
                self._section = ""
        elif tag == "label" and self._reading == "section":
            self._section, self._reading = text, None
            if self._owned and self.links:        # the section's own page, linked before it
                self.links[-1] = (*self.links[-1][:2], text)
        elif tag == "a" and self._reading == "link":
            self.links.append((self._href, text, self._section))
            self._reading = None

    def handle_data(self, data: str) -> None:
        if self._reading:
            self._text.append(data)


def navigation(site: Path) -> list[Sheet]:
    """Every page of the built edition in `site`, in the order of its navigation (read from
    the home page: Material writes the whole navigation into every page)."""
    home = site / "index.html"
    if not home.is_file():
        raise SystemExit(f"print_edition: {home}: no built site here (bash scripts/site.sh "
                         "--build builds one)")
    parser = _Navigation()
    parser.feed(home.read_text(encoding="utf-8"))
    sheets: dict[str, Sheet] = {}
    for href, title, section in parser.links:
        path = "" if href in (".", "./") else href
        if "#" not in href and "://" not in href and path not in sheets:
            sheets[path] = Sheet(path, title, section)
    return list(sheets.values())


def is_teacher_edition(site: Path) -> bool:
    """Whether `site` is a build of the teacher edition."""
    return TEACHER_MARK in (site / "index.html").read_text(encoding="utf-8")


def book(site: Path) -> list[Sheet]:
    """The whole edition, page by page."""
    return navigation(site)


def handouts(site: Path) -> list[Sheet]:
    """The teacher's handouts, in the order of the navigation: `HANDOUT_PAGES` whole, and
    `HANDOUT_SECTIONS` from every page that has one. Refuses a student edition in one line."""
    if not is_teacher_edition(site):
        raise SystemExit(f"print_edition: {site} is the student edition; the handouts come from "
                         "the teacher edition (bash scripts/site.sh --teacher --build)")
    sheets = []
    for sheet in navigation(site):
        page = site / sheet.path / "index.html" if sheet.path else site / "index.html"
        text = page.read_text(encoding="utf-8")
        kept = tuple(name for name in HANDOUT_SECTIONS if f'id="{name}"' in text)
        if sheet.path in HANDOUT_PAGES:
            sheets.append(sheet)
        elif kept:
            named = " and ".join(HANDOUT_SECTIONS[name] for name in kept)
            sheets.append(Sheet(sheet.path, f"{sheet.title}: {named}", sheet.part, kept))
    missing = [path for path in HANDOUT_PAGES if path not in {s.path for s in sheets}]
    if missing:
        raise SystemExit(f"print_edition: {site}: no page {', '.join(missing)} in its "
                         "navigation (print_edition.HANDOUT_PAGES names it)")
    return sheets


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Say nothing per request."""


@contextmanager
def served(site: Path) -> Iterator[str]:
    """`site` served on a free port of 127.0.0.1, for as long as the block runs: its address."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def print_sheet(tab: Page, address: str, sheet: Sheet) -> bytes:
    """The PDF of one sheet: the page opened in `tab` (a Playwright page) at `address`, once
    ready, its sections kept, printed on `PAPER`."""
    tab.goto(address + sheet.path, wait_until="load")
    try:
        tab.wait_for_function(READY, timeout=WAIT_MS, polling=100)
    except Exception as error:   # Playwright's TimeoutError: say which page
        raise SystemExit(f"print_edition: {sheet.path or 'home'}: not ready to print after "
                         f"{WAIT_MS // 1000} s (a formula not typeset or a diagram not "
                         "drawn)") from error
    if sheet.sections:
        tab.evaluate(KEEP_SECTIONS, list(sheet.sections))
    return tab.pdf(print_background=True, format=PAPER)


def _contents_rows(sheets: list[Sheet], starts: list[int]) -> Iterator[str]:
    """The contents' rows: each sheet's title and first page, under its part's title."""
    part = ""
    for sheet, start in zip(sheets, starts, strict=True):
        if sheet.part and sheet.part != part:
            yield f'<tr class="part"><td colspan="2">{html.escape(sheet.part)}</td></tr>'
        part = sheet.part
        indent = ' class="in-part"' if sheet.part else ""
        yield f"<tr><td{indent}>{html.escape(sheet.title)}</td><td>{start}</td></tr>"


def bind(tab: Page, sheets: list[Sheet], printed: list[bytes], title: str,
         subtitle: str) -> bytes:
    """One PDF: a contents page, then each sheet's pages, bookmarked, every page stamped with
    its sheet's title and its number in the book."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import IndirectObject

    readers = [PdfReader(io.BytesIO(pdf)) for pdf in printed]
    front = 0
    while True:        # the contents may take more than one page: number the book after it
        starts, page = [], front + 1
        for reader in readers:
            starts.append(page)
            page += len(reader.pages)
        rows = "".join(_contents_rows(sheets, starts))
        tab.set_content(CONTENTS.format(title=html.escape(title), rows=rows,
                                        subtitle=html.escape(subtitle)))
        contents = PdfReader(io.BytesIO(tab.pdf(format=PAPER)))
        if len(contents.pages) == front:
            break
        front = len(contents.pages)
    labels = ["Contents"] * front + [sheet.title for sheet, reader in zip(sheets, readers,
                                                                          strict=True)
                                     for _ in reader.pages]
    stamps = "".join(f'<div><span class="title">{html.escape(label)}</span>'
                     f'<span class="number">{number} / {len(labels)}</span></div>'
                     for number, label in enumerate(labels, start=1))
    tab.set_content(STAMP.format(pages=stamps))
    stamp = PdfReader(io.BytesIO(tab.pdf(prefer_css_page_size=True)))
    writer = PdfWriter()
    writer.append(contents)
    parts: dict[str, IndirectObject] = {}
    for sheet, reader, start in zip(sheets, readers, starts, strict=True):
        writer.append(reader)
        if sheet.part and sheet.part not in parts:
            parts[sheet.part] = writer.add_outline_item(sheet.part, start - 1)
        writer.add_outline_item(sheet.title, start - 1, parent=parts.get(sheet.part))
    for sheet_page, stamped in zip(writer.pages, stamp.pages, strict=True):
        sheet_page.merge_page(stamped)
        sheet_page.compress_content_streams()   # merging leaves the page's drawing unzipped
    writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def print_book(site: Path, sheets: list[Sheet], title: str, subtitle: str,
               browser: Browser | None = None,
               progress: Callable[[int, int, Sheet], None] | None = None) -> bytes:
    """The PDF of `sheets` of the built edition in `site`. `browser` is a Playwright browser
    (one is launched when none is given); `progress(done, total, sheet)` is told each page."""
    with served(site) as address, _browser(browser) as launched:
        tab = launched.new_page()
        tab.add_init_script(NO_SEARCH_WORKER)
        try:
            printed = []
            for number, sheet in enumerate(sheets, start=1):
                printed.append(print_sheet(tab, address, sheet))
                if progress:
                    progress(number, len(sheets), sheet)
            return bind(tab, sheets, printed, title, subtitle)
        finally:
            tab.close()


@contextmanager
def _browser(browser: Browser | None) -> Iterator[Browser]:
    """`browser` itself, or Debian's Chromium launched for the block when it is None."""
    if browser is not None:
        yield browser
        return
    if not CHROMIUM.exists():
        raise SystemExit(f"print_edition: {CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=["--no-sandbox", "--disable-gpu"])
        try:
            yield launched
        finally:
            launched.close()


BOOKS = {
    "book": (book, "RL Foundations for LLMs", "The course: every page of the {edition} "
             "edition, in the order of its navigation."),
    "handouts": (handouts, "RL Foundations for LLMs: the teacher's handouts", "Each "
                 "milestone's deliverable and checklist, the oral exam with its model answers, "
                 "and the check-in prompts. Teacher edition: not for students."),
}
"""What each command prints: its sheets, its title, and the line under the title."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_site.print_edition",
                                     description="Print a built edition of the site to PDF.")
    parser.add_argument("what", choices=sorted(BOOKS), help="the whole edition, or the "
                        "teacher's handouts (from the teacher edition)")
    parser.add_argument("site", type=Path, help="a built edition (site/ or site-teacher/)")
    parser.add_argument("out", type=Path, help="the PDF to write")
    args = parser.parse_args(argv)
    pick, title, subtitle = BOOKS[args.what]
    sheets = pick(args.site)
    edition = "teacher" if is_teacher_edition(args.site) else "student"
    start = time.perf_counter()

    def progress(done: int, total: int, sheet: Sheet) -> None:
        print(f"\rprint_edition: {args.what}: page {done} of {total} ({sheet.path or 'home'})"
              "\033[K", end="", file=sys.stderr, flush=True)

    pdf = print_book(args.site, sheets, title, subtitle.format(edition=edition),
                     progress=progress if sys.stderr.isatty() else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_name(f".{args.out.name}.partial")
    partial.write_bytes(pdf)
    partial.replace(args.out)              # never a half-written PDF under the final name
    from pypdf import PdfReader

    pages = len(PdfReader(args.out).pages)
    back = "\r" if sys.stderr.isatty() else ""          # over the progress line, if any
    print(f"{back}print_edition: {args.out}: {len(sheets)} pages of the site on {pages} pages "
          f"of A4 in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
