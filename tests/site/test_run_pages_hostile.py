"""Hostile run folders, rendered without a build: whatever a completion, a problem id or a run
note holds, the run page shows it as text and the Markdown of the site cannot act on it.

The fixture `run_hostile` holds the README that `render_readme` wrote before ids and notes were
escaped: a problem id with newlines that closes the README's code fence and opens a broken one,
an id that puts a `--8<--` snippet line inside the fence, and a note with an attribute list, a
`javascript:` link and raw HTML. In `run_u2028`, a completion in `results.jsonl` and a log
line hold U+2028. The site build adds both like `run_fixture`, so the strict build and the
browser tests go through their pages too.

Each page is converted here as the site converts it: site_hooks/fences.py first, then Markdown
with the extensions and settings of mkdocs.yml, except that snippets are read from a scratch
folder whose files hold a sentinel (so an expanded snippet shows).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import markdown
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inert_html import Elements, live_markup
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError
from sitebuild import FIXTURE_RUNS, REPO

from course.evaluation import EvalConfig
from course.jsonfiles import json_bytes, jsonl_bytes, jsonl_lines
from course.reports.evaluation import render_readme
from course.runs import write_run
from course_site import fences, run_pages

HOSTILE = FIXTURE_RUNS / "run_hostile"
U2028 = FIXTURE_RUNS / "run_u2028"
SENTINEL = "SNIPPET-SENTINEL"
SNIPPET_FILES = ("teacher/README.md", "sentinel.txt")


@pytest.fixture(scope="module")
def snippet_base(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("snippets")
    for name in SNIPPET_FILES:
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(f"{SENTINEL} from {name}\n", encoding="utf-8")
    return base


@pytest.fixture(scope="module")
def to_html(snippet_base):
    """Page Markdown -> HTML as the site makes it (snippets from `snippet_base`, where every
    file a hostile page names holds the sentinel; a missing file fails, as in the build)."""
    config = load_config(str(REPO / "mkdocs.yml"))
    settings = dict(config.mdx_configs)
    settings["pymdownx.snippets"] = {**settings["pymdownx.snippets"],
                                     "base_path": [str(snippet_base)]}
    md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=settings)

    def convert(page: str) -> str:
        rewritten, problems = fences.rewrite_fences(page, "run page")
        assert problems == [], problems          # a warning fails the strict build
        md.reset()
        return md.convert(rewritten)

    return convert


# -- one test per class of injection, on the fixture ----------------------------------------------

def test_an_id_with_newlines_cannot_close_the_readme_fence(to_html):
    """(a) The id closes the README's ```text fence and opens one no reader accepts; its
    `<script>`, `<img onerror>` and `javascript:` link must still be text."""
    html = to_html(run_pages.run_page(HOSTILE))
    assert live_markup(html) == []
    text = Elements(html).text
    assert "<script>alert('fence')</script>" in text
    assert "[click me](javascript:alert('fence'))" in text


def test_a_snippet_line_in_a_readme_is_shown_not_included(to_html):
    """(b) `--8<-- "teacher/README.md"` on a line of its own (inside a fence, where the old
    escaping never looked) would embed that file; the page shows the line instead."""
    html = to_html(run_pages.run_page(HOSTILE))
    assert SENTINEL not in html
    assert '--8<-- "teacher/README.md"' in Elements(html).text


def test_the_note_is_shown_as_text_in_the_title_and_the_manifest(to_html):
    """(c) The note is the README's title and the manifest's `note`: its attribute list,
    link, raw HTML and newline stay text, and the title stays one heading."""
    html = to_html(run_pages.run_page(HOSTILE))
    assert live_markup(html) == []
    headings = [attrs for tag, attrs in Elements(html).elements if tag in ("h1", "h2")]
    assert all(set(attrs) <= {"id"} for attrs in headings), headings
    title = re.search(r"<h1 [^>]*>(Loop A evaluation:.*?)</h1>", html, re.DOTALL)
    assert title is not None
    shown = Elements(title[1]).text
    assert "{: onclick=\"alert('note')\"}" in shown and "[a link](javascript:" in shown


def test_a_completion_with_u2028_does_not_break_the_page():
    """(d) JSON Lines are cut at "\\n" only: U+2028, U+2029 and U+0085 are legal, raw, inside a
    JSON string; a log keeps them too, on the line they belong to."""
    page = run_pages.run_page(U2028)
    assert "2 records; 2 shown" in page
    assert "Final: 323\u2028Final: 324\u2029\x85 and" in page
    assert "3 lines; 3 shown" in page
    assert "here:\u2028and goes on; NEL:\x85still the same line" in page


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
def test_jsonl_lines_are_cut_at_newline_only(tmp_path, char):
    """The characters JSON may hold raw that `str.splitlines` would also cut at; a line may
    end in "\\r\\n"."""
    path = tmp_path / "results.jsonl"
    records = [{"completion": f"a{char}b"}, {"completion": "x"}]
    path.write_bytes(jsonl_bytes(records).replace(b"\n", b"\r\n", 1))
    assert run_pages.read_jsonl(path) == records


@pytest.mark.parametrize("line", ["", " \t", "\r", "\u00a0", "\u3000", "\u2028", "\x0c"])
def test_the_site_and_the_course_skip_the_same_blank_lines(tmp_path, line):
    """One rule (`course.jsonfiles.jsonl_lines`): a line of JSON whitespace is blank; a line of
    any other whitespace is read, and refused, by both readers."""
    path = tmp_path / "results.jsonl"
    path.write_bytes(jsonl_bytes([{"id": "a"}]) + line.encode("utf-8") + b"\n")
    course_skips = [number for number, _ in jsonl_lines(path.read_text("utf-8"))] == [1]
    assert course_skips == (line.strip(" \t\r") == "")
    if course_skips:
        assert run_pages.read_jsonl(path) == [{"id": "a"}]
    else:
        with pytest.raises(ValueError, match=":2: invalid JSON"):
            run_pages.read_jsonl(path)


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d",
                                  "\x1e"])
def test_log_lines_are_cut_at_newline_only(tmp_path, char):
    path = tmp_path / "log.txt"
    path.write_text(f"step 1{char}still step 1\nstep 2\n", encoding="utf-8")
    section = run_pages.log_section(path)
    assert "2 lines; 2 shown" in section and f"step 1{char}still step 1&#10;step 2" in section


# -- the fuzz: any id, completion and note ---------------------------------------------------------

FRAGMENTS = [
    "\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\t", " ", "    ",
    "```", "~~~", "````", "```!!", "```python notest", "```{.python notest}", "```mermaid",
    "--8<--", '--8<-- "sentinel.txt"', '--8<-- "missing.txt"', "--8<-- [start:x]", ";", "8<-",
    "sentinel.txt", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<b>", "</td>",
    "[x](javascript:alert(1))", "[y](&#106;avascript:alert(1))", "![i](//example.org/i.png)",
    "<javascript:alert(1)>", '{: onclick="alert(1)"}', "{#id}", "`", "``", "\\", "\\`", "$x$",
    "\\(y\\)", "$$", "&lt;", "&#60;", "&", "|", "#", "# ", "> ", "- ", "1. ", "!!! note", "*",
    "_", "[^1]", "[x]: javascript:alert(1)", "*[HTML]: x", "Final: 323", "dev-001", "\x00",
    "\x02", "\x03", "\x01", "[ok](ok.md)", "![ok](ok.png)", "[^1]: note",
]
hostile_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=8) \
    .map("".join)


def eval_run(ids: list[str], completions: list[str], note: str) -> dict[str, bytes]:
    """A Loop A run folder's files for these ids and completions, as `course eval` writes
    them (the README by `render_readme`), with made-up numbers."""
    records = [{"id": pid, "completion": text, "reward": float(i == 0),
                "details": {"code": "correct" if i == 0 else "wrong_answer"}}
               for i, (pid, text) in enumerate(zip(ids, completions, strict=True))]
    rows = [{"id": r["id"], "code": r["details"]["code"], "completion": r["completion"]}
            for r in records]
    n = len(records)
    summary = {"scorer_version": "strict-v1", "n": n, "passes": 1, "pass_rate": 1 / n,
               "pass_rate_ci95": [0.0, 1.0], "mean_reward": 1 / n,
               "failure_modes": [{"code": "wrong_answer", "count": n - 1,
                                  "share": (n - 1) / n}] if n > 1 else [],
               "inspection": {"passing": rows[:1], "failing": rows[1:]}}
    config = EvalConfig(problems=Path("data/problems/dev.jsonl"),
                        rollouts=Path("data/rollouts/fuzz.jsonl"), out=Path("runs/run_fuzz"))
    return {"README.md": render_readme(config, note, summary).encode("utf-8"),
            "manifest.json": json_bytes({"kind": "eval", "note": note}),
            "summary.json": json_bytes(summary), "results.jsonl": jsonl_bytes(records),
            "log.txt": "\n".join([note, *ids, *completions]).encode("utf-8")}


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(hostile_text, min_size=1, max_size=4), completions=st.data(),
       note=hostile_text)
def test_any_id_completion_and_note_render_as_inert_text(to_html, ids, completions, note):
    texts = completions.draw(st.lists(hostile_text, min_size=len(ids), max_size=len(ids)))
    with tempfile.TemporaryDirectory() as scratch:
        folder = write_run(Path(scratch) / "run_fuzz", eval_run(ids, texts, note))
        page = run_pages.run_page(folder)
    html = to_html(page)                         # a missing snippet file would raise here
    assert live_markup(html) == []
    assert SENTINEL not in html


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(hostile_text, max_size=12))
def test_any_readme_text_renders_as_inert_text(to_html, lines):
    """The site's own defence, without the escaping of `render_readme`: any README (a run
    written by older code, or edited by hand) is made inert by `readme_markdown`."""
    page = run_pages.inert_snippets(run_pages.readme_markdown("\n".join(lines)))
    html = to_html(page)
    assert live_markup(html) == []
    assert SENTINEL not in html


@pytest.mark.parametrize("caption", ["~~~", "~~~~", "///", "# a heading", "1. a list",
                                     "- an item", "> a quote", "    ~~~"])
def test_a_picture_caption_cannot_open_a_block(to_html, caption):
    """A README picture alone becomes a captioned figure whose caption has a line of its own:
    a caption `~~~` once opened a fence there, so that the README's next fence closed it and
    that fence's body, a `<script>`, was read as raw HTML. The caption shows as written."""
    readme = (f"# A run\n\n![{caption}](a.png)\n\n~~~\n<script>alert('caption')</script>\n"
              "~~~\n\nAfter.\n")
    html = to_html(run_pages.inert_snippets(run_pages.readme_markdown(readme)))
    assert live_markup(html) == []
    caption_html = re.search(r"<figcaption>(.*?)</figcaption>", html, re.DOTALL)
    assert caption_html is not None, html
    assert Elements(caption_html[1]).text.strip().endswith(caption.strip()), caption_html[1]


# -- what a run folder can publish -------------------------------------------------------------

def hostile_folder(root: Path, secret: Path) -> Path:
    """A run folder whose files try to publish what the site must not: links out of the folder
    (to a kata key, to a file of the machine), markup that would run on the site's origin, a
    linked README, a folder; and one good file of each published kind."""
    folder = root / "run_links"
    shutil.copytree(FIXTURE_RUNS / "run_fixture", folder)
    (folder / "key.json").symlink_to(secret)
    (folder / "hostname.txt").symlink_to("/etc/hostname")
    (folder / "page.html").write_text("<script>HTML-SENTINEL</script>", encoding="utf-8")
    (folder / "plot.SVG").write_text('<svg onload="SVG-SENTINEL"/>', encoding="utf-8")
    (folder / "notes.md").symlink_to(secret)
    (folder / "nested").mkdir()
    return folder


def test_a_run_publishes_only_its_own_regular_files_of_known_kinds(tmp_path):
    secret = tmp_path / "teacher_key_m5.json"
    secret.write_text(json.dumps({"answer": SENTINEL}), encoding="utf-8")
    folder = hostile_folder(tmp_path / "runs", secret)
    published, left_out = run_pages.run_files(folder)
    assert [p.name for p in published] == ["README.md", "codes.csv", "codes.png",
                                           "manifest.json", "results.jsonl", "summary.json"]
    assert [p.name for p in left_out] == ["hostname.txt", "key.json", "nested", "notes.md",
                                          "page.html", "plot.SVG"]
    page = run_pages.run_page(folder)
    assert not any(s in page for s in (SENTINEL, "HTML-SENTINEL", "SVG-SENTINEL"))
    assert "Not published" in page and "`page.html`" in page and "`key.json`" in page


def folders_of(runs: Path) -> list[str]:
    config = SimpleNamespace(config_file_path=str(runs.parent / "mkdocs.yml"))
    return [folder.name for folder in run_pages.run_folders(config)]


def test_a_linked_run_folder_or_manifest_is_no_run(tmp_path, monkeypatch):
    """A run folder that is a link (to /etc, or to another run), or whose manifest is a link
    (to a kata key, which the page would show as the manifest), is not a run folder."""
    monkeypatch.delenv(run_pages.EXTRA_RUNS_ENV, raising=False)
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS / "run_fixture", runs / "run_good")
    (runs / "run_etc").symlink_to("/etc")
    (runs / "run_again").symlink_to(runs / "run_good")
    shutil.copytree(FIXTURE_RUNS / "run_fixture", runs / "run_linked_manifest")
    secret = tmp_path / "key.json"
    secret.write_text(json.dumps({"kind": "eval", "note": SENTINEL}), encoding="utf-8")
    (runs / "run_linked_manifest" / "manifest.json").unlink()
    (runs / "run_linked_manifest" / "manifest.json").symlink_to(secret)
    assert folders_of(runs) == ["run_good"]


def test_a_run_folder_with_its_own_index_page_is_a_one_line_build_error(tmp_path, monkeypatch):
    """A run folder's index.md would silently replace its generated page."""
    monkeypatch.delenv(run_pages.EXTRA_RUNS_ENV, raising=False)
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS / "run_fixture", runs / "run_001")
    (runs / "run_001" / "index.md").write_text("# All is well\n", encoding="utf-8")
    with pytest.raises(PluginError) as raised:
        folders_of(runs)
    message = str(raised.value)
    assert message == (f"{runs / 'run_001' / 'index.md'}: a run folder cannot hold index.md, "
                       "the name of its generated page; rename the file")
