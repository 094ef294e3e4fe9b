"""Run READMEs keep untrusted values inert: a problem id, a completion or a run note can hold
any character, and the README still has the structure its renderer wrote (one title line, one
line per example inside its code fence, one command line), no raw HTML, link, attribute list
or math, and no line that pymdownx.snippets would act on. Checked on the Markdown itself, as
the site's Markdown (Python-Markdown with the extensions of mkdocs.yml) and as CommonMark
(markdown-it, what a code host shows) render it.

The values reach Markdown only through `course.formatting`: `prose_text`, `inline_code` and
`fence_text`, tested here too, on any string.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import markdown
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inert_html import Elements, live_markup
from markdown_it import MarkdownIt
from mkdocs.config import load_config
from pymdownx.snippets import SnippetPreprocessor

from course.evaluation import EvalConfig
from course.formatting import fence_text, inline_code, one_line, prose_text
from course.locked_room import CompareConfig
from course.paths import REPO_ROOT
from course.reports import comparison, evaluation, selection
from course.selection import SelectionConfig

SENTINEL = "SNIPPET-SENTINEL"
HOSTILE = [
    "x\n```\n```!!\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>",
    'y\n--8<-- "sentinel.txt"\nz',
    "--8<--",
    '--8<-- "sentinel.txt"',
    "a --8<-- [start:x] b",
    "[x](javascript:alert(1))",
    '{: onclick="alert(1)"}',
    "```",
    "~~~~",
    "  ```",
    "`code` and ``more``",
    "$\\href{javascript:alert(1)}{x}$ \\(y\\)",
    "# not a heading\r<b>cr</b>",
    "line\u2028sep\u2029para\x85nel\x0bvt\x0cff\x1cfs",
    "- item",
    "1. item",
    "> quote",
    "!!! note",
    "a | b",
    "&lt;script&gt; &#106;avascript:",
    "back\\slash\\",
    "",
    " ",
]


@pytest.fixture(scope="module")
def site_html(tmp_path_factory):
    """Markdown -> HTML with the site's extensions; snippets from a folder whose one file
    holds the sentinel (and where a missing file is an error, as in the strict build)."""
    base = tmp_path_factory.mktemp("snippets")
    (base / "sentinel.txt").write_text(SENTINEL + "\n", encoding="utf-8")
    config = load_config(str(REPO_ROOT / "mkdocs.yml"))
    extension_settings = dict(config.mdx_configs)
    extension_settings["pymdownx.snippets"] = {**extension_settings["pymdownx.snippets"],
                                               "base_path": [str(base)]}
    md = markdown.Markdown(extensions=config.markdown_extensions,
                           extension_configs=extension_settings)

    def convert(text: str) -> str:
        md.reset()
        return md.convert(text)

    return convert


commonmark_html = MarkdownIt("commonmark").render


def snippet_lines(text: str) -> list[str]:
    """The lines of `text` that pymdownx.snippets would include, start a block with, or drop."""
    return [line for line in text.split("\n")
            if SnippetPreprocessor.RE_ALL_SNIPPETS.match(line)
            or SnippetPreprocessor.RE_SNIPPET_SECTION.match(line)]


def fenced_blocks(text: str) -> list[list[str]]:
    """The lines inside each top-level code fence, read the CommonMark way."""
    blocks, current, fence = [], [], None
    for line in text.split("\n"):
        match = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
        if fence is None and match:
            fence, current = match[1], []
        elif fence is not None and match and match[1][0] == fence[0] \
                and len(match[1]) >= len(fence) and not match[2].strip():
            blocks.append(current)
            fence = None
        elif fence is not None:
            current.append(line)
    return blocks


# -- the Loop A README -------------------------------------------------------------------------

def eval_summary(rows: list[dict[str, str]]) -> dict:
    """A summary as `course.evaluation.summarise` makes it, around these inspection rows."""
    return {"scorer_version": "strict-v1", "n": len(rows), "passes": 1, "pass_rate": 0.5,
            "pass_rate_ci95": [0.1, 0.9], "mean_reward": 0.5,
            "failure_modes": [{"code": "wrong_answer", "count": 1, "share": 0.5}],
            "inspection": {"passing": rows[:1], "failing": rows[1:]}}


def eval_readme(value: str) -> str:
    """The README with `value` as the note, as every id and as every completion."""
    rows = [{"id": value, "code": code, "completion": value}
            for code in ("correct", "wrong_answer", "no_final_prefix")]
    config = EvalConfig(problems=Path("data/problems/dev.jsonl"),
                        rollouts=Path("data/rollouts/frozen_v1.jsonl"), out=Path("runs/run_x"))
    return evaluation.render_readme(config, value, eval_summary(rows))


@pytest.mark.parametrize("value", HOSTILE)
def test_the_eval_readme_keeps_its_structure(value):
    readme = eval_readme(value)
    lines = readme.split("\n")
    assert lines[0].startswith("# Loop A: the ") and lines[1] == ""
    assert [len(block) for block in fenced_blocks(readme)] == [1, 2, 1]  # examples, command
    assert snippet_lines(readme) == []
    for example in fenced_blocks(readme)[1]:
        assert example.startswith(fence_text(value))


@pytest.mark.parametrize("value", HOSTILE)
def test_the_eval_readme_renders_inert_on_the_site_and_elsewhere(site_html, value):
    readme = eval_readme(value)
    for html in (site_html(readme), commonmark_html(readme)):
        assert live_markup(html) == []
        assert SENTINEL not in html
    headings = [tag for tag, _ in Elements(commonmark_html(readme)).elements if tag == "h1"]
    assert headings == ["h1"]


def test_the_reproduce_command_passes_the_very_note():
    """A note that is not printable is quoted `$'...'` (bash), on one line, and means the same."""
    config = EvalConfig(problems=Path("data/problems/dev.jsonl"),
                        rollouts=Path("data/rollouts/frozen_v1.jsonl"))
    command = evaluation.reproduce_command(config, "it's\none --8<-- x")
    assert "--note $'it\\'s\\none --8\\x3c-- x'" in command and "\n" not in command
    assert "--note 'a plain note'" in evaluation.reproduce_command(config, "a plain note")


# -- the saved comparison's README -----------------------------------------------------------

def comparison_readme(value: str) -> str:
    """run_016's README with `value` as the note, as every flipped id and as both run paths."""
    report = json.loads((REPO_ROOT / "runs/run_016/comparison.json").read_text(encoding="utf-8"))
    report |= {"run_a": value, "run_b": value, "policy_a": value,
               "flipped_ids": {"fail_to_pass": [value], "pass_to_fail": [value, value]}}
    config = CompareConfig(run_a=Path(value or "a"), run_b=Path("runs/run_015"))
    return comparison.render_readme(config, value, report)


@pytest.mark.parametrize("value", HOSTILE)
def test_the_comparison_readme_keeps_its_structure_and_renders_inert(site_html, value):
    readme = comparison_readme(value)
    assert readme.split("\n")[0].startswith("# Locked Room comparison: ")
    assert [len(block) for block in fenced_blocks(readme)] == [6, 1]  # printed lines, command
    assert snippet_lines(readme) == []
    for html in (site_html(readme), commonmark_html(readme)):
        assert live_markup(html) == []
        assert SENTINEL not in html
    headings = [tag for tag, _ in Elements(commonmark_html(readme)).elements if tag == "h1"]
    assert headings == ["h1"]


# -- the Loop B README: ids in prose --------------------------------------------------------

@pytest.mark.parametrize("value", HOSTILE)
def test_the_selection_readme_keeps_ids_inert(site_html, value):
    summary = json.loads((REPO_ROOT / "runs/run_002/summary.json").read_text(encoding="utf-8"))
    summary["vote_misses"] = [{**summary["vote_misses"][0], "id": value}]
    readme = selection.render_readme(SelectionConfig(), summary, {value: "no sample is right"})
    assert snippet_lines(readme) == []
    assert f"- {inline_code(value)}: no sample is right." in readme.split("\n")
    for html in (site_html(readme), commonmark_html(readme)):
        assert live_markup(html) == []


# -- the helpers, on any string ------------------------------------------------------------

FRAGMENTS = ["\n", "\r", "\u2028", "\x85", "\t", " ", "`", "``", "```", "~~~", "\\", "<", ">",
             "&", "&#106;", "[", "]", "(", ")", "{", "}", ":", "$", "|", "#", "-", "*", "_",
             "!", "1.", "--8<--", '"sentinel.txt"', "<script>", "javascript:", "onerror="]
any_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=10).map("".join)
plain_text = st.from_regex(r"[A-Za-z][A-Za-z0-9 .:,;'()/+=-]{0,30}", fullmatch=True)


@given(plain_text)
def test_the_helpers_leave_ordinary_text_alone(text):
    assert one_line(text) == text and fence_text(text) == text
    assert prose_text(text) == text
    assert inline_code(text) == f"`{text}`"


@settings(max_examples=200, deadline=None)
@given(any_text)
def test_prose_text_is_inert_prose_wherever_it_stands(site_html, text):
    shown = prose_text(text)
    assert shown.isprintable()
    for markdown_text in (f"Note: {shown}", f"# {shown}", shown, f"| a |\n|---|\n| {shown} |"):
        for html in (site_html(markdown_text), commonmark_html(markdown_text)):
            tags = {tag for tag, attrs in Elements(html).elements
                    if not (tag == "a" and attrs.get("class") == "headerlink")}  # the ¶ link
            assert tags <= {"p", "h1", "em", "strong", "sup", "kbd", "span", "table", "thead",
                            "tbody", "tr", "th", "td"}, (markdown_text, html)
            assert live_markup(html) == []


@settings(max_examples=200, deadline=None)
@given(any_text)
def test_inline_code_is_one_code_span_showing_the_text(site_html, text):
    span = inline_code(text)
    shown = one_line(text).replace("8<-", "8\\x3c-")   # as `fence_text` writes a snippet marker
    for html in (site_html(f"see {span} here"), commonmark_html(f"see {span} here")):
        parsed = Elements(html)
        assert [tag for tag, _ in parsed.elements] == ["p", "code"]
        assert re.sub(r"\s+", " ", parsed.text).strip() == re.sub(r"\s+", " ", f"see {shown} here")


@settings(max_examples=200, deadline=None)
@given(any_text)
def test_fence_text_stays_one_line_of_its_fence(site_html, text):
    line = fence_text(text)
    readme = f"```text\n{line}\n```\n\nafter"
    assert snippet_lines(readme) == []
    assert fenced_blocks(readme) == [[line]]
    for html in (site_html(readme), commonmark_html(readme)):
        parsed = Elements(html)
        assert parsed.text.rstrip().endswith("after") and SENTINEL not in html
        assert [tag for tag, _ in parsed.elements].count("pre") == 1
        assert live_markup(html) == []
