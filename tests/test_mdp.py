"""The two-step MDP: exact values by enumeration vs the hand solution, the exact policy gradient
vs finite differences, and REINFORCE with a delayed reward finding the right opening."""

import itertools
import re

import numpy as np
import pytest

from course import mdp
from course.cli import main
from course.mdp import (
    ACTIONS,
    STATES,
    TERMINAL_REWARD,
    MDPConfig,
    expected_gradient,
    expected_return,
    optimal_values,
    step1_values,
    train,
)
from course.policy import softmax
from course.reports import mdp as mdp_report


def deterministic_policy(choice):
    """A (3, 2) policy that picks action choice[i] in state i with probability 1."""
    return np.eye(2)[list(choice)]


def test_hand_solved_values_match_brute_force_over_all_deterministic_policies():
    hand = optimal_values()
    returns = {choice: expected_return(deterministic_policy(choice))
               for choice in itertools.product(range(2), repeat=3)}
    best_return = max(returns.values())
    assert best_return == hand["V"]["start"]
    # Every deterministic policy reaching the optimum opens with the hand-solved action and
    # picks the hand-solved action in the state it then reaches.
    for choice, value in returns.items():
        if value == best_return:
            assert ACTIONS[0][choice[0]] == hand["policy"]["start"]
            reached = STATES[mdp.next_state(choice[0])]
            assert ACTIONS[1 + choice[0]][choice[1 + choice[0]]] == hand["policy"][reached]
    # Backward induction, written independently of the module.
    for a1 in range(2):
        state = STATES[mdp.next_state(a1)]
        for a2 in range(2):
            assert hand["Q"][state][ACTIONS[1][a2]] == TERMINAL_REWARD[a1, a2]
        assert hand["V"][state] == TERMINAL_REWARD[a1].max()
        assert hand["Q"]["start"][ACTIONS[0][a1]] == TERMINAL_REWARD[a1].max()
    # The hand-solved optimal policy, run through the enumeration, earns V*(start).
    optimal = np.array([[0, 1], [1, 0], [1, 0]], dtype=float)
    assert expected_return(optimal) == hand["V"]["start"]


@pytest.mark.parametrize(("policy", "expected"), [
    (np.full((3, 2), 0.5), 0.525),                                   # uniform: (0.55 + 0.5)/2
    (np.array([[0, 1], [1, 0], [1, 0]]), 1.0),                       # optimal: right, a
    (np.array([[1, 0], [1, 0], [1, 0]]), 0.6),                       # safe: left, a
    (np.array([[0, 1], [1, 0], [0, 1]]), 0.0),                       # right, then b
    (np.array([[0.75, 0.25], [0.5, 0.5], [0.8, 0.2]]), 0.6125),      # 0.75·0.55 + 0.25·0.8
])
def test_expected_return_of_specific_policies(policy, expected):
    assert expected_return(np.asarray(policy, dtype=float)) == pytest.approx(expected)


def test_under_the_uniform_policy_the_wrong_opening_looks_better():
    q = step1_values(np.full((3, 2), 0.5))
    np.testing.assert_allclose(q, [0.55, 0.5])
    assert q[0] > q[1]                                               # left looks better...
    hand = optimal_values()["Q"]["start"]
    assert hand["right"] > hand["left"]                              # ...but right is optimal


@pytest.mark.parametrize("theta", [np.zeros((3, 2)),
                                   np.array([[0.3, -0.4], [1.0, 0.2], [-0.5, 0.7]]),
                                   np.array([[2.0, 0.0], [0.0, 3.0], [1.0, -1.0]])])
@pytest.mark.parametrize("baseline", [0.0, 0.7])
def test_exact_reinforce_gradient_matches_finite_differences(theta, baseline):
    eps, numeric = 1e-6, np.zeros_like(theta)
    for index in np.ndindex(theta.shape):
        step = np.zeros_like(theta)
        step[index] = eps
        numeric[index] = (expected_return(softmax(theta + step))
                          - expected_return(softmax(theta - step))) / (2 * eps)
    np.testing.assert_allclose(expected_gradient(theta, baseline), numeric, atol=1e-8)


def test_sampled_episode_updates_average_to_the_exact_gradient():
    theta, lr, n = np.array([[0.3, -0.4], [1.0, 0.2], [-0.5, 0.7]]), 0.1, 8000
    rng = np.random.default_rng(5)
    updates = np.array([mdp.play_episode(theta, 0.5, lr, rng).new_theta - theta
                        for _ in range(n)])
    standard_error = updates.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(updates.mean(axis=0) - lr * expected_gradient(theta)) < 4 * standard_error)


def test_the_end_reward_credits_both_step_actions():
    theta = np.zeros((3, 2))
    episode = mdp.play_episode(theta, 0.0, 1.0, np.random.default_rng(0))
    moved = np.abs(episode.new_theta - theta).sum(axis=1) > 0
    visited = [0, mdp.next_state(episode.a1)]
    assert episode.reward > 0                   # so the update is not zero
    assert moved[visited].all() and moved.sum() == 2


def test_training_under_the_canonical_seed_learns_the_optimal_policy():
    config = MDPConfig()
    history = train(config, np.random.default_rng(config.seed))
    final = softmax(history[-1].new_theta)
    assert final[0, 1] > 0.95                                   # P(right | start)
    assert expected_return(final) > 0.95
    assert mdp_report.summarise(config, history)["learned_greedy_matches_optimal"]


def test_training_finds_the_right_opening_across_seeds():
    finals = [softmax(train(MDPConfig(seed=s), np.random.default_rng(s))[-1].new_theta)[0, 1]
              for s in range(10)]
    assert sum(p > 0.9 for p in finals) >= 9


def test_log_shows_every_episode_and_explains_misleading_credit():
    config = MDPConfig(episodes=60)
    history = train(config, np.random.default_rng(0))
    log = mdp.toy_mdp_log(history, config)
    assert log.count(mdp.CREDIT_RULE) == 1
    assert log.count(mdp.EPISODE_LEGEND) == log.count(mdp.EPISODE_HEADER) == 1
    rows = [line for line in log.splitlines() if re.match(r" *\d+  start -", line)]
    assert [int(row.split()[0]) for row in rows] == list(range(1, 61))
    blamed = [e for e in history if e.a1 == 1 and e.reward - e.baseline < 0]
    assert log.count("is blamed for what step 2 did") == len(blamed) > 0
    assert "-- after 50 episodes: exact J" in log
    assert max(map(len, log.splitlines())) <= 80


def test_build_run_summary_quotes_exact_returns():
    files = mdp_report.build_run(MDPConfig(), note="test", record_git=False)
    assert set(files) == {"README.md", "learning_curve.png", "manifest.json", "summary.json",
                          "toy_mdp_log.txt"}
    import json
    summary = json.loads(files["summary.json"])
    assert summary["before"]["expected_return"] == 0.525
    assert summary["after"]["expected_return"] > 0.95
    assert summary["hand_solved"] == optimal_values()


def test_cli_prints_the_log_and_rejects_bad_settings(capsys):
    assert main(["mdp", "--episodes", "20"]) == 0
    out = capsys.readouterr().out
    assert " 10  start -" in out and " 11  start -" not in out and "after 20 episodes" in out
    assert main(["mdp", "--lr", "-1"]) == 2
    assert capsys.readouterr().err.startswith("course mdp: error: lr")
