"""Every Python block of a page shows, right beneath it, what it prints.

At build time each runnable Python block of a Markdown page (every ```python fence that is not
`{.python notest}`, inside admonitions and tabs too) is run the way a reader runs a pasted
block: by course_site/run_blocks.py, in a fresh interpreter, in an empty temporary folder, with
only the installed `course` package to import. A block starts from an empty namespace; a
`{.python continuation}` block continues the namespace of the block before it. What it prints
is shown under it as a text block with the class `course-output` (CSS labels it "Output");
a matplotlib figure it leaves open is shown there as SVG; a block that prints nothing shows
nothing. A block that raises, or writes to stderr, is a build warning (a failure under
--strict) naming the page and the block. The output is put in place after Markdown has
rendered the page, escaped: what a block prints is never read as Markdown or HTML.

Each block runs once per build. The build can record every block it ran, with what it printed
and the numbers it left (`RECORD_ENV`); the tests read that record: tests/site/test_copy_paste.py
checks that the code a reader copies from the built page is the code that ran and that the
page shows what it printed, and tests/prose_numbers.py binds the prose to its numbers.

Why not markdown-exec: it runs blocks inside the mkdocs process and captures `print` only, so
its output can differ from what a fresh interpreter prints; it has no cache, and each block
would need `exec="on"` written in the lesson. Here a lesson keeps plain ```python fences.

Caching, under `mkdocs serve` only (the strict build and CI always run every block): the
output of each chain of blocks (a block and the continuation blocks after it) is kept in
.cache/block-outputs/<state>/, keyed by the chain's text; <state> is the digest of every byte
of src/, data/ and runs/, which the blocks read. Saving a lesson whose code did not change
runs nothing; changing one block runs that block's chain only.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
from hashlib import sha256
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from course_site.fences import Fence, fenced_blocks
from course_site.run_blocks import chains
from course_site.serve import cache_folder

log = get_plugin_logger(__name__)

RUNNER = Path(__file__).with_name("run_blocks.py")
CACHE = Path(".cache") / "block-outputs"
TIMEOUT_S = 600

_session = SimpleNamespace(cache=None)
"""The cache folder for today's src/, data/ and runs/, under `mkdocs serve` (or the builds of
one command: `course_site.serve.SHARED_BUILD`) only."""


def on_pre_build(config: MkDocsConfig) -> None:
    """Under `mkdocs serve`, point the cache at the folder of today's inputs; a build alone has
    none."""
    _session.cache = cache_folder(config, CACHE)


# -- which blocks, and what they print ---------------------------------------------------------

def runnable_blocks(lines: list[str], where: str) -> list[tuple[Fence, dict[str, Any]]]:
    """The page's runnable Python blocks, each with what run_blocks.py needs to run it."""
    return [(fence, {"name": f"{where}, the block at line {fence.open + 1}",
                     "code": fence.code(lines), "continuation": "continuation" in fence.words()})
            for fence in fenced_blocks(lines)
            if fence.is_python() and "notest" not in fence.words()]


def execute(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run blocks in a fresh interpreter (course_site/run_blocks.py); one result per block."""
    with tempfile.TemporaryDirectory(prefix="course-blocks-") as scratch:
        given, taken = Path(scratch, "blocks.json"), Path(scratch, "results.json")
        workdir = Path(scratch, "cwd")
        workdir.mkdir()
        given.write_text(json.dumps(blocks), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"MPLBACKEND": "Agg"}
        done = subprocess.run([sys.executable, "-P", str(RUNNER), str(given), str(taken)],
                              cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        if done.returncode != 0 or not taken.is_file():
            raise PluginError(f"course_site/run_blocks.py failed on {blocks[0]['name']}: "
                              f"exit {done.returncode}\n{done.stderr[-2000:]}")
        return json.loads(taken.read_text(encoding="utf-8"))


def outputs(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each block prints: from the cache under `mkdocs serve` (or from the first build of
    one command), else by running it."""
    results: dict[int, dict[str, Any]] = {}
    missing = []
    for chain in chains([block["continuation"] for block in blocks]):
        text = json.dumps([[blocks[i]["code"], blocks[i]["continuation"]] for i in chain])
        kept = _session.cache and _session.cache / f"{sha256(text.encode()).hexdigest()}.json"
        if kept is not None and kept.is_file():
            results.update(zip(chain, json.loads(kept.read_text(encoding="utf-8")), strict=True))
        else:
            missing.append((chain, kept))
    if missing:
        ran = iter(execute([blocks[i] for chain, _ in missing for i in chain]))
        for chain, kept in missing:
            done = [next(ran) for _ in chain]
            results.update(zip(chain, done, strict=True))
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_text(json.dumps(done), encoding="utf-8")
    return [results[i] for i in range(len(blocks))]


# -- what the page shows -----------------------------------------------------------------------
#
# A block's output is untrusted text (it can print anything a data file holds, `<script>` or a
# `--8<--` line included). So it never enters the Markdown: the Markdown gets a placeholder, a
# word no page can guess (it holds a random number drawn for this build), and the output is put
# in its place in the rendered HTML, escaped (`on_page_content`).

_NONCE = secrets.token_hex(8)
_shown: dict[str, list[str]] = {}
"""Per page (its src_uri), the HTML of each output waiting for its placeholder."""
_record: dict[str, list[dict[str, Any]]] = {}
"""Per page (`docs/...md`), each runnable block and what it printed and computed: written to
$COURSE_SITE_BLOCK_RECORD after the build, when set (the tests read it instead of running the
blocks again)."""
RECORD_ENV = "COURSE_SITE_BLOCK_RECORD"


def placeholder(number: int) -> str:
    """The word standing, in the Markdown, for the output of the page's `number`-th block."""
    return f"CourseOutput{_NONCE}x{number}"


_PLACEHOLDER = re.compile(rf"(?:<p>)?CourseOutput{_NONCE}x(\d+)(?:</p>)?")


def output_html(result: dict[str, Any]) -> str:
    """What a block printed, as HTML: the text escaped in a `course-output` block (CSS labels it
    "Output"), then each figure it drew, its title escaped into the alt text ("" if nothing)."""
    parts = []
    if result["stdout"]:
        text = html.escape(result["stdout"].removesuffix("\n"), quote=False)
        parts.append('<div class="language-text course-output no-copy highlight"><pre><span>'
                     f"</span><code>{text}\n</code></pre></div>")
    for figure in result["figures"]:
        data = base64.b64encode(figure["svg"].encode()).decode()
        parts.append(f'<p><img alt="{html.escape(figure["alt"])}" class="course-block-figure" '
                     f'src="data:image/svg+xml;base64,{data}"></p>')
    return "".join(parts)


def with_placeholders(markdown: str, where: str) -> tuple[str, list[str]]:
    """`markdown` with a placeholder under each block that printed or drew something, and the
    HTML each placeholder stands for; problems are logged, and the blocks recorded."""
    lines = markdown.split("\n")
    found = runnable_blocks(lines, where)
    if not found:
        return markdown, []
    results = outputs([block for _, block in found])
    _record[where] = [{"line": fence.open + 1, "code": block["code"],
                       "continuation": block["continuation"], **result,
                       "figures": len(result["figures"])}
                      for (fence, block), result in zip(found, results, strict=True)]
    shown: list[str] = []
    for (fence, block), result in zip(found, results, strict=True):
        if result["error"]:
            log.warning(f"{block['name']} raised:\n{result['error'].rstrip()}")
        if result["stderr"]:
            log.warning(f"{block['name']} wrote to stderr:\n{result['stderr'].rstrip()}")
        if shown_html := output_html(result):
            below = fence.close + 1 + 3 * len(shown)    # each placeholder above added 3 lines
            lines[below:below] = ["", f"{fence.indent}{placeholder(len(shown))}", ""]
            shown.append(shown_html)
    return "\n".join(lines), shown


def with_outputs(content: str, shown: list[str], where: str) -> str:
    """Rendered `content` with each placeholder replaced by its output's HTML; a placeholder
    that did not survive Markdown, or one that was never made, is a warning."""
    placed: set[int] = set()

    def place(match: re.Match[str]) -> str:
        number = int(match[1])
        if number >= len(shown):
            log.warning(f"{where}: an output placeholder that no block made")
            return ""
        placed.add(number)
        return shown[number]

    content = _PLACEHOLDER.sub(place, content)
    if missing := sorted(set(range(len(shown))) - placed):
        log.warning(f"{where}: the output of {len(missing)} block(s) found no place on the "
                    "page (a block inside a construct that drops paragraphs?)")
    return content


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not page.file.src_uri.endswith(".md"):
        return markdown              # lab notebooks are executed by mkdocs-jupyter
    markdown, _shown[page.file.src_uri] = with_placeholders(markdown, f"docs/{page.file.src_uri}")
    return markdown


def results(where: str) -> list[dict[str, Any]]:
    """What each runnable block of the page `where` printed, in order ([] if it has none)."""
    return _record.get(where, [])


def on_page_content(html_: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    shown = _shown.pop(page.file.src_uri, [])
    return with_outputs(html_, shown, f"docs/{page.file.src_uri}") if shown else html_


def on_post_build(config: MkDocsConfig) -> None:
    """Write the record of every block run, where $COURSE_SITE_BLOCK_RECORD says."""
    if target := os.environ.get(RECORD_ENV):
        Path(target).write_text(json.dumps(_record), encoding="utf-8")
