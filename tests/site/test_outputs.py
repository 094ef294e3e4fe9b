"""site_hooks/outputs.py: each Python block shows, beneath it, what it printed when the site was
built. These tests run the hook on small pages (each runs a real interpreter, about 0.1 s); the
reader's side of the promise, that a block pasted alone prints exactly what the page shows, is
tests/site/test_copy_paste.py, on the built site.
"""

from __future__ import annotations

import logging
import textwrap

import pytest
from sitebuild import REPO

from course_site import outputs

PAGE = "docs/lesson.md"


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def render(markdown: str) -> str:
    return outputs.with_outputs(md(markdown), PAGE)


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    """The strict build's setting: every block runs (the serve cache is tested on its own)."""
    monkeypatch.setattr(outputs._session, "cache", None)


def test_the_output_goes_right_under_its_block():
    assert render("""
        Text.

        ```python
        print("hello")
        print(6 * 7)
        ```

        More text.
        """) == md("""
        Text.

        ```python
        print("hello")
        print(6 * 7)
        ```

        ```{.text .course-output .no-copy}
        hello
        42
        ```

        More text.
        """)


def test_inside_an_admonition_the_output_keeps_the_indentation():
    assert render("""
        ??? success "Answer: x"
            It is 3.

            ```{.python}
            x = 1 + 2
            print(x)
            ```
        """) == md("""
        ??? success "Answer: x"
            It is 3.

            ```{.python}
            x = 1 + 2
            print(x)
            ```

            ```{.text .course-output .no-copy}
            3
            ```
        """)


def test_each_block_starts_fresh_and_a_continuation_continues():
    page = render("""
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
        """)
    shown = [body for body in page.split("```{.text .course-output .no-copy}\n")[1:]]
    assert [body.split("\n```")[0] for body in shown] == ["5", "6", "False"]


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
    assert outputs.with_outputs(page, PAGE) == page


def test_output_holding_backticks_gets_a_longer_fence_and_blank_lines_survive():
    page = render("""
        ```python
        print("```\\n\\nend")
        ```
        """)
    assert "````{.text .course-output .no-copy}\n```\n\nend\n````" in page


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
    assert "before" in page                       # what it printed before it raised is shown


def test_blocks_run_outside_the_repository_with_the_installed_package_only():
    page = render("""
        ```python
        import os, pathlib
        import course
        print(pathlib.Path.cwd().is_relative_to(pathlib.Path(course.__file__).parents[2]))
        print(os.listdir("."))
        ```
        """)
    assert "```{.text .course-output .no-copy}\nFalse\n[]\n```" in page


def test_a_figure_left_open_is_shown_as_svg_with_its_title_as_alt_text():
    page = render("""
        ```python
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        ax.set_title("reward falls")
        ```
        """)
    assert "![reward falls](data:image/svg+xml;base64," in page
    assert page.rstrip().endswith("{ .course-block-figure }")


def test_two_renders_of_a_real_lesson_are_identical():
    lesson = (REPO / "docs" / "lessons" / "m05-selection.md").read_text(encoding="utf-8")
    first = outputs.with_outputs(lesson, "docs/lessons/m05-selection.md")
    assert first == outputs.with_outputs(lesson, "docs/lessons/m05-selection.md")
    assert first.count("{.text .course-output .no-copy}") >= 5
    assert "solved" in first            # run_002's table of strategies, shown under its block


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
    first = outputs.with_outputs(page, PAGE)
    assert outputs.with_outputs(page, PAGE) == first and len(ran) == 1
    edited = outputs.with_outputs(page.replace("print(3)", "print(4)"), PAGE)
    assert ran[-1] == ["print(4)"] and "\n4\n" in edited          # only the changed chain ran
    outputs.with_outputs(page.replace("print(2)", "print(5)"), PAGE)
    assert ran[-1] == ["print(1)", "print(5)"]        # a continuation re-runs its whole chain
    assert len(list((tmp_path / "state").glob("*.json"))) == 4
