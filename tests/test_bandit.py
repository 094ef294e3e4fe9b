"""The REINFORCE bandit, checked against the exact gradient and against what the lesson claims."""

import itertools

import numpy as np
import pytest

from course import bandit
from course.bandit import (
    ADVANTAGE_SIGN_NOTE,
    BanditConfig,
    expected_reward,
    expected_update,
    mean_gradient,
    reinforce_step,
    train,
)
from course.cli import main
from course.paths import RUNS_DIR
from course.policy import softmax
from course.reports import bandit as bandit_report
from course.runs import read_json

REWARD_MEANS = np.array(BanditConfig().reward_probs)
THETAS = [np.zeros(4), np.array([0.5, -0.2, 0.1, 0.0]), np.array([2.0, 1.0, -1.0, 0.3]),
          np.array([-3.0, 4.0, 0.0, 1.5])]


def numerical_gradient(f, theta, eps=1e-6):
    """Central finite differences: an independent reference for ∇θ J."""
    grad = np.zeros_like(theta)
    for i in range(theta.size):
        step = np.zeros_like(theta)
        step[i] = eps
        grad[i] = (f(theta + step) - f(theta - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("theta", THETAS)
@pytest.mark.parametrize("baseline", [0.0, 0.6, -1.3])
def test_expected_update_is_lr_times_the_gradient_of_expected_reward(theta, baseline):
    lr = 0.3
    update = expected_update(theta, REWARD_MEANS, baseline, lr)
    finite_diff = numerical_gradient(lambda t: expected_reward(t, REWARD_MEANS), theta)
    pi = softmax(theta)
    closed_form = pi * (REWARD_MEANS - pi @ REWARD_MEANS)           # π ⊙ (r̄ - J)
    np.testing.assert_allclose(update, lr * finite_diff, atol=1e-8)
    np.testing.assert_allclose(update, lr * closed_form, atol=1e-12)


def test_expected_update_broadcasts_over_learners():
    thetas = np.stack(THETAS)
    baselines = np.array([0.0, 0.5, 1.0, -2.0])
    together = expected_update(thetas, REWARD_MEANS, baselines, 0.1)
    one_by_one = [expected_update(t, REWARD_MEANS, b, 0.1) for t, b in zip(thetas, baselines,
                                                                           strict=True)]
    np.testing.assert_allclose(together, one_by_one)


@pytest.mark.parametrize("method", ["none", "running"])
def test_monte_carlo_mean_of_sampled_updates_approaches_the_expected_update(method):
    theta, b, learners = np.array([0.5, -0.2, 0.1, 0.0]), 0.4, 40_000
    config = BanditConfig(baseline=method, lr=0.5)
    step = reinforce_step(np.tile(theta, (learners, 1)), np.full(learners, b), config,
                          np.random.default_rng(1))
    updates = step.new_theta - step.theta
    used_baseline = b if method == "running" else 0.0
    expected = expected_update(theta, REWARD_MEANS, used_baseline, config.lr)
    standard_error = updates.std(axis=0) / np.sqrt(learners)
    assert np.all(np.abs(updates.mean(axis=0) - expected) < 4 * standard_error)


@pytest.mark.parametrize("batch_size", [2, 3])
@pytest.mark.parametrize("theta", THETAS[:3])
def test_batch_mean_baseline_shrinks_the_expected_step_by_one_minus_one_over_b(theta,
                                                                               batch_size):
    # Exact: enumerate every batch of actions; given the actions the update is linear in the
    # rewards, so their expectation can replace them.
    pi, k = softmax(theta), len(REWARD_MEANS)
    expected = np.zeros(k)
    for batch in itertools.product(range(k), repeat=batch_size):
        prob = np.prod(pi[list(batch)])
        r = REWARD_MEANS[list(batch)]
        for i, a in enumerate(batch):
            expected += prob * (r[i] - r.mean()) * (np.eye(k)[a] - pi) / batch_size
    config = BanditConfig(baseline="batch", batch_size=batch_size)
    np.testing.assert_allclose(expected, mean_gradient(theta, config), atol=1e-12)
    np.testing.assert_allclose(expected, (1 - 1 / batch_size)
                               * expected_update(theta, REWARD_MEANS, 0.0, 1.0), atol=1e-12)


def test_training_raises_p_best_past_0_9_under_the_canonical_seed():
    config = BanditConfig()
    history = train(config, np.random.default_rng(config.seed))
    p_best = [s.new_probs[config.best_action] for s in history]
    assert history[0].probs[config.best_action] == pytest.approx(0.25)
    assert max(p_best[:100]) > 0.9          # within 100 steps
    assert p_best[-1] > 0.95                # and it stays there
    assert expected_reward(history[-1].new_theta, REWARD_MEANS) > 0.85


def test_the_sign_of_the_advantage_decides_whether_the_sampled_action_goes_up():
    config = BanditConfig(steps=60)
    for step in train(config, np.random.default_rng(3)):
        a, advantage = step.actions[0], step.advantages[0]
        change = step.new_probs[a] - step.probs[a]
        assert np.sign(change) == np.sign(advantage)


def test_a_baseline_reduces_gradient_noise_and_speeds_up_learning():
    config = BanditConfig(steps=120, ablation_learners=100)
    results = bandit.ablation(config, np.random.default_rng(7))
    noise = {m: r["variance"].mean() for m, r in results.items()}
    assert noise["running"] < 0.7 * noise["none"]
    # As measured the batch mean looks the least noisy, but its step is (1 - 1/B) shorter:
    # per unit of average step it is noisier than the running mean (issue 31, error 5).
    assert noise["batch"] < noise["running"]
    per_unit_step = {m: n["per_unit_step_mean"]
                     for m, n in bandit_report.noise_per_unit_step(config, results).items()}
    assert list(per_unit_step) == ["running", "batch", "none"]
    p50 = {m: r["p_best"][50].mean() for m, r in results.items()}
    assert p50["running"] > p50["none"]


def test_noise_per_unit_step_divides_out_the_batch_means_shorter_step():
    config = BanditConfig(steps=20, ablation_learners=10)
    results = bandit.ablation(config, np.random.default_rng(3))
    compared = bandit_report.noise_per_unit_step(config, results)
    shrink = 1 - 1 / config.ablation_batch_size
    assert {m: n["scale"] for m, n in compared.items()} == {"none": 1.0, "running": 1.0,
                                                            "batch": shrink}
    for method, noise in compared.items():
        np.testing.assert_allclose(noise["per_unit_step"] * noise["scale"] ** 2,
                                   results[method]["variance"])
    means = [noise["per_unit_step_mean"] for noise in compared.values()]
    assert means == sorted(means)                          # least noisy first


def test_the_ablation_plot_ranks_the_noise_as_run_003_summary_and_readme_do():
    """Issue 31, error 5: run_003's plot ranked batch (0.0079) below running (0.0102) by the
    noise as measured, while the lesson divides out the batch mean's shorter step. The plot's
    noise legend, least noisy first, now gives the summary's noise per unit of average step,
    in the summary's order; the batch mean's noise as measured is a separate, dotted entry
    that says its step is scaled. The README ranks the same way."""
    config = BanditConfig()
    rng = np.random.default_rng(config.seed)
    train(config, rng)                      # the single learner draws first, as in build_run
    results = bandit.ablation(config, rng)
    methods = read_json(RUNS_DIR / "run_003", "summary.json")["ablation"]["methods"]
    ranked = sorted(methods, key=lambda m: methods[m]["gradient_variance_per_unit_step"])
    assert ranked == ["running", "batch", "none"]

    legend = bandit_report.ablation_figure(config, results).axes[1].get_legend()
    drawn = [text.get_text() for text in legend.get_texts()]
    per_unit = [label for label in drawn if "as measured," not in label]
    assert [label.split(":")[0] for label in per_unit] == ranked
    for label in per_unit:
        method = label.split(":")[0]
        assert f"mean {methods[method]['gradient_variance_per_unit_step']:.4f}" in label
    shrink = 1 - 1 / config.ablation_batch_size
    assert methods["batch"]["step_scale"] == shrink
    assert methods["batch"]["gradient_variance_per_unit_step"] == pytest.approx(
        methods["batch"]["gradient_variance"] / shrink ** 2, abs=1e-5)
    (measured,) = [label for label in drawn if "as measured," in label]
    assert measured == (f"batch as measured, steps $\\times$ {shrink:g}: "
                        f"mean {methods['batch']['gradient_variance']:.4f}")

    readme = (RUNS_DIR / "run_003" / "README.md").read_text(encoding="utf-8")
    assert f"least noisy first: {', '.join(ranked)}." in readme


def test_running_baseline_follows_its_formula():
    config = BanditConfig(steps=5, baseline_alpha=0.25)
    history = train(config, np.random.default_rng(0))
    b = 0.0
    for step in history:
        assert step.baseline == pytest.approx(b)
        b = 0.75 * b + 0.25 * step.rewards.mean()                 # b <- (1-α) b + α r


def test_slow_motion_log_explains_the_advantage_sign_once_and_tells_every_step():
    config = BanditConfig(steps=10)
    log = bandit.slow_motion_log(train(config, np.random.default_rng(0)), config)
    assert log.count(ADVANTAGE_SIGN_NOTE) == 1
    assert log.count("How to read the advantage") == 1
    for n in range(1, 11):
        assert f"\nstep {n}\n" in log
    assert log.count("advantage  A = r - b") == 10


def test_build_run_files_are_complete():
    config = BanditConfig(steps=30, ablation_learners=4)
    files = bandit_report.build_run(config, note="test", record_git=False)
    assert set(files) == {"README.md", "bandit_ablation.png", "bandit_train_log.txt",
                          "learning_curve.png", "manifest.json", "summary.json"}
    log = files["bandit_train_log.txt"].decode()
    assert log.count(ADVANTAGE_SIGN_NOTE) == 1
    assert "Toy tax" in files["README.md"].decode()


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"baseline": "batch", "batch_size": 1}, "batch_size"),
    ({"reward_probs": (0.5, 1.5, 0.1, 0.1)}, "reward_probs"),
    ({"actions": ("a", "b")}, "actions"),
    ({"lr": 0.0}, "lr"),
    ({"baseline": "median"}, "baseline"),
])
def test_config_rejects_bad_values_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        BanditConfig(**kwargs)


def test_cli_slow_motion_prints_the_story(capsys):
    assert main(["bandit", "--slow-motion", "--steps", "3", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count(ADVANTAGE_SIGN_NOTE) == 1 and "step 3" in out


def test_cli_fast_mode_logs_every_step_on_request(capsys):
    assert main(["bandit", "--steps", "40", "--log-every-step"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("step ")]
    assert len(lines) == 40
    assert main(["bandit", "--steps", "40"]) == 0
    out = capsys.readouterr().out
    assert len([x for x in out.splitlines() if x.startswith("step ")]) < 15
    # the design's "one-time advantage sign interpretation line at the top", in fast mode too
    assert out.count(ADVANTAGE_SIGN_NOTE) == 1
    assert out.index(ADVANTAGE_SIGN_NOTE) < out.index("step ")


def test_cli_rejects_a_batch_baseline_without_a_batch(capsys):
    assert main(["bandit", "--baseline", "batch"]) == 2
    assert "batch_size" in capsys.readouterr().err
