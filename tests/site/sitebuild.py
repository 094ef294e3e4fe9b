"""Helpers for the site tests: build the site strictly into a folder, list its pages.

The build is the real one (`mkdocs build --strict`) and goes to a temporary folder, never to
site/. By default it adds the fixture run under tests/site/fixtures/runs/ (through
COURSE_SITE_EXTRA_RUNS), whose completions try to inject HTML.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from course_site.print_edition import CHROMIUM as CHROMIUM  # the tests' browser as the print's

REPO = Path(__file__).resolve().parents[2]
FIXTURE_RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"
MKDOCS = Path(sys.executable).with_name("mkdocs")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
"""Chromium's flags for the browser tests. The last makes every host name but 127.0.0.1 fail
to resolve: the site is tested offline, and a page that asks another host gets nothing (the
tests record the request, test_browser.Tabs)."""
WAIT_MS = 120_000
"""Playwright's limit on any one wait in the browser tests: two minutes. The slowest healthy
wait is Python's first load in a Try-it box: 2.5 s on a quiet machine, 3.4 s beside eight CPU
hogs (benchmarks/bench_try_it.py); the test command beside eight hogs took 14 minutes with
every wait within this limit (benchmarks/bench_test_command.py --hogs 8). A 20 s limit once
failed the test command while a second job shared the cores. A wait that reaches this one is
a page that will not get there, and `wait_until` says what the page held then."""
CONSOLE_LINES = 12
"""The last console lines of a page kept for a failed wait's message."""

_CONSOLE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

PAGE_STATE = """() => ({
  address: location.href, title: document.title, ready: document.readyState,
  sameDocument: window.__same_document === true,
  boxes: [...document.querySelectorAll('.try-it')].map(box =>
    `${box.dataset.kind} box: state ${box.dataset.state || '(none)'}, ` +
    (box.closest('.md-typeset') ? '' : 'outside the content, ') +
    (box.dataset.left ? 'of the page left, ' : '') +
    (box.querySelector('.try-it-static')?.hidden ? 'set up' : 'not set up'))
})"""


def listen(page) -> None:
    """Keep `page`'s last CONSOLE_LINES console lines, for `wait_until`'s message."""
    lines: deque = deque(maxlen=CONSOLE_LINES)
    _CONSOLE[page] = lines
    page.on("console", lambda message: lines.append(f"{message.type}: {message.text}"))


def page_state(page) -> str:
    """What `page` holds now, in a few lines: address, title, readiness, its Try-it boxes,
    and its last console lines (those `listen` kept)."""
    try:
        state = page.evaluate(PAGE_STATE)
    except Exception as error:  # a page that crashed or closed says so
        return f"(the page could not be read: {error})"
    lines = [f"address {state['address']} ({state['ready']}), title {state['title']!r}, "
             f"same document since the last follow_link: {state['sameDocument']}",
             *(f"  {box}" for box in state["boxes"]),
             "console, last lines:", *(f"  {line}" for line in _CONSOLE.get(page, ()))]
    return "\n".join(lines)


def wait_until(page, expression: str, what: str, arg=None, timeout: float = WAIT_MS) -> None:
    """`page.wait_for_function(expression, arg)`, at most `timeout` ms; when it times out, the
    test fails saying what it waited for (`what`) and what the page held then."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(expression, arg=arg, timeout=timeout)
    except PlaywrightTimeout:
        raise AssertionError(f"waited {timeout / 1000:.0f} s for {what}; the page held:\n"
                             f"{page_state(page)}") from None


def press(page, box, action: str) -> str:
    """Press a Try-it box's button and wait for its verdict or its failure; returns the box's
    status line."""
    box.locator(f"button[data-action={action}]").click()
    wait_until(page, "box => ['done', 'error'].includes(box.dataset.state)",
               f"the box's {action} to end", arg=box.element_handle())
    return box.locator(".try-it-status").inner_text()


@dataclass(frozen=True)
class Build:
    site: Path
    seconds: float
    returncode: int
    log: str
    record: Path | None = None   # every block the build ran (course_site.outputs.RECORD_ENV)
    predictions: Path | None = None   # every prediction box (course_site.predictions.RECORD_ENV)


def build_site(out: Path, extra_runs: Path | None = FIXTURE_RUNS,
               config: Path = REPO / "mkdocs.yml", site_url: str | None = None,
               edition: str = "student", generator: Path = MKDOCS) -> Build:
    """`mkdocs build --strict` of `config` into `out`; returns the outcome, never raises.
    `site_url` is the address the site will be served at (instant navigation needs it);
    `edition` is the edition built (course_site.editions), whatever the caller's shell says;
    `generator` is the program that builds (MkDocs, or a fork that takes its arguments)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    record = out.parent / f"{out.name}-blocks.json"
    boxes = out.parent / f"{out.name}-predictions.json"
    for name, value in (("COURSE_SITE_EXTRA_RUNS", extra_runs), ("COURSE_SITE_URL", site_url),
                        ("COURSE_EDITION", edition), ("COURSE_SITE_BLOCK_RECORD", record),
                        ("COURSE_SITE_PREDICTION_RECORD", boxes)):
        env.pop(name, None)
        if value is not None:
            env[name] = str(value)
    start = time.perf_counter()
    done = subprocess.run([str(generator), "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(out)], cwd=config.parent, env=env,
                          capture_output=True, text=True, timeout=600)
    return Build(out, time.perf_counter() - start, done.returncode, done.stdout + done.stderr,
                 record if record.is_file() else None, boxes if boxes.is_file() else None)


MINIMAL_NAV = "nav:\n  - Home: index.md\n  - Runs: runs/index.md\n"


def mini_repo(root: Path, docs: dict[str, str], nav: str = MINIMAL_NAV,
              node_modules: bool = True) -> Path:
    """The real mkdocs.yml, hooks and overrides around a small docs/ folder (and a custom
    nav)."""
    root.mkdir(parents=True, exist_ok=True)
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    (root / "mkdocs.yml").write_text(config[: config.index("\nnav:\n") + 1] + nav,
                                     encoding="utf-8")
    links = ["overrides", "package.json", "src"]
    links += ["node_modules"] if node_modules else []
    for name in links:
        os.symlink(REPO / name, root / name)
    (root / "runs").mkdir()
    for name, text in docs.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text, encoding="utf-8")
    return root


def site_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as URL paths relative to the root (`` is home)."""
    pages = []
    for path in sorted(site.rglob("*.html")):
        relative = path.relative_to(site).as_posix()
        pages.append(relative[: -len("index.html")] if relative.endswith("index.html")
                     else relative)
    return pages


def page_file(site: Path, page: str) -> Path:
    """The HTML file behind a page path from `site_pages`."""
    return site / (page + "index.html" if page == "" or page.endswith("/") else page)

