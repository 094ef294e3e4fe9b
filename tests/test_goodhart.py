"""The Goodhart toy: the claims the Milestone 5 lesson makes about run_008, checked; and the
peak its closed-form toy (section 1) names."""

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from course.data import load_problems
from course.goodhart import STYLES, GoodhartConfig, render, simulate, style_rates
from course.kl import kl_regularized_optimum
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


# -- Milestone 5, section 1: the closed-form toy ------------------------------------------------

LESSON = Path(__file__).resolve().parents[1] / "docs" / "lessons" / "m5-red-team.md"


def golden_section_max(f: Callable[[float], float], lo: float, hi: float,
                       tol: float = 1e-9) -> float:
    """The x in [lo, hi] where a unimodal f is largest, by golden-section search."""
    shrink = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - shrink * (b - a), a + shrink * (b - a)
    while b - a > tol:
        if f(c) > f(d):
            b, d = d, c
            c = b - shrink * (b - a)
        else:
            a, c = c, d
            d = a + shrink * (b - a)
    return (a + b) / 2


def named_peak(page: str) -> tuple[str, str]:
    """The true goal's peak and its beta, as the answer to "harder optimisation" writes them."""
    answer = page[page.index('??? success "Answer: harder optimisation"'):]
    answer = " ".join(answer[:answer.index("\n\n")].split())
    found = re.search(r"peaks? (?:of|at) (\d\.\d+),? at \$\\beta\$? ?[=≈] ?(\d\.\d+)", answer)
    assert found, "the answer no longer names the true goal's peak as this test reads it"
    value, beta = found.groups()
    return value, beta


def test_the_peak_the_lesson_names_is_the_maximum_over_every_beta():
    """The lesson's block prints six betas; the true goal's peak lies between two of them. The
    page once named the best row (0.748 at beta 0.1) as the peak; the maximum over all beta is
    0.756 near beta 0.131. Here the maximum is found by golden-section search on log beta,
    with the toy's numbers read from the page, and checked against a dense grid."""
    page = LESSON.read_text(encoding="utf-8")
    toy = {name: np.array(json.loads(values)) for name, values in re.findall(
        r"^(pi_ref|proxy|true) = np\.array\((\[[^\]]*\])\)", page, re.MULTILINE)}
    assert toy.keys() == {"pi_ref", "proxy", "true"}

    def goal(log_beta: float) -> float:
        pi = kl_regularized_optimum(toy["pi_ref"], toy["proxy"], float(np.exp(log_beta)))
        return float(pi @ toy["true"])

    lo, hi = np.log(0.01), np.log(100)
    log_best = golden_section_max(goal, lo, hi)
    best = goal(log_best)
    # golden section finds a local maximum; a dense grid shows there is no higher one
    assert best >= max(goal(x) for x in np.linspace(lo, hi, 20_001)) - 1e-12

    value, beta = named_peak(page)
    # each within half a unit of its last written digit
    assert abs(best - float(value)) <= 0.5 * 10.0 ** -len(value.split(".")[1]), (value, best)
    assert abs(np.exp(log_best) - float(beta)) <= 0.5 * 10.0 ** -len(beta.split(".")[1]), (
        beta, np.exp(log_best))
