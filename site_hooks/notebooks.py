"""Lab pages (jupytext notebooks rendered and executed by mkdocs-jupyter), made offline and
downloadable.

- nbconvert's page template loads MathJax 2 from cdnjs and imports Mermaid from cdnjs when a
  notebook has a Mermaid output. The site already serves MathJax 3 and Mermaid itself, so those
  `<script>` elements are removed; any network reference left is a build warning (a failure
  under --strict).
- Each lab page starts with download links: the jupytext `.py` source (copied next to the page
  by mkdocs-jupyter's `include_source`) and an `.ipynb` written here from the same source, for
  readers without jupytext.
- The lab kernels get CurveZMQ keys (`encrypt_kernel_traffic`), so ipykernel has no reason to
  print "Kernel is running over TCP without encryption" once per lab.
- Under `mkdocs serve` only, executed labs are cached: site_hooks/serve.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import zmq
from jupyter_client.manager import KernelManager
from mkdocs.plugins import get_plugin_logger

log = get_plugin_logger(__name__)

_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.DOTALL | re.IGNORECASE)
_NETWORK = re.compile(r"""(?:src=["']|import\(\s*["']|from\s+["'])https?://""", re.IGNORECASE)


def is_lab(page) -> bool:
    return page.file.src_uri.startswith("labs/") and page.file.src_uri.endswith(".py")


def strip_network_scripts(html: str) -> str:
    """Drop every <script> that loads code from the network, and MathJax 2's config block."""
    def keep(match: re.Match) -> str:
        script = match.group()
        if _NETWORK.search(script) or 'type="text/x-mathjax-config"' in script:
            return ""
        return script
    return _SCRIPT.sub(keep, html)


def download_box(stem: str) -> str:
    return (
        '<div class="admonition tip course-download"><p class="admonition-title">'
        "Run this lab yourself</p><p>"
        f'<a href="{stem}.py" download>{stem}.py</a> (jupytext percent format; it also runs '
        f"as a script: <code>.venv/bin/python docs/labs/{stem}.py</code>) or "
        f'<a href="{stem}.ipynb" download>{stem}.ipynb</a> (a classic notebook for any Jupyter '
        "that can import the course package).</p></div>"
    )


def on_page_content(html: str, page, config, files) -> str:
    if not is_lab(page):
        return html
    html = strip_network_scripts(html)
    for leftover in _NETWORK.finditer(html):
        log.warning(f"{page.file.src_uri}: the rendered notebook still loads from the network "
                    f"near {html[leftover.start():leftover.start() + 80]!r}")
    box = download_box(Path(page.file.src_uri).stem)
    title_end = html.find("</h1>")  # after the notebook's title, when it has one
    if title_end < 0:
        return box + html
    title_end += len("</h1>")
    return html[:title_end] + box + html[title_end:]


def on_post_page(output: str, page, config) -> str:
    if is_lab(page):
        target = Path(page.file.abs_dest_path).parent / f"{Path(page.file.src_uri).stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(jupytext.read(page.file.abs_src_path), target, fmt="ipynb")
    return output


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
