"""The site hooks' pure parts, without a build: run pages render any JSON safely, README text
cannot inject HTML, fence options survive into the HTML, notebooks lose their CDN scripts."""

from __future__ import annotations

import inspect
import json
import re
from html import escape
from html.parser import HTMLParser
from types import SimpleNamespace

import markdown
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mkdocs.config import load_config
from sitebuild import REPO

from course_site import fences, notebooks, run_pages, search_index, try_it

NASTY = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "a & b", "x\ny",
         "Final: \u2212323", "Final:\u00a0323", "3\u200b23", "tab\there", "</td></tr></table>",
         "{{ jinja }}", "$x$ and \\(y\\)", "`code`", "&lt;already escaped&gt;"]


class Parsed(HTMLParser):
    """Tags and text of an HTML fragment, as a browser would see them."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text = ""
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)

    def handle_data(self, data):
        self.text += data


SAFE_TAGS = {"table", "thead", "tbody", "tr", "th", "td", "span", "code", "br", "p"}
_NESTED_TABLE = re.compile(r"<table[^>]*>(?:(?!</table>).)*<table", re.DOTALL)


@pytest.mark.parametrize("text", NASTY)
def test_text_is_escaped_and_shown_exactly(text):
    parsed = Parsed(run_pages.render_text(text))
    assert parsed.tags <= SAFE_TAGS
    assert parsed.text.startswith(text)          # the reader sees the very characters stored


@pytest.mark.parametrize(("text", "escaped"), [
    ("Final: 323", None),
    ("Final: \u2212323", '"Final: \\u2212323"'),
    ("Final:\u00a0323", '"Final:\\u00a0323"'),
    ("3\u200b23", '"3\\u200b23"'),
    ("tab\there", '"tab\\there"'),
    ("two\nlines", None),                        # a newline is shown as a line break
])
def test_invisible_and_non_ascii_characters_get_an_escaped_spelling(text, escaped):
    html = run_pages.render_text(text)
    if escaped is None:
        assert "course-escaped" not in html
    else:
        assert escaped in Parsed(html).text


@pytest.mark.parametrize(("message", "text", "codes"), [
    ("The line does not start with `Final:` (case-sensitive).",
     "The line does not start with Final: (case-sensitive).", ["Final:"]),
    ("one line `Final: <int>` whose integer equals the answer",
     "one line Final: <int> whose integer equals the answer", ["Final: <int>"]),
    ("a lone ` backtick stays", "a lone ` backtick stays", []),
    ("`<script>alert(1)</script>`", "<script>alert(1)</script>", ["<script>alert(1)</script>"]),
])
def test_scorer_messages_show_backticked_code_as_code(message, text, codes):
    """run_001's message column showed literal backticks; the code inside is still escaped."""
    html = run_pages.render_message(message)
    parsed = Parsed(html)
    assert parsed.tags <= SAFE_TAGS and parsed.text == text
    assert re.findall(r"<code>(.*?)</code>", html) == [escape(c) for c in codes]
    record = run_pages.render_records([{"id": "dev-1", "message": message}])
    assert html in record and html in run_pages.render_value({"message": message})


@pytest.mark.parametrize("message", ["a `non-ASCII \u2212` sign", "`x` " * 200])
def test_unusual_messages_are_shown_raw(message):
    assert run_pages.render_message(message) == run_pages.render_text(message)


@pytest.mark.parametrize(("text", "one_word"), [
    ("exploit-02", True), ("strict-v1", True), ("non_ascii_character", True),
    ("two words", False), ("x" * 41, False), ("", False),
])
def test_short_identifiers_are_kept_on_one_line(text, one_word):
    """A table column squeezed by a long neighbour split ids at hyphens (exploit-/02)."""
    assert ("course-word" in run_pages.render_text(text)) is one_word


def test_long_text_is_cut_with_its_length():
    html = run_pages.render_text("9" * 1000, limit=10)
    assert Parsed(html).text == "9" * 10 + " ... (1000 characters)"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text() | st.sampled_from(NASTY),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_any_json_value_renders_with_only_table_markup(value):
    """... and its tables never nest: a nested value is a path in a flat table, or its own."""
    html = run_pages.render_value(value)
    parsed = Parsed(html)
    assert parsed.tags <= SAFE_TAGS
    assert not _NESTED_TABLE.search(html)
    for text in NASTY:
        if text in json.dumps(value, ensure_ascii=False) and "\n" not in text:
            assert "<script>" not in run_pages.render_value(value)


def test_lists_of_records_become_one_table_with_every_column():
    html = run_pages.render_value([{"code": "wrong_answer", "count": 9},
                                   {"code": "empty", "share": 0.1}])
    assert html.count("<table>") == 1
    assert "<th>code</th> <th>count</th> <th>share</th>" in html


def test_dicts_of_alike_records_become_one_table_with_a_key_column():
    inputs = {"problems": {"path": "data/p.jsonl", "sha256": "ab"},
              "rollouts": {"path": "data/r.jsonl", "sha256": "cd"}}
    html = run_pages.render_value(inputs)
    assert html.count("<table>") == 1 and html.count("<tr>") == 3
    mixed = run_pages.render_value({"a": {"x": 1}, "b": {"y": 2}})
    assert mixed.count("<table") == 1 and "<code>a.x</code>" in mixed  # one table of paths


def test_an_object_is_a_flat_table_of_its_leaves_then_one_table_per_list():
    summary = {"n": 60, "ci95": [0.441, 0.6843], "start": {"proxy": 0.6, "strict": 0.4},
               "curve": [{"step": i, "proxy": 0.5} for i in range(3)]}
    html = run_pages.render_value(summary)
    assert html.count("<table") == 2 and not _NESTED_TABLE.search(html)
    for path in ("n", "ci95", "start.proxy", "start.strict"):
        assert f"<code>{path}</code>" in html
    assert "<code>curve</code>: 3 rows" in html


@pytest.mark.parametrize(("value", "shown"), [
    (None, "null"), (True, "true"), (0.5667, "0.5667"), (7, "7"), ([0.441, 0.6843],
                                                                   "[0.441, 0.6843]"),
    ([], "[]"), ({}, "{}"),
])
def test_scalars_are_shown_as_json(value, shown):
    assert Parsed(run_pages.render_value(value)).text == shown


def test_readme_cannot_inject_html_but_keeps_code():
    readme = "\n".join([
        "# Title <b>x</b>",
        "Raw <img src=x onerror=alert(1)> and `<kept>` in code",
        "```text",
        "# not a heading <still raw>",
        "```",
        "```python",
        "print('hi')",
        "```",
        "~~~{.py}",
        "x = 1",
        "~~~",
    ])
    out = run_pages.readme_markdown(readme).splitlines()
    assert out[0] == "# Title &lt;b>x&lt;/b>"
    # a code span becomes an HTML <code> holding character references: it shows the same text,
    # and no pairing of backticks Markdown might choose can expose its content as markup
    assert out[1] == "Raw &lt;img src=x onerror=alert(1)> and <code>&#60;kept&#62;</code> in code"
    # every fence after a blank line: right under a line of text, a fence is not always one
    assert out[2:6] == ["", "```text", "# not a heading <still raw>", "```"]
    assert out[6:8] == ["", "```{.python .notest}"]
    assert out[10:12] == ["", "~~~{.python .notest}"]


@pytest.mark.parametrize(("readme", "expected"), [
    ("  ```python notest\nx = 1\n  ```", "```{.python .notest}\nx = 1\n```"),  # to the margin
    ("```!!\n<b>\n```", "```\n<b>\n```"),            # an info string no reader disagrees on
    ("~~~ {.text title='t'}\nx\n~~~", "~~~text\nx\n~~~"),
    ("```mermaid\ngraph LR\n```", "```text\ngraph LR\n```"),  # shown, not drawn
    ("```text\nx\n````\n<i>", "```text\nx\n```\n&lt;i>"),  # the closer superfences missed
    ("```text\n<b>", "```text\n<b>\n```"),              # a fence left open is closed
    ("a\rb", "a\nb"),                                     # Markdown's line breaks, no others
    ("a\u2028b", "a\u2028b"),
])
def test_readme_fences_are_rewritten_so_every_reader_agrees(readme, expected):
    assert run_pages.readme_markdown(readme) == expected


@pytest.mark.parametrize(("line", "shown"), [
    ("See ![a plot](pass_at_k.png) and [all runs](../index.md).", None),
    ("[home](https://example.org/a?b=1)", None),
    ("[x](javascript:alert(1))", "\\[x](javascript:alert(1))"),
    ("[x](&#106;avascript:alert(1))", "\\[x](&#106;avascript:alert(1))"),
    ("![x](//example.org/x.png)", "!\\[x](//example.org/x.png)"),
    ("[x]: javascript:alert(1)", "\\[x]: javascript:alert(1)"),
    ('# Title {: onclick="alert(1)"}', '# Title \\{: onclick="alert(1)"}'),
    ("$x$ and \\(y\\)", "\\$x\\$ and \\\\(y\\\\)"),
    ("\\`<img src=x onerror=alert(1)>\\`", "\\\\\\`&lt;img src=x onerror=alert(1)>\\\\\\`"),
])
def test_readme_text_keeps_plain_links_only(line, shown):
    assert run_pages.readme_markdown(line) == (line if shown is None else shown)


@pytest.mark.parametrize(("line", "escaped"), [
    ('--8<-- "teacher/README.md"', ';--8<-- "teacher/README.md"'),
    ('  ;--8<-- "a.md"', '  ;;--8<-- "a.md"'),        # already escaped: still shown as written
    ("--8<--", ";--8<--"),                              # a block of file names
    ("x --8<-- [start:part] y", "x ;--8<-- [start:part] y"),   # a section line is dropped
    ('--8<-- "a.md" and more', '--8<-- "a.md" and more'),      # not a marker: left alone
    ("--8&lt;--", "--8&lt;--"),
])
def test_snippet_markers_get_the_extensions_own_escape(line, escaped):
    assert run_pages.inert_snippets(line) == escaped


def test_examples_cover_every_failure_code_first():
    records = ([{"id": i, "details": {"code": "correct"}} for i in range(10)]
               + [{"id": 10 + i, "details": {"code": "wrong_answer"}} for i in range(5)]
               + [{"id": 20, "code": "empty"}])
    picked = run_pages.pick_examples(records, limit=30, per_group=2)
    assert [r["id"] for r in picked] == [0, 1, 10, 11, 20]
    plain = [{"id": i} for i in range(50)]
    assert run_pages.pick_examples(plain, limit=5) == plain[:5]


RUNS = sorted(p for p in (REPO / "runs").glob("run_*") if p.is_dir())
LAYOUT = ["## What was run and why", "## Provenance", "## Raw material", "[All runs]"]
"""The run page's parts, in this order (the README's own sections sit between the first two)."""


def test_a_run_page_shows_each_artifact():
    folder = REPO / "tests/site/fixtures/runs/run_fixture"
    page = run_pages.run_page(folder)
    assert page.startswith("# Fixture evaluation\n")
    for section in ("## Figures", "![codes](codes.png)", "summary.json: every number",
                    "manifest.json: the whole manifest", "codes.csv: ", "results.jsonl: ",
                    "[results.jsonl](results.jsonl)"):
        assert section in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("folder", [*RUNS, REPO / "tests/site/fixtures/runs/run_fixture"],
                         ids=lambda folder: folder.name)
def test_every_run_page_reads_like_a_report(folder):
    """Title; what was run and why, the one change said once; the README's results; then
    provenance and the raw material, every file of which is folded."""
    page = run_pages.run_page(folder)
    at = [page.find(f"\n{part}") for part in LAYOUT]
    assert -1 not in at and at == sorted(at), dict(zip(LAYOUT, at, strict=True))
    assert "course-run-header" in page          # what the browser test's width check keys on
    assert page.count("<strong>The one change</strong>") == 1 and "\nNote: " not in page
    raw = page[at[2]:]
    assert "<table" not in re.sub(r"<details.*?</details>", "", raw, flags=re.DOTALL)
    assert not _NESTED_TABLE.search(page)


def test_a_long_per_step_table_is_folded_and_points_to_its_figure():
    page = run_pages.run_page(REPO / "runs/run_011")
    curve = page.index("<code>curve</code>: 300 rows")
    assert page.rfind("<details", 0, curve) > page.rfind("</details>", 0, curve)
    assert ("The table `curve` (300 rows) is folded in `summary.json`; it is drawn "
            "above, in `learning_curve.png`.") in page
    assert page.index("](learning_curve.png)") < page.index("## Provenance")


def test_the_raw_material_is_folded_and_left_out_of_search():
    page = run_pages.run_page(REPO / "runs/run_001")
    raw = page[page.index("## Raw material"):]
    folds = re.findall(r'<details class="note course-raw"><summary>.*?</summary>(<div[^>]*>)',
                       raw)
    assert len(folds) == 3 and all("data-search-exclude" in body for body in folds)


def test_every_run_has_a_title_that_says_what_it_measures():
    """Not its kind (`eval` four times over): its README's title, unique across the runs."""
    titles = {}
    for folder in RUNS:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        titles[folder.name] = run_pages.folder_title(folder, manifest)
        assert titles[folder.name].startswith(f"{folder.name} · ")
    measures = [title.split(" · ", 1)[1] for title in titles.values()]
    assert len(set(measures)) == len(measures), titles
    assert all(len(m.split()) >= 4 for m in measures), titles


@pytest.mark.parametrize(("kind", "heading", "title"), [
    ("eval", "", "run_009 · eval"),
    ("eval", "Loop A: the `strict-v1` pass rate", "run_009 · Loop A: the strict-v1 pass rate"),
    ("<img src=x onerror=alert(1)>", "", "run_009 · ?img src=x onerror=alert(1)?"),
    ("eval", "<b>x</b> & `y`", "run_009 · ?b?x?/b? ? y"),
])
def test_run_titles_are_plain_text(kind, heading, title):
    """The title also goes into every page's navigation, so it never carries markup."""
    assert run_pages.run_title("run_009", {"kind": kind}, heading) == title


# -- figures -----------------------------------------------------------------------------

def test_a_run_readme_picture_alone_becomes_a_numbered_figure_that_opens_full_size():
    """A picture alone on its line in a run's README, and each plot the README does not show,
    become a figure of pymdownx.blocks.caption: "Figure N." and the picture's own text, the
    picture a link to its file; a picture inside a sentence stays where it is."""
    readme = ("Text with ![inline](i.png) inside.\n\n![Reward against KL](kl_tradeoff.png)\n\n"
              "![A curve](javascript:alert(1))\n")
    config = load_config(str(REPO / "mkdocs.yml"))
    html = markdown.markdown(run_pages.readme_markdown(readme),
                             extensions=config.markdown_extensions,
                             extension_configs=config.mdx_configs)
    assert '<img alt="inline" src="i.png" />' in html
    assert ('<figure id="__figure-caption_1">\n<p><a href="kl_tradeoff.png"><img alt="Reward '
            'against KL" src="kl_tradeoff.png" /></a></p>\n<figcaption>\n<p><span class="caption-'
            'prefix">Figure 1.</span> Reward against KL</p>\n</figcaption>\n</figure>') in html
    assert '<img alt="A curve"' not in html and 'href="javascript' not in html
    assert "__figure-caption_2" not in html          # an unsafe address is text, not a figure


# -- fences ------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "expected"), [
    ("```{.python notest}", "```{.python .notest}"),
    ("```{.python continuation}", "```{.python .continuation}"),
    ("    ```{.python notest}", "    ```{.python .notest}"),     # inside an admonition
    ("~~~~{.python notest}", "~~~~{.python .notest}"),
    ("```python", "```python"),
    ("```mermaid", "```mermaid"),
])
def test_fence_options_become_classes(line, expected):
    rewritten, problems = fences.rewrite_fences(f"{line}\nx = 1\n{line.strip()[:3]}\n")
    assert rewritten.splitlines()[0] == expected
    assert problems == []


def test_the_bare_word_form_is_refused_with_the_fix():
    _, problems = fences.rewrite_fences("text\n\n```python notest\nx\n```\n", "lesson.md")
    assert problems == ["lesson.md:3: write ```{.python notest} instead of ```python notest "
                        "(Material cannot render the bare-word form)"]


def test_fence_lines_inside_a_code_block_are_left_alone():
    markdown = "````markdown\n```{.python notest}\n```python notest\n````\n"
    rewritten, problems = fences.rewrite_fences(markdown)
    assert rewritten == markdown and problems == []


# -- notebooks -----------------------------------------------------------------------------

def test_network_scripts_are_removed_and_local_ones_kept():
    html = ('<script src="https://cdnjs.cloudflare.com/mathjax.js"> </script>'
            '<script type="text/x-mathjax-config">MathJax.Hub.Config({})</script>'
            '<script type="module">const m = (await import("https://cdn/m.mjs")).default;'
            "</script><script>customElements.define('x-y', class {})</script><p>kept</p>")
    out = notebooks.strip_network_scripts(html)
    assert out == "<script>customElements.define('x-y', class {})</script><p>kept</p>"


def test_a_labs_cells_are_numbered_so_two_builds_are_the_same_bytes():
    one = ('<div class="jp-Cell" id="cell-id=4e9e5483"><p>id="cell-id=text"</p></div>'
           '<div class="jp-Cell" id="cell-id=08c0a14b"></div>')
    other = one.replace("4e9e5483", "ba6f8c1d").replace("08c0a14b", "021905ad")
    assert notebooks.numbered_cells(one) == notebooks.numbered_cells(other) == (
        '<div class="jp-Cell" id="cell-1"><p>id="cell-id=text"</p></div>'
        '<div class="jp-Cell" id="cell-2"></div>')


# -- search: the separator and the maths in the index -----------------------------------------

def configured_separator() -> str:
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    return re.search(r"^\s+separator: '(.*)'$", text, re.MULTILINE).group(1)


def words(text: str) -> list[str]:
    """`text` cut into lowercase words by the site's separator, as Material's worker cuts both
    the index text and the query (a sketch of its `split`: non-empty pieces between matches)."""
    return [w.lower() for w in re.split(configured_separator(), text) if w]


@pytest.mark.parametrize(("typed", "indexed"), [
    ("Final: <int>", "Final: &lt;int&gt;"),       # the index holds page text HTML-escaped
    ("<int>", "&lt;int&gt;"),
    ("score(example", "score(example"),
])
def test_a_query_is_cut_into_the_words_of_the_indexed_text(typed, indexed):
    assert words(typed) == words(indexed) != []


@pytest.mark.parametrize(("tex", "text"), [             # formulas from the course's pages
    (r"\pi_{\text{ref}}(a)", "π_ref(a)"),
    (r"\theta \leftarrow \theta + \alpha\,(r - b)\,\nabla_\theta \log \pi_\theta(a)",
     "θ ← θ + α (r - b) ∇_θ log π_θ(a)"),
    (r"\pi^\star \propto \pi_{\text{ref}}\, e^{r/\beta}", "π^* ∝ π_ref e^(r/β)"),
    (r"1 - \binom{n-c}{k}/\binom{n}{k}", "1 - C(n-c, k)/C(n, k)"),
    (r"\frac{\pi_\theta(y \mid x)}{\pi_{\text{ref}}(y \mid x)}", "(π_θ(y | x))/(π_ref(y | x))"),
    (r"\bar r(a)", "r\u0304(a)"),
    (r"J(\theta) = \mathbb{E}[R]", "J(θ) = E[R]"),
    (r"r \in \{0, 1\}", "r ∈ {0, 1}"),
    (r"100/60 \approx 1.7", "100/60 ≈ 1.7"),
    (r"\underbrace{x + y}_{\text{sum}} = 1", "x + y = 1"),
    (r"\begin{aligned} a &= b \\ c &= d \end{aligned}", "a = b ; c = d"),
    (r"\lVert x \rVert \ge \sqrt{2}", "‖ x ‖ ≥ √(2)"),
])
def test_a_formula_becomes_text_for_a_search_preview(tex, text):
    assert search_index.tex_to_text(tex) == text
    assert "\\" not in text


def test_a_notebooks_title_entry_is_merged_into_its_page_entry():
    docs = [{"location": "labs/lab_x/", "title": "Lab: x", "text": "<pre>import x</pre>"},
            {"location": "labs/lab_x/#lab-x", "title": "Lab: x¶", "text": "<p>Intro.</p>"},
            {"location": "labs/lab_x/#more", "title": "More¶", "text": "<p>More.</p>"},
            {"location": "maps/", "title": "Lab: x", "text": "<p>Another page.</p>"}]
    merged = search_index.merge_notebook_title(docs[:3])
    assert merged == [
        {"location": "labs/lab_x/", "title": "Lab: x", "text": "<p>Intro.</p> <pre>import x</pre>"},
        {"location": "labs/lab_x/#more", "title": "More", "text": "<p>More.</p>"}]
    # an entry of another page is never merged, whatever its title
    assert len(search_index.merge_notebook_title([docs[3], docs[1]])) == 2


@pytest.mark.parametrize(("url", "boost"), [
    ("lessons/m1-reinforce/", 4.0), ("maps/three-loops/", 2.0), ("labs/lab_kl/", 1.5),
    ("", 1.0), ("errata/", 1.0), ("references/", 0.5), ("runs/run_001/", 0.25),
    ("reference/api/", 0.25)])
def test_teaching_pages_are_boosted_above_references_and_runs(url, boost):
    assert search_index.boost_of(url) == boost


def test_arithmatex_maths_is_recorded_without_its_delimiters():
    html = ('<p>the <span class="arithmatex">\\(R(x, y)\\)</span> slot and '
            '<span class="arithmatex">\\(y_{&lt;t}\\)</span></p>'
            '<div class="arithmatex">\\[\nJ(\\theta) = \\mathbb{E}[R]\n\\]</div>')
    assert search_index.formulas_in(html) == {
        "\\(R(x, y)\\)": "R(x, y)",
        "\\(y_{&lt;t}\\)": "y_&lt;t",                    # kept in the index's escaped form
        "\\[ J(\\theta) = \\mathbb{E}[R] \\]": "J(θ) = E[R]",    # TeX made text
    }


def test_notebook_maths_is_recorded_but_code_and_other_dollars_are_not():
    html = ('<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown"><p>over $N = 7$ runs, '
            '\\$5 each, <code>$HOME</code></p><p>$$F(\\pi) =\n1$$</p></div>'
            '<td>The answer is $323$.</td><p>costs $5 and $6</p>'
            '<div class="arithmatex"><span class="other">\\(x\\)</span></div>')
    assert search_index.formulas_in(html) == {"$N = 7$": "N = 7",
                                             "$$F(\\pi) = 1$$": "F(π) = 1"}


def test_only_recorded_formulas_outside_code_are_rewritten():
    formulas = {"$x$": "x", "$$x$$": "x", "\\(R(x, y)\\)": "R(x, y)"}
    text = ("<p>$$x$$ then $x$ and \\(R(x, y)\\)</p> <code>\\(R(x, y)\\)</code> "
            "<pre>$x$</pre> $y$")
    assert search_index.without_delimiters(text, formulas) == (
        "<p>x then x and R(x, y)</p> <code>\\(R(x, y)\\)</code> <pre>$x$</pre> $y$")


def test_the_search_index_loses_delimiters_only_on_the_pages_that_typeset_them(tmp_path,
                                                                               monkeypatch):
    monkeypatch.setattr(search_index, "_formulas_by_page", {})
    lesson = '<h2 id="a">Reward <span class="arithmatex">\\(r\\)</span></h2>'
    search_index.on_page_context({}, page=SimpleNamespace(url="lessons/m0/", content=lesson),
                                config=None, nav=None)
    search_index.on_page_context({}, page=SimpleNamespace(url="runs/run_001/",
                                                         content="<p>\\(r\\)</p>"),
                                config=None, nav=None)
    index = {"config": {"separator": "x"}, "docs": [
        {"location": "lessons/m0/#a", "title": "Reward \\(r\\)", "text": "<p>so \\(r\\)</p>"},
        {"location": "runs/run_001/", "title": "run_001", "text": "completion \\(r\\)"},
    ]}
    folder = tmp_path / "search"
    folder.mkdir()
    (folder / "search_index.json").write_text(json.dumps(index), encoding="utf-8")
    search_index.on_post_build(SimpleNamespace(site_dir=str(tmp_path)))
    rewritten = json.loads((folder / "search_index.json").read_text(encoding="utf-8"))
    assert rewritten["config"] == index["config"]
    assert rewritten["docs"][0] == {"location": "lessons/m0/#a", "title": "Reward r",
                                    "text": "<p>so r</p>"}
    assert rewritten["docs"][1] == index["docs"][1]      # a completion is shown as written
    # it must run after Material's search plugin has written the index
    from course_site.plugin import CourseSite

    finish = CourseSite.on_post_build.methods[-1]
    assert finish.mkdocs_priority < 0 and "search_index.on_post_build" in inspect.getsource(finish)


# -- the API reference ---------------------------------------------------------------------

def test_the_api_reference_lists_every_module():
    """docs/reference/api.md is the one list of documented modules: each module of
    src/course/ and its packages must be on it (add `::: course.<name>` there)."""
    listed = {line.split("::: ", 1)[1].strip()
              for line in (REPO / "docs/reference/api.md").read_text().splitlines()
              if line.startswith("::: ")}
    root = REPO / "src"
    modules = {".".join(p.relative_to(root).with_suffix("").parts)
               for p in (root / "course").rglob("*.py")
               if p.stem not in ("__init__", "__main__")}
    assert sorted(modules - listed) == [], "add these to docs/reference/api.md"
    assert sorted(listed - modules) == [], "these are listed but do not exist"


# -- try_it: the Try-it boxes ------------------------------------------------------------------

@pytest.mark.parametrize("completion", [text for text in NASTY if "\n" not in text])
def test_a_try_it_box_holds_any_completion_as_text(completion):
    """A completion in a box (one line of Markdown written by a teacher) is the textarea's text
    and the command's argument, never markup; the box is one line, so Markdown keeps it whole."""
    box = try_it.expand(f"```try-it\nscorer\ncompletion: {completion}\nexpected: 7\n```",
                        "page.md")
    assert "\n" not in box and "<script>" not in box and "<img" not in box
    assert Parsed(box).tags <= {"div", "p", "strong", "code", "span", "label", "textarea",
                                "input", "button"}


def test_a_try_it_exercise_box_starts_from_the_stub():
    box = try_it.expand("```try-it\nexercise\nname: spec_tests\n```", "page.md")
    stub = (REPO / "workspace" / "spec_tests.py").read_text(encoding="utf-8")
    assert "\n" not in box and stub.strip().split("\n")[0] in Parsed(box).text


@pytest.mark.parametrize(("body", "said"), [
    ("nonsense", "docs/page.md:4: a try-it box starts with its kind, one of scorer, golden, "
                 "exercise, not 'nonsense'"),
    ("scorer\ncompletoin: Final: 12", "docs/page.md:5: try-it scorer box: unknown field "
                                      "'completoin' (did you mean 'completion'?)"),
    ("scorer\nexpected: twelve", "docs/page.md:5: try-it scorer box: field 'expected' must be "
                                 "an integer as the spec writes one"),
    ("scorer\nexpected 12", "docs/page.md:5: try-it scorer box: 'expected 12' is not "
                            "`field: value`, a colon is missing"),
    ("scorer\nexpected: 12\n\nexpected: 13", "docs/page.md:7: try-it scorer box: field "
                                             "'expected' is given twice (first on line 5)"),
    ("exercise", "docs/page.md:3: try-it exercise box: field 'name' is missing"),
    ("exercise\nname: kl", "need only the standard"),
    ("exercise\nname: kata", "need only the standard"),
])
def test_a_wrong_try_it_box_fails_the_build_naming_its_line_and_field(body, said):
    from mkdocs.exceptions import PluginError

    page = f"# Page\n\n```try-it\n{body}\n```\n"
    with pytest.raises(PluginError) as raised:
        try_it.expand(page, "docs/page.md")
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert try_it.problems(page, "docs/page.md") == [str(raised.value)]   # the same, no build


def test_a_try_it_box_left_without_fields_shows_the_defaults():
    box = try_it.expand("```try-it\nscorer\n```", "page.md")
    assert "course score --expected 323 &#x27;Final: 323&#x27;" in box


def test_try_it_ships_the_python_the_boxes_import_and_never_a_kata_key():
    """The import closure of course.tryit is copied, nothing else of the package and no
    teacher key; none of it imports numpy at the top (Pyodide has none; a function may import it
    where the browser never calls it)."""
    shipped = try_it.site_files()
    names = sorted(uri.removeprefix("src/course/") for uri in shipped
                   if uri.startswith("src/course/"))
    assert {"__init__.py", "tryit.py", "scorer.py", "selection.py"} <= set(names)
    assert "learn.py" not in names and "token_policy.py" not in names
    for name in names:
        text = (REPO / "src" / "course" / name).read_text(encoding="utf-8")
        assert not re.search(r"^(import|from)\s+(numpy|matplotlib)\b", text, re.M), name
    package = REPO / "src" / "course"
    assert try_it.import_closure(package, "paths") == ["__init__.py", "paths.py"]
    assert all(path.is_file() for path in shipped.values())
    assert not any("teacher" in uri for uri in shipped)

