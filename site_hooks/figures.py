"""The concept figures, drawn at build time by `course.reports.figures` into `assets/figures/`.

A lesson embeds one as `![...](../assets/figures/<name>.png)`. The PNGs are generated from the
harness's own numbers on every build, never committed, so a figure cannot drift from the code.
"""

from __future__ import annotations

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from course.reports.figures import FIGURES

FOLDER = "assets/figures"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for name, draw in FIGURES.items():
        files.append(File.generated(config, f"{FOLDER}/{name}", content=draw()))
    return files
