"""One sitting per lesson page: about 45 minutes of reading and running, as estimated by
scripts/check_page.py (`minutes` says how; scripts/test_page.sh checks one lesson with it). A
milestone longer than a sitting is split into parts (`m4-reward-as-spec.md`, then
`m4b-failure-forensics.md`), each a page of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sitebuild import REPO

sys.path.insert(0, str(REPO / "scripts"))
from check_page import minutes, over_a_sitting

LESSONS = sorted((REPO / "docs" / "lessons").glob("*.md"))


def test_the_estimate_counts_prose_and_code_and_skips_comments_and_teacher_blocks():
    prose = " ".join(["word"] * 400)                    # 2 minutes
    code = "```python\n" + "x = 1\n" * 16 + "```\n"     # 2 minutes
    comment = "<!-- " + " ".join(["hidden"] * 1000) + " -->\n"
    teacher = "!!! teacher\n    " + " ".join(["only"] * 1000) + "\n"   # not in the student's
    assert minutes(f"{prose}\n\n{code}{comment}\n{teacher}") == pytest.approx(4.0)


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.name)
def test_each_lesson_page_fits_one_sitting(page: Path):
    problem = over_a_sitting(page.read_text(encoding="utf-8"), str(page.relative_to(REPO)))
    assert problem is None, problem
