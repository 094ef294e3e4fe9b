"""The concept figures, drawn at build time by `course.reports.figures` into `assets/figures/`.

A lesson embeds one as `![...](../assets/figures/<name>.png)`. The PNGs are generated from the
harness's own numbers on every build, never committed, so a figure cannot drift from the code.

`mkdocs serve` rebuilds the site in the same process at every save, and drawing the figures
takes most of a second; so they are drawn again only when the runs they read have changed.
Their code cannot change within a process (a module is imported once): after editing it,
restart `mkdocs serve`. A `mkdocs build` is one build, so it always draws every figure.

A page numbers and captions its figures with pymdownx.blocks.caption (the teacher's guide,
"Extending the course", shows the form): "Figure N." before the caption, `id="__figure-caption_N"`
on the `<figure>`. The prose refers to it as Figure N; the picture links to its file, so that on
a phone a tap opens it full size.

On a phone a plot shown at the column's width would shrink its text below what can be read
(4 to 7 px), so each numbered figure drawn by `course.reports.png.figure_png` (lessons, run
pages, labs) carries the width at which its smallest text is `PHONE_TEXT_PX`
(`phone_width`, from the PNG's own record of its smallest text): course.css shows it at
least that wide on a phone, in a box that scrolls sideways.
"""

from __future__ import annotations

import functools
import io
import math
import posixpath
import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from PIL import Image, UnidentifiedImageError

from course.paths import RUNS_DIR
from course.reports.figures import FIGURES
from course.reports.png import SMALLEST_TEXT_KEY

FOLDER = "assets/figures"
PHONE_TEXT_PX = 9.0
"""The smallest a plot's text may be shown on a phone, in CSS px."""


def runs_state() -> tuple[tuple[str, int, int], ...]:
    """Path, size and modification time of every file under runs/, the figures' data."""
    return tuple((path.as_posix(), stat.st_size, stat.st_mtime_ns)
                 for path in sorted(RUNS_DIR.rglob("*")) if path.is_file()
                 for stat in [path.stat()])


@functools.lru_cache(maxsize=1)
def drawn(runs: tuple[tuple[str, int, int], ...]) -> dict[str, bytes]:
    """Each figure's PNG, drawn once per state of runs/ (`runs_state`); the last one is kept."""
    return {name: draw() for name, draw in FIGURES.items()}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for name, png in drawn(runs_state()).items():
        files.append(File.generated(config, f"{FOLDER}/{name}", content=png))
    return files


def phone_width(png: bytes) -> int | None:
    """The CSS width, in px, at which the figure `png` shows its smallest text at
    `PHONE_TEXT_PX`; None for a picture that does not record its smallest text (not drawn by
    `figure_png`: a test's stand-in, say)."""
    try:
        with Image.open(io.BytesIO(png)) as image:
            smallest = getattr(image, "text", {}).get(SMALLEST_TEXT_KEY)
            width = image.width
    except UnidentifiedImageError:
        return None
    return math.ceil(width * PHONE_TEXT_PX / float(smallest)) if smallest else None


def with_phone_width(img: str, png: bytes) -> str:
    """An `<img ...>` tag with the phone width of its picture `png` as a style (course.css),
    written last, so that the tag starts as it did."""
    wide = phone_width(png)
    if wide is None:
        return img
    end = len(img) - (2 if img.endswith("/>") else 1)
    return f'{img[:end].rstrip()} style="--course-phone-width: {wide}px" {img[end:]}'


_FIGURE_IMG = re.compile(r'(<figure id="__figure-caption_\d+">\s*(?:<p>)?<a [^>]*>)(<img [^>]*'
                         r'src="(?P<src>[^"]+)"[^>]*>)')


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Each numbered figure's picture, found among the site's files, gets its phone width."""
    if "__figure-caption_" not in html:        # most pages have no figure
        return html
    by_url = {file.url: file for file in files if file.url.endswith(".png")}

    def annotate(match: re.Match[str]) -> str:
        url = posixpath.normpath(posixpath.join(page.url, match["src"]))  # a folder's URL
        file = by_url.get(url)
        return match[1] + (match[2] if file is None else with_phone_width(match[2],
                                                                           file.content_bytes))

    return _FIGURE_IMG.sub(annotate, html)
