"""One sitting per lesson page: about 45 minutes of reading and running, estimated.

A student reads prose at about 200 words a minute and reads, runs and compares a code block's
lines with their output at about 8 lines a minute. HTML comments are for the tests, not the
reader, and are not counted. A milestone longer than a sitting is split into parts
(`m4-reward-as-spec.md`, then `m4b-failure-forensics.md`), each a page of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sitebuild import REPO, load_hook

LESSONS = sorted((REPO / "docs" / "lessons").glob("*.md"))
SITTING_MINUTES = 45
WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 8

fenced_blocks = load_hook("fences").fenced_blocks


def minutes(markdown: str) -> float:
    """Estimated minutes to read `markdown` and run its code blocks."""
    lines = re.sub(r"<!--.*?-->", "", markdown, flags=re.S).split("\n")
    fences = [range(fence.open, fence.close + 1) for fence in fenced_blocks(lines)]
    code_lines = sum(len(fence) - 2 for fence in fences)      # without the fence lines
    in_code = {number for fence in fences for number in fence}
    words = sum(len(line.split()) for number, line in enumerate(lines) if number not in in_code)
    return words / WORDS_PER_MINUTE + code_lines / CODE_LINES_PER_MINUTE


def test_the_estimate_counts_prose_and_code_and_skips_comments():
    prose = " ".join(["word"] * 400)                    # 2 minutes
    code = "```python\n" + "x = 1\n" * 16 + "```\n"     # 2 minutes
    comment = "<!-- " + " ".join(["hidden"] * 1000) + " -->\n"
    assert minutes(f"{prose}\n\n{code}{comment}") == pytest.approx(4.0)


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.name)
def test_each_lesson_page_fits_one_sitting(page: Path):
    estimate = minutes(page.read_text(encoding="utf-8"))
    assert estimate <= SITTING_MINUTES, (
        f"{page.relative_to(REPO)}: about {estimate:.0f} minutes of reading and running, more "
        f"than one sitting ({SITTING_MINUTES}): cut it, or split the milestone into parts")
