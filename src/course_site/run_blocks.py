"""Run a page's Python blocks as a reader would, and say what each one printed.

course_site/outputs.py starts this file as a script, with the course's interpreter, in a fresh
temporary folder and without PYTHONPATH: a block can import what a reader's pasted code can
import (the installed `course` package) and nothing of the repository. It reads a JSON list of
blocks from the file named by its first argument and writes the results to the second:

    in:  [{"name": "docs/lessons/m1.md:120", "code": "...", "continuation": false}, ...]
    out: [{"stdout": "...", "stderr": "...", "error": null | "traceback", "figures": [...]}]

Each block runs in a namespace of its own, as if pasted into a fresh interpreter; a
continuation block runs in the namespace of the block before it. What a block writes to
`sys.stdout` and `sys.stderr` is captured, and every matplotlib figure still open when it ends
is saved as SVG (`{"svg": ..., "alt": the figure's title}`) and closed. Only the standard
library is imported here, so the blocks see no module that a fresh interpreter lacks.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback
from pathlib import Path
from typing import Any


def open_figures() -> list[dict[str, str]]:
    """Every figure the block left open, as deterministic SVG text (no date, fixed ids)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    pyplot.rcParams["svg.hashsalt"] = "course"       # element ids repeat from build to build
    figures = []
    for number in pyplot.get_fignums():
        figure = pyplot.figure(number)
        title = figure.get_suptitle() or " / ".join(a.get_title() for a in figure.axes)
        svg = io.StringIO()
        figure.savefig(svg, format="svg", metadata={"Date": None}, bbox_inches="tight")
        pyplot.close(figure)
        figures.append({"svg": svg.getvalue(), "alt": title or "a figure drawn by this block"})
    return figures


def run(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    namespace: dict[str, Any] = {}
    for block in blocks:
        if not block["continuation"]:
            namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        stdout, stderr = io.StringIO(), io.StringIO()
        error = None
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                exec(compile(block["code"], block["name"], "exec"), namespace)
            except BaseException as raised:   # SystemExit and KeyboardInterrupt too
                # the traceback from the block's own frame on (this file's frame left out)
                error = "".join(traceback.format_exception(
                    type(raised), raised, raised.__traceback__ and raised.__traceback__.tb_next))
        results.append({"stdout": stdout.getvalue(), "stderr": stderr.getvalue(),
                        "error": error, "figures": open_figures()})
    return results


if __name__ == "__main__":
    blocks = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    Path(sys.argv[2]).write_text(json.dumps(run(blocks)), encoding="utf-8")
