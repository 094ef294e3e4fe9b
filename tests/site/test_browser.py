"""The built site in a real browser (Debian's chromium through Playwright), fully offline.

Every page is visited: no console error, no failed request, no request to any host but the
local server, every Mermaid diagram rendered to SVG, all math typeset. Every page is checked
again for readers: axe-core (pinned in package.json) finds no serious or critical violation
(in each page's content; the frame around it on the key pages), wide content scrolls with a
hint and is reachable by keyboard, table cells keep words whole, copy buttons cover no code;
key pages also in dark mode and on a phone; every diagram's text is measured at desktop and
phone widths. Then the features a reader relies on: search, the escaped completion on a run
page, the lab download links, Material's instant navigation, checklists that can be ticked,
the palette switch by keyboard.

Without /usr/bin/chromium these tests are skipped, unless the CI environment variable is set,
in which case they fail: CI must never pass by not looking.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from shared_site import AXE_ROUTE
from sitebuild import (
    FIXTURE_RUNS,
    REPO,
    WAIT_MS,
    Build,
    listen,
    page_file,
    site_pages,
    wait_until,
)
from sitebuild import (
    press as press_box,
)
from test_labs import lab_box_problems
from test_try_it_progress import first_load_problems, near_miss_table_problems

from course_site.print_edition import NO_SEARCH_WORKER


class Watch:
    """Everything that went wrong in one browser page, as readable lines."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.dialogs: list[str] = []

    def add(self, problem: str) -> None:
        self.problems.append(problem)


class Tabs:
    """A browser context whose every request is checked: a request to any host but 127.0.0.1
    is recorded as a problem of the page that made it (the browser cannot reach one: the
    launch's LAUNCH_ARGS resolve no other host); each page's errors go to its own `Watch`.
    Requests are watched, not intercepted: Playwright's interception turns the browser's HTTP
    cache off, and every page load then fetched and compiled the site's scripts again (half
    as much CPU again per page)."""

    def __init__(self, browser, search: bool = False, **options) -> None:
        """`options` go to Playwright's new_context (viewport, color_scheme, ...). Material's
        search worker is started only when `search` is true (the search tests): elsewhere
        NO_SEARCH_WORKER spares each page load the indexing of the whole site."""
        options.setdefault("viewport", {"width": 1280, "height": 900})
        self.context = browser.new_context(**options)
        self.context.set_default_timeout(WAIT_MS)
        if not search:
            self.context.add_init_script(NO_SEARCH_WORKER)
        self.watches: dict = {}
        self.unattributed = Watch()   # requests no page can be blamed for (a worker's, say)
        self.context.on("request", self._request)

    def _request(self, request) -> None:
        url = urlsplit(request.url)
        if url.scheme in ("http", "https", "ws", "wss") and url.hostname != "127.0.0.1":
            try:
                watch = self.watches.get(request.frame.page, self.unattributed)
            except Exception:  # Playwright raises for requests without a frame
                watch = self.unattributed
            watch.add(f"request to another host: {request.url}")

    def open(self) -> tuple:
        page, watch = self.context.new_page(), Watch()
        self.watches[page] = watch
        listen(page)
        page.on("console", lambda m: m.type == "error" and watch.add(f"console error: {m.text}"))
        page.on("pageerror", lambda err: watch.add(f"page error: {err}"))
        # ERR_ABORTED is a request cancelled by leaving the page, not a failure of the site
        page.on("requestfailed", lambda r: "ERR_ABORTED" not in (r.failure or "")
                and watch.add(f"failed request: {r.url} ({r.failure})"))
        page.on("response", lambda r: r.status >= 400 and watch.add(f"HTTP {r.status}: {r.url}"))
        page.on("websocket", lambda ws: watch.add(f"websocket opened: {ws.url}"))

        def on_dialog(dialog):
            watch.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        return page, watch

    def close(self) -> None:
        self.context.close()
        assert self.unattributed.problems == [], self.unattributed.problems


@pytest.fixture
def new_tabs(browser, site_url) -> Iterator:
    """Makes `Tabs` with context options (a phone's viewport, dark mode); each is closed, and
    its unattributed requests checked, when the test ends."""
    made: list[Tabs] = []

    def make(**options) -> Tabs:
        made.append(Tabs(browser, **options))
        return made[-1]

    yield make
    for tabs in made:
        tabs.close()


@pytest.fixture
def tabs(new_tabs) -> Tabs:
    """A desktop-sized browser context."""
    return new_tabs()


@pytest.fixture
def tab(tabs: Tabs) -> tuple:
    """One checked page and its `Watch`."""
    return tabs.open()


@pytest.fixture
def searching_tab(new_tabs) -> tuple:
    """One checked page and its `Watch`, with Material's search working."""
    return new_tabs(search=True).open()


def open_page(page, url: str) -> None:
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")


def follow_link(page, url: str) -> None:
    """Go to `url`, a page with Try-it boxes, as a student's click on a link does: with
    navigation.instant, Material swaps the page's content without reloading it, so what its
    scripts keep (Python, once loaded) stays. Returns once the new page's boxes are set up;
    fails if the page was reloaded instead.

    The page is recognised by its path, not its whole address: with navigation.tracking,
    Material writes the active heading into the address as the page scrolls, and a link
    followed within a tenth of a second of a scroll lands with the OLD page's anchor in the
    new address (`labs/#the-tokentext-boundary`, an anchor of M4), which no later event
    removes. Compared whole, the address never matched, and this wait stalled for its ten
    minutes (test_a_link_followed_right_after_a_scroll_is_followed reproduces it)."""
    page.evaluate("window.__same_document = true")
    # The boxes of the page we leave are marked: the history changes before the content does,
    # so the new page is there once no marked box is left and the new boxes are set up.
    page.evaluate("url => { document.querySelectorAll('.try-it').forEach("
                  "box => box.dataset.left = 'yes');"
                  " const link = Object.assign(document.createElement('a'), {href: url});"
                  " document.body.append(link); link.click(); link.remove(); }", url)
    wait_until(page, "url => location.origin + location.pathname === url"
                     " && !document.querySelector('.try-it[data-left]')"
                     " && document.querySelector('.md-typeset .try-it-static[hidden]')",
               f"{url} to replace the page, its Try-it boxes set up", arg=url)
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__same_document === true"), f"{url} was loaded again"


def search(page, query: str) -> None:
    """Put `query` in Material's search box and press a key, which is when Material searches
    (it reacts to key events, not to `fill`). Typed letter by letter, each prefix was a query
    of its own, and on a loaded machine a prefix's results could look settled."""
    box = page.locator(".md-search__input")
    box.click()
    box.fill(query)
    box.press("End")


def rendered_mermaid_diagrams(page) -> int:
    """How many Mermaid diagrams hold an SVG. Material renders each one into a *closed* shadow
    root, out of reach of page scripts and selectors; the DevTools protocol sees through it."""
    cdp = page.context.new_cdp_session(page)
    root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
    cdp.detach()

    def has_svg(node) -> bool:
        kids = node.get("children", []) + node.get("shadowRoots", [])
        return any(k.get("nodeName", "").lower() == "svg" or has_svg(k) for k in kids)

    def diagrams(node) -> Iterator[dict]:
        attributes = node.get("attributes", [])
        classes = dict(zip(attributes[::2], attributes[1::2], strict=True)).get("class", "")
        if node.get("nodeName") == "DIV" and "mermaid" in classes.split():
            yield node
        for kid in node.get("children", []) + node.get("shadowRoots", []):
            yield from diagrams(kid)

    return sum(1 for node in diagrams(root) if any(has_svg(s) for s in node.get("shadowRoots", [])))


MATH_DONE = """() => {
  const pending = [...document.querySelectorAll('.arithmatex')]
    .filter(e => !e.querySelector('mjx-container'));
  const notebook = [...document.querySelectorAll('.jp-RenderedMarkdown')]
    .filter(e => /\\$[^$\\s][^$]*\\$/.test(e.textContent));
  return pending.length === 0 && notebook.length === 0;
}"""


@functools.cache
def page_html(site: Path, path: str) -> str:
    """The built HTML of a page, read once per test process (the passes ask for it often)."""
    return page_file(site, path).read_text(encoding="utf-8")


def diagrams_in(site: Path, path: str) -> int:
    return page_html(site, path).count('<pre class="mermaid">')


def figures_in(site: Path, path: str) -> int:
    return page_html(site, path).count('id="__figure-caption_')


def check_page(page, site: Path, path: str) -> list[str]:
    """Diagrams and math on the page that is open, against what its HTML file contains."""
    html = page_html(site, path)
    problems = []
    diagrams = diagrams_in(site, path)
    if diagrams:
        wait_until(page, f"() => document.querySelectorAll('div.mermaid').length >= "
                         f"{diagrams}", f"{diagrams} Mermaid diagrams")
        rendered = rendered_mermaid_diagrams(page)
        if rendered != diagrams:
            problems.append(f"{rendered} of {diagrams} Mermaid diagrams rendered to SVG")
    if 'class="arithmatex"' in html or "jp-RenderedMarkdown" in html:
        try:
            wait_until(page, MATH_DONE, "every formula typeset")
        except Exception:  # Playwright's TimeoutError: report it with the others
            problems.append("math left untypeset")
        if page.locator("mjx-merror").count():
            problems.append("MathJax reported a TeX error")
    return problems


# -- every page --------------------------------------------------------------------------

PARTS = 6
"""The pages are checked in this many tests (every PARTS-th page each), so that the test
processes share them (pytest-xdist)."""


SETTLE = """async () => {
    for (let frame = 0; frame < 2; frame++) await new Promise(requestAnimationFrame);
}"""
"""Wait two animation frames: what the page's scripts do in reply to a change (scroll-regions.js
measures on the next frame, through its observers) is done by then. A wait for an event, not
for a time: a loaded machine only makes the frames later."""


UNFOLD = """() => {
    document.querySelectorAll('.course-predict-folded')
        .forEach((folded) => folded.classList.remove('course-predict-folded'));
    document.dispatchEvent(new Event('course-content-shown'));
}"""
"""Show what the prediction boxes fold, as predictions.js does once a box is answered (the
answers themselves stay closed; scroll-regions.js measures what appeared, which the layout
checks wait for, SETTLE): a pass measures each page as a student sees it once every
prediction is answered (the folding itself: test_a_prediction_is_asked_first_kept_and_handed_in)."""


def test_a_request_to_another_host_is_a_problem_of_its_page(tab, site_url):
    """Guards the watch itself: a page that asks another host, by a fetch or an image, gets
    nothing, and each request is a problem of that page."""
    page, watch = tab
    open_page(page, site_url + "404.html")
    page.evaluate("""async () => {
        await fetch('https://cdn.example.org/lib.js').catch(() => null);
        const image = new Image();
        image.src = 'http://fonts.example.com/font.png';
        await image.decode().catch(() => null);
    }""")
    assert [p for p in watch.problems if "another host" in p] == [
        "request to another host: https://cdn.example.org/lib.js",
        "request to another host: http://fonts.example.com/font.png"], watch.problems


def test_the_home_page_really_has_a_diagram_and_math(tab, site_url, built_site: Build):
    """Guards the every-page check (test_every_page_is_clean_offline_rendered_and_accessible)
    against checking nothing."""
    page, watch = tab
    open_page(page, site_url)
    assert check_page(page, built_site.site, "") == []
    assert rendered_mermaid_diagrams(page) >= 1
    assert page.locator(".arithmatex mjx-container").count() >= 1
    assert page.locator("mjx-container").first.is_visible()
    assert watch.problems == []


# -- features ------------------------------------------------------------------------------

RESULTS = """() => [...document.querySelectorAll('.md-search-result__item')].map(item => {
  const prose = item.cloneNode(true);
  prose.querySelectorAll('code, pre').forEach(code => code.remove());
  return {path: new URL(item.querySelector('a').href).pathname,
          text: item.textContent, prose: prose.textContent};
})"""


def settled_search(page, query: str) -> int:
    """Empty the search box, type `query` and wait until the results shown are the reply to
    all of it; returns how many results Material counts."""
    meta = page.locator(".md-search-result__meta")
    items = page.locator(".md-search-result__item")
    if page.locator(".md-search__input").input_value():
        page.locator(".md-search__input").fill("")
        wait_until(page, "el => !el.closest('.md-search').querySelector("
                         "'.md-search-result__item')", "the search results cleared",
                   arg=meta.element_handle())
    placeholder = meta.inner_text()
    search(page, query)
    wait_until(page, "([el, text]) => el.textContent !== text", f"results for {query!r}",
               arg=[meta.element_handle(), placeholder])

    def shown() -> tuple:
        return meta.inner_text(), items.first.inner_text() if items.count() else ""

    seen = None   # the reply to a prefix of the query may still be on screen: wait it out
    while seen != shown():
        seen = shown()
        page.wait_for_timeout(300)
    count = re.search(r"\d+", seen[0])     # "No matching documents" has none
    return int(count.group()) if count else 0


def all_search_results(page, query: str) -> list[dict]:
    """Every result of `query`, once the box has settled on it: each result page's `path`,
    the `text` of its previews (all sections, folded ones too) and that text outside code
    (`prose`). Material renders ten results, then four more each time the list is scrolled
    to its end, so the list is scrolled until all are there."""
    items = page.locator(".md-search-result__item")
    total = settled_search(page, query)
    wrap = page.locator(".md-search__scrollwrap")
    stalled = 0
    while items.count() < total and stalled < 20:
        before = items.count()
        wrap.evaluate("e => e.scrollTo(0, 0)")
        page.wait_for_timeout(50)
        wrap.evaluate("e => e.scrollTo(0, e.scrollHeight)")
        page.wait_for_timeout(100)
        stalled = stalled + 1 if items.count() == before else 0
    assert items.count() == total, f"{items.count()} of {total} results rendered"
    return page.evaluate(RESULTS)


# The page a reader should land on first for each of the course's key terms: the lesson that
# teaches it, as a textbook's index points to where a term is defined (both pages of a
# milestone split in two teach it); the Locked Room is defined by the rules and first met on a
# run in Milestone 0.5.
FIRST_RESULT = {
    "reward hacking": ("/lessons/m5-red-team/",),
    "Final: <int>": ("/lessons/m0-orientation/",),
    "KL": ("/lessons/m3-llm-as-policy/", "/lessons/m3b-kl-and-rlvr/"),
    "pass@k": ("/lessons/m05-selection/",),
    "Best-of-N": ("/lessons/m05-selection/",),
    "advantage": ("/lessons/m1-reinforce/",),
    "baseline": ("/lessons/m1-reinforce/",),
    "Locked Room": ("/rules/", "/lessons/m05-selection/"),
    "Goodhart": ("/lessons/m5-red-team/",),
    "golden": ("/lessons/m4-reward-as-spec/",),
    "credit assignment": ("/lessons/m2-credit-assignment/",),
    "GRPO": ("/lessons/m3b-kl-and-rlvr/",),
    "spec": ("/lessons/m4-reward-as-spec/",),
}


def test_search_finds_the_lesson_that_teaches_a_term_first(searching_tab, site_url):
    """site_hooks/search_index.py: lessons before maps, labs and rules, which come before the
    references, the API and the run pages. One page, the box cleared between the terms."""
    page, watch = searching_tab
    open_page(page, site_url)
    wrong = []
    for query, expected in FIRST_RESULT.items():
        assert settled_search(page, query) > 0, query
        first = page.locator(".md-search-result__item > a").first.get_attribute("href")
        path = urlsplit(urljoin(site_url, first)).path      # no `?h=` highlight, no anchor
        if path not in expected:
            wrong.append(f"{query!r}: the first result is {path}, not {' or '.join(expected)}")
    assert not wrong, "\n".join(wrong)
    assert watch.problems == []


def test_search_finds_the_answer_format_and_shows_maths_as_text(searching_tab, site_url):
    """One page, the box emptied between queries. The course's central string: the reader
    types `<` and `>`, the index holds `&lt;` and `&gt;`; the separator in mkdocs.yml cuts both
    down to the word `int`. The index keeps the maths of a page as text, not as TeX
    (course_site/search_index.py): the previews shown first for three queries read as text."""
    page, watch = searching_tab
    open_page(page, site_url)
    for query in ("Final: <int>", "<int>"):
        results = all_search_results(page, query)
        paths = {result["path"] for result in results}
        for defining in ("/", "/lessons/m0-orientation/", "/lessons/m4-reward-as-spec/"):
            assert defining in paths, (query, defining, sorted(paths))
        # the previews show the format as the reader typed it, as text
        assert any("Final: <int>" in result["text"] for result in results), query
    for query in ("reward", "R(x", "pass@k"):     # the first results Material shows: the
        assert settled_search(page, query) > 0, query  # index's every preview is checked by
        results = page.evaluate(RESULTS)               # test_build (no delimiter, no TeX)
        assert results, query
        for result in results:
            for delimiter in ("\\(", "\\)", "\\[", "\\]", "$$"):
                assert delimiter not in result["prose"], (result["path"], delimiter,
                                                          result["prose"])
            if result["path"].startswith("/labs/"):       # notebook markdown: $...$ is maths
                assert "$" not in result["prose"], (result["path"], result["prose"])
        if query == "R(x":
            assert any("R(x, y)" in result["prose"] for result in results)   # still readable
        if query == "pass@k":
            assert any("pass@k" in result["text"].lower() for result in results)
    assert watch.problems == []


def test_a_completion_with_a_script_tag_is_shown_as_text(searching_tab, site_url):
    page, watch = searching_tab
    open_page(page, site_url + "runs/run_fixture/")
    page.locator("details.course-raw summary", has_text="results.jsonl").click()  # unfold
    shown = page.get_by_text("<script>alert(1)</script>", exact=True)
    assert shown.count() >= 1
    assert shown.first.is_visible() or shown.nth(1).is_visible()
    # the README's raw HTML is text too, and nothing injected became an element
    assert page.get_by_text("<img src=x onerror=alert(2)>", exact=False).count() >= 1
    assert page.locator("img[src='x'], b:text('not bold')").count() == 0
    assert page.evaluate("[...document.scripts].filter(s => s.text.includes('alert(')).length") \
        == 0
    # searching for the injected text shows it in the results, still as text
    search(page, "alert")
    page.locator(".md-search-result__item").first.wait_for()
    page.wait_for_timeout(300)
    assert watch.dialogs == [], f"a script from a completion ran: {watch.dialogs}"
    assert watch.problems == []


def test_the_lab_page_offers_its_source(tab, site_url):
    """The download box links the lab's jupytext source, the very file the build executed, and
    the page shows what that execution printed and drew."""
    page, watch = tab
    open_page(page, site_url + "labs/lab_scorer/")
    source = page.locator(".course-download a[download][href$='.py']")
    assert source.count() == 1
    assert "jupytext --to ipynb lab_scorer.py" in page.locator(".course-download").inner_text()
    py = page.request.get(urljoin(page.url, source.get_attribute("href")))
    assert py.status == 200
    assert py.text() == (REPO / "docs" / "labs" / "lab_scorer.py").read_text(encoding="utf-8")
    # the executed output is on the page: the plot and the printed rewards
    assert page.locator(".jp-OutputArea-output img").count() >= 1
    assert page.get_by_text(re.compile(r"mean reward = 0\.286")).count() == 1
    assert watch.problems == []


def test_instant_navigation_renders_diagrams_and_math_on_arrival(tab, site_url, built_site):
    """navigation.instant swaps pages without a reload; diagrams and math must still render
    on the new page (site_hooks + assets/javascripts/mathjax-config.js)."""
    page, watch = tab
    open_page(page, site_url + "labs/")
    page.evaluate("window.__same_document = true")
    page.locator(".md-tabs a", has_text="Home").first.click()
    wait_until(page, "() => document.querySelector('h1')?.textContent.includes("
                     "'RL Foundations')", "the home page's title")
    assert page.evaluate("window.__same_document === true"), "the page was reloaded"
    assert check_page(page, built_site.site, "") == []
    assert page.locator(".arithmatex mjx-container").count() >= 1
    page.locator(".md-tabs a", has_text="Labs").first.click()
    page.locator(".md-nav a", has_text="the scorer in a notebook").first.click()
    wait_until(page, "() => document.querySelector('.jupyter-wrapper')", "the lab's notebook")
    assert check_page(page, built_site.site, "labs/lab_scorer/") == []
    assert page.evaluate("window.__same_document === true"), "the page was reloaded"
    assert watch.problems == []


def test_the_palette_toggle_switches_to_dark(tab, site_url):
    page, watch = tab
    open_page(page, site_url)
    scheme = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
    page.locator("form[data-md-component='palette'] label:visible").first.click()
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") != scheme
    assert watch.problems == []


# -- readable and accessible ---------------------------------------------------------------

BLOCKING = ("serious", "critical")
"""axe-core impacts that fail the test; "moderate" and "minor" are reported by axe only."""

RUN_AXE = """async (scope) => {
  // the settled page is judged: a transition still under way (Material fades the tabs back in
  // after a link is followed from a scrolled page) is run to its end, and a frame is drawn
  for (const animation of document.getAnimations())
    if (animation.effect.getComputedTiming().endTime !== Infinity) animation.finish();
  await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const result = await axe.run(scope, {resultTypes: ['violations']});
  return {version: axe.version, passes: result.passes.length, whole: scope === 'html',
    violations: result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => n.target.join(' '))}))};
}"""


def axe_problems(page, scope: str = "html") -> list[str]:
    """axe-core's serious and critical violations on the open page, or in the part of it that
    `scope` selects, one line each. axe comes from node_modules/ at the version package.json
    pins, through the site's own test server (shared_site.AXE_ROUTE), never from the network."""
    page.add_script_tag(url=urljoin(page.url, AXE_ROUTE))
    result = page.evaluate(RUN_AXE, scope)
    pinned = json.loads((REPO / "package.json").read_text())["devDependencies"]["axe-core"]
    # axe really ran: over a whole page, more than ten of its rules found something to pass
    assert result["version"] == pinned and result["passes"] > (10 if result["whole"] else 0), \
        result
    return [f"axe {v['impact']} {v['id']} ({v['help']}) on {len(v['nodes'])} element(s): "
            f"{', '.join(v['nodes'][:3])}" for v in result["violations"]
            if v["impact"] in BLOCKING]


LAYOUT_PROBLEMS = """() => {
  const problems = [];
  const content = document.querySelector('.md-content');
  const named = e => e.tagName.toLowerCase() + [...e.classList].map(c => '.' + c).join('');
  // 1. a box whose content is wider than it scrolls: Tab reaches it, and it shows the hint
  for (const e of content.querySelectorAll('*')) {
    const style = getComputedStyle(e);
    if (!/auto|scroll/.test(style.overflowX) || e.clientHeight === 0) continue;
    if (e.scrollWidth > e.clientWidth + 1 && e.scrollLeft === 0) {
      if (!e.hasAttribute('tabindex')) problems.push(`${named(e)} scrolls but Tab cannot reach it`);
      if (!e.classList.contains('course-scrolls-right'))
        problems.push(`${named(e)} is cut at the right with no hint that it scrolls`);
    }
  }
  // 2. a word in a table cell (an identifier, a file name) is never split across lines
  for (const e of content.querySelectorAll('td code, td .course-text, th code')) {
    const text = e.textContent;
    if (!text.trim() || /\\s/.test(text.trim()) || text.length > 40) continue;
    const range = document.createRange();
    range.selectNodeContents(e);
    const lines = new Set([...range.getClientRects()].filter(r => r.width > 0)
                          .map(r => Math.round(r.top)));
    if (lines.size > 1) problems.push(`table cell splits the word ${JSON.stringify(text)}`);
  }
  // 3. a copy button never sits on code text
  for (const button of content.querySelectorAll('.md-code__button, clipboard-copy')) {
    const b = button.getBoundingClientRect();
    const block = button.closest('pre, .CodeMirror');
    if (!b.width || !block) continue;
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(walker.currentNode);
      if (walker.currentNode.textContent.trim() && [...range.getClientRects()].some(r =>
          r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom)) {
        problems.push(`a copy button covers the code ${JSON.stringify(
          walker.currentNode.textContent.trim().slice(0, 30))}`);
        break;
      }
    }
  }
  // 4. on a desktop, code and what a block printed fit the column: neither scrolls sideways
  //    (a run page's folded raw material and the API reference's source may)
  const inner = content.querySelector('.md-content__inner');
  const runPage = !!inner.querySelector(':scope > .course-run-header');
  if (window.innerWidth >= 1280 && !location.pathname.includes('/reference/')) {
    for (const e of content.querySelectorAll('pre > code')) {
      if (runPage && e.closest('details')) continue;
      if (e.scrollWidth > e.clientWidth + 1)
        problems.push(`${e.closest('.course-output') ? "a block's output" : 'a code block'} ` +
                      `is ${e.scrollWidth - e.clientWidth} px wider than the column: ` +
                      JSON.stringify(e.textContent.slice(0, 40)));
    }
  }
  // 5. on a desktop, a run page fits its column: only its folded raw material may scroll
  if (window.innerWidth >= 1280 && runPage) {
    const right = inner.getBoundingClientRect().right
      - parseFloat(getComputedStyle(inner).paddingRight);
    for (const e of inner.querySelectorAll('*')) {
      const box = e.getBoundingClientRect();
      if (e.closest('details') || !box.width) continue;
      const style = getComputedStyle(e);
      const hidden = /auto|scroll/.test(style.overflowX) ? e.scrollWidth - e.clientWidth : 0;
      // Material's table wrappers reach into the margin by design; an inline element's
      // padding may pass the edge by a few px where its text wraps
      const slack = e.matches('.md-typeset__scrollwrap, .md-typeset__table') ? Infinity
        : style.display === 'inline' ? 8 : 1;
      const out = box.right - right;
      if (hidden > 1 || out > slack)
        problems.push(`${named(e)} is ${Math.round(Math.max(hidden, out))} px wider than ` +
                      `the column, outside the folded raw material: ` +
                      JSON.stringify(e.textContent.trim().slice(0, 40)));
    }
  }
  return problems;
}"""


def layout_problems(page) -> list[str]:
    """What cuts or hides content on the open page (see LAYOUT_PROBLEMS), once it has settled
    (diagrams and maths rendered, scroll-regions.js run on them)."""
    page.evaluate(SETTLE)
    return page.evaluate(LAYOUT_PROBLEMS)


# -- the passes: each page opened once per width and scheme, every check that applies there --

OPEN_SHADOW_ROOTS = """Element.prototype.attachShadow = (attach => function (init) {
  return attach.call(this, {...init, mode: 'open'});
})(Element.prototype.attachShadow);"""
"""For measuring only: Material draws each diagram into a closed shadow root."""


DIAGRAM_SIZES = """() => [...document.querySelectorAll('div.mermaid')].map(host => {
  const svg = host.shadowRoot && host.shadowRoot.querySelector('svg');
  if (!svg) return null;
  let smallest = Infinity, label = '';
  const walker = document.createTreeWalker(svg, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode, element = text.parentElement;
    if (!text.textContent.trim() || element.closest('style')) continue;
    const scaled = element.closest('foreignObject') || element;   // an SVG element
    const m = scaled.getScreenCTM();
    const px = parseFloat(getComputedStyle(element).fontSize) * Math.hypot(m.a, m.b);
    if (px < smallest) { smallest = px; label = text.textContent.trim(); }
  }
  return {smallest, label, width: svg.getBoundingClientRect().width,
          column: host.clientWidth, tabindex: host.getAttribute('tabindex')};
})"""


DIAGRAM_REACH = """async () => {
  const reach = [];
  for (const host of document.querySelectorAll('div.mermaid')) {
    const svg = host.shadowRoot && host.shadowRoot.querySelector('svg');
    if (!svg || host.scrollWidth <= host.clientWidth + 1) { reach.push(null); continue; }
    const column = () => {
      const left = host.getBoundingClientRect().left + host.clientLeft;
      return {left, right: left + host.clientWidth};
    };
    const nodes = () => [...svg.querySelectorAll('g.node')].map(n => n.getBoundingClientRect());
    const frame = () => new Promise(done => requestAnimationFrame(done));
    const settled = () => frame().then(frame);
    const opened = column(), first = nodes()[0];
    const d = {scrollLeft: host.scrollLeft, column: host.clientWidth, nodes: nodes().length,
               firstLeft: first.left - opened.left, firstRight: first.right - opened.left,
               label: svg.querySelector('g.node').textContent.slice(0, 30),
               fadedLeftAtOpen: host.classList.contains('course-scrolls-left')};
    host.scrollLeft = 0;                              // as far left as it goes
    await settled();                                  // scroll-regions.js hears the scroll
    const start = column(), left = nodes();
    d.leftmost = Math.min(...left.map(r => r.left)) - start.left;
    d.svgLeft = svg.getBoundingClientRect().left - start.left;
    d.fadedAtStart = host.classList.contains('course-scrolls-left');
    host.scrollLeft = host.scrollWidth;               // as far right as it goes
    await settled();
    const end = column(), right = nodes();
    d.rightmost = Math.max(...right.map(r => r.right)) - end.right;
    d.svgRight = svg.getBoundingClientRect().right - end.right;
    d.fadedAtEnd = host.classList.contains('course-scrolls-right');
    host.scrollLeft = d.scrollLeft;
    reach.push(d);
  }
  return reach;
}"""
"""For each diagram wider than its column (null for one that fits): where its first box is as
the page opened it, and where its nodes and edges are once scrolled as far left, then as far
right, as it goes."""


FIGURE_SIZES = """async () => {
  const entries = bytes => {               // a PNG's tEXt chunks, keyword -> text
    const view = new DataView(bytes.buffer), found = {}, latin1 = new TextDecoder('latin1');
    for (let at = 8; at + 8 <= bytes.length; ) {
      const length = view.getUint32(at), kind = latin1.decode(bytes.subarray(at + 4, at + 8));
      if (kind === 'tEXt') {
        const data = bytes.subarray(at + 8, at + 8 + length), nul = data.indexOf(0);
        found[latin1.decode(data.subarray(0, nul))] = latin1.decode(data.subarray(nul + 1));
      }
      at += 12 + length;
    }
    return found;
  };
  return Promise.all([...document.querySelectorAll('figure[id^="__figure-caption_"] img')].map(
    async img => {
      await img.decode().catch(() => null);
      const bytes = new Uint8Array(await (await fetch(img.currentSrc)).arrayBuffer());
      const link = img.closest('a'), box = img.closest('figure > p, figure > a');
      return {src: img.getAttribute('src'), url: img.currentSrc, natural: img.naturalWidth,
              shown: img.getBoundingClientRect().width,
              column: img.closest('figure').parentElement.clientWidth,
              smallest: entries(bytes)['course:smallest-text-px'] ?? null,
              link: link && link.href, filter: getComputedStyle(img).filter,
              scrolls: !!box && box.scrollWidth > box.clientWidth + 1
                       && box.clientWidth <= img.closest('figure').parentElement.clientWidth
                       && box.getAttribute('tabindex') === '0'};
    }));
}"""
"""For each numbered figure of the page: its PNG's natural and displayed widths, the smallest
text it draws (the entry `figure_png` writes into the PNG, in image pixels), the link around
it, its CSS filter, and whether it sits in a box within the column that scrolls sideways and
Tab reaches (a phone's: course.css)."""

FIGURE_EXEMPT_RUNS = {path.name for path in FIXTURE_RUNS.iterdir()}
"""The test fixtures' run folders: their PNGs are stand-ins, not drawn by `figure_png`."""


def for_a_pass(tabs: Tabs) -> Tabs:
    """`tabs` made ready for a pass over many pages: their diagrams can be measured (shadow
    roots are opened, OPEN_SHADOW_ROOTS)."""
    tabs.context.add_init_script(OPEN_SHADOW_ROOTS)
    return tabs


def wait_for_diagrams(page, count: int) -> None:
    """Wait until `count` diagrams of the open page are drawn into their (opened) shadow roots,
    and the page has settled around them."""
    wait_until(page, "n => [...document.querySelectorAll('div.mermaid')].filter("
                     "d => d.shadowRoot?.querySelector('svg')).length >= n",
               f"{count} diagrams drawn", arg=count)
    page.evaluate(SETTLE)


SMALLEST_TEXT = {True: 12.0, False: 9.0}
"""The smallest a plot's text may be shown, in px: at 1280 px (True), and on a phone."""


def figure_problems(page, site: Path, path: str, width: int, scheme: str) -> tuple[int, list]:
    """The numbered figures of the open page (FIGURE_SIZES): each links to its own file and
    fits its column; in dark mode it is inverted (its paper is opaque white, see
    tests/test_plots.py, so it turns dark); at a desktop width its smallest text, as
    `figure_png` recorded it in the PNG and scaled as the browser shows the image, is at least
    12 px; on a phone at least 9 px, the picture wider than the column in a box that scrolls
    (course_site/figures.py). Returns how many figures drawn by `figure_png` were measured,
    and the problems."""
    figures = page.evaluate(FIGURE_SIZES)
    report = []
    if len(figures) != figures_in(site, path):
        report.append(f"{len(figures)} of {figures_in(site, path)} figures found in the page")
    measured = 0
    for number, f in enumerate(figures, 1):
        where = f"figure {number} ({f['src']})"
        if f["link"] != f["url"]:
            report.append(f"{where} links to {f['link']}, not to its own file")
        if f["shown"] > f["column"] + 0.5 and not (width < 1280 and f["scrolls"]):
            report.append(f"{where} is {f['shown']:.0f} px, wider than its "
                          f"{f['column']} px column, and not in a box that scrolls")
        if scheme == "dark" and "invert" not in f["filter"]:
            report.append(f"{where} is not inverted in dark mode: {f['filter']!r}")
        if path.startswith(tuple(f"runs/{name}/" for name in FIGURE_EXEMPT_RUNS)):
            continue
        measured += 1
        if f["smallest"] is None:
            report.append(f"{where} has no {'course:smallest-text-px'!r} entry: not drawn "
                          "by figure_png")
        else:
            shown, least = float(f["smallest"]) * f["shown"] / f["natural"], SMALLEST_TEXT[
                width >= 1280]
            if shown < least:
                report.append(f"{where}: its smallest text is {shown:.1f} px, under {least} "
                              f"({f['smallest']} px in the {f['natural']} px image shown "
                              f"{f['shown']:.0f} px wide)")
    return measured, report


SMALLEST_LABEL_PX = {1280: 12.0, 390: 10.0}
"""The smallest a diagram's label may be drawn, per width (Mermaid used to shrink wide
diagrams to the column: 7 px labels on a desktop, 4 px on a phone)."""


def diagram_problems(page, width: int) -> tuple[int, list[str]]:
    """The drawn diagrams of the open page (DIAGRAM_SIZES): each label at least
    SMALLEST_LABEL_PX tall; on a desktop each diagram fits the column; one wider than its
    column scrolls and Tab reaches it. Returns how many were measured, and the problems."""
    report = []
    diagrams = page.evaluate(DIAGRAM_SIZES)
    for number, d in enumerate(diagrams, 1):
        where = f"diagram {number}"
        if d is None:
            report.append(f"{where} was not drawn")
            continue
        if d["smallest"] < SMALLEST_LABEL_PX[width]:
            report.append(f"{where}: {d['label']!r} is {d['smallest']:.1f} px")
        if width >= 1280 and d["width"] > d["column"] + 1:
            report.append(f"{where} is {d['width']:.0f} px, wider than the "
                          f"{d['column']} px column")
        if d["width"] > d["column"] + 1 and d["tabindex"] != "0":
            report.append(f"{where} scrolls but Tab cannot reach it")
    return len(diagrams), report


def reach_problems(page) -> tuple[dict[int, str], list[str]]:
    """On a phone, each diagram of the open page wider than its column (DIAGRAM_REACH) opens
    scrolled to its first box, whole inside the column, with a faded edge on each side that
    has more; scrolled left or right as far as it goes, the leftmost and rightmost boxes and
    the diagram's edges come into view, no longer faded. Returns the first box's label of each
    wide diagram (by number), and the problems."""
    firsts, report = {}, []
    for number, d in enumerate(page.evaluate(DIAGRAM_REACH), 1):
        if d is None:
            continue
        where = f"diagram {number}"
        firsts[number] = d["label"]
        if not (d["firstLeft"] >= -0.5 and d["firstRight"] <= d["column"] + 0.5):
            report.append(f"{where} opens with its first box ({d['label']!r}) at "
                          f"{d['firstLeft']:.0f} to {d['firstRight']:.0f} px of the "
                          f"{d['column']} px column")
        if d["fadedLeftAtOpen"] != (d["scrollLeft"] > 1):
            report.append(f"{where}: the left fade does not match scrollLeft {d['scrollLeft']}")
        if d["leftmost"] < -0.5 or d["svgLeft"] < -0.5 or d["fadedAtStart"]:
            report.append(f"{where} scrolled left still hides {-d['svgLeft']:.0f} px "
                          f"(its leftmost box: {d['leftmost']:.0f} px; faded: "
                          f"{d['fadedAtStart']})")
        if d["rightmost"] > 0.5 or d["svgRight"] > 0.5 or d["fadedAtEnd"]:
            report.append(f"{where} scrolled right still hides {d['svgRight']:.0f} px "
                          f"(its rightmost box: {d['rightmost']:.0f} px; faded: "
                          f"{d['fadedAtEnd']})")
    return firsts, report


CONTENT = ".md-content"
"""What axe checks on a page that is not a key page: the page's own content. The frame around
it (header, tabs, navigation, table of contents, footer) comes from one template, the same on
every page, and is checked whole on the key pages, in light and dark mode and on a phone; on
every page it cost a third of the pass's axe time."""

KEY_PAGES = ["", "lessons/m1-reinforce/", "runs/run_001/", "labs/lab_bandit/", "rules/",
             "maps/three-loops/", "maps/macro-micro/", "predictions/"]
"""The pages the accessibility review looked at, plus the densest maths page: axe and the
layout checks run on them in dark mode and on a phone too."""


@functools.cache
def run_kind(path: str) -> str | None:
    """The kind a run page's run has (its manifest's `kind`), None for a page that is not a
    run's: the canonical runs and the fixtures' both get a page."""
    match = re.fullmatch(r"runs/(run_[^/]+)/", path)
    if match is None:
        return None
    folder = next(folder for folder in (REPO / "runs" / match[1], FIXTURE_RUNS / match[1])
                  if folder.is_dir())
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["kind"]


SAMPLED = {"reference/api/": (".md-content article > .doc-module", 10)}
"""Pages made of one template many times over, and what axe checks of them: the API
reference is 80 modules' worth of mkdocstrings' markup (1.6 MB; axe took 9.6 of the pass's
CPU-seconds there, as long as 8 lessons), so axe checks its prose and every tenth module,
one of each floor (`mark_sample`)."""
SAMPLE = "data-course-axe-sample"
"""The attribute `mark_sample` puts on what axe checks of a SAMPLED page."""


def axe_scope(pages: list[str], path: str) -> str | None:
    """What axe checks on `path` in the light pass: the whole page on a key page, its content
    (CONTENT) on any other, what `mark_sample` marks on a SAMPLED page; on a run page
    whose kind an earlier run page has, nothing. One template per kind makes a run page
    (course_site.run_pages) and the frame is the same everywhere, so seven eval runs show axe
    the same markup seven times, with other numbers (10 of 28 run pages, about 6 CPU-seconds); each
    still gets every other check."""
    if path in KEY_PAGES:
        return "html"
    if path in SAMPLED:
        return f"[{SAMPLE}]"
    if run_kind(path) is not None and path not in first_run_pages(tuple(pages)):
        return None
    return CONTENT


@functools.cache
def first_run_pages(pages: tuple[str, ...]) -> frozenset[str]:
    """The first run page of each kind of run, in the order of `pages`."""
    firsts: dict[str, str] = {}
    for path in pages:
        if (kind := run_kind(path)) is not None:
            firsts.setdefault(kind, path)
    return frozenset(firsts.values())


def mark_sample(page, path: str) -> int:
    """On a SAMPLED page, mark with SAMPLE what axe checks: every child of the content's
    article but the parts of the template, and one part in `step`; returns how many parts
    were marked."""
    selector, step = SAMPLED[path]
    return page.evaluate("""([selector, step, mark]) => {
      const parts = [...document.querySelectorAll(selector)];
      const article = parts[0].parentElement;
      [...article.children].filter(child => !parts.includes(child))
        .forEach(child => child.setAttribute(mark, ''));
      const kept = parts.filter((part, i) => i % step === 0);
      kept.forEach(part => part.setAttribute(mark, ''));
      return kept.length;
    }""", [selector, step, SAMPLE])


def test_the_site_has_what_the_passes_measure(built_site: Build):
    """Guards the passes below against measuring nothing: they check each page's figures and
    diagrams against the count in its HTML, so the HTML must hold the course's."""
    pages = site_pages(built_site.site)
    exempt = tuple(f"runs/{name}/" for name in FIGURE_EXEMPT_RUNS)
    figures = sum(figures_in(built_site.site, p) for p in pages if not p.startswith(exempt))
    lesson_figures = sum(figures_in(built_site.site, p) for p in pages
                         if p.startswith("lessons/"))
    diagrams = sum(diagrams_in(built_site.site, p) for p in pages)
    assert figures >= 20 and lesson_figures >= 11 and diagrams >= 14, \
        (figures, lesson_figures, diagrams)
    assert set(KEY_PAGES) <= set(pages)


@pytest.mark.parametrize("part", range(PARTS))
def test_every_page_is_clean_offline_rendered_and_accessible(new_tabs, built_site: Build,
                                                             site_url, part: int):
    """Every page, loaded once at the desktop width in the light scheme: no console error, no
    failed or off-host request, every diagram and formula rendered (`check_page`); axe-core
    finds no serious or critical violation in its content (on a key page, in the whole page;
    on run pages, once per kind of run; on the API reference, a sample: `axe_scope`); wide
    content scrolls, reachable by keyboard and with a visible hint; table cells keep words
    whole; copy buttons cover nothing; a block's printed output fits the column; a run page
    is no wider than its column outside its folded raw material (LAYOUT_PROBLEMS); every
    figure is readable (`figure_problems`) and every diagram too (`diagram_problems`); a
    lab's boxes hold their columns (`lab_box_problems`).
    Dark mode and the phone: the next two tests."""
    site = built_site.site
    assert len(site_pages(site)) >= 6
    page, watch = for_a_pass(new_tabs()).open()
    report = []
    pages = site_pages(site)
    for path in pages[part::PARTS]:
        open_page(page, site_url + path)
        page.evaluate(UNFOLD)
        problems = check_page(page, site, path)
        assert not watch.dialogs, (path, watch.dialogs)
        if path in SAMPLED:
            assert mark_sample(page, path) >= 4, path
        if (scope := axe_scope(pages, path)) is not None:
            problems += axe_problems(page, scope)
        problems += layout_problems(page) + watch.problems
        watch.problems.clear()
        if figures_in(site, path):
            problems += figure_problems(page, site, path, 1280, "light")[1]
        if diagrams_in(site, path):
            wait_for_diagrams(page, diagrams_in(site, path))
            problems += diagram_problems(page, 1280)[1]
        if path.startswith("labs/lab_"):
            problems += lab_box_problems(page, path)
        report += [f"/{path}: {p}" for p in problems]
    assert not report, "\n".join(report)


DARK_FIGURES = ("runs/run_011/",)
"""A run page with figures, for the dark pass (the key run page, run_001, has none)."""


def test_dark_mode_keeps_key_pages_accessible_and_inverts_the_figures(
        new_tabs, built_site: Build, site_url):
    """At the desktop width in the dark scheme: the key pages pass axe and the layout checks;
    the figures of a lesson, a lab (key pages) and a run page (DARK_FIGURES) are inverted and
    fit. One rule of the site's CSS inverts every figure of every page (the light pass
    checks that each fits at this width, the phone pass each lesson's on a phone), so the
    other lessons' figures are not loaded again for it: 9 pages, 12 CPU-seconds."""
    site = built_site.site
    page, watch = for_a_pass(new_tabs(color_scheme="dark")).open()
    report, measured = [], 0
    pages = [*KEY_PAGES, *DARK_FIGURES]
    for path in pages:
        figures = figures_in(site, path)
        open_page(page, site_url + path)
        page.evaluate(UNFOLD)
        assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
        problems = list(watch.problems)
        watch.problems.clear()
        if path in KEY_PAGES:
            problems += axe_problems(page) + layout_problems(page)
        if figures:
            count, found = figure_problems(page, site, path, 1280, "dark")
            measured, problems = measured + count, problems + found
        report += [f"/{path}: {p}" for p in problems]
    assert {path.split("/")[0] for path in pages if figures_in(site, path)} == {
        "lessons", "runs", "labs"}
    assert measured == sum(figures_in(site, path) for path in pages)
    assert not report, "\n".join(report)


PHONE_FIGURES = {"runs/run_011/", "labs/lab_tiny_lm/"}
"""Besides the lessons, pages whose figures the phone pass measures: a run page (run_011's
text was 4 to 7 px on a phone) and a lab; all three kinds get their phone width alike."""
FIRST_BOXES = {("maps/macro-micro/", 1): "s0 = prompt", ("maps/family-tree/", 2): "REINFORCE"}
"""Wide diagrams and the box each opens at on a phone: the top of its flow."""
WHOLE_ON_A_PHONE = {("maps/three-loops/", 1), ("", 1)}
"""Diagrams drawn to fit 390 px whole: the three loops, which once opened scrolled to their
middle with Loop A off-screen."""


@pytest.mark.parametrize("part", range(2))
def test_on_a_phone_key_pages_figures_and_diagrams_read_whole(new_tabs, built_site: Build,
                                                              site_url, part: int):
    """At 390 px in the light scheme, each page opened once (half of them per test): the key
    pages pass axe and the layout checks; each lesson figure (and PHONE_FIGURES') is a link to
    its own file and shows its smallest text at 9 px or more, in a box that scrolls sideways
    where that makes it wider than the column; every diagram's labels are at least 10 px, and
    a diagram wider than the phone scrolls, Tab reaches it, and it opens at its first box
    (FIRST_BOXES) with both ends in reach (`reach_problems`)."""
    site = built_site.site
    page, watch = for_a_pass(new_tabs(viewport={"width": 390, "height": 844})).open()
    pages = [path for path in site_pages(site) if path in KEY_PAGES or diagrams_in(site, path)
             or ((path.startswith("lessons/") or path in PHONE_FIGURES)
                 and figures_in(site, path))]
    report, firsts = [], {}
    for path in pages[part::2]:
        drawn = diagrams_in(site, path)
        open_page(page, site_url + path)
        page.evaluate(UNFOLD)
        if drawn:
            wait_for_diagrams(page, drawn)
        problems = list(watch.problems)
        watch.problems.clear()
        if path in KEY_PAGES:
            problems += axe_problems(page) + layout_problems(page)
        if (path.startswith("lessons/") or path in PHONE_FIGURES) and figures_in(site, path):
            problems += figure_problems(page, site, path, 390, "light")[1]
        if drawn:
            count, found = diagram_problems(page, 390)
            first, reach = reach_problems(page)
            if count != drawn:
                found.append(f"{count} of {drawn} diagrams measured")
            problems += found + reach
            firsts.update({(path, number): label for number, label in first.items()})
        report += [f"/{path}: {p}" for p in problems]
    for (path, number), label in FIRST_BOXES.items():
        if path in pages[part::2]:
            assert firsts.get((path, number), "").startswith(label), (path, number, firsts)
    for path, number in WHOLE_ON_A_PHONE:
        if path in pages[part::2]:
            assert (path, number) not in firsts, (path, number, "is wider than the phone")
    assert not report, "\n".join(report)


WIDE_ON_A_PHONE = """() => {
  const wide = [];
  const measure = (selector) => document.querySelectorAll(selector).forEach((el) => {
    if (el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1) {
      wide.push(`${selector}: ${el.scrollWidth - el.clientWidth} px more than its ` +
                `${el.clientWidth} px: ${el.textContent.trim().slice(0, 40)}`);
    }
  });
  ['.md-typeset pre:not(.course-log) > code', '.md-typeset div.arithmatex',
   '.md-typeset .md-typeset__scrollwrap'].forEach(measure);
  return wide;
}"""
"""What still scrolls sideways on the open page: code and its output (not a run's log),
display maths, tables."""


def test_on_a_phone_code_wraps_with_a_cue_and_the_three_loops_fit(new_tabs, site_url):
    """At 390 px, M1's code blocks and outputs wrap instead of scrolling, each wrapped line's
    continuation indented (a hanging indent: the cue that the line goes on), and what is
    copied is the code as written; the three-loops map fits whole: its display equations are
    broken into lines, and its tables are read row by row, each cell under its column's name."""
    page, watch = new_tabs(viewport={"width": 390, "height": 844}).open()
    open_page(page, site_url + "lessons/m1-reinforce/")
    page.evaluate(UNFOLD)
    page.evaluate(SETTLE)
    assert page.evaluate(WIDE_ON_A_PHONE) == []
    code = page.locator(".md-typeset pre > code").first
    style = code.evaluate("c => [getComputedStyle(c).whiteSpace, getComputedStyle(c).textIndent]")
    assert style[0] == "pre-wrap" and "hanging" in style[1] and "each-line" in style[1], style
    lines = code.evaluate("c => [c.textContent.split('\\n').length, Math.round(c.scrollHeight "
                          "/ parseFloat(getComputedStyle(c).lineHeight))]")
    assert lines[1] > lines[0], lines                  # some of its lines do wrap
    assert "\n" not in code.evaluate("c => c.textContent.split('\\n')[4]")  # copied as written

    open_page(page, site_url + "maps/three-loops/")
    page.evaluate(SETTLE)
    assert page.evaluate(WIDE_ON_A_PHONE) == []
    table = page.locator("table[data-stacked]").first
    cell = table.locator("td").nth(1)
    assert cell.get_attribute("data-label") == "Meaning"
    assert cell.evaluate("c => getComputedStyle(c, '::before').content") == '"Meaning: "'
    assert watch.problems == []


def test_the_family_tree_says_what_it_draws(new_tabs, site_url):
    """The family tree's diagrams: no edge label lies over a box (the clipped-ratio label once
    sat on RLOO's), and a box that is neither green nor yellow is white, as the legend says."""
    page, watch = for_a_pass(new_tabs()).open()
    open_page(page, site_url + "maps/family-tree/")
    wait_for_diagrams(page, 3)
    found = page.evaluate("""() => [...document.querySelectorAll('div.mermaid')].map(host => {
      const svg = host.shadowRoot.querySelector('svg');
      const boxes = [...svg.querySelectorAll('g.node')].map(n => [n.textContent.trim(),
        n.getBoundingClientRect(), getComputedStyle(n.querySelector('rect, polygon, path')).fill,
        n.getAttribute('class')]);
      const overlaps = [];
      svg.querySelectorAll('g.edgeLabel').forEach(label => {
        const r = label.getBoundingClientRect();
        if (!label.textContent.trim() || !r.width) return;
        boxes.forEach(([name, b]) => {
          if (r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom)
            overlaps.push(`${label.textContent.trim()} over ${name}`);
        });
      });
      const colours = boxes.filter(([, , , cls]) => !/covered|concept/.test(cls))
        .map(([name, , fill]) => [name, fill]);
      return {overlaps, colours};
    })""")
    assert [d["overlaps"] for d in found] == [[], [], []]
    others = [pair for d in found for pair in d["colours"]]
    assert len(others) >= 8 and all(fill == "rgb(255, 255, 255)" for _, fill in others), others
    assert watch.problems == []


def test_checklists_can_be_ticked_and_are_remembered(tab, site_url):
    """The rules page asks students to tick its boxes: each has its item's text as its name,
    and a ticked box is still ticked after a reload."""
    page, watch = tab
    open_page(page, site_url + "rules/")
    boxes = page.locator(".task-list-item input[type=checkbox]")
    assert boxes.count() >= 30
    names = [boxes.nth(i).get_attribute("aria-label") for i in range(boxes.count())]
    assert all(name and len(name) > 10 for name in names), names
    assert boxes.first.is_enabled() and not boxes.first.is_checked()

    def click_the_drawn_box(number: int) -> None:
        """Click where the reader sees the box: Material draws it over the real checkbox."""
        box = boxes.nth(number).bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    boxes.first.scroll_into_view_if_needed()
    click_the_drawn_box(0)
    click_the_drawn_box(2)
    click_the_drawn_box(2)
    boxes.nth(1).focus()                                           # ... or ticks with the keyboard
    page.keyboard.press("Space")
    assert [boxes.nth(i).is_checked() for i in range(3)] == [True, True, False]
    page.reload(wait_until="networkidle")
    boxes = page.locator(".task-list-item input[type=checkbox]")
    assert [boxes.nth(i).is_checked() for i in range(3)] == [True, True, False]
    # the name is the item's own words, found again by a screen reader's label lookup
    assert page.get_by_label(names[0], exact=True).is_checked()
    assert watch.problems == []


def test_the_palette_switch_is_a_visible_keyboard_stop(tab, site_url):
    """Tab lands on the colour switch where its button is drawn (it used to be a 0 x 0 radio
    button), and Enter switches the colours."""
    page, watch = tab
    open_page(page, site_url)
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('md-option')"):
            break
    else:
        pytest.fail("Tab never reached the palette switch")
    focused = page.evaluate("""() => { const r = document.activeElement.getBoundingClientRect();
      const b = [...document.querySelectorAll('.md-option + label')].find(l => l.offsetWidth)
                .getBoundingClientRect();
      const [x, y] = [b.left + b.width / 2, b.top + b.height / 2];
      return {w: r.width, h: r.height, on_the_button: r.left < x && x < r.right
              && r.top < y && y < r.bottom}; }""")
    assert focused["w"] >= 24 and focused["h"] >= 24 and focused["on_the_button"], focused
    scheme = page.evaluate("document.body.dataset.mdColorScheme")
    page.keyboard.press("Enter")
    wait_until(page, f"() => document.body.dataset.mdColorScheme !== {scheme!r}",
               "the other colour scheme")
    assert watch.problems == []


# -- Try-it boxes: the course's own Python in the page (issue 24) ----------------------------



def press(page, box, action: str) -> str:
    """Press a box's button and wait for its verdict; returns the box's status line."""
    status = press_box(page, box, action)
    assert box.get_attribute("data-state") == "done", status
    return status


def table_rows(box) -> list[list[str]]:
    return [[cell.inner_text() for cell in row.locator("td").all()]
            for row in box.locator(".try-it-result tbody tr").all()]


def pyodide_requests(page) -> int:
    return page.evaluate("performance.getEntriesByType('resource')"
                         ".filter(e => e.name.includes('/vendor/pyodide/')).length")


def fits(element) -> bool:
    """Whether an element shows all it holds: nothing runs past its right edge."""
    return element.evaluate("e => e.scrollWidth <= e.clientWidth + 1")


def test_every_scorer_and_golden_box_shows_what_score_decides(tab, site_url, built_site: Build):
    """M4 has both kinds of scorer box. Python loads only on the first press, from the site
    itself, its status line naming each stage (`first_load_problems`); the verdict is `course
    score`'s explanation of `score()`; the near-miss table fits on a desktop and scrolls on a
    phone (`near_miss_table_problems`); every near miss and every golden case gets, in the
    page, the reward and code `score()` gives here; an Edit button
    (pressed with the keyboard) puts its near miss in the box; axe still finds nothing. Then
    every other page a teacher placed a scorer or golden box on (the exercise boxes: the next
    test), reached by a link as a student moves on, so Python loaded on M4 serves them: each
    scorer box shows `course score`'s explanation of its own completion, each golden box passes
    every case."""
    from course.data import load_golden
    from course.explain import explain
    from course.paths import DATA_DIR
    from course.scorer import SCORER_VERSION, SPEC_DECISIONS, score

    page, watch = tab
    open_page(page, site_url + "lessons/m4-reward-as-spec/")
    assert pyodide_requests(page) == 0                       # nothing loaded with the page
    box = page.locator(".try-it[data-kind=scorer]").first
    assert box.locator("textarea").input_value() == "Final: 0323"
    assert first_load_problems(page, box, built_site) == []
    assert pyodide_requests(page) >= 4                       # ... until the first press
    assert box.locator(".try-it-version").inner_text() == f"scorer {SCORER_VERSION}"
    verdict = score({"expected_answer": 323}, "Final: 0323")
    assert box.locator(".try-it-verdict").inner_text() == "\n".join(explain(verdict,
                                                                            "Final: 0323"))
    assert fits(box.locator(".try-it-verdict"))

    press(page, box, "near-misses")
    assert near_miss_table_problems(page, box) == []
    completions = {case: completion for case, completion, *_ in SPEC_DECISIONS
                   if isinstance(completion, str)}
    rows = table_rows(box)
    assert [row[0] for row in rows] == list(completions)
    for case, _, expected, reward, code, _, _ in rows:
        result = score({"expected_answer": int(expected)}, completions[case])
        assert (reward, code) == (f"{result['reward']:.1f}", result["details"]["code"]), case
    box.get_by_role("button", name="Edit: trailing period").focus()
    page.keyboard.press("Enter")
    wait_until(page, "box => box.dataset.state === 'done' && "
                     "box.querySelector('.try-it-verdict')", "the edited near miss's verdict",
               arg=box.element_handle())
    assert box.locator("textarea").input_value() == "Final: 323."
    assert "code not_an_integer" in box.locator(".try-it-verdict").inner_text()

    golden = page.locator(".try-it[data-kind=golden]").first
    status = press(page, golden, "golden")
    cases = (load_golden(DATA_DIR / "golden" / "correct.jsonl")
             + load_golden(DATA_DIR / "golden" / "exploits.jsonl"))
    rows = table_rows(golden)
    assert [row[1] for row in rows] == [case["id"] for case in cases], status
    for case, (_, _, _, _, _, got, verdict) in zip(cases, rows, strict=True):
        result = score(case, case["completion"])
        assert got == f"{result['reward']:.1f} {result['details']['code']}", case["id"]
        assert verdict == "pass", case["id"]
    assert status.startswith(f"{len(cases)} of {len(cases)} cases pass"), status
    assert axe_problems(page) == []

    pages = [path for path in site_pages(built_site.site)
             if re.search(r'class="try-it" data-kind="(scorer|golden)"',
                          page_html(built_site.site, path))]
    assert {"lessons/m4-reward-as-spec/", "lessons/m5-red-team/", "labs/",
            "labs/lab_scorer/"} <= set(pages), pages
    pressed = 0
    for path in pages:          # followed by link, as a student moves: Python stays loaded
        if path == "lessons/m4-reward-as-spec/":
            continue
        follow_link(page, site_url + path)
        for box in page.locator(".try-it[data-kind=scorer]").all():
            completion = box.locator("textarea").input_value()
            expected = box.locator("input").input_value()
            press(page, box, "score")
            verdict = score({"expected_answer": int(expected)}, completion)
            assert (box.locator(".try-it-verdict").inner_text()
                    == "\n".join(explain(verdict, completion))), path
            assert fits(box.locator(".try-it-verdict")), path        # it wraps, never cut
            pressed += 1
        for box in page.locator(".try-it[data-kind=golden]").all():
            status = press(page, box, "golden")
            rows = table_rows(box)
            assert rows and all(row[-1] == "pass" for row in rows), (path, status)
            pressed += 1
    assert pressed >= 4, pressed
    assert watch.problems == []


def test_a_link_followed_right_after_a_scroll_is_followed(tab, site_url):
    """The stall of follow_link (issue 43), reproduced: scroll M4 and follow a link at once.
    Material carries M4's active anchor into the new address; the page is the new one all the
    same, its boxes set up, reached without a reload."""
    page, watch = tab
    open_page(page, site_url + "lessons/m4-reward-as-spec/")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight / 2)")
    wait_until(page, "() => location.hash", "the active heading in the address")
    page.evaluate("window.scrollBy(0, 200)")
    follow_link(page, site_url + "labs/")
    assert page.evaluate("location.pathname") == "/labs/"
    assert page.locator("h1").first.inner_text().startswith("Labs")
    assert watch.problems == []


@pytest.mark.skipif(not (REPO / "teacher" / "solutions").is_dir(),
                    reason="needs the reference solutions, in teacher/: not in the students' copy")
def test_the_stdlib_exercises_are_checked_in_the_page_as_course_check_does(tab, site_url,
                                                                           tmp_path):
    """Each exercise box (the pages reached by a link, as a student moves: Python loads once):
    the stub is `not started`, the reference solution gets the report `course check` prints
    for it (its first line names the file), and the text written in each box is still there
    when its page is loaded again."""
    from course.exercises import EXERCISES, STDLIB_CHECKERS, format_report, run_check

    page, watch = tab
    solutions = {name: (REPO / "teacher" / "solutions" / EXERCISES[name].file).read_text()
                 for name in STDLIB_CHECKERS}
    for number, (name, checker) in enumerate(STDLIB_CHECKERS.items()):
        (follow_link if number else open_page)(page, site_url + f"exercises/{name}/")
        box = page.locator(".try-it[data-kind=exercise]")
        assert press(page, box, "check").startswith("Checked: not started")
        solution = solutions[name]
        box.locator("textarea").fill(solution)
        press(page, box, "check")
        (tmp_path / EXERCISES[name].file).write_text(solution)
        report = format_report(run_check(EXERCISES[name], tmp_path / EXERCISES[name].file,
                                         checker))
        shown = box.locator(".try-it-verdict").inner_text()
        assert shown.split("\n")[1:] == report.split("\n")[1:], shown
        assert "status: passing" in shown and axe_problems(page) == []
    for name, solution in solutions.items():
        open_page(page, site_url + f"exercises/{name}/")
        assert page.locator(".try-it textarea").input_value() == solution
    assert watch.problems == []


def test_a_try_it_box_without_javascript_is_a_sentence_with_the_command(new_tabs, site_url):
    """No JavaScript: each box is its sentence, naming the command that gives the verdict."""
    page, watch = new_tabs(java_script_enabled=False).open()
    page.goto(site_url + "lessons/m4-reward-as-spec/", wait_until="load")
    static = page.locator(".try-it .try-it-static")
    assert static.first.is_visible() and not page.locator(".try-it-live").first.is_visible()
    assert "course score --expected 323 'Final: 0323'" in static.first.inner_text()
    assert watch.problems == []


def test_a_prediction_is_asked_first_kept_and_handed_in(tab, site_url):
    """Predict, then run (course_site/predictions.py, predictions.js): the output that answers
    a box stays folded until the student answers or skips; a wrong entry is refused; the key is
    what the page's own block printed; answers survive a reload; My predictions counts, exports
    (JSON and CSV) and clears them."""
    page, watch = tab
    open_page(page, site_url + "lessons/m1-reinforce/")
    form = page.locator("#predict-the-learning-curve form")
    figure = page.locator("img[src$='learning_curve.png']").first
    answer = page.locator("details").filter(
        has=page.locator("summary", has_text="Answer: the learning curve"))
    assert form.is_visible() and not figure.is_visible() and not answer.is_visible()
    assert axe_problems(page) == []                      # the boxes waiting for an answer
    field = form.get_by_label("Your prediction, J after 300 steps:")
    result = form.get_by_role("status")
    field.fill("about 0.9")                                          # not a number
    form.get_by_role("button", name="Check my prediction").click()
    assert "is not a number" in result.inner_text() and not figure.is_visible()
    assert field.get_attribute("aria-invalid") == "true"
    field.fill("60%")                                                 # a share, as a person
    field.press("Enter")                                             # the keyboard submits
    assert result.inner_text() == ("You said 60% (read as 0.6); the run gives 0.8992: off by "
                                   "0.2992, outside the box's tolerance of ±0.02.")
    # the form's controls are now disabled: the keyboard goes on from the verdict
    assert page.evaluate("document.activeElement.classList.contains('course-predict-result')")
    assert figure.is_visible() and answer.get_attribute("open") is not None
    assert "-> 0.8992" in answer.locator(".course-output").inner_text()   # the page's own output
    skipped = page.locator("#predict-the-ablation form")
    skipped.get_by_role("button", name="Show me anyway").click()
    assert skipped.get_by_role("status").inner_text() == (
        "You looked without predicting; the run gives none. What ran stays folded until you "
        "answer “no baseline” too.")
    text = page.locator("#predict-no-baseline form")
    text.get_by_label("Before you read on, write your prediction in one line:").fill(
        "=no: a failure changes nothing")       # a spreadsheet would run a leading `=`
    text.get_by_role("button", name="Save my prediction").click()
    page.reload(wait_until="networkidle")
    form = page.locator("#predict-the-learning-curve form")
    assert form.get_by_role("status").inner_text().startswith("You said 60% (read as 0.6);")
    assert form.get_by_label("Your prediction, J after 300 steps:").is_disabled()
    assert page.locator("img[src$='learning_curve.png']").first.is_visible()

    open_page(page, site_url + "lessons/m0-orientation/")
    choice = page.locator("#predict-failures form")
    assert axe_problems(page) == []                      # a choice waiting for an answer
    choice.get_by_label("wrong_answer").check()
    choice.get_by_role("button", name="Check my prediction").click()
    assert choice.get_by_role("status").inner_text() == (
        "You picked wrong_answer; the run gives wrong_answer. Right.")

    open_page(page, site_url + "predictions/")
    totals = page.locator(".course-my-predictions-totals li")
    assert totals.filter(has_text="Milestone 1:").inner_text().endswith(
        ": 2 of 6 answered, 0 within tolerance or right, 1 skipped")
    assert totals.filter(has_text="Milestone 0:").inner_text().endswith(
        ": 1 of 6 answered, 1 within tolerance or right, 0 skipped")
    row = page.locator("tr", has=page.get_by_role("link", name="the learning curve", exact=True))
    assert row.locator(".course-predict-status").inner_text() == (
        "60% (run: 0.8992, outside ±0.02)")
    # the lesson as the navigation names it; what the box asks for
    assert [cell.inner_text() for cell in row.locator("td").all()[::2]] == [
        "Milestone 1: the update step in slow motion", "a number"]
    with page.expect_download() as saved:
        page.get_by_role("button", name="Export as JSON").click()
    exported = json.loads(Path(saved.value.path()).read_text(encoding="utf-8"))
    assert sorted(p["name"] for p in exported["predictions"]) == [
        "failures", "no baseline", "the ablation", "the learning curve"]
    with page.expect_download() as saved:
        page.get_by_role("button", name="Export as CSV").click()
    lines = Path(saved.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("lesson,name,kind,answer,key") and len(lines) == 5
    assert ",no baseline,text,'=no: a failure changes nothing," in "\n".join(lines)
    page.get_by_role("button", name="Clear all").click()
    page.get_by_role("button", name="Yes, delete them").click()
    assert row.locator(".course-predict-status").inner_text() == "not yet"
    assert watch.problems == []


def test_each_box_of_a_pair_opens_its_own_answer(tab, site_url):
    """Two boxes answered by one run (M0: mean reward, interval width): answering the first
    opens its own answer and says what stays folded and why; the run's output opens when both
    are answered, and the first box's note goes."""
    page, watch = tab
    open_page(page, site_url + "lessons/m0-orientation/")
    first, second = (page.locator(f"#predict-{name} form")
                     for name in ("mean-reward", "interval-width"))
    output = page.locator(".course-output", has_text="points wide")
    answers = {name: page.locator("details").filter(
        has=page.locator("summary", has_text=f"Answer: {name}")) for name in
        ("mean reward", "interval width")}
    assert not output.is_visible() and not any(a.is_visible() for a in answers.values())
    first.get_by_label("Before you read on, write your prediction in one line:").fill(
        "no: the mean of 0/1 rewards is the pass rate")
    first.get_by_role("button", name="Save my prediction").click()
    assert first.get_by_role("status").inner_text().endswith(
        "What ran stays folded until you answer “interval width” too.")
    assert answers["mean reward"].is_visible() and answers["mean reward"].get_attribute("open") \
        is not None
    assert not output.is_visible() and not answers["interval width"].is_visible()
    second.get_by_label("Your prediction, the interval's width, in percentage points:").fill(
        "24")
    second.get_by_role("button", name="Check my prediction").click()
    assert second.get_by_role("status").inner_text().startswith("You said 24; the run gives")
    assert output.is_visible() and answers["interval width"].is_visible()
    assert first.get_by_role("status").inner_text() == (
        "Your prediction, kept: “no: the mean of 0/1 rewards is the pass rate”. Compare it "
        "with what follows.")
    assert watch.problems == []


def test_a_lab_prediction_folds_its_cells_until_answered(tab, site_url):
    """A lab's box (course_site/predictions.py, the labs) folds the code cells after it and
    its answer cell; the key is what the lab's own cell printed; My predictions lists it."""
    page, watch = tab
    open_page(page, site_url + "labs/lab_tokens/")
    form = page.locator("#predict-fresh-samples form")
    printed = page.locator(".jp-OutputArea-output", has_text="against the snapshot")
    answer = page.locator(".jp-MarkdownCell", has_text="Answer: fresh samples.")
    assert form.is_visible() and not printed.is_visible() and not answer.is_visible()
    assert page.locator("#predict-its-own-term form").is_visible()   # the next box is not
    form.get_by_label("fewer").check()                                # folded with it
    form.get_by_role("button", name="Check my prediction").click()
    assert form.get_by_role("status").inner_text() == (
        "You picked fewer; the run gives fewer. Right.")
    assert printed.is_visible() and answer.is_visible()
    open_page(page, site_url + "predictions/")
    row = page.locator("tr", has=page.get_by_role("link", name="fresh samples", exact=True))
    assert row.locator(".course-predict-status").inner_text() == "fewer (run: fewer, right)"
    assert watch.problems == []


def test_without_javascript_a_prediction_box_is_its_question(new_tabs, site_url):
    """The form is for browsers that run predictions.js: without JavaScript the box is only its
    question, and nothing it would fold is hidden."""
    page, watch = new_tabs(java_script_enabled=False).open()
    open_page(page, site_url + "lessons/m1-reinforce/")
    box = page.locator(".admonition", has=page.locator("#predict-the-learning-curve"))
    assert box.inner_text().strip().endswith("has the policy reached?")
    assert not box.locator("form").is_visible()
    assert page.locator("img[src$='learning_curve.png']").first.is_visible()
    assert page.locator(".course-predict-folded").count() == 0
    assert watch.problems == []
