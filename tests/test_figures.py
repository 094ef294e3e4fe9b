"""The concept figures draw the right numbers: the data behind each comes from the run or the
code it names, and the drawing shows that data, not a stale or swapped copy."""

import numpy as np
import pytest

from course.paths import RUNS_DIR
from course.reports.figures import (
    FIGURES,
    FROZEN_SET_SIZE,
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


def test_distribution_shift_reads_run_008_before_and_after():
    styles = read_json(RUNS_DIR / "run_008", "summary.json")["styles"]
    data = distribution_shift_data()
    assert data["styles"] == tuple(styles)
    # π_0 is the policy at step 0 and π_t the one after the last step, not the other way round.
    for s, style in enumerate(data["styles"]):
        assert data["pi_0"][s] == pytest.approx(styles[style]["initial_probability"], abs=2e-4)
        assert data["pi_t"][s] == pytest.approx(styles[style]["final_probability"], abs=2e-4)
    assert data["frozen"].sum() == FROZEN_SET_SIZE and data["later"].sum() == LATER_SAMPLES
    # The trained policy lives in `spray`, where the frozen snapshot has almost nothing.
    spray = data["styles"].index("spray")
    assert data["later"][spray] > 0.9 * LATER_SAMPLES > data["frozen"][spray]


def test_distribution_shift_draws_its_data():
    data = distribution_shift_data()
    drawn = "\n".join(texts(distribution_shift_figure(data)))
    for s, style in enumerate(data["styles"]):
        assert (f"{style}\nπ_0 = {data['pi_0'][s]:.2f}, π_t = {data['pi_t'][s]:.2f}\n"
                f"frozen examples: {data['frozen'][s]}") in drawn


def test_gradient_connection_uses_the_scorer_the_tokenizer_and_run_001():
    data = gradient_connection_data()
    assert "".join(data["pieces"]) == "Final: 323" and len(data["pieces"]) == 4
    assert data["reward"] == score(RUNNING_EXAMPLE, "Final: 323")["reward"] == 1.0
    assert data["baseline"] == read_json(RUNS_DIR / "run_001", "summary.json")["mean_reward"]
    assert data["advantage"] == pytest.approx(1.0 - data["baseline"])
    drawn = texts(gradient_connection_figure(data))
    assert sum(t == f"{data['advantage']:+.2f} · ∇log π" for t in drawn) == len(data["pieces"])
    assert f"= {data['reward']:.0f} − {data['baseline']:.2f}\n= {data['advantage']:+.2f}" in (
        "\n".join(drawn))


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
