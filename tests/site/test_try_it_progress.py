"""A Try-it box while Python loads, and its near-miss table, in a real browser (Debian's chromium
through Playwright, offline).

The first press of a scorer box loads Python, which takes seconds (many on a slow machine): the
box's status line, a polite live region, names each stage as it starts, each replacing the last,
"Fetching the Python runtime (N MB)…" (N: the runtime files the build copied), "Starting
Python…", "Loading the course…", then the verdict (`first_load_problems`); a failure names the
stage that failed (the tests below). The near-miss table fits its box at 1280 px ("why" and
"Edit" in view); on a 390 px phone it scrolls inside a named region that Tab reaches and the
arrow keys scroll (`near_miss_table_problems`). The first two are checked where M4's scorer box
is first pressed, in test_browser.py's test of every scorer box: each Python load costs about
five CPU-seconds, so the course's first load is watched once.

No timing is asserted and no wait is short: a loaded machine may take a minute to start Python
(benchmarks/bench_try_it.py measures it). Without /usr/bin/chromium these tests are skipped,
unless CI is set, in which case they fail.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from sitebuild import WAIT_MS, Build, listen, press, wait_until

PAGE = "lessons/m4-reward-as-spec/"   # a scorer box (with its near misses) and a golden box
RUNTIME = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
           "pyodide-lock.json")
"""What the first press downloads from assets/vendor/pyodide/ (course_site/vendor_assets.py)."""

RECORD = """box => {
  // Every text the status line is given, as it is given (a textContent set adds one text node;
  // emptying it adds none), from before the press on.
  window.__statuses = [];
  new MutationObserver((records) => records.forEach((record) => record.addedNodes.forEach(
    (node) => window.__statuses.push(node.textContent)))).observe(
    box.querySelector('.try-it-status'), { childList: true, subtree: true });
}"""

NEAR_MISS_LAYOUT = """box => {
  const table = box.querySelector('table.try-it-table');
  const region = table.closest('[role=region]');
  const last = table.tHead.rows[0].cells[table.tHead.rows[0].cells.length - 1];
  return {
    table: table.scrollWidth,
    region: region ? region.clientWidth : null,
    regionScroll: region ? region.scrollWidth : null,
    box: box.clientWidth,
    lastColumnRight: last.getBoundingClientRect().right,
    regionRight: region ? region.getBoundingClientRect().right : null,
    role: region && region.getAttribute('role'),
    label: region && region.getAttribute('aria-label'),
    tabindex: region && region.getAttribute('tabindex'),
    scrollLeft: region ? region.scrollLeft : null,
  };
}"""


class Offline:
    """A fresh browser context (an empty cache: a first press loads everything) where only
    127.0.0.1 answers; what else was asked for, and the console's errors, are kept."""

    def __init__(self, browser, width: int, height: int, refuse=None) -> None:
        """`refuse(request)`: also abort the local requests for which it is true."""
        self.problems: list[str] = []
        self.refuse = refuse
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.context.set_default_timeout(WAIT_MS)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        listen(self.page)
        self.page.on("console", lambda m: m.type == "error"
                     and self.problems.append(f"console error: {m.text}"))
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))

    def _route(self, route, request) -> None:
        if urlsplit(request.url).hostname != "127.0.0.1":
            self.problems.append(f"request to another host: {request.url}")
            route.abort()
        elif self.refuse is not None and self.refuse(request):
            route.abort()
        else:
            route.continue_()

    def open(self, url: str):
        self.page.goto(url, wait_until="load")
        self.page.wait_for_load_state("networkidle")
        return self.page


@pytest.fixture
def offline(browser) -> Iterator:
    made: list[Offline] = []

    def make(width: int = 1280, height: int = 800, refuse=None) -> Offline:
        made.append(Offline(browser, width, height, refuse))
        return made[-1]

    yield make
    for tab in made:
        tab.context.close()


def runtime_mb(built_site: Build) -> str:
    """The runtime's size as the status line gives it: the five files the build copied."""
    folder = built_site.site / "assets" / "vendor" / "pyodide"
    return f"{sum((folder / name).stat().st_size for name in RUNTIME) / 1e6:.1f}"


def first_load_problems(page, box, built_site: Build) -> list[str]:
    """Press `box`, a scorer box on a page where Python has not loaded yet, and read its status
    line from the press to the verdict: the three stages of the load, in order, each replacing
    the last (nothing else is said, nothing twice), the runtime's real size in the first, then
    the verdict of `course score`. What differs, one line each."""
    from course.scorer import score

    status = box.locator(".try-it-status")
    problems = []
    if (status.get_attribute("role"), status.get_attribute("aria-live")) != ("status",
                                                                            "polite"):
        problems.append("the status line is not a polite live region")
    page.evaluate(RECORD, box.element_handle())
    final = press(page, box, "score")
    if box.get_attribute("data-state") != "done":
        return [*problems, f"no verdict: {final}"]
    completion = box.locator("textarea").input_value()
    verdict = score({"expected_answer": int(box.locator("input").input_value())}, completion)
    said = page.evaluate("window.__statuses")
    stages = [f"Fetching the Python runtime ({runtime_mb(built_site)} MB)…",
              "Starting Python…", "Loading the course…"]
    shown = (rf"Scored: reward {verdict['reward']:.1f}, code {verdict['details']['code']} "
             r"\(\d+ ms\)")
    if len(said) != 4 or said[:3] != stages or not re.fullmatch(shown, said[3]):
        problems.append(f"the status line said {said}")
    if said[-1:] != [final] or not box.locator(".try-it-verdict").is_visible():
        problems.append(f"the verdict shown is not the last status: {final}")
    return problems


@pytest.mark.parametrize(("stage", "refused"), [
    ("fetching the Python runtime", ("HEAD", "/vendor/pyodide/pyodide.asm.wasm")),
    ("starting Python", ("GET", "/vendor/pyodide/python_stdlib.zip")),
    ("loading the course", ("GET", "/try-it/files.json")),
])
def test_a_failed_load_says_which_stage_failed(offline, site_url, stage, refused):
    """A file refused at one stage of the load: the status line names that stage (and, where
    it is ours to fetch, the file), and the command that gives the verdict without a browser."""
    method, ending = refused
    tab = offline(refuse=lambda request: request.method == method
                  and urlsplit(request.url).path.endswith(ending))
    page = tab.open(site_url + PAGE)
    box = page.locator(".try-it[data-kind=scorer]").first
    said = press(page, box, "score")
    assert box.get_attribute("data-state") == "error", said
    assert said.startswith(f"Python could not run here: {stage} failed ("), said
    if stage != "starting Python":                      # Pyodide fetches the standard library
        assert f"({ending.rsplit('/', 1)[1]}: " in said, said
    assert said.endswith(f"On your machine, {box.get_attribute('data-command')} gives the "
                         "same verdict."), said


def near_miss_table_problems(page, box) -> list[str]:
    """`box`'s near-miss table, shown: at 1280 px wide no wider than its region, its last
    column ("Edit") inside the box, and the region (which does not scroll) no Tab stop; at 390
    px it scrolls inside a region with role="region", an aria-label and tabindex="0", which the
    arrow keys scroll once it has the focus. The viewport is given back as it was. What
    differs, one line each."""
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    assert width == 1280, width
    problems = []
    if box.locator("table.try-it-table tbody tr").count() <= 20:
        problems.append("fewer than 21 near misses")
    wide = page.evaluate(NEAR_MISS_LAYOUT, box.element_handle())
    if not (wide["role"] == "region" and wide["label"] and wide["table"] <= wide["region"]
            and wide["regionScroll"] <= wide["region"]
            and wide["lastColumnRight"] <= wide["regionRight"] + 0.5):
        problems.append(f"at 1280 px the table does not fit its region: {wide}")
    wait_until(page, "box => !box.querySelector('.try-it-scroll').hasAttribute('tabindex')",
               "the table, which fits, to leave the tab order", arg=box.element_handle())

    page.set_viewport_size({"width": 390, "height": 844})
    wait_until(page, "box => box.querySelector('.try-it-scroll').getAttribute('tabindex') "
                     "=== '0'", "the table, which scrolls, to join the tab order",
               arg=box.element_handle())
    narrow = page.evaluate(NEAR_MISS_LAYOUT, box.element_handle())
    if not (narrow["role"] == "region" and narrow["label"] == "Near misses, scored"
            and narrow["tabindex"] == "0" and narrow["regionScroll"] > narrow["region"]):
        problems.append(f"at 390 px the table is not a named region that scrolls: {narrow}")
    region = box.locator("[role=region]")
    if "course-scrolls-right" not in (region.get_attribute("class") or ""):
        problems.append("at 390 px the table has no hint that it scrolls")
    region.focus()
    page.keyboard.press("ArrowRight")
    wait_until(page, "box => box.querySelector('[role=region]').scrollLeft > 0",
               "the table to scroll right", arg=box.element_handle())
    page.set_viewport_size({"width": width, "height": height})
    return problems
