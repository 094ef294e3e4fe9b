"""KL divergence and the KL-regularised optimum, checked against hand values, gradient ascent and
perturbations; the β sweep must trace a monotone reward-versus-KL frontier."""

import csv
import io
import json
import math

import numpy as np
import pytest

from course import kl
from course.cli import main
from course.kl import KLConfig, kl_divergence, kl_objective, kl_regularized_optimum
from course.policy import softmax
from course.reports import kl as kl_report

CONFIG = KLConfig()
PI_REF, REWARDS = np.array(CONFIG.pi_ref), np.array(CONFIG.rewards)


# -- KL divergence ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("p", "q", "expected"), [
    ([0.5, 0.5], [0.25, 0.75], 0.5 * math.log(2) + 0.5 * math.log(2 / 3)),
    ([1.0, 0.0], [0.5, 0.5], math.log(2)),                      # 0 · log 0 counts 0
    ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], 0.0),
    ([0.0, 1.0], [0.9, 0.1], math.log(10)),
    ([0.5, 0.5], [1.0, 0.0], math.inf),                         # p has mass outside q's support
])
def test_kl_matches_hand_computed_values(p, q, expected):
    assert kl_divergence(np.array(p), np.array(q)) == pytest.approx(expected, abs=1e-15)


def test_kl_is_non_negative_and_zero_only_for_equal_distributions():
    rng = np.random.default_rng(0)
    for _ in range(200):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        assert kl_divergence(p, q) > 0
        assert kl_divergence(p, p) == 0.0


@pytest.mark.parametrize(("p", "q", "message"), [
    ([0.5, 0.5], [0.2, 0.3, 0.5], "shapes differ"),
    ([-0.1, 1.1], [0.5, 0.5], ">= 0"),
    ([0.5, 0.6], [0.5, 0.5], "sum to 1"),
    ([[0.5, 0.5]], [[0.5, 0.5]], "1-D"),
    ([math.nan, 1.0], [0.5, 0.5], "nan"),
    ([0.5, 0.5], [0.5, math.inf], "nan or inf"),
])
def test_kl_rejects_bad_input_with_a_clear_message(p, q, message):
    with pytest.raises(ValueError, match=message):
        kl_divergence(np.array(p), np.array(q))


# -- the closed-form optimum -----------------------------------------------------------------------

def gradient_ascent(pi_ref, rewards, beta, steps=4000):
    """Maximise E[r] - β KL(softmax(z) ‖ π_ref) over logits z, from uniform logits.

    ∂F/∂z = π ⊙ (g - π·g) with g = r - β (log π - log π_ref): an independent reference. The
    curvature grows with β, so the step size is 1/β."""
    z, lr = np.zeros_like(pi_ref), 1.0 / beta
    for _ in range(steps):
        pi = softmax(z)
        g = rewards - beta * (np.log(pi) - np.log(pi_ref))
        z = z + lr * pi * (g - pi @ g)
    return softmax(z)


@pytest.mark.parametrize("beta", [0.1, 0.3, 1.0, 3.0])
def test_gradient_ascent_on_the_objective_lands_on_the_closed_form(beta):
    closed = kl_regularized_optimum(PI_REF, REWARDS, beta)
    ascended = gradient_ascent(PI_REF, REWARDS, beta)
    np.testing.assert_allclose(ascended, closed, atol=1e-4)
    assert kl_objective(closed, PI_REF, REWARDS, beta) >= kl_objective(ascended, PI_REF,
                                                                       REWARDS, beta)


@pytest.mark.parametrize("beta", [0.05, 0.5, 5.0])
def test_the_closed_form_beats_random_perturbations_of_itself(beta):
    rng = np.random.default_rng(1)
    closed = kl_regularized_optimum(PI_REF, REWARDS, beta)
    best = kl_objective(closed, PI_REF, REWARDS, beta)
    for scale in (1e-3, 1e-1, 1.0):
        for _ in range(100):
            perturbed = softmax(np.log(closed) + scale * rng.normal(size=closed.size))
            assert kl_objective(perturbed, PI_REF, REWARDS, beta) < best


@pytest.mark.parametrize("beta", [1e-4, 1e-2, 1.0, 1e2, 1e4])
@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e3, 1e8, 1e300])
def test_the_optimum_is_stable_for_any_beta_and_reward_scale(beta, scale):
    rewards = scale * np.array([1.0, -1.0, 0.5, 0.0, -0.7, 0.9, 0.2, 0.1, -0.3, 0.4])
    pi = kl_regularized_optimum(PI_REF, rewards, beta)
    assert np.all(np.isfinite(pi)) and np.all(pi >= 0)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)


def test_small_beta_concentrates_on_the_best_action_the_reference_can_produce():
    pi_ref = np.array([0.0, 0.5, 0.3, 0.2])
    rewards = np.array([10.0, 1.0, 2.0, 2.0])          # the global best is off-support
    pi = kl_regularized_optimum(pi_ref, rewards, 1e-4)
    assert pi[0] == 0.0                                # zero-probability actions stay zero
    np.testing.assert_allclose(pi, [0.0, 0.0, 0.6, 0.4], atol=1e-12)  # tie keeps π_ref's ratio


@pytest.mark.parametrize(("beta", "tolerance"), [(1e4, 1e-4), (1e12, 1e-12)])
def test_large_beta_returns_the_reference(beta, tolerance):
    np.testing.assert_allclose(kl_regularized_optimum(PI_REF, REWARDS, beta), PI_REF,
                               atol=tolerance)


def test_zero_probability_reference_actions_stay_zero_for_every_beta():
    pi_ref = np.array([0.4, 0.0, 0.6])
    for beta in np.geomspace(1e-4, 1e4, 9):
        assert kl_regularized_optimum(pi_ref, np.array([0.0, 5.0, 1.0]), beta)[1] == 0.0


@pytest.mark.parametrize(("beta", "message"), [(0.0, "beta"), (-1.0, "beta"),
                                               (math.inf, "beta"), (math.nan, "beta")])
def test_the_optimum_rejects_a_bad_beta(beta, message):
    with pytest.raises(ValueError, match=message):
        kl_regularized_optimum(PI_REF, REWARDS, beta)


# -- the sweep and the run -------------------------------------------------------------------------

def test_frontier_is_monotone_as_beta_decreases_reward_and_kl_both_rise():
    rows = kl.sweep(CONFIG)                                    # β ascending
    reward = np.array([r["expected_reward"] for r in rows])[::-1]   # now β descending
    divergence = np.array([r["kl"] for r in rows])[::-1]
    assert np.all(np.diff(reward) >= 0) and np.all(np.diff(divergence) >= 0)
    # Strictly rising wherever the policy is not yet saturated on the best style.
    moving = np.array([r["policy"].max() for r in rows])[::-1][1:] < 0.999
    assert np.all(np.diff(reward)[moving] > 0) and np.all(np.diff(divergence)[moving] > 0)
    assert reward[0] == pytest.approx(PI_REF @ REWARDS, abs=1e-3)  # β = 100: the reference
    assert reward[-1] == pytest.approx(REWARDS.max(), abs=1e-6)    # β = 0.01: the best style


def test_run_files_csv_and_summary():
    files = kl_report.build_run(CONFIG, note="test", record_git=False)
    assert set(files) == {"README.md", "kl_tradeoff.csv", "kl_tradeoff.png", "manifest.json",
                          "summary.json"}
    rows = list(csv.DictReader(io.StringIO(files["kl_tradeoff.csv"].decode())))
    assert len(rows) == CONFIG.num_betas
    for row in rows:
        probs = [float(row[f"top{i}_prob"]) for i in (1, 2, 3)]
        assert probs == sorted(probs, reverse=True)
        assert row["top1_action"] in CONFIG.actions
    summary = json.loads(files["summary.json"])
    assert summary["frontier_monotone"] is True
    assert summary["reference_expected_reward"] == pytest.approx(0.192)
    assert summary["kl_of_all_mass_on_best"] == pytest.approx(-math.log(0.06), abs=1e-6)


def test_cli_one_beta_sweep_and_out(capsys, tmp_path):
    assert main(["kl", "--beta", "0.1"]) == 0
    assert "KL(π_β ‖ π_ref)" in capsys.readouterr().out
    assert main(["kl", "--beta", "-1"]) == 2
    assert capsys.readouterr().err.startswith("course kl: error: beta")
    assert main(["kl", "--out", str(tmp_path / "run"), "--note", "cli test"]) == 0
    assert (tmp_path / "run" / "kl_tradeoff.csv").is_file()
    assert main(["kl", "--out", str(tmp_path / "run"), "--note", "again"]) == 2  # never overwrite
