"""Run a page's Python blocks as a reader would, and say what each one printed and computed.

course_site/outputs.py starts this file as a script (`python -P`, so that this folder is not on
`sys.path`), with the course's interpreter, in a fresh temporary folder and without PYTHONPATH:
a block can import what a reader's pasted code can import (the installed packages) and nothing
of the repository. It reads a JSON list of blocks from the file named by its first argument and
writes the results to the second:

    in:  [{"name": "docs/lessons/m1.md:120", "code": "...", "continuation": false}, ...]
    out: [{"stdout": "...", "stderr": "...", "error": null | "traceback",
           "figures": [{"svg": "...", "alt": "..."}], "completed": true,
           "numbers": [[0.25, "p_hat"], ...], "texts": [["...", "report"], ...]}, ...]

A chain (a block and the `continuation` blocks after it) runs in a process of its own, forked
from this one, so that no chain sees what another one changed (a module's state, a random
seed): as if pasted into a fresh interpreter. A continuation block runs in the namespace of the
block before it. The modules the page's blocks import are imported once, before the forks, only
to save time (matplotlib takes half a second); none of them prints when imported.

What a block writes to `sys.stdout` and `sys.stderr` is captured; every matplotlib figure still
open when it ends is saved as SVG (`{"svg": ..., "alt": the figure's title}`) and closed. The
numbers and strings left in its namespace (`leaves`) are what tests/prose_numbers.py binds a
page's prose to; reading them here means the test never runs the blocks again.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import io
import json
import os
import sys
import traceback
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_ARRAY = 5_000          # numpy arrays with more elements are skipped
MAX_LEAVES = 200_000       # leaves taken from one block's namespace
MAX_DEPTH = 8              # nesting followed into containers and objects
MAX_TEXT = 2_000_000       # characters kept of one string


def leaves(obj: Any, path: str, budget: list[int], depth: int = 0,
           seen: set[int] | None = None) -> Iterator[tuple[str, float | str]]:
    """`(path, leaf)` for every number and string reachable from `obj` (numbers as floats;
    through dicts, lists, tuples, sets, numpy scalars and arrays of at most MAX_ARRAY numbers,
    dataclasses and the attributes of the course's objects), within the caps; `budget` is a
    one-element list, the leaves still allowed."""
    seen = set() if seen is None else seen
    if budget[0] <= 0 or depth > MAX_DEPTH:
        return
    if isinstance(obj, str | int | float) and not isinstance(obj, bool):
        budget[0] -= 1
        if isinstance(obj, str):
            yield path, obj[:MAX_TEXT]
        elif not isinstance(obj, int) or abs(obj) < 2 ** 63:
            yield path, float(obj)
        return
    if isinstance(obj, bytes | types.ModuleType | type) or callable(obj) or id(obj) in seen:
        return
    seen.add(id(obj))
    numpy = sys.modules.get("numpy")
    children: list[tuple[str, Any]] = []
    if numpy is not None and isinstance(obj, numpy.generic):
        children = [(path, obj.item())]
    elif numpy is not None and isinstance(obj, numpy.ndarray):
        if obj.size <= MAX_ARRAY and obj.dtype.kind in "iuf":
            children = [(f"{path}.flat[{i}]", v) for i, v in enumerate(obj.ravel().tolist())]
    elif isinstance(obj, dict):
        for key, value in list(obj.items()):
            children += [(f"{path} key", key), (f"{path}[{key!r}]", value)]
    elif isinstance(obj, list | tuple | set | frozenset):
        children = [(f"{path}[{i}]", v) for i, v in enumerate(list(obj)[:MAX_LEAVES])]
    elif dataclasses.is_dataclass(obj):
        children = [(f"{path}.{f.name}", getattr(obj, f.name, None))
                    for f in dataclasses.fields(obj)]
    elif type(obj).__module__.split(".")[0] == "course" and hasattr(obj, "__dict__"):
        children = [(f"{path}.{name}", value) for name, value in vars(obj).items()]
    for child_path, child in children:
        yield from leaves(child, child_path, budget, depth + 1, seen)


def namespace_leaves(namespace: dict[str, Any]) -> tuple[list[list[Any]], list[list[str]]]:
    """The numbers (each once, with the first path that reached it) and the strings left in
    a block's namespace, its own names only."""
    numbers: dict[float, str] = {}
    texts: list[list[str]] = []
    budget = [MAX_LEAVES]
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        for path, leaf in leaves(value, name, budget):
            if isinstance(leaf, str):
                texts.append([leaf, path])
            elif leaf == leaf:              # NaN is no value a prose can quote
                numbers.setdefault(leaf, path)
    return [[value, path] for value, path in numbers.items()], texts


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


def run_chain(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run one chain in this process, each block in the namespace the blocks before it left."""
    results: list[dict[str, Any]] = []
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    for block in blocks:
        stdout, stderr = io.StringIO(), io.StringIO()
        error = None
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                exec(compile(block["code"], block["name"], "exec"), namespace)
            except BaseException as raised:   # SystemExit and KeyboardInterrupt too
                # the traceback from the block's own frame on (this file's frame left out)
                error = "".join(traceback.format_exception(
                    type(raised), raised, raised.__traceback__ and raised.__traceback__.tb_next))
        numbers, texts = namespace_leaves(namespace)
        results.append({"stdout": stdout.getvalue(), "stderr": stderr.getvalue(),
                        "error": error, "figures": open_figures(), "completed": error is None,
                        "numbers": numbers, "texts": texts})
    return results


def in_a_fork(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`run_chain(chain)` in a child process forked from this one; its results come back as
    JSON through a pipe. A child that dies before it answers (`os._exit` in a block, a crash)
    gives each block of the chain that error."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:                                    # the child: run, answer, leave
        os.close(read)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(json.dumps(run_chain(chain)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read()
    _, status = os.waitpid(child, 0)
    if answer:
        return list(json.loads(answer))
    error = f"the interpreter running this block stopped (wait status {status})"
    return [{"stdout": "", "stderr": "", "error": error, "figures": [], "completed": False,
             "numbers": [], "texts": []} for _ in chain]


def chains(continuations: list[bool]) -> list[list[int]]:
    """Indexes of the blocks grouped into chains: a block, then the continuations after it
    (`continuations[i]` says whether block i is one)."""
    grouped: list[list[int]] = []
    for index, continuation in enumerate(continuations):
        if continuation and grouped:
            grouped[-1].append(index)
        else:
            grouped.append([index])
    return grouped


def imported(blocks: list[dict[str, Any]]) -> list[str]:
    """The modules the blocks import (`import a.b`, `from a.b import c`: `a.b`), read from their
    code; a block that does not parse imports nothing here (it fails when it runs)."""
    names: set[str] = set()
    for block in blocks:
        with contextlib.suppress(SyntaxError):
            for node in ast.walk(ast.parse(block["code"])):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module)
    return sorted(names)


def run(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One result per block, each chain run in a fresh process."""
    for name in imported(blocks):           # time only: imported once, every fork has them
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    return [result for chain in chains([block["continuation"] for block in blocks])
            for result in in_a_fork([blocks[i] for i in chain])]


if __name__ == "__main__":
    given, taken = Path(sys.argv[1]), Path(sys.argv[2])
    sys.argv = [""]                  # as in an interpreter a block is pasted into
    blocks = json.loads(given.read_text(encoding="utf-8"))
    taken.write_text(json.dumps(run(blocks)), encoding="utf-8")
