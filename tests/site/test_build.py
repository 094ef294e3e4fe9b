"""The strict build: it succeeds on the real site, and it fails loudly on each kind of mistake
a writer can make (broken anchor, page left out of nav, the bare-word fence option, a lab cell
that raises, a broken run file, front-end assets not installed)."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sitebuild import (
    FIXTURE_RUNS,
    MINIMAL_NAV,
    REPO,
    Build,
    build_site,
    mini_repo,
    page_file,
    site_pages,
)


def test_strict_build_succeeds_and_has_every_part(built_site: Build):
    print(f"\nstrict build (with the fixture run): {built_site.seconds:.1f} s")
    site = built_site.site
    for part in ("index.html", "404.html", "search/search_index.json", "sitemap.xml",
                 "reference/api/index.html", "labs/index.html", "labs/lab_scorer/index.html",
                 "labs/lab_scorer/lab_scorer.py",
                 "runs/index.html", "runs/run_fixture/index.html",
                 "runs/run_fixture/codes.png", "runs/run_fixture/results.jsonl",
                 "assets/vendor/mermaid/mermaid.min.js", "assets/vendor/mathjax/tex-chtml.js",
                 "assets/vendor/mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff"):
        assert (site / part).is_file(), f"{part} is missing from the built site"


def test_the_strict_build_executes_every_lab_quietly(built_site: Build):
    """No lab comes from a cache (site_hooks/serve.py caches under `mkdocs serve` only), and no
    lab kernel warns about unencrypted TCP (site_hooks/notebooks.py gives it keys)."""
    labs = sorted((REPO / "docs" / "labs").glob("lab_*.py"))
    assert built_site.log.count("Converting notebook") == len(labs) >= 5, built_site.log
    assert "Cache hit" not in built_site.log
    assert "without encryption" not in built_site.log
    assert "WARNING" not in built_site.log


def test_every_committed_run_has_a_page_in_the_nav(built_site: Build):
    runs = [*sorted(p.name for p in (REPO / "runs").glob("run_*") if p.is_dir()), "run_fixture"]
    home = (built_site.site / "index.html").read_text(encoding="utf-8")
    for name in runs:
        assert (built_site.site / "runs" / name / "index.html").is_file(), name
        assert f'href="runs/{name}/"' in home, f"{name} is not in the navigation"


NETWORK_LOAD = re.compile(
    r"<(?:script|img|iframe|source|audio|video)\b[^>]*\ssrc=[\"'](?:https?:)?//"
    r"|<link\b[^>]*\brel=[\"'](?:stylesheet|preload|modulepreload|icon)[\"'][^>]*\bhref=[\"']"
    r"(?:https?:)?//|@import\s+url\(\s*[\"']?https?:", re.IGNORECASE)
"""HTML that makes the browser fetch from another host (a plain link to one does not)."""


@pytest.mark.parametrize(("html", "loads"), [
    ('<script src="https://unpkg.com/mermaid@11/dist/mermaid.min.js"></script>', True),
    ('<link rel="stylesheet" href="//fonts.googleapis.com/css?family=Roboto">', True),
    ("<style>@import url('https://cdn.example/x.css');</style>", True),
    ('<script src="../assets/vendor/mermaid/mermaid.min.js"></script>', False),
    ('<a href="https://squidfunk.github.io/mkdocs-material/">Material</a>', False),
    ('<link rel="canonical" href="http://127.0.0.1:8000/">', False),
])
def test_the_network_check_recognises_loads(html, loads):
    assert bool(NETWORK_LOAD.search(html)) is loads


def test_no_page_loads_anything_from_the_network(built_site: Build):
    """Static check (the browser test checks the requests themselves): no script, stylesheet,
    image, font or frame in any page points at another host."""
    for page in site_pages(built_site.site):
        match = NETWORK_LOAD.search(page_file(built_site.site, page).read_text(encoding="utf-8"))
        assert match is None, f"{page} loads from the network: {match.group() if match else ''}"


def test_run_readme_python_blocks_are_marked_notest(built_site: Build):
    html = (built_site.site / "runs/run_fixture/index.html").read_text(encoding="utf-8")
    assert 'class="language-python notest highlight"' in html


# -- the failures: a miniature repository with one mistake each -------------------------------

def mini_build(root: Path, extra_runs: Path | None = None) -> Build:
    return build_site(root / "site", extra_runs=extra_runs, config=root / "mkdocs.yml")


# The control for the failures below, the same set-up without a mistake passing, is
# tests/site/test_properdocs.py: its MkDocs build of a page of each kind must pass.


def test_writer_mistakes_fail_the_strict_build_each_named(tmp_path):
    """Every mistake is a warning, so one strict build reports them all (one build instead of
    one per mistake: each build starts MkDocs and Material again). A block that raises is
    named by page and line."""
    docs = {
        "index.md": "# Home\n\n[a broken anchor](#no-such-heading)\n\n"
                    "[a missing page](missing.md)\n\n"
                    "```python notest\nprint('bare word')\n```\n",
        "orphan.md": "# Not in nav\n",
        "raises.md": "# Raises\n\n```python\nprint('shown')\n"
                     "raise RuntimeError('block failed on purpose')\n```\n",
    }
    nav = MINIMAL_NAV + "  - Raises: raises.md\n"
    build = mini_build(mini_repo(tmp_path, docs, nav=nav))
    assert build.returncode != 0
    assert "no-such-heading" in build.log, build.log                      # anchors: warn
    assert "missing.md" in build.log, build.log                           # links: warn
    assert "orphan.md" in build.log, build.log                            # omitted_files: warn
    assert "```{.python notest}" in build.log, build.log                  # site_hooks/fences.py
    assert "docs/raises.md, the block at line 3 raised:" in build.log, build.log
    assert "RuntimeError: block failed on purpose" in build.log, build.log


def test_a_lab_cell_that_raises_fails_the_build(tmp_path):
    lab = '# %% [markdown]\n# # A lab\n\n# %%\nraise RuntimeError("cell failed on purpose")\n'
    nav = MINIMAL_NAV + "  - Lab: labs/lab_broken.py\n"
    build = mini_build(mini_repo(tmp_path, {"index.md": "# Home\n", "labs/lab_broken.py": lab},
                                 nav=nav))
    assert build.returncode != 0
    assert "cell failed on purpose" in build.log, build.log


def test_a_broken_run_file_fails_the_build_naming_file_and_line(tmp_path):
    runs = tmp_path / "extra"
    shutil.copytree(FIXTURE_RUNS / "run_fixture", runs / "run_broken")
    (runs / "run_broken" / "summary.json").write_text('{\n  "n": 7,\n  oops\n}\n')
    build = mini_build(mini_repo(tmp_path / "repo", {"index.md": "# Home\n"}), extra_runs=runs)
    assert build.returncode != 0
    assert re.search(r"run_broken/summary\.json:3: invalid JSON", build.log), build.log


def test_missing_front_end_assets_fail_the_build_with_the_fix(tmp_path):
    build = mini_build(mini_repo(tmp_path, {"index.md": "# Home\n"}, node_modules=False))
    assert build.returncode != 0
    assert "run `npm ci`" in build.log, build.log


def test_the_fixture_run_is_what_the_browser_test_expects():
    results = [json.loads(line) for line in
               (FIXTURE_RUNS / "run_fixture" / "results.jsonl").read_text().splitlines()]
    assert "<script>alert(1)</script>" in [r["completion"] for r in results]


class _TextOutsideCode(HTMLParser):
    """The text a reader sees as prose: everything outside <pre>, <code>, <script>, <style>."""

    SKIP = frozenset({"pre", "code", "script", "style"})

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.lines: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.depth += tag in self.SKIP

    def handle_endtag(self, tag):
        self.depth -= tag in self.SKIP and self.depth > 0

    def handle_data(self, data):
        if not self.depth:
            self.lines += data.split("\n")


RAW_FENCE = re.compile(r"(?:^|\s)(?:`{3,}|~{3,})\s*\{?\.?[\w-]*")


@pytest.mark.parametrize(("html", "raw"), [
    ("<p>```python\nfrom course.mdp import train</p>", True),
    ("<p>see</p><pre><code>```python\nx = 1\n```</code></pre>", False),
    ("<p>a fence is written <code>```python</code></p>", False),
])
def test_the_raw_fence_check_reads_only_prose(html, raw):
    assert any(RAW_FENCE.search(line) for line in _TextOutsideCode(html).lines) is raw


def test_no_page_shows_a_raw_fence_marker(built_site: Build):
    """A fence the Markdown parser did not recognise (an unindented fence inside `???`, say)
    renders as a literal ```python and its code falls out of the box, although the docs test
    (which lifts the block first) still runs it. This reads what the reader sees, on every
    page: a run page shows recorded completions, fences included, as code."""
    for page in site_pages(built_site.site):
        parser = _TextOutsideCode(page_file(built_site.site, page).read_text(encoding="utf-8"))
        raw = [line for line in parser.lines if RAW_FENCE.search(line)]
        assert not raw, f"{page} shows a raw fence marker: {raw[0].strip()!r}"


_NESTED_TABLE = re.compile(r"<table[^>]*>(?:(?!</table>).)*<table", re.DOTALL)


def test_no_run_page_nests_a_table(built_site: Build):
    """A table inside a table cell was cut off mid-word; a run page's values are flat."""
    pages = [page for page in site_pages(built_site.site) if page.startswith("runs/run_")]
    assert len(pages) >= 20
    nested = [page for page in pages
              if _NESTED_TABLE.search(page_file(built_site.site, page).read_text("utf-8"))]
    assert not nested, nested


OUTPUT_COLUMNS = 80
"""The widest output line a page may show: about what the content column holds at 1280 px
(measured by the browser test), and a terminal's width."""


def test_every_block_output_fits_the_column(built_site: Build):
    """What a block prints is read under it: a line wider than the column would hide its end."""
    wide, shown = [], 0
    for page in site_pages(built_site.site):
        html = page_file(built_site.site, page).read_text(encoding="utf-8")
        for number, output in enumerate(re.findall(
                r'<div class="language-text course-output no-copy highlight"><pre>.*?<code>'
                r"(.*?)</code></pre></div>", html, re.DOTALL), start=1):
            shown += 1
            text = re.sub(r"<[^>]+>", "", output)
            wide += [f"/{page} output {number}: {len(line)} columns: {line[:90]}"
                     for line in unescape(text).split("\n") if len(line) > OUTPUT_COLUMNS]
    assert shown >= 60, f"only {shown} outputs found: is site_hooks/outputs.py running?"
    assert not wide, "\n".join(wide)


def test_every_figure_is_numbered_captioned_and_referred_to(built_site: Build):
    """A figure is numbered, Figure N, with a caption (pymdownx.blocks.caption) and
    alt text that says what it shows; on a lesson the prose refers to each figure by its number,
    and never to a figure the page does not have."""
    problems, figures_seen = [], 0
    for page in site_pages(built_site.site):
        html = page_file(built_site.site, page).read_text(encoding="utf-8")
        article = html.split('<article class="md-content__inner', 1)[-1].split("</article>")[0]
        found = re.findall(r'<figure id="__figure-caption_(\d+)">.*?<img alt="([^"]*)".*?'
                           r'<figcaption>\s*<p><span class="caption-prefix">Figure \1\.</span> '
                           r'([^<]+)', article, re.DOTALL)
        figures_seen += len(found)
        if page.startswith(tuple(f"runs/{run.name}/" for run in FIXTURE_RUNS.iterdir())):
            continue            # the test fixtures' stand-in plots are named by their files
        for number, alt, caption in found:
            if len(alt) < 20 or len(caption) < 20:
                problems.append(f"/{page} figure {number}: alt {alt!r}, caption {caption!r}")
        if not page.startswith("lessons/"):
            continue
        prose = re.sub(r"<figcaption>.*?</figcaption>|<[^>]+>", " ", article, flags=re.DOTALL)
        referred = {int(n) for n in re.findall(r"\bFigure\s+(\d+)\b", prose)}
        numbers = {int(number) for number, _, _ in found}
        problems += [f"/{page}: the prose never refers to Figure {n}" for n in numbers - referred]
        problems += [f"/{page}: the prose refers to Figure {n}, which the page does not have"
                     for n in referred - numbers]
    assert figures_seen >= 11, figures_seen
    assert not problems, "\n".join(problems)


def test_the_search_index_holds_text_a_reader_can_read(built_site: Build):
    """site_hooks/search_index.py: every page has its boost; no preview outside the run pages
    carries TeX source, and none keeps a formula's delimiters (nor a lab's `$`); a lab's
    preview starts with the lab's own text, never with Jupyter's prompts or copy buttons; no
    title keeps a notebook heading's `¶`."""
    index = json.loads((built_site.site / "search" / "search_index.json").read_text("utf-8"))
    problems = []
    for doc in index["docs"]:
        where, title, text = doc["location"], doc["title"], doc["text"]
        if "boost" not in doc:
            problems.append(f"{where}: no search boost")
        if title.endswith("¶"):
            problems.append(f"{where}: title {title!r}")
        prose = re.sub(r"<code>.*?</code>", "", re.sub(r"<pre>.*?</pre>", "", text, flags=re.S),
                       flags=re.S)
        # a run page shows completions as written: `\n` or TeX there is data, not maths
        tex = [] if where.startswith("runs/") else re.findall(r"\\[a-zA-Z]+", title + prose)
        if tex:
            problems.append(f"{where}: TeX {tex[:3]} in the preview")
        delimiters = [d for d in ("\\(", "\\)", "\\[", "\\]", "$$") if d in title + prose]
        if where.startswith("labs/") and "$" in prose:     # notebook markdown: $...$ is maths
            delimiters.append("$")
        if delimiters:
            problems.append(f"{where}: maths delimiters {delimiters} in the preview")
        if re.fullmatch(r"labs/lab_\w+/", where) and not text.startswith("<p>"):
            problems.append(f"{where}: the preview starts {text[:40]!r}")
        if "Copied!" in text or re.search(r"In\s*\[\d*\]:", text):
            problems.append(f"{where}: Jupyter's furniture in the preview")
    assert not problems, "\n".join(problems)
    boosts = {doc["location"].split("/")[0]: doc["boost"] for doc in index["docs"]}
    assert boosts["lessons"] > boosts["maps"] > boosts["references"] > boosts["runs"], boosts
