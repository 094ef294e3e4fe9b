"""scripts/check_page.py, what scripts/test_page.sh checks before a page's tests: each mistake
the strict build would refuse is one line naming the page, the line and what it is about.
Pages are written to a scratch docs/ with a mkdocs.yml of its own; no build, no subprocess.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sitebuild import REPO

sys.path.insert(0, str(REPO / "scripts"))
from check_page import anchors, problems

CONFIG = """\
site_name: x
extra:
  edition: !ENV [COURSE_EDITION, student]
nav:
  - Home: index.md
  - Course:
      - "Milestone 1": lessons/m1.md
  - Teacher's guide:
      - teacher/index.md
"""
HEADINGS = """\
# The `kl` term, *weighted*

## Step 1: [the scorer](index.md) &amp; its `pass_rate`

## Step 1: [the scorer](index.md) &amp; its `pass_rate`

## Kept {#my-id}

- <a id="smith-2020"></a>**Smith (2020).**

```python
# a comment, not a heading
```
"""


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A scratch docs/ whose nav lists index.md, lessons/m1.md and teacher/index.md."""
    (tmp_path / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    for name, text in (("index.md", HEADINGS), ("lessons/m1.md", "# M1\n"),
                       ("teacher/index.md", "# Guide\n\nSee [the course](../index.md).\n")):
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    return tmp_path / "docs"


def check(docs: Path, name: str, text: str | None = None) -> list[str]:
    """The problems of docs/`name`, written with `text` first if given."""
    if text is not None:
        (docs / name).write_text(text, encoding="utf-8")
    return problems(docs / name, docs, docs.parent / "mkdocs.yml")


def test_pages_listed_in_either_edition_pass(docs: Path):
    assert check(docs, "index.md") == check(docs, "teacher/index.md") == []


def test_heading_ids_are_the_toc_extensions(docs: Path):
    assert anchors(docs / "index.md") == {
        "the-kl-term-weighted", "step-1-the-scorer-its-pass_rate",
        "step-1-the-scorer-its-pass_rate_1", "my-id", "smith-2020"}


def test_a_page_left_out_of_the_nav(docs: Path):
    assert check(docs, "lessons/m2.md", "# M2\n") == [
        "docs/lessons/m2.md:1: not listed in mkdocs.yml's nav, so the strict build fails; add "
        "`- Title: lessons/m2.md` in its section (nav)"]


def test_a_broken_try_it_box(docs: Path):
    assert check(docs, "lessons/m1.md", "# M1\n\n```try-it\nscorer\nexpect: 12\n```\n") == [
        "docs/lessons/m1.md:5: try-it scorer box: unknown field 'expect' (did you mean "
        "'expected'?); its fields are completion, expected"]


def test_a_link_to_a_missing_page(docs: Path):
    text = "# M1\n\nSee [Milestone 2](m2.md), not `[code](m2.md)`.\n"
    assert check(docs, "lessons/m1.md", text) == [
        "docs/lessons/m1.md:3: no file docs/lessons/m2.md (link m2.md)"]


def test_a_link_to_a_missing_anchor(docs: Path):
    text = "# M1\n\n[kl](../index.md#the-kl-term-weighted) and\n[kl](../index.md#the-kl-term)\n"
    assert check(docs, "lessons/m1.md", text) == [
        "docs/lessons/m1.md:4: docs/index.md has no heading or anchor with the id 'the-kl-term' "
        "(did you mean 'the-kl-term-weighted'?) (link ../index.md#the-kl-term)"]


def test_a_lesson_longer_than_a_sitting(docs: Path):
    text = "# M1\n\n" + "word " * 9200 + "\n"     # 46 minutes at 200 words a minute
    assert check(docs, "lessons/m1.md", text) == [
        "docs/lessons/m1.md:1: about 46 minutes of reading and running, more than one sitting "
        "(45): cut it, or split the milestone into parts (sitting)"]


def test_a_code_line_wider_than_the_column(docs: Path):
    """Measured from the block's own indentation, snippets' lines included; a diagram's source
    is drawn, not shown, so its lines may be long."""
    (docs.parent / "long.py").write_text("x = 1\n" + "y" * 80 + "\n", encoding="utf-8")
    text = ("# M1\n\n```python\n" + "a" * 79 + "\n```\n\n!!! note\n\n    ```bash\n    "
            + "b" * 80 + "\n    ```\n\n```mermaid\n" + "c" * 120 + "\n```\n\n"
            '```python\n--8<-- "long.py"\n```\n')
    assert check(docs, "lessons/m1.md", text) == [
        "docs/lessons/m1.md:10: a code line of 80 characters, more than the column's 79: "
        "break it (code width) 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'",
        'docs/lessons/m1.md:18: a code line of 80 characters (from --8<-- "long.py"), more than '
        "the column's 79: break it (code width) 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'"]


def test_every_page_of_the_site_passes():
    pages = sorted([*(REPO / "docs").rglob("*.md"), *(REPO / "docs" / "labs").glob("lab_*.py")])
    assert [problem for page in pages for problem in problems(page)] == []
