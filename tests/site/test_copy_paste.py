"""What a reader copies from the site runs, and prints what the page shows: every Python block of
the built HTML, exactly as Material's copy button would take it, is run in a fresh interpreter,
and what it prints must equal the output the page shows beneath it (site_hooks/outputs.py put
it there at build time; a block that prints nothing shows nothing).

The interpreter is the course's (`sys.executable`, the .venv), started in a temporary folder
outside the repository with no PYTHONPATH, so a block can only import the installed package,
as a reader's pasted code would. Blocks marked `{.python notest}` are skipped; a block marked
`{.python continuation}` runs after the blocks before it on the same page (the same rules as
pytest-markdown-docs); it prints what the blocks it continues print, then its own output. Not
extracted: lab notebooks (executed by the build itself) and
mkdocstrings' signatures on the API page.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup
from sitebuild import REPO, Build, page_file, site_pages

TIMEOUT_S = 120


@dataclass(frozen=True)
class Block:
    page: str
    index: int      # 1-based, among the page's Python blocks
    code: str       # what runs: the block, after its predecessors if it is a continuation
    shown: str = ""  # what the page shows beneath it (and beneath the blocks it continues)


def shown_output(div) -> str:
    """The output shown right under a block's `div`, ending in one newline ("" if none)."""
    after = div.find_next_sibling()
    if after is None or "course-output" not in after.get("class", []):
        return ""
    return after.find("code").get_text().rstrip("\n") + "\n"


def python_blocks(html: str, page: str) -> list[Block]:
    """The runnable Python blocks of one built page, in order."""
    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article.md-content__inner") or soup
    blocks, previous, previous_shown = [], "", ""
    for index, div in enumerate(article.select("div.language-python.highlight"), start=1):
        classes = set(div.get("class", []))
        if "notest" in classes or div.find_parent(class_=["doc", "jupyter-wrapper"]):
            continue
        code, shown = div.find("code").get_text(), shown_output(div)
        if "continuation" in classes:
            code, shown = previous + "\n" + code, previous_shown + shown
        previous, previous_shown = code, shown
        blocks.append(Block(page, index, code, shown))
    return blocks


def all_blocks(site: Path) -> list[Block]:
    return [block for page in site_pages(site)
            for block in python_blocks(page_file(site, page).read_text(encoding="utf-8"), page)]


def run_block(block: Block, workdir: Path) -> str | None:
    """Run one block as a script in `workdir`; None if it exits 0 and prints what the page
    shows, else what went wrong."""
    script = workdir / f"block_{abs(hash((block.page, block.index)))}.py"
    script.write_text(block.code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    try:
        done = subprocess.run([sys.executable, str(script)], cwd=workdir, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"/{block.page} block {block.index}: still running after {TIMEOUT_S} s"
    if done.returncode != 0:
        return (f"/{block.page} block {block.index}: exit {done.returncode}\n"
                f"{block.code}\n--- stderr ---\n{done.stderr[-2000:]}")
    printed = done.stdout.rstrip("\n") + "\n" if done.stdout else ""
    if printed != block.shown:
        diff = difflib.unified_diff(block.shown.splitlines(), printed.splitlines(),
                                    "shown on the page", "printed when pasted", lineterm="")
        return (f"/{block.page} block {block.index} prints something else than the page shows:"
                "\n" + "\n".join(list(diff)[:40]))
    return None


def test_every_python_block_on_the_site_runs_when_pasted(built_site: Build, tmp_path):
    assert not tmp_path.resolve().is_relative_to(REPO), "must run outside the repository"
    blocks = all_blocks(built_site.site)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        failures = [f for f in pool.map(lambda b: run_block(b, tmp_path), blocks) if f]
    print(f"\n{len(blocks)} Python blocks run from the built HTML, "
          f"{sum(bool(b.shown) for b in blocks)} of them with output shown")
    assert not failures, "\n\n".join(failures)


def test_the_extraction_finds_the_home_page_blocks_and_skips_notest(built_site: Build):
    """Guards the test above against passing by extracting nothing."""
    home = python_blocks((built_site.site / "index.html").read_text(encoding="utf-8"), "")
    assert len(home) >= 2                         # one at the top, one inside `??? example`
    assert "from course.scorer import score" in home[0].code
    assert ">>>" not in home[0].code and "¶" not in home[0].code
    fixture = (built_site.site / "runs/run_fixture/index.html").read_text(encoding="utf-8")
    assert 'class="language-python notest highlight"' in fixture
    assert python_blocks(fixture, "runs/run_fixture/") == []


def test_notest_and_continuation_in_html(tmp_path):
    html = """<article class="md-content__inner">
      <div class="language-python highlight"><pre><code>x = 1</code></pre></div>
      <div class="language-python notest highlight"><pre><code>raise X</code></pre></div>
      <div class="language-python continuation highlight"><pre><code>assert x == 1</code>
      </pre></div>
      <div class="doc"><div class="language-python highlight"><pre><code>f(a) -&gt; b</code>
      </pre></div></div>
    </article>"""
    blocks = python_blocks(html, "p/")
    assert [b.index for b in blocks] == [1, 3]
    assert blocks[1].code == "x = 1\nassert x == 1"
    assert run_block(blocks[1], tmp_path) is None
    failing = Block("p/", 9, "import sys\nsys.exit(3)")
    assert "exit 3" in run_block(failing, tmp_path)
    # outside the repository only the installed package is importable, not repository folders
    assert run_block(Block("p/", 10, "import course.scorer"), tmp_path) is None
    assert "ModuleNotFoundError" in run_block(Block("p/", 11, "import site_hooks.run_pages"),
                                              tmp_path)


def test_the_output_shown_under_a_block_is_compared_with_what_it_prints(tmp_path):
    html = """<article class="md-content__inner">
      <div class="language-python highlight"><pre><code>print(1)</code></pre></div>
      <div class="language-text course-output no-copy highlight"><pre><code>1
</code></pre></div>
      <div class="language-python continuation highlight"><pre><code>print(2)</code></pre></div>
      <div class="language-text course-output no-copy highlight"><pre><code>2
</code></pre></div>
      <div class="language-python highlight"><pre><code>x = 3</code></pre></div>
      <div class="language-python highlight"><pre><code>print("hand-edited")</code></pre></div>
      <div class="language-text course-output no-copy highlight"><pre><code>edited by hand
</code></pre></div>
    </article>"""
    blocks = python_blocks(html, "p/")
    assert [b.shown for b in blocks] == ["1\n", "1\n2\n", "", "edited by hand\n"]
    assert [run_block(b, tmp_path) for b in blocks[:3]] == [None, None, None]
    failure = run_block(blocks[3], tmp_path)
    assert failure.startswith("/p/ block 4 prints something else than the page shows:")
    assert "-edited by hand" in failure and "+hand-edited" in failure
    silent = Block("p/", 5, "print('surprise')")           # prints, but the page shows nothing
    assert "+surprise" in run_block(silent, tmp_path)
