"""Lab pages (jupytext notebooks rendered and executed by mkdocs-jupyter), made offline and
downloadable.

- nbconvert's page template loads MathJax 2 from cdnjs and imports Mermaid from cdnjs when a
  notebook has a Mermaid output. The site already serves MathJax 3 and Mermaid itself, so those
  `<script>` elements are removed; any network reference left is a build warning (a failure
  under --strict).
- Each lab page starts with download links: the jupytext `.py` source (copied next to the page
  by mkdocs-jupyter's `include_source`) and an `.ipynb` for readers without jupytext. The
  `.ipynb` is the very notebook mkdocs-jupyter executed to draw the page, outputs included
  (`KeepExecutedNotebook`), not a second run; its volatile parts (random cell ids, execution
  timestamps) are fixed, so two builds write the same bytes (`downloadable`). Under `mkdocs
  serve` a lab may come from mkdocs-jupyter's cache, which holds HTML only: its executed
  notebook is cached beside it (`cached_notebook`).
- The lab kernels get CurveZMQ keys (`encrypt_kernel_traffic`), so ipykernel has no reason to
  print "Kernel is running over TCP without encryption" once per lab.
- The scorer lab's page also carries a Try-it box (course_site/try_it.py) under its links.
- Jupyter's prompts, the copy buttons and the download box are kept out of the search index
  (course_site/search_index.py tells the rest of what search finds).
- Under `mkdocs serve` only, executed labs are cached: course_site/serve.py.

Why not mkdocs-jupyter's own download link (`include_source`, `page.nb_url`): it offers the
`.py` source only; the `.ipynb` with the outputs the page shows exists only inside its exporter,
which is why `KeepExecutedNotebook` keeps it. The `.py` is still copied by `include_source`.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path, PurePath

import jupytext
import nbformat
import zmq
from jupyter_client.manager import KernelManager
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs_jupyter import nbconvert2
from mkdocs_jupyter import plugin as jupyter_plugin
from nbconvert.exporters.html import HTMLExporter

from course_site.try_it import box_html

log = get_plugin_logger(__name__)

_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.DOTALL | re.IGNORECASE)
_NETWORK = re.compile(r"""(?:src=["']|import\(\s*["']|from\s+["'])https?://""", re.IGNORECASE)


def is_lab(page: Page) -> bool:
    return page.file.src_uri.startswith("labs/") and page.file.src_uri.endswith(".py")


def strip_network_scripts(html: str) -> str:
    """Drop every <script> that loads code from the network, and MathJax 2's config block."""
    def keep(match: re.Match) -> str:
        script = match.group()
        if _NETWORK.search(script) or 'type="text/x-mathjax-config"' in script:
            return ""
        return script
    return _SCRIPT.sub(keep, html)


_NOT_SEARCHED = re.compile(
    r'<div class="(?:jp-InputPrompt|jp-OutputPrompt|zeroclipboard-container|clipboard-copy-txt)'
    r'[^"]*"')
"""Jupyter's `In [1]:` prompts, the copy buttons' `Copied!` and the hidden copy of each cell's
code they copy: page furniture, kept out of the search index (Material skips an element marked
`data-search-exclude`), as is the download box."""


def download_box(stem: str) -> str:
    return (
        '<div class="admonition tip course-download" data-search-exclude>'
        '<p class="admonition-title">'
        "Run this lab yourself</p><p>"
        f'<a href="{stem}.py" download>{stem}.py</a> (jupytext percent format; it also runs '
        f"as a script: <code>.venv/bin/python docs/labs/{stem}.py</code>) or "
        f'<a href="{stem}.ipynb" download>{stem}.ipynb</a> (a classic notebook, with the outputs '
        "shown on this page, for any Jupyter that can import the course package).</p></div>"
    )


def try_it_box(stem: str) -> str:
    """The scorer lab's page carries a Try-it box under its download links (course_site/try_it.py):
    the page only, never its `.ipynb`, which is the notebook as executed."""
    if stem != "lab_scorer":
        return ""
    return box_html("scorer", {"completion": "Final: 0323", "expected": "323"}, number=1)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not is_lab(page):
        return html
    keep_download(page, config)
    html = strip_network_scripts(html)
    for leftover in _NETWORK.finditer(html):
        log.warning(f"{page.file.src_uri}: the rendered notebook still loads from the network "
                    f"near {html[leftover.start():leftover.start() + 80]!r}")
    html = _NOT_SEARCHED.sub(r"\g<0> data-search-exclude", html)
    stem = Path(page.file.src_uri).stem
    box = download_box(stem) + try_it_box(stem)
    title_end = html.find("</h1>")  # after the notebook's title, when it has one
    if title_end < 0:
        return box + html
    title_end += len("</h1>")
    return html[:title_end] + box + html[title_end:]


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    if is_lab(page) and page.file.src_uri in _downloads:
        target = Path(page.file.abs_dest_path).parent / f"{Path(page.file.src_uri).stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_downloads.pop(page.file.src_uri), encoding="utf-8")
    return output


# -- the downloadable notebook: the executed one ---------------------------------------------

_rendered: list = []
"""The notebook mkdocs-jupyter's exporter has just rendered (pages are rendered one at a time:
`on_pre_page` empties it, the page's render fills it, `on_page_content` takes it)."""
_downloads: dict[str, str] = {}
"""Each lab's `.ipynb` text, from `on_page_content` to `on_post_page`, by `src_uri`."""


class KeepExecutedNotebook(HTMLExporter):
    """mkdocs-jupyter's HTML exporter, which also keeps the notebook it renders.

    mkdocs-jupyter (`nbconvert2.nb2html`) reads the lab with jupytext and hands it to an
    `HTMLExporter` whose preprocessors execute it (nbconvert's `ExecutePreprocessor`) and then
    render it; the executed notebook never leaves `nb2html`. This subclass, put in its place by
    `keep_executed_notebooks`, copies the notebook the preprocessors return, which is exactly
    what the page shows. Its configuration is HTMLExporter's (traitlets config follows the
    class hierarchy)."""

    def _preprocess(self, nb, resources):
        nb, resources = super()._preprocess(nb, resources)
        _rendered.append(copy.deepcopy(nb))
        return nb, resources


def keep_executed_notebooks() -> None:
    """Have mkdocs-jupyter render with `KeepExecutedNotebook`. Should a later mkdocs-jupyter
    build its exporter differently, no notebook is kept and each lab is a build warning."""
    nbconvert2.HTMLExporter = KeepExecutedNotebook


def downloadable(nb: nbformat.NotebookNode) -> str:
    """The `.ipynb` text of notebook `nb`, the same at every build of the same lab: cell ids
    (random when jupytext reads a `.py`) become their position, the execution timestamps
    nbclient records in each cell's metadata are dropped, and consecutive pieces of one stream
    are joined (where the kernel happened to flush stdout differs from run to run). Raises if
    `nb` is not valid nbformat 4."""
    nb = copy.deepcopy(nb)
    for number, cell in enumerate(nb.cells, 1):
        cell["id"] = f"cell-{number}"
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = joined_streams(cell.outputs)
    nbformat.validate(nb)
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def joined_streams(outputs: list) -> list:
    """`outputs` with each run of consecutive stream outputs to the same stream made one."""
    joined: list = []
    for output in outputs:
        last = joined[-1] if joined else None
        if (last is not None and output.output_type == last.output_type == "stream"
                and output.name == last.name):
            last.text += output.text
        else:
            joined.append(output)
    return joined


def network_references(nb: nbformat.NotebookNode) -> list[str]:
    """What in `nb` (a cell's source, an output's text or data) loads from the network."""
    texts = []
    for cell in nb.cells:
        texts.append(cell.source)
        for output in cell.get("outputs", []):
            texts.append(output.get("text", ""))
            texts += [value for value in output.get("data", {}).values() if isinstance(value, str)]
    return [text[match.start():match.start() + 80]
            for text in texts for match in _NETWORK.finditer(text)]


def cached_notebook(page: Page, config: MkDocsConfig) -> Path | None:
    """Under `mkdocs serve` (course_site/serve.py turns mkdocs-jupyter's cache on) the lab's
    executed notebook is kept beside mkdocs-jupyter's cached page: `<key>.ipynb` next to
    `<key>.json`, under mkdocs-jupyter's own key. None when the cache is off (`mkdocs build`)."""
    lab = config.plugins["mkdocs-jupyter"].config
    if not lab["cache"]:
        return None
    source = page.file.abs_src_path
    if source is None:      # a generated page; labs are files under docs/
        return None
    execute = lab["execute"] and not any(PurePath(source).match(pattern)
                                         for pattern in lab["execute_ignore"])
    key = jupyter_plugin._compute_cache_key(source, lab, execute)
    return Path(lab["cache_dir"]) / f"{key}.ipynb"


def on_pre_page(page: Page, config: MkDocsConfig, files: Files) -> Page:
    """Before a lab renders: forget any notebook kept earlier, and turn a cached page without
    its cached notebook (cached before this module kept them) into a cache miss, so that the lab
    is executed once more and both are cached."""
    if is_lab(page):
        _rendered.clear()
        kept = cached_notebook(page, config)
        if kept is not None and not kept.is_file():
            kept.with_suffix(".json").unlink(missing_ok=True)
    return page


def keep_download(page: Page, config: MkDocsConfig) -> None:
    """After a lab rendered: its `.ipynb` text, from the notebook it executed just now or, when
    it came from the serve cache, from the notebook cached with it."""
    kept = cached_notebook(page, config)
    if _rendered:
        nb = _rendered.pop()
        text = downloadable(nb)
        if kept is not None:
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(text, encoding="utf-8")
    elif kept is not None and kept.is_file():
        text = kept.read_text(encoding="utf-8")
        nb = nbformat.reads(text, as_version=4)
    else:
        log.warning(f"{page.file.src_uri}: mkdocs-jupyter rendered no notebook that "
                    "KeepExecutedNotebook could keep: the .ipynb download has no outputs")
        nb = jupytext.read(page.file.abs_src_path)
        text = downloadable(nb)
    for reference in network_references(nb):
        log.warning(f"{page.file.src_uri}: the downloadable notebook loads from the network "
                    f"near {reference!r}")
    _downloads[page.file.src_uri] = text


def on_post_build(config: MkDocsConfig) -> None:
    """A cached notebook goes with its cached page."""
    lab = config.plugins["mkdocs-jupyter"].config
    if lab["cache"]:
        for kept in Path(lab["cache_dir"]).glob("*.ipynb"):
            if not kept.with_suffix(".json").is_file():
                kept.unlink()


# -- the lab kernels ------------------------------------------------------------------------

def encrypt_kernel_traffic() -> None:
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


def on_startup(command: str, dirty: bool) -> None:
    encrypt_kernel_traffic()
    keep_executed_notebooks()
