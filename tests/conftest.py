"""Test-suite configuration shared by every test directory.

Every Python block in docs/ is a test, collected by pytest-markdown-docs. Run it as:

    pytest --markdown-docs --markdown-docs-syntax=superfences --ignore=docs/labs tests docs

`tests` must be among the paths so that this file is loaded (it gives the plugin the parser
below); `--ignore=docs/labs` keeps the plugin from importing the lab notebooks (they are
executed by the site build instead).

Out of the box the plugin only sees top-level fences: inside an admonition (`!!! note`,
`??? tip`, `???+ example`) or a content tab (`=== "Tab"`), the body is indented, so CommonMark
reads the fence as an indented code block and the test silently disappears. The parser below
first lifts those bodies out, keeping every line number, so blocks at any depth are collected.
tests/site/test_markdown_docs.py proves it with failing blocks at each depth.

Each block runs in an empty temporary folder (`in_a_scratch_folder`), as the site build runs it
(src/course_site/outputs.py) and as a reader's pasted block would: a block that writes a file
(`my_first_try/pick_best.py`) leaves nothing in the repository.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

# A line that opens a container whose body is indented four spaces (Material / pymdownx).
_CONTAINER = re.compile(r'^(?:!!!|\?\?\?\+?)\s+\S|^===[!+]?\s+"')
_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# Brace-form options written as classes (`{.python .notest}`) mean the same as bare words.
_CLASS_OPTION = re.compile(r"(?<=\s)\.(notest|continuation)(?=[\s}])")


def lift_containers(markdown: str) -> str:
    """Remove admonition and tab openers and de-indent their bodies; line numbers are kept
    (an opener becomes a blank line), so a failing block is reported at its real line."""
    out: list[str] = []
    openers: list[int] = []      # indentation of each enclosing container's opening line
    fence: str | None = None     # the fence characters while inside a fenced block
    for line in markdown.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        if line.strip():
            while openers and indent < openers[-1] + 4:
                openers.pop()     # a non-blank line left of the body closes the container
        body = line[min(indent, 4 * len(openers)):]
        stripped = body.lstrip(" ")
        match = _FENCE.match(stripped)
        if fence is not None:
            if match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence) \
                    and not match["info"].strip():
                fence = None
        elif match and not (match["fence"][0] == "`" and "`" in match["info"]):
            fence = match["fence"]
        elif _CONTAINER.match(stripped):
            openers.append(indent)
            out.append("")
            continue
        out.append(body)
    return "\n".join(out)


class ContainerAwareMarkdownIt(MarkdownIt):
    """CommonMark, after lifting Material's containers; class-style options become words."""

    def parse(self, src, env=None):
        tokens = super().parse(lift_containers(src), env)
        for token in tokens:
            if token.type == "fence":
                token.info = _CLASS_OPTION.sub(r"\1", token.info)
        return tokens


@pytest.hookimpl(tryfirst=True)
def pytest_markdown_docs_markdown_it():
    return ContainerAwareMarkdownIt("commonmark")


def in_a_scratch_folder(run: Callable[[], None]) -> Callable[[], None]:
    """`run`, called with an empty temporary folder as the working directory."""
    @functools.wraps(run)
    def scratch() -> None:
        here = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="course-docs-") as folder:
            os.chdir(folder)
            try:
                run()
            finally:
                os.chdir(here)
    return scratch


SITE_TIMEOUT_S = 600
"""The time limit of each site test (pytest-timeout; pyproject.toml gives the others 120 s): the
first site test of a process waits for the shared build (about 30 s on a quiet machine, a few
minutes on a busy one, while the other tests run), then drives a browser, the slowest for about
30 s on a quiet machine. A backstop for a hang, like every limit here."""


def pytest_collection_modifyitems(items):
    """Every docs block runs in a scratch folder. (A fixture in a conftest.py under docs/ would
    do it too, but pytest cannot import two files named conftest.py from folders that are not
    packages; this hook, like the parser above, reaches the docs items from here.) The site
    tests come last, so that the other tests run while the site is built, and get their own
    time limit."""
    for item in items:
        if type(item).__name__ == "MarkdownInlinePythonItem":
            item.runtest = in_a_scratch_folder(item.runtest)
        if item.nodeid.startswith(SITE_TESTS):
            item.add_marker(pytest.mark.timeout(SITE_TIMEOUT_S))
    items.sort(key=lambda item: item.nodeid.startswith(SITE_TESTS))   # stable: order kept


# -- the site build, started as soon as the tests are known -------------------------------------

SITE_TESTS = "tests/site/"


def _start_the_site_build(config: pytest.Config) -> None:
    """Start the session's site build in the background (tests/site/shared_site.py), in the
    folder every test process shares: this process's base temporary folder (an xdist worker's
    is inside it)."""
    spec = importlib.util.spec_from_file_location(
        "shared_site", Path(__file__).parent / "site" / "shared_site.py")
    assert spec is not None and spec.loader is not None
    sys.path.insert(0, str(Path(__file__).parent / "site"))   # it imports sitebuild
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shared = config._tmp_path_factory.getbasetemp()   # pytest's own tmp_path_factory
    module.start(shared, session=os.getpid())


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: start the build once the collected tests show that one needs it."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and any(
            "built_site" in getattr(item, "fixturenames", ()) for item in session.items):
        _start_the_site_build(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids: list[str]) -> None:
    """Under xdist, in the controller: the same, as soon as the first worker has collected."""
    if any(test.startswith(SITE_TESTS) for test in ids):
        _start_the_site_build(node.config)
