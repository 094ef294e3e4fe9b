"""Every Python block of a page shows, right beneath it, what it prints.

At build time each runnable Python block of a Markdown page (every ```python fence that is not
`{.python notest}`, inside admonitions and tabs too) is run the way a reader runs a pasted
block: by course_site/run_blocks.py, in a fresh interpreter, in an empty temporary folder, with
only the installed `course` package to import. A block starts from an empty namespace; a
`{.python continuation}` block continues the namespace of the block before it. What it prints
is inserted under it as a text block with the class `course-output` (CSS labels it "Output");
a matplotlib figure it leaves open is shown there as SVG; a block that prints nothing shows
nothing. A block that raises, or writes to stderr, is a build warning (a failure under
--strict) naming the page and the block.

tests/site/test_copy_paste.py checks the promise from the reader's side: each block copied
from the built HTML and run alone prints exactly the output shown under it.

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
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from course_site.fences import Fence, fenced_blocks
from course_site.serve import LAB_INPUTS, tree_digest

log = get_plugin_logger(__name__)

RUNNER = Path(__file__).with_name("run_blocks.py")
CACHE = Path(".cache") / "block-outputs"
TIMEOUT_S = 600

_session = SimpleNamespace(serving=False, cache=None)
"""Whether this process serves the site, and the cache folder for today's src/, data/, runs/."""


def on_startup(command: str, dirty: bool) -> None:
    _session.serving = command == "serve"


def on_pre_build(config: MkDocsConfig) -> None:
    """Under `mkdocs serve`, point the cache at the folder of today's inputs, and delete the
    folders of other states (their outputs can never be shown again)."""
    if not _session.serving:
        return
    root = Path(config.config_file_path).parent
    _session.cache = root / CACHE / tree_digest(root, LAB_INPUTS)[:16]
    for stale in (root / CACHE).glob("*"):
        if stale.is_dir() and stale != _session.cache:
            shutil.rmtree(stale)


# -- which blocks, and what they print ---------------------------------------------------------

def runnable_blocks(lines: list[str], where: str) -> list[tuple[Fence, dict[str, Any]]]:
    """The page's runnable Python blocks, each with what run_blocks.py needs to run it."""
    found = []
    for fence in fenced_blocks(lines):
        words = fence.words()
        if fence.is_python() and "notest" not in words:
            found.append((fence, {"name": f"{where}, the block at line {fence.open + 1}",
                                  "code": fence.code(lines),
                                  "continuation": "continuation" in words}))
    return found


def chains(blocks: list[dict[str, Any]]) -> list[list[int]]:
    """Indexes of the blocks grouped into chains: a block, then the continuations after it."""
    grouped: list[list[int]] = []
    for index, block in enumerate(blocks):
        if block["continuation"] and grouped:
            grouped[-1].append(index)
        else:
            grouped.append([index])
    return grouped


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


def cache_file(blocks: list[dict[str, Any]], chain: list[int]) -> Path | None:
    """Where a chain's outputs are kept under `mkdocs serve` (None otherwise): named by the
    chain's text, in the folder of today's src/, data/ and runs/."""
    if _session.cache is None:
        return None
    text = json.dumps([[blocks[i]["code"], blocks[i]["continuation"]] for i in chain])
    return _session.cache / f"{hashlib.sha256(text.encode()).hexdigest()}.json"


def outputs(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each block prints: from the cache under `mkdocs serve`, else by running it."""
    results: dict[int, dict[str, Any]] = {}
    missing = []
    for chain in chains(blocks):
        kept = cache_file(blocks, chain)
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

def output_block(text: str, indent: str) -> list[str]:
    """Printed text as a fenced `course-output` block at the given indentation ([] if none)."""
    if not text:
        return []
    body = text[:-1] if text.endswith("\n") else text
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return ["", f"{indent}{fence}{{.text .course-output .no-copy}}",
            *[f"{indent}{line}" if line else "" for line in body.split("\n")],
            f"{indent}{fence}"]


def figure_lines(figures: list[dict[str, str]], indent: str) -> list[str]:
    lines = []
    for figure in figures:
        data = base64.b64encode(figure["svg"].encode()).decode()
        alt = figure["alt"].replace("]", ")").replace("[", "(")
        lines += ["", f"{indent}![{alt}](data:image/svg+xml;base64,{data})"
                      "{ .course-block-figure }"]
    return lines


def with_outputs(markdown: str, where: str) -> str:
    """`markdown` with each runnable block's output inserted under it; problems are logged."""
    lines = markdown.split("\n")
    found = runnable_blocks(lines, where)
    if not found:
        return markdown
    results = outputs([block for _, block in found])
    for (fence, block), result in reversed(list(zip(found, results, strict=True))):
        if result["error"]:
            log.warning(f"{block['name']} raised:\n{result['error'].rstrip()}")
        if result["stderr"]:
            log.warning(f"{block['name']} wrote to stderr:\n{result['stderr'].rstrip()}")
        shown = output_block(result["stdout"], fence.indent)
        shown += figure_lines(result["figures"], fence.indent)
        lines[fence.close + 1:fence.close + 1] = shown
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not page.file.src_uri.endswith(".md"):
        return markdown              # lab notebooks are executed by mkdocs-jupyter
    return with_outputs(markdown, f"docs/{page.file.src_uri}")
