"""The labs held to the lessons' standard (issue 31): what a lab page shows fits its boxes, and
every plot is a numbered figure with a caption and alt text.

A lab's code cell and its output box are narrower than a lesson's code block: Jupyter's prompt
column (`In [1]:`) takes part of the content column. At a 1280 px window a cell's code box is
550 px wide and its output box 579 px, in 13 px monospace (7.83 px a character): 70 and 73
characters (`CODE_COLUMNS`, `OUTPUT_COLUMNS`). The static tests count characters in the built
HTML; the browser's every-page pass measures the boxes themselves (`lab_box_problems`), so the
two numbers cannot drift from the page, and checks that no display equation is wider than its
box.

A lab's figure (`course.reports.png.show_figure`) has the markup of a lesson's figure, and its
PNG is written next to the page (course_site/notebooks.py), so the build's and the browser's
figure checks read both alike; these tests check what is particular to the labs.
"""

from __future__ import annotations

import re
import struct
from html import unescape
from pathlib import Path

import pytest
from sitebuild import Build, page_file, site_pages, wait_until

from course.reports.png import LAB_OUTPUT_PX, SMALLEST_TEXT_KEY, SMALLEST_TEXT_PX
from course_site import notebooks

CODE_COLUMNS = 70
"""The longest code line a lab cell shows whole at 1280 px (550 px at 7.83 px a character)."""
OUTPUT_COLUMNS = 73
"""The longest printed line a lab cell's output box shows whole at 1280 px (579 px)."""
NBCONVERT_ALT = "No description has been provided for this image"
"""The alt text nbconvert gives an image output that has none."""
LAB_FIGURES = 13
"""The plots of the six labs when issue 31 was closed: none may go missing unnoticed."""

_CODE = re.compile(r'<div class="highlight-ipynb[^"]*"><pre>(.*?)</pre>', re.DOTALL)
_OUTPUT = re.compile(r'<div class="jp-RenderedText jp-OutputArea-output"[^>]*>\s*<pre>(.*?)</pre>',
                     re.DOTALL)
_FIGURE = re.compile(
    r'<figure id="__figure-caption_(\d+)"><a href="([^"]*)"><img alt="([^"]*)" src="([^"]*)"'
    r' style="--course-phone-width: \d+px"\s*/?></a><figcaption><p><span class="caption-prefix">'
    r'Figure \1\.</span> (.*?)</p>'
    r"</figcaption></figure>", re.DOTALL)


def lab_pages(site: Path) -> list[str]:
    pages = [page for page in site_pages(site) if re.fullmatch(r"labs/lab_\w+/", page)]
    assert len(pages) >= 6, pages
    return pages


def shown_lines(pattern: re.Pattern, html: str) -> list[str]:
    """Every line of text of the boxes `pattern` finds, as the reader sees it."""
    return [line for box in pattern.findall(html)
            for line in unescape(re.sub(r"<[^>]+>", "", box)).split("\n")]


def png_text(png: bytes) -> dict[str, str]:
    """A PNG's tEXt entries, keyword -> text."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    found, at = {}, 8
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"tEXt":
            keyword, _, text = png[at + 8:at + 8 + length].partition(b"\0")
            found[keyword.decode("latin-1")] = text.decode("latin-1")
        at += 12 + length
    return found


def png_width(png: bytes) -> int:
    return struct.unpack(">I", png[16:20])[0]


# -- the built site ---------------------------------------------------------------------------

def test_every_lab_line_fits_its_box(built_site: Build):
    """No code line and no printed line of a lab is wider than its box: none wraps, none
    scrolls (lab_tokens' 74 printed lines once showed as 91)."""
    wide, counted = [], 0
    for page in lab_pages(built_site.site):
        html = page_file(built_site.site, page).read_text(encoding="utf-8")
        for kind, pattern, columns in (("code", _CODE, CODE_COLUMNS),
                                       ("output", _OUTPUT, OUTPUT_COLUMNS)):
            lines = shown_lines(pattern, html)
            counted += len(lines)
            wide += [f"/{page} {kind}: {len(line)} > {columns} columns: {line[:80]!r}"
                     for line in lines if len(line) > columns]
    assert counted >= 1000, f"only {counted} lines found: has the notebook markup changed?"
    assert not wide, "\n".join(wide)


def test_every_lab_plot_is_a_numbered_figure_with_caption_and_alt_text(built_site: Build):
    """Each image of a lab is Figure N (numbered from 1 in page order) with a caption and alt
    text of its own, its PNG a file next to the page that the picture links to, drawn by
    `figure_png` in the course's style, its smallest text at least 12 px as the output box
    shows it; and no lab page is left with nbconvert's placeholder alt text."""
    problems, figures = [], 0
    for page in lab_pages(built_site.site):
        path = page_file(built_site.site, page)
        html = path.read_text(encoding="utf-8")
        if NBCONVERT_ALT in html:
            problems.append(f"/{page}: nbconvert's placeholder alt text")
        found = _FIGURE.findall(html)
        if html.count("<img") != len(found):
            problems.append(f"/{page}: {html.count('<img')} images, {len(found)} of them "
                            "numbered figures")
        numbers = [int(number) for number, *_ in found]
        if numbers != list(range(1, len(found) + 1)):
            problems.append(f"/{page}: figures numbered {numbers}")
        for number, link, alt, src, caption in found:
            figures += 1
            where = f"/{page} figure {number}"
            alt, caption = unescape(alt), unescape(caption)
            if len(alt) < 20 or alt == NBCONVERT_ALT or len(caption) < 20:
                problems.append(f"{where}: alt {alt!r}, caption {caption!r}")
            if not (link == src == f"figure-{number}.png"):
                problems.append(f"{where}: links {link!r}, shows {src!r}")
                continue
            png = (path.parent / src).read_bytes()
            smallest = png_text(png).get(SMALLEST_TEXT_KEY)
            if smallest is None:
                problems.append(f"{where}: not drawn by figure_png")
                continue
            natural = png_width(png)
            shown = float(smallest) * min(natural, LAB_OUTPUT_PX) / natural
            if shown < SMALLEST_TEXT_PX:
                problems.append(f"{where}: its smallest text is shown at {shown:.1f} px")
    assert figures >= LAB_FIGURES, figures
    assert not problems, "\n".join(problems)


def test_no_page_shows_nbconvert_placeholder_alt_text(built_site: Build):
    pages = [page for page in site_pages(built_site.site)
             if NBCONVERT_ALT in page_file(built_site.site, page).read_text(encoding="utf-8")]
    assert not pages, pages


# -- the figure files: course_site/notebooks.py, on a small page -------------------------------

def test_inline_lab_figures_become_files_that_the_picture_links_to():
    html = ('<div><figure id="__figure-caption_1"><img alt="A line that climbs" '
            'src="data:image/png;base64,iVBORw0KGgo="/><figcaption><p>'
            '<span class="caption-prefix">Figure 1.</span> Up</p></figcaption></figure>'
            '<img alt="a plain image" src="data:image/png;base64,AAAA"></div>')
    out, files = notebooks.figure_files(html)
    assert files == {"figure-1.png": b"\x89PNG\r\n\x1a\n"}
    assert ('<figure id="__figure-caption_1"><a href="figure-1.png"><img alt="A line that '
            'climbs" src="figure-1.png"/></a><figcaption>') in out
    assert 'src="data:image/png;base64,AAAA"' in out      # not a numbered figure: left alone


def test_two_lab_figures_with_one_number_fail_the_page():
    one = ('<figure id="__figure-caption_2"><img alt="x" src="data:image/png;base64,AAAA">'
           "</figure>")
    with pytest.raises(ValueError, match="numbered 2"):
        notebooks.figure_files(one + one)


# -- in the browser, at 1280 px -----------------------------------------------------------------

MEASURE = """() => {
  const columns = e => {
    const probe = document.createElement('span');
    probe.textContent = 'M'.repeat(100);
    probe.style.whiteSpace = 'pre';
    e.appendChild(probe);
    const each = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const style = getComputedStyle(e);
    return (e.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight))
      / each;
  };
  const boxes = selector => [...document.querySelectorAll(selector)];
  const code = boxes('.jupyter-wrapper .highlight-ipynb > pre');
  const output = boxes('.jupyter-wrapper .jp-OutputArea-output > pre');
  return {
    code: Math.min(...code.map(columns)), output: Math.min(...output.map(columns)),
    scrolls: [...code, ...output, ...boxes('.jupyter-wrapper .jp-RenderedHTML *')]
      .filter(e => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      .map(e => e.textContent.trim().slice(0, 40)),
    equations: boxes('.jupyter-wrapper mjx-container[display="true"]').map(e => {
      const box = e.closest('.jp-RenderedMarkdown').getBoundingClientRect();
      const drawn = e.firstElementChild.getBoundingClientRect();
      return {tex: e.parentElement.textContent.slice(0, 40), drawn: drawn.width,
              box: box.width, right: drawn.right - box.right};
    }),
  };
}"""
"""Per lab page: how many characters its narrowest code box and output box hold, the boxes
that scroll sideways (code, printed output, a table of an HTML output), and each display
equation's drawn width against its cell's."""

MATH_TYPESET = """() => window.MathJax?.startup?.promise &&
  [...document.querySelectorAll('.jp-RenderedMarkdown')]
    .every(e => !/\\$[^$\\s][^$]*\\$/.test(e.textContent))"""


def lab_box_problems(page, path: str) -> list[str]:
    """On the open lab page at 1280 px (the every-page pass of tests/site/test_browser.py
    calls it, so each lab is loaded once): every code box holds `CODE_COLUMNS` characters and
    every output box `OUTPUT_COLUMNS`, the widths the static test counts against; no code,
    output or table box scrolls sideways; no display equation is drawn wider than its cell
    (lab_tokens' was cut by 49 px)."""
    wait_until(page, MATH_TYPESET, "every formula of the lab typeset")
    found = page.evaluate(MEASURE)
    problems = []
    if found["code"] < CODE_COLUMNS or found["output"] < OUTPUT_COLUMNS:
        problems.append(f"/{path}: the boxes hold {found['code']:.1f} characters of code and "
                        f"{found['output']:.1f} of output")
    problems += [f"/{path}: a box scrolls sideways: {text!r}" for text in found["scrolls"]]
    problems += [f"/{path}: an equation is {e['drawn']:.0f} px in a {e['box']:.0f} px cell: "
                 f"{e['tex']!r}" for e in found["equations"] if e["right"] > 0.5]
    return problems
