"""Lab pages (jupytext notebooks rendered and executed by mkdocs-jupyter), made offline, with
their source to download.

- nbconvert's page template loads MathJax 2 from cdnjs and imports Mermaid from cdnjs when a
  notebook has a Mermaid output. The site already serves MathJax 3 and Mermaid itself, so those
  `<script>` elements are removed; any network reference left is a build warning (a failure
  under --strict).
- Each lab page starts with a box that links the jupytext `.py` source, which mkdocs-jupyter's
  `include_source` copies next to the page, and says how to open it as a notebook. Jupyter
  with jupytext (in the course's environment) opens the `.py` as a notebook directly;
  `jupytext --to ipynb` writes a classic `.ipynb` for any other Jupyter. The box is written
  here because Material shows `include_source`'s own link as a bare icon, with nothing said.
- The lab kernels get CurveZMQ keys (`on_startup`), so ipykernel has no reason to print
  "Kernel is running over TCP without encryption" once per lab.
- The scorer lab's page also carries a Try-it box (course_site/try_it.py) under its links.
- A lab's numbered figure (`course.reports.png.show_figure`: "Figure N.", alt text, the
  markup of a lesson's figure) leaves the kernel with its PNG inline, as a `data:` URL: the
  only way an output reaches the page, since mkdocs-jupyter offers no way to extract outputs
  to files. Each is written next to the page as `figure-N.png` (as mkdocs-jupyter writes the
  lab's source there), and the picture becomes a link to that file, as a lesson's is: Chromium
  refuses to open a `data:` URL from a link, so the file is what lets a tap on a phone open the
  figure full size (`figure_files`).
- Jupyter's prompts, the copy buttons and the download box are kept out of the search index
  (course_site/search_index.py tells the rest of what search finds).
- Under `mkdocs serve` only, executed labs are cached: course_site/serve.py.
"""

from __future__ import annotations

import base64
import itertools
import re
from pathlib import Path

import zmq
from jupyter_client.manager import KernelManager
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from course_site.figures import with_phone_width
from course_site.try_it import box_html

log = get_plugin_logger(__name__)

_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.DOTALL | re.IGNORECASE)
_NETWORK = re.compile(r"""(?:src=["']|import\(\s*["']|from\s+["'])https?://""", re.IGNORECASE)


_CELL_ID = re.compile(r'id="cell-id=[0-9a-f]+"')
"""A rendered cell's id: nbformat draws a random one for every cell of a notebook it makes from
a jupytext file, so two builds of the same lab differed in every cell."""


def numbered_cells(html: str) -> str:
    """Each rendered cell's random id replaced by its position (`cell-1`, `cell-2`, ...), so
    that a lab's page is the same bytes at every build (nothing links to these ids)."""
    count = itertools.count(1)
    return _CELL_ID.sub(lambda _: f'id="cell-{next(count)}"', html)


def strip_network_scripts(html: str) -> str:
    """Drop every <script> that loads code from the network, and MathJax 2's config block."""
    def keep(match: re.Match) -> str:
        dropped = _NETWORK.search(match[0]) or 'type="text/x-mathjax-config"' in match[0]
        return "" if dropped else match[0]
    return _SCRIPT.sub(keep, html)


_NOT_SEARCHED = re.compile(
    r'<div class="(?:jp-InputPrompt|jp-OutputPrompt|zeroclipboard-container|clipboard-copy-txt)'
    r'[^"]*"')
"""Jupyter's `In [1]:` prompts, the copy buttons' `Copied!` and the hidden copy of each cell's
code they copy: page furniture, kept out of the search index (Material skips an element marked
`data-search-exclude`), as is the download box."""


_INLINE_FIGURE = re.compile(
    r'(<figure id="__figure-caption_(\d+)">)\s*(<img alt="[^"]*") src="data:image/png;base64,'
    r'([A-Za-z0-9+/=\s]+)"([^>]*>)')
"""A lab figure's opening, as `course.reports.png.LabFigure` writes it and nbconvert passes
it on: the `<figure>`, then the `<img>` with its alt text and its PNG inline."""


def figure_files(html: str) -> tuple[str, dict[str, bytes]]:
    """`html` with each inline lab figure's PNG replaced by a file next to the page,
    `figure-N.png`, that the picture links to; and those files' bytes by name."""
    written: dict[str, bytes] = {}

    def to_file(match: re.Match) -> str:
        name = f"figure-{match[2]}.png"
        if name in written:
            raise ValueError(f"two lab figures are numbered {match[2]}")
        written[name] = base64.b64decode(match[4])
        img = with_phone_width(f'{match[3]} src="{name}"{match[5]}', written[name])
        return f'{match[1]}<a href="{name}">{img}</a>'

    return _INLINE_FIGURE.sub(to_file, html), written


def is_lab(src_uri: str) -> bool:
    """Whether a page is a lab notebook (docs/labs/lab_*.py)."""
    return src_uri.startswith("labs/") and src_uri.endswith(".py")


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    uri = page.file.src_uri
    if not is_lab(uri):
        return html
    html = numbered_cells(strip_network_scripts(html))
    for leftover in _NETWORK.finditer(html):
        log.warning(f"{uri}: the rendered notebook still loads from the network "
                    f"near {html[leftover.start():leftover.start() + 80]!r}")
    html = _NOT_SEARCHED.sub(r"\g<0> data-search-exclude", html)
    html, pictures = figure_files(html)
    folder = Path(page.file.abs_dest_path).parent
    folder.mkdir(parents=True, exist_ok=True)
    for name, png in pictures.items():
        (folder / name).write_bytes(png)
    stem = Path(uri).stem
    box = ('<div class="admonition tip course-download" data-search-exclude>'
           '<p class="admonition-title">Run this lab yourself</p><p>'
           f'<a href="{stem}.py" download>{stem}.py</a>, in jupytext\'s percent format. Jupyter '
           "opens it as a notebook where jupytext is installed (it is in the course's "
           f"environment); <code>jupytext --to ipynb {stem}.py</code> makes a classic notebook "
           "for any other Jupyter; and it runs as a script: "
           f"<code>.venv/bin/python docs/labs/{stem}.py</code>.</p></div>")
    if stem == "lab_scorer":     # the scorer lab's page has a Try-it box under its links
        box += box_html("scorer", {"completion": "Final: 0323", "expected": "323"}, number=1)
    if "</h1>" in html:          # after the notebook's title, when it has one
        return html.replace("</h1>", "</h1>" + box, 1)
    return box + html


# -- the lab kernels ------------------------------------------------------------------------

def on_startup(command: str, dirty: bool) -> None:
    """Have jupyter_client give each lab kernel CurveZMQ keys, as ipykernel's warning asks.

    A lab's kernel is a subprocess that talks to this process over ZeroMQ on TCP. Without keys,
    ipykernel prints "Kernel is running over TCP without encryption" on the kernel's own stderr,
    once per lab, where no logging filter of this process reaches. The traffic never left the
    machine (jupyter_client refuses to start a kernel on a non-local address; the kernel listens
    on 127.0.0.1 only, for the seconds its lab runs), so there was nothing for a teacher to act
    on. With keys there is nothing to warn about, no other message is hidden, and the pages are
    the same; the kernelspec (`python3`, ipykernel's) declares `supported_encryption: curve`.
    The policy is usually set in a Jupyter config file (`c.KernelManager.transport_encryption =
    "auto"`), but mkdocs-jupyter builds its own nbconvert configuration, so it is set as the
    default here, in the mkdocs process only. A pyzmq built without CurveZMQ keeps the default.
    """
    if zmq.has("curve"):
        KernelManager.transport_encryption.default_value = "auto"
