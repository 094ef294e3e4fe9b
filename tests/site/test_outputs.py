"""course_site/outputs.py: each Python block shows, beneath it, what it printed when the site was
built. These tests render small pages as the site does (the block run by a real interpreter,
about 0.1 s; the Markdown by the site's extensions; the output put in place afterwards); the
record of what ran is compared with the built site by tests/site/test_copy_paste.py.
"""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import markdown as python_markdown
import pytest
from bs4 import BeautifulSoup
from sitebuild import REPO

from course_site import outputs

PAGE = "docs/lesson.md"
SECRET = "the text of a file no page includes"


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def to_html(markdown: str, snippets: Path | None = None) -> str:
    """Markdown -> HTML with the extensions a lesson uses (snippets from `snippets`)."""
    extensions = ["admonition", "attr_list", "md_in_html", "pymdownx.details",
                  "pymdownx.superfences", "pymdownx.tabbed", "pymdownx.snippets"]
    config = {"pymdownx.snippets": {"base_path": [str(snippets or REPO)], "check_paths": False}}
    return python_markdown.markdown(markdown, extensions=extensions, extension_configs=config)


def render(markdown: str, snippets: Path | None = None) -> str:
    """A page as the site renders it: placeholders, Markdown, then the outputs put in place."""
    with_placeholders, shown = outputs.with_placeholders(md(markdown), PAGE)
    return outputs.with_outputs(to_html(with_placeholders, snippets), shown, PAGE)


def shown(html: str) -> list[str]:
    """The text of each output block of a rendered page."""
    return [div.get_text().rstrip("\n") for div in
            BeautifulSoup(html, "html.parser").select("div.course-output code")]


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    """The strict build's setting: every block runs (the serve cache is tested on its own)."""
    monkeypatch.setattr(outputs._session, "cache", None)


def test_the_output_goes_right_under_its_block():
    html = render("""
        Text.

        ```python
        print("hello")
        print(6 * 7)
        ```
        More text, right after the fence.
        """)
    soup = BeautifulSoup(html, "html.parser")
    block = soup.select_one("div.highlight, pre")
    output = soup.select_one("div.course-output")
    assert "language-text" in output["class"] and "no-copy" in output["class"]
    assert output.get_text() == "hello\n42\n"
    assert output.find_previous_sibling() == block or block in output.find_all_previous()
    assert output.find_next_sibling("p").get_text() == "More text, right after the fence."


def test_inside_an_admonition_the_output_stays_inside():
    html = render("""
        ??? success "Answer: x"
            It is 3.

            ```{.python}
            x = 1 + 2
            print(x)
            ```

        After the box.
        """)
    details = BeautifulSoup(html, "html.parser").select_one("details")
    assert [div.get_text() for div in details.select("div.course-output")] == ["3\n"]


def test_each_block_starts_fresh_and_a_continuation_continues():
    assert shown(render("""
        ```python
        x = 5
        print(x)
        ```

        ```{.python .continuation}
        print(x + 1)
        ```

        ```python
        print("x" in dir())
        ```
        """)) == ["5", "6", "False"]


def test_a_block_that_prints_nothing_shows_nothing_and_notest_never_runs():
    page = md("""
        ```python
        x = 1
        ```

        ```{.python .notest}
        print("never")
        raise SystemExit(3)
        ```

        ```text
        print("not Python")
        ```
        """)
    assert outputs.with_placeholders(page, PAGE) == (page, [])


def test_printed_text_is_never_markup_a_snippet_or_a_placeholder(tmp_path):
    """What a block prints is shown as written: a `--8<--` line is not expanded (it once put
    the M5 answer key on a page), HTML is not live, a fence does not close the block, and a
    placeholder-looking word (an author's guess, or another block's) stays a word."""
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    html = render("""
        ```python
        print('--8<-- "secret.txt"')
        print('    --8<-- "secret.txt"')
        print("<script>alert(1)</script>\\n```\\n\\n<img src=x onerror=alert(2)>")
        print("CourseOutput0123456789abcdefx0 and [link](javascript:alert(3))")
        ```
        """, snippets=tmp_path)
    assert SECRET not in html
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find("script") is None and soup.find("img") is None and soup.find("a") is None
    assert shown(html) == ['--8<-- "secret.txt"\n    --8<-- "secret.txt"\n'
                           "<script>alert(1)</script>\n```\n\n<img src=x onerror=alert(2)>\n"
                           "CourseOutput0123456789abcdefx0 and [link](javascript:alert(3))"]


def test_a_placeholder_written_by_an_author_stays_text(caplog):
    """The placeholders hold a number drawn for this build: a page cannot name one."""
    guess = outputs.placeholder(0).replace(outputs._NONCE, "0" * len(outputs._NONCE))
    with caplog.at_level(logging.WARNING):
        html = render(f"""
            {guess}

            ```python
            print("real")
            ```
            """)
    assert guess in html and shown(html) == ["real"] and not caplog.records


def test_a_block_that_raises_or_writes_to_stderr_is_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        page = render("""
            ```python
            print("before")
            raise ValueError("the lesson is wrong")
            ```

            ```python
            import sys
            print("careful", file=sys.stderr)
            ```
            """)
    messages = [record.getMessage() for record in caplog.records]
    assert any(f"{PAGE}, the block at line 1 raised:" in m and "run_blocks.py" not in m
               and "ValueError: the lesson is wrong" in m for m in messages), messages
    assert any(f"{PAGE}, the block at line 6 wrote to stderr:\ncareful" in m
               for m in messages), messages
    assert shown(page) == ["before"]              # what it printed before it raised is shown


def test_blocks_run_outside_the_repository_with_the_installed_package_only():
    page = render("""
        ```python
        import os, pathlib
        import course
        print(pathlib.Path.cwd().is_relative_to(pathlib.Path(course.__file__).parents[2]))
        print(os.listdir("."))
        ```
        """)
    assert shown(page) == ["False\n[]"]


def test_a_figure_left_open_is_shown_as_svg_with_its_title_as_alt_text():
    page = render("""
        ```python
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        ax.set_title("reward falls")
        fig, ax = plt.subplots()
        ax.set_title('a "title"\\n\\n<script>alert(1)</script> ](javascript:x)')
        ```
        """)
    images = BeautifulSoup(page, "html.parser").select("img.course-block-figure")
    assert [image["alt"] for image in images] == [
        "reward falls", 'a "title"\n\n<script>alert(1)</script> ](javascript:x)']
    assert all(image["src"].startswith("data:image/svg+xml;base64,") for image in images)
    assert "<script>" not in page


def test_two_renders_are_identical_figures_included():
    """The site is rebuilt byte for byte: the same blocks give the same HTML (the SVG of a figure
    carries no date and the same ids)."""
    page = md("""
        ```python
        import matplotlib.pyplot as plt
        print("a table", 0.125)
        plt.plot([0, 1], [0.2, 0.8])
        plt.title("twice the same")
        ```
        """)
    first = outputs.with_placeholders(page, PAGE)
    assert first == outputs.with_placeholders(page, PAGE) and len(first[1]) == 1
    assert "a table 0.125" in first[1][0] and "data:image/svg+xml;base64," in first[1][0]


def test_under_serve_outputs_are_cached_by_chain_text(monkeypatch, tmp_path):
    monkeypatch.setattr(outputs._session, "cache", tmp_path / "state")
    ran: list[list[str]] = []
    real = outputs.execute

    def counting(blocks):
        ran.append([block["code"] for block in blocks])
        return real(blocks)

    monkeypatch.setattr(outputs, "execute", counting)
    page = md("""
        ```python
        print(1)
        ```

        ```{.python .continuation}
        print(2)
        ```

        ```python
        print(3)
        ```
        """)
    first = outputs.with_placeholders(page, PAGE)
    assert outputs.with_placeholders(page, PAGE) == first and len(ran) == 1
    edited = outputs.with_placeholders(page.replace("print(3)", "print(4)"), PAGE)
    assert ran[-1] == ["print(4)"] and "4\n" in edited[1][-1]     # only the changed chain ran
    outputs.with_placeholders(page.replace("print(2)", "print(5)"), PAGE)
    assert ran[-1] == ["print(1)", "print(5)"]        # a continuation re-runs its whole chain
    assert len(list((tmp_path / "state").glob("*.json"))) == 4
