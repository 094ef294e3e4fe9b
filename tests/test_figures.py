"""The concept figures render from real harness numbers, byte-identically every time."""

import pytest

from course.figures import FIGURES, RUNNING_EXAMPLE
from course.scorer import score


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_a_reproducible_png(name):
    first, second = FIGURES[name](), FIGURES[name]()
    assert first.startswith(b"\x89PNG\r\n\x1a\n")
    assert first == second


def test_the_running_example_is_the_one_the_lessons_use():
    assert score(RUNNING_EXAMPLE, "Final: 323")["reward"] == 1.0
