"""The concept figures, drawn at build time by `course.reports.figures` into `assets/figures/`.

A lesson embeds one as `![...](../assets/figures/<name>.png)`. The PNGs are generated from the
harness's own numbers on every build, never committed, so a figure cannot drift from the code.

`mkdocs serve` rebuilds the site in the same process at every save, and drawing the figures
takes most of a second; so they are drawn again only when the runs they read have changed.
Their code cannot change within a process (a module is imported once): after editing it,
restart `mkdocs serve`. A `mkdocs build` is one build, so it always draws every figure.

Every picture that stands alone in a paragraph, on any page (a concept figure or a run's
plot), becomes a numbered figure (`on_page_content`): `<figure id="figure-N">` with the caption
"Figure N. <its text>", the text being the image's title (`![alt](src "caption")`) or else its
alt text. The prose refers to it as Figure N; the picture links to its file, so that on a
phone a tap opens it full size.
"""

from __future__ import annotations

import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from course.paths import RUNS_DIR
from course.reports.figures import FIGURES

FOLDER = "assets/figures"

_drawn: dict[tuple, dict[str, bytes]] = {}
"""The PNGs drawn in this process, under the state of runs/ they were drawn from."""


def runs_state() -> tuple[tuple[str, int, int], ...]:
    """Path, size and modification time of every file under runs/, the figures' data."""
    return tuple((path.as_posix(), stat.st_size, stat.st_mtime_ns)
                 for path in sorted(RUNS_DIR.rglob("*")) if path.is_file()
                 for stat in [path.stat()])


def on_files(files: Files, config: MkDocsConfig) -> Files:
    state = runs_state()
    if state not in _drawn:
        _drawn.clear()
        _drawn[state] = {name: draw() for name, draw in FIGURES.items()}
    for name, png in _drawn[state].items():
        files.append(File.generated(config, f"{FOLDER}/{name}", content=png))
    return files


_ALONE = re.compile(r'<p>(?P<img><img alt="(?P<alt>[^"]*)" src="(?P<src>[^"]+)"'
                    r'(?: title="(?P<title>[^"]*)")?\s*/?>)(?P<rest>(?:\s*<!--.*?-->)*)\s*</p>',
                    re.DOTALL)
"""An image that is the whole of its paragraph, as Python-Markdown writes `![alt](src)`,
perhaps with HTML comments after it (an `unmeasured` marker)."""


def numbered_figures(content: str) -> str:
    """Each picture alone in its paragraph as `<figure>` with "Figure N." and its caption."""
    count = 0

    def figure(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        caption = match["title"] if match["title"] is not None else match["alt"]
        image = match["img"].replace(f' title="{match["title"]}"', "") if match["title"] \
            else match["img"]
        return (f'<figure class="course-figure" id="figure-{count}">'
                f'<a href="{match["src"]}" title="Open the figure full size">{image}</a>'
                f"<figcaption><strong>Figure {count}.</strong> {caption}</figcaption></figure>"
                f"{match['rest']}")

    return _ALONE.sub(figure, content)


def on_page_content(content: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return numbered_figures(content)
