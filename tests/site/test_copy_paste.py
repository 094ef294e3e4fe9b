"""What a reader copies from the site runs, and prints what the page shows.

The build runs every Python block of every page once, as a pasted block runs: in a fresh
interpreter (course_site/run_blocks.py forks a clean process per chain of blocks), in an empty
folder outside the repository, with no PYTHONPATH. It records each block it ran, with what it
printed (course_site.outputs.RECORD_ENV). This test reads that record instead of running the
blocks a second time, and checks the two links between it and the reader:

- the code of each block in the built HTML, exactly as Material's copy button takes it, is the
  code that ran (the same blocks, in the same order, none left out);
- the output shown under each block is what that block printed (nothing when it printed
  nothing), and no block raised or wrote to stderr.

That the runner behaves as a fresh interpreter running the pasted text is tested on blocks made
for it (`test_the_runner_prints_what_a_pasted_script_prints`), against real scripts.

Blocks marked `{.python notest}` are shown and never run; a `{.python continuation}` block runs
after the blocks before it on the same page (the same rules as pytest-markdown-docs). Not
extracted: lab notebooks (executed by the build itself) and mkdocstrings' signatures on the API
page.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from sitebuild import REPO, Build, page_file

from course_site import run_blocks

TIMEOUT_S = 120


@dataclass(frozen=True)
class Block:
    page: str
    index: int      # 1-based, among the page's Python blocks
    code: str       # the block's own code, as the copy button takes it
    shown: str = ""  # what the page shows beneath it ("" if nothing), ending in one newline


def shown_output(div: Any) -> str:
    """The output shown right under a block's `div`, ending in one newline ("" if none)."""
    after = div.find_next_sibling()
    if after is None or "course-output" not in after.get("class", []):
        return ""
    return after.find("code").get_text().rstrip("\n") + "\n"


def python_blocks(html: str, page: str) -> list[Block]:
    """The runnable Python blocks of one built page, in order."""
    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article.md-content__inner") or soup
    blocks = []
    for index, div in enumerate(article.select("div.language-python.highlight"), start=1):
        classes = set(div.get("class", []))
        if "notest" in classes or div.find_parent(class_=["doc", "jupyter-wrapper"]):
            continue
        blocks.append(Block(page, index, div.find("code").get_text(), shown_output(div)))
    return blocks


def url_of(source: str) -> str:
    """The URL path of a page from its source (`docs/lessons/m1.md` -> `lessons/m1/`)."""
    stem = source.removeprefix("docs/").removesuffix(".md")
    if stem == "index" or stem.endswith("/index"):
        return stem.removesuffix("index")
    return stem + "/"


def differences(page: str, shown: list[Block], ran: list[dict[str, Any]]) -> list[str]:
    """How the blocks a built page shows differ from the blocks the build ran for it."""
    where = f"/{page}"
    if len(shown) != len(ran):
        return [f"{where}: the page shows {len(shown)} runnable Python blocks, the build ran "
                f"{len(ran)}"]
    problems = []
    for block, record in zip(shown, ran, strict=True):
        name = f"{where} block {block.index} (line {record['line']} of the source)"
        if block.code.rstrip("\n") != record["code"].rstrip("\n"):
            problems.append(f"{name}: the code a reader copies is not the code that ran")
        if record["error"] or record["stderr"]:
            problems.append(f"{name}: raised or wrote to stderr:\n"
                            f"{(record['error'] or record['stderr'])[-1000:]}")
        printed = record["stdout"].rstrip("\n") + "\n" if record["stdout"] else ""
        if block.shown != printed:
            problems.append(f"{name}: the page shows something else than it printed")
    return problems


def test_every_python_block_on_the_site_shows_what_it_printed_when_run(built_site: Build):
    assert built_site.record is not None, "the build wrote no record of its blocks"
    record = json.loads(built_site.record.read_text(encoding="utf-8"))
    problems, count = [], 0
    for source, ran in record.items():
        page = url_of(source)
        shown = python_blocks(page_file(built_site.site, page).read_text(encoding="utf-8"),
                              page)
        problems += differences(page, shown, ran)
        count += len(ran)
    print(f"\n{count} Python blocks on {len(record)} pages, as run by the build")
    assert count >= 100 and "docs/lessons/m1-reinforce.md" in record
    assert not problems, "\n".join(problems)


def test_the_extraction_finds_the_home_page_blocks_and_skips_notest(built_site: Build):
    """Guards the test above against passing by extracting nothing."""
    home = python_blocks((built_site.site / "index.html").read_text(encoding="utf-8"), "")
    assert len(home) >= 2                         # one at the top, one inside `??? example`
    assert "from course.scorer import score" in home[0].code
    assert ">>>" not in home[0].code and "¶" not in home[0].code
    fixture = (built_site.site / "runs/run_fixture/index.html").read_text(encoding="utf-8")
    assert 'class="language-python notest highlight"' in fixture
    assert python_blocks(fixture, "runs/run_fixture/") == []


def test_a_difference_between_page_and_record_is_named() -> None:
    shown = [Block("p/", 1, "print(1)\n", "1\n"), Block("p/", 3, "print(2)", "edited\n")]
    ran = [{"line": 5, "code": "print(1)", "stdout": "1\n", "stderr": "", "error": None},
           {"line": 9, "code": "print(2)", "stdout": "2\n", "stderr": "", "error": None}]
    assert differences("p/", shown, ran) == [
        "/p/ block 3 (line 9 of the source): the page shows something else than it printed"]
    ran[1] |= {"code": "print(3)", "error": "Traceback ...\nValueError"}
    assert len(differences("p/", shown, ran)) == 3
    assert differences("p/", shown[:1], ran) == [
        "/p/: the page shows 1 runnable Python blocks, the build ran 2"]


def test_notest_and_shown_outputs_in_html() -> None:
    html = """<article class="md-content__inner">
      <div class="language-python highlight"><pre><code>x = 1</code></pre></div>
      <div class="language-python notest highlight"><pre><code>raise X</code></pre></div>
      <div class="language-python continuation highlight"><pre><code>print(x)</code>
      </pre></div>
      <div class="language-text course-output no-copy highlight"><pre><code>1
</code></pre></div>
      <div class="doc"><div class="language-python highlight"><pre><code>f(a) -&gt; b</code>
      </pre></div></div>
    </article>"""
    blocks = python_blocks(html, "p/")
    assert [(b.index, b.shown) for b in blocks] == [(1, ""), (3, "1\n")]


# -- the runner is a fresh interpreter ----------------------------------------------------------

PASTED = [
    # a block, whether it continues the one before, and what a pasted script of it prints
    ("import json, random\nrandom.seed(3)\nx = random.random()\njson.mark = 1\nprint(x)", False),
    ("print(round(x * 2, 4))", True),                        # continues: sees x
    ("import json\nprint(hasattr(json, 'mark'))", False),   # a module's state is fresh
    ("import sys\nprint(sys.argv[1:], 'numpy' in dir())", False),
    ("import json, numpy as np\nprint(json.dumps(np.arange(3).tolist()))", False),
    ("try:\n    x\nexcept NameError:\n    print('a fresh namespace')", False),
    ("import course.scorer\nprint(course.scorer.__name__)", False),
    ("try:\n    import sitebuild\nexcept ImportError:\n    print('tests/ is not importable')",
     False),
    ("import os\nprint(sorted(os.listdir('.')))", False),     # an empty working folder
]


def test_the_runner_prints_what_a_pasted_script_prints(tmp_path: Path) -> None:
    """course_site/run_blocks.py, as the build starts it, against each block (with the blocks
    it continues) run as a script in a fresh interpreter: the same output."""
    assert not tmp_path.resolve().is_relative_to(REPO), "must run outside the repository"
    blocks = [{"name": f"p.md:{i}", "code": code, "continuation": cont}
              for i, (code, cont) in enumerate(PASTED)]
    (tmp_path / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"MPLBACKEND": "Agg"}
    for folder in ("runner", "scripts"):
        (tmp_path / folder).mkdir()
    subprocess.run([sys.executable, "-P", run_blocks.__file__, str(tmp_path / "blocks.json"),
                    str(tmp_path / "results.json")], cwd=tmp_path / "runner", env=env,
                   check=True, timeout=TIMEOUT_S)
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    pasted = previous = ""
    for (code, continuation), result in zip(PASTED, results, strict=True):
        pasted = f"{pasted}\n{code}" if continuation else code
        script = tmp_path / "block.py"
        script.write_text(pasted, encoding="utf-8")
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path / "scripts", env=env,
                              capture_output=True, text=True, check=True, timeout=TIMEOUT_S)
        expected = done.stdout
        if continuation:     # the script prints the blocks it continues too
            expected = expected.removeprefix(previous)
        assert (result["stdout"], result["error"]) == (expected, None), code
        previous = done.stdout
    assert results[5]["stdout"] == "a fresh namespace\n"
    assert results[7]["stdout"] == "tests/ is not importable\n"
