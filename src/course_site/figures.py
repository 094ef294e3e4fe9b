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
"""

from __future__ import annotations

import functools

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from course.paths import RUNS_DIR
from course.reports.figures import FIGURES

FOLDER = "assets/figures"


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
