"""The Goodhart toy: the claims the Milestone 5 lesson makes about run_008, checked."""

import numpy as np
import pytest

from course.data import load_problems
from course.goodhart import STYLES, GoodhartConfig, render, simulate, style_rates
from course.paths import DATA_DIR
from course.reports.goodhart import summarise
from course.rubrics import answer_anywhere
from course.scorer import score

PROBLEMS = load_problems(DATA_DIR / "problems" / "dev.jsonl")


@pytest.mark.parametrize(
    ("style", "answer", "text"),
    [("honest", 323, "Final: 323"), ("vague", 323, "It is roughly 320."),
     ("spray", 12, "Final: 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, "
                   "21, 22")],
)
def test_styles_write_what_the_docstring_says(style, answer, text):
    rng = np.random.default_rng(0)
    assert render(style, answer, competence=1.0, rng=rng) == text


def test_measured_rates_match_what_the_rubrics_must_say():
    config = GoodhartConfig(rate_draws=5)
    rates = style_rates(PROBLEMS, answer_anywhere, config, np.random.default_rng(1))
    honest, vague, spray = (STYLES.index(s) for s in ("honest", "vague", "spray"))
    # Every slip is within 10, so the spray always contains the answer; strict never pays it.
    assert rates["proxy"][spray] == 1.0 and rates["true"][spray] == 0.0
    assert rates["true"][vague] == 0.0  # a sentence is never in spec
    # An honest answer is right about `competence` of the time (binomial, 300 draws: ±4 sd).
    assert abs(rates["true"][honest] - config.competence) < 4 * np.sqrt(0.7 * 0.3 / 300)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_proxy_keeps_rising_while_the_true_goal_rises_then_falls(seed):
    config = GoodhartConfig(seed=seed)
    result = simulate(config)
    summary = summarise(config, result)
    start, peak, end = summary["start"], summary["peak"], summary["end"]
    assert 0 < peak["step"] < config.steps
    assert peak["true"] > start["true"] + 0.4          # the proxy helped at first ...
    assert end["true"] < peak["true"] / 4              # ... then the true goal collapsed
    assert end["proxy"] > peak["proxy"] + 0.2          # while the proxy kept climbing
    assert summary["styles"]["spray"]["final_probability"] > 0.9


def test_expected_curves_are_the_policy_times_the_rates():
    config = GoodhartConfig(steps=5, rate_draws=2)
    result = simulate(config)
    for t, policy in enumerate(result["policies"]):
        assert policy.sum() == pytest.approx(1.0)
        assert result["true_curve"][t] == pytest.approx(policy @ result["rates"]["true"])


def test_the_strict_scorer_is_measured_never_optimised():
    # A style the strict scorer pays is not what the proxy prefers: that gap is the lesson.
    assert score(PROBLEMS[0], "Final: 313, 314, 315, 316, 317, 318, 319, 320, 321, 322, 323, "
                              "324")["reward"] == 0.0
    with pytest.raises(ValueError, match="weak rubric"):
        simulate(GoodhartConfig(proxy="strict"))
