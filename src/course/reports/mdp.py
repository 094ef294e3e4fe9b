"""The two-step MDP run (`runs/run_004`): every episode's credit, the learning curve, the
hand-solved optimum beside what REINFORCE learned."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from course.formatting import rounded
from course.jsonfiles import json_bytes
from course.mdp import (
    ACTIONS,
    CHECKPOINT_EVERY,
    STATES,
    TERMINAL_REWARD,
    Episode,
    MDPConfig,
    expected_return,
    next_state,
    optimal_values,
    step1_values,
    toy_mdp_log,
    train,
    world_lines,
)
from course.policy import softmax
from course.reports.png import figure_png, new_figure, styled
from course.runs import RunFiles, manifest

P_RIGHT_TARGET = 0.9



def _policy_record(policy: np.ndarray) -> dict[str, dict[str, float]]:
    return {state: {name: rounded(p) for name, p in zip(ACTIONS[i], policy[i], strict=True)}
            for i, state in enumerate(STATES)}


def _greedy(policy: np.ndarray) -> dict[str, str]:
    return {state: ACTIONS[i][int(np.argmax(policy[i]))] for i, state in enumerate(STATES)}


def summarise(config: MDPConfig, history: list[Episode]) -> dict[str, Any]:
    before, after = softmax(history[0].theta), softmax(history[-1].new_theta)
    p_right = np.array([softmax(e.new_theta)[0, 1] for e in history])
    above = np.flatnonzero(p_right > P_RIGHT_TARGET)
    optimum = optimal_values()
    return {
        "kind": "two_step_mdp",
        "terminal_reward": {ACTIONS[0][a1]: {ACTIONS[next_state(a1)][a2]:
                                             float(TERMINAL_REWARD[a1, a2]) for a2 in range(2)}
                            for a1 in range(2)},
        "horizon": 2,
        "hand_solved": optimum,
        "uniform_step1_values": dict(zip(ACTIONS[0], map(rounded, step1_values(before)),
                                         strict=True)),
        "before": {"expected_return": rounded(expected_return(before)),
                   "policy": _policy_record(before)},
        "after": {"expected_return": rounded(expected_return(after)),
                  "policy": _policy_record(after), "greedy_policy": _greedy(after)},
        "learned_greedy_matches_optimal": _greedy(after) == optimum["policy"],
        "episodes": config.episodes,
        "mean_sampled_return": rounded(np.mean([e.reward for e in history])),
        "first_episode_p_right_above_0.9": int(above[0]) + 1 if above.size else None,
    }


@styled
def learning_curve_png(history: list[Episode]) -> bytes:
    policies = [softmax(history[0].theta)] + [softmax(e.new_theta) for e in history]
    fig = new_figure(4.4)
    ax = fig.add_subplot()
    ax.plot([expected_return(p) for p in policies], "k", lw=2.2,
            label="exact expected return $J$")
    ax.plot([p[0, 1] for p in policies],
            label=r"$P(\mathrm{right} \mid \mathrm{start})$  (step 1)")
    ax.plot([p[2, 0] for p in policies], label=r"$P(a \mid R)$  (step 2 after right)")
    ax.plot([p[1, 0] for p in policies], label=r"$P(a \mid L)$  (step 2 after left)")
    ax.axhline(optimal_values()["V"]["start"], color="grey", ls=":",
               label=r"$V^*(\mathrm{start}) = 1.0$")
    ax.set(xlabel="episode", ylabel="probability / return", ylim=(0, 1.05),
           title="Two-step MDP: REINFORCE with the end reward\ncrediting both steps")
    ax.legend(loc="lower right")
    return figure_png(fig)


def render_readme(config: MDPConfig, summary: dict[str, Any]) -> str:
    q = summary["uniform_step1_values"]
    after = summary["after"]
    first = summary["first_episode_p_right_above_0.9"]
    reached = (f"P(right | start) first exceeds 0.9 after episode {first}" if first is not None
               else "P(right | start) never exceeds 0.9")
    return f"""# Two-step MDP: a delayed reward and credit assignment (Loop C)

```
{chr(10).join(world_lines())}
```

Two decisions, then one reward. The **return** G of an episode is everything it earns, here
the single end reward; the **horizon** is 2: a consequence of step 1 shows up only after step
2 has also been chosen.

## Why the step-1 action matters although it earns nothing by itself

Step 1 pays no reward, but it decides which rewards are reachable: after `left` the best is
0.6, after `right` it is 1.0. Hand-solved (see `summary.json`, `hand_solved`):
V*(L) = 0.6, V*(R) = 1.0, so Q*(start, left) = 0.6, Q*(start, right) = 1.0, and the optimal
policy is right, then a. Under the starting uniform policy, though, left looks better
({q['left']:.3f} vs {q['right']:.3f}): whether `right` is a good opening depends on what step
2 will do. REINFORCE handles this by letting the end reward credit both actions:
`θ += lr × (G − b) × [∇log π(a1 | start) + ∇log π(a2 | s1)]`. A single episode can blame the
opening for a bad second move (see the `note:` lines in `toy_mdp_log.txt`); only the average
over many episodes sorts out which step deserved it.

## Result (lr = {config.lr}, baseline = {config.baseline}, {config.episodes} episodes)

Exact expected return: {summary['before']['expected_return']:.3f} before training (uniform),
{after['expected_return']:.3f} after (optimum 1.0). Learned greedy policy:
start → {after['greedy_policy']['start']}, L → {after['greedy_policy']['L']},
R → {after['greedy_policy']['R']}; {reached}.

![The expected return and the probability of each decision, episode by episode](learning_curve.png)

## The token view

A completion is the same picture stretched out: hundreds of token choices, then one verifier
reward at the end. Every token's log-probability gets the same advantage, so an early token
that set up a correct answer is reinforced, and so is a harmless token that happened to sit
in a lucky completion. Long horizons and sparse end rewards make this credit noisy, which is
one reason real LLM training needs many samples.

## Files

`toy_mdp_log.txt` (every episode: trajectory, G, b, A, and how the step-1 and step-2
probabilities moved; a checkpoint with the exact J every {CHECKPOINT_EVERY} episodes),
`learning_curve.png`, `summary.json`, `manifest.json`.
Reproduce: `course runs regenerate run_004` or `course mdp --out runs/my_mdp --note "..."`.
"""


def build_run(config: MDPConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Train once from `config.seed` (the run's one generator) and return the run's files."""
    history = train(config, np.random.default_rng(config.seed))
    summary = summarise(config, history)
    run_manifest = manifest(kind="mdp", note=note, config=asdict(config), seed=config.seed,
                            record_git=record_git)
    return {
        "README.md": render_readme(config, summary).encode("utf-8"),
        "learning_curve.png": learning_curve_png(history),
        "manifest.json": json_bytes(run_manifest),
        "summary.json": json_bytes(summary),
        "toy_mdp_log.txt": toy_mdp_log(history, config).encode("utf-8"),
    }
