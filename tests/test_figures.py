"""The concept figures draw the right numbers: the data behind each comes from the run or the
code it names, and the drawing shows that data, not a stale or swapped copy."""

import numpy as np
import pytest

from course.paths import RUNS_DIR
from course.reports.figures import (
    FIGURES,
    GAP,
    LATER_SAMPLES,
    RUNNING_EXAMPLE,
    distribution_shift_data,
    distribution_shift_figure,
    gradient_connection_data,
    gradient_connection_figure,
    token_text_interface_data,
    token_text_interface_figure,
)
from course.runs import read_json
from course.scorer import score


def texts(fig) -> list[str]:
    """Every text the figure draws: annotations, labels, titles, legend entries."""
    return [t.get_text() for t in fig.findobj(lambda artist: hasattr(artist, "get_text"))]


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_a_reproducible_png(name):
    first, second = FIGURES[name](), FIGURES[name]()
    assert first.startswith(b"\x89PNG\r\n\x1a\n")
    assert first == second


def test_distribution_shift_reads_run_010_snapshot_and_trained_policy():
    summary = read_json(RUNS_DIR / "run_010", "summary.json")
    data = distribution_shift_data()
    assert data["groups"] == ("correct", "wrong answer", "not an integer", "other failures")
    # The snapshot is the stand-in's frozen file, π_t the trained policy's fresh samples.
    assert data["snapshot"][0] == summary["stale"]["codes"]["correct"] == 0.5667
    assert data["pi_t"][0] == summary["fresh_trained"]["codes"]["correct"]
    assert data["pi_t"][2] == summary["fresh_trained"]["codes"]["not_an_integer"]
    assert data["snapshot"].sum() == pytest.approx(1.0) and data["pi_t"].sum() == pytest.approx(1.0)
    assert data["frozen"].tolist() == [34, 9, 3, 14]            # the 60 snapshot completions
    assert abs(data["later"].sum() - LATER_SAMPLES) <= 2
    # The trained policy lives among unreadable answers, where the snapshot has 3 examples.
    assert int(np.argmax(data["pi_t"] - data["snapshot"])) == 2


def test_distribution_shift_draws_its_data():
    data = distribution_shift_data()
    drawn = "\n".join(texts(distribution_shift_figure(data)))
    for g, group in enumerate(data["groups"]):
        assert (f"{group}\nsnapshot = {data['snapshot'][g]:.2f}, "
                f"$\\pi_t$ = {data['pi_t'][g]:.2f}\n"
                f"frozen examples: {data['frozen'][g]}") in drawn
    assert "run_010" in drawn
    assert "\\pi_0" not in drawn          # the stand-in is no policy at step 0 (issue 31)


def test_gradient_connection_uses_the_scorer_and_run_001():
    data = gradient_connection_data()
    assert data["reward"] == score(RUNNING_EXAMPLE, "Final: 323")["reward"] == 1.0
    assert data["baseline"] == read_json(RUNS_DIR / "run_001", "summary.json")["mean_reward"]
    assert data["advantage"] == pytest.approx(1.0 - data["baseline"])
    drawn = texts(gradient_connection_figure(data))
    each_token = f"${data['advantage']:+.2f}$\n$\\cdot\\,\\nabla \\log \\pi$"
    named = [token for token in data["tokens"] if token != GAP]
    assert sum(t == each_token for t in drawn) == len(named) == 3
    assert all(token in drawn for token in data["tokens"])
    assert (f"$A = r - b$\n$= {data['reward']:.0f} - {data['baseline']:.2f}$\n"
            f"$= {data['advantage']:+.2f}$") in drawn


def test_gradient_connection_gives_away_no_token_of_the_answer():
    """Issue 31, error 3: M1's figure drew the cl100k_base pieces of `Final: 323`, the answer
    to M3's prediction of how many tokens that line takes. The tokens are named y_1 ... y_T;
    no drawn text holds the line's word or its digits, the pieces a reader could count."""
    from course.tokens import tokenize

    words = [piece for _id, piece in tokenize("Final: 323") if piece.strip(": ")]
    assert words == ["Final", "323"]
    drawn = texts(gradient_connection_figure(gradient_connection_data()))
    assert not [text for text in drawn if any(word in text for word in words)], drawn


def test_token_text_interface_shows_the_real_ids_and_the_scorer_verdict():
    layers = dict(token_text_interface_data())
    assert layers["Token ids"] == "[19918, 25, 220, 15726]"
    assert layers["Parse / extract (course.scorer.parse)"] == "parsed_answer = 323"
    assert layers["Reward"] == "1.0  (code 'correct')"
    wrong = dict(token_text_interface_data("Final: 324"))
    assert wrong["Reward"] == "0.0  (code 'wrong_answer')"
    drawn = texts(token_text_interface_figure(list(layers.items())))
    assert all(value in drawn for value in layers.values())


def test_the_running_example_is_the_one_the_lessons_use():
    assert score(RUNNING_EXAMPLE, "Final: 323")["reward"] == 1.0
    assert np.isclose(RUNNING_EXAMPLE["expected_answer"], 17 * 19)
