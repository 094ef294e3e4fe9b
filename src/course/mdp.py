"""Loop C, second step: two decisions, one reward at the end. Who gets the credit?

The bandit judged one action by its own reward. Here the policy acts twice and the reward only
arrives after the second action, like a completion whose tokens are all chosen before the
verifier says anything. The whole world fits in a picture (deterministic transitions)::

                     ┌── a ──> reward 0.6
        ┌─ left ──> L┤
        │            └── b ──> reward 0.5
    start
        │            ┌── a ──> reward 1.0
        └─ right ─> R┤
                     └── b ──> reward 0.0

Step 1 chooses left or right at `start`; step 2 chooses a or b in the state that led to. The
return of an episode is its one terminal reward, G = r (no discount: the horizon is 2).

`left` is the safe-looking opening: whatever follows, it earns 0.5 or 0.6. `right` earns the
best reward of all, but only if step 2 follows it well. Judged under the starting policy
(uniform at step 2) left looks better (0.55 vs 0.50), so a learner must discover that the
value of step 1 depends on what step 2 will do. That is credit assignment.

The module reads top to bottom: the world and `MDPConfig`; the exact answers (enumerate the 4
trajectories, the hand-solved optimum, the exact policy gradient); REINFORCE over episodes,
where the end reward credits BOTH actions; the episode log; the run (`runs/run_004`); the
command line `course mdp`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from course.formatting import COLUMNS, fill, fixed, paragraph, wrap
from course.limits import count_problem
from course.policy import grad_log_prob, sample_actions, softmax

# -- 1. the world ---------------------------------------------------------------------------------

STATES = ("start", "L", "R")
"""Row i of a policy (and of θ) is the state STATES[i]. L and R are where left/right lead."""
ACTIONS = (("left", "right"), ("a", "b"), ("a", "b"))
"""The two action names available in each state."""
TERMINAL_REWARD = np.array([[0.6, 0.5],    # after left:  a, b
                            [1.0, 0.0]])   # after right: a, b
"""r(a1, a2): the only reward, paid at the end; row = step-1 action, column = step-2 action."""
TRAJECTORIES = tuple(itertools.product(range(2), range(2)))
"""All 4 episodes as (step-1 action, step-2 action)."""

MAX_EPISODES = 100_000
"""Upper bound on `episodes`, far above the canonical 300: every episode is kept for the log
and the curves (about 260 MB and 10 s for a saved run at this bound)."""
BASELINES = ("none", "running")
"""The baselines `MDPConfig.baseline` may name."""


def next_state(a1: int) -> int:
    """Deterministic transition: left (0) leads to L (row 1), right (1) to R (row 2)."""
    return 1 + a1


@dataclass(frozen=True)
class MDPConfig:
    """Everything that determines a training run. Defaults are the canonical run_004."""

    lr: float = 0.5
    """Learning rate on the logits, > 0. Useful range here: about 0.1 to 2."""
    episodes: int = 300
    """Number of episodes, one REINFORCE update each, 1 to `MAX_EPISODES`."""
    baseline: str = field(default="running", metadata={"choices": BASELINES})
    """`none` (b = 0) or `running` (running mean of past returns, starting at 0)."""
    baseline_alpha: float = 0.1
    """Decay α of the running mean, b <- (1 - α) b + α G, in (0, 1]."""
    seed: int = 0
    """Seed of the run's one random generator, >= 0."""

    def __post_init__(self) -> None:
        problems = []
        if not (math.isfinite(self.lr) and self.lr > 0):
            problems.append(f"lr: must be a finite number > 0, got {self.lr}")
        problems += filter(None, [count_problem("episodes", self.episodes, 1, MAX_EPISODES,
                                                "every episode is kept for the log")])
        if self.baseline not in BASELINES:
            problems.append(f"baseline: must be one of {', '.join(BASELINES)}, "
                            f"got {self.baseline!r}")
        if not 0.0 < self.baseline_alpha <= 1.0:
            problems.append(f"baseline_alpha: must be in (0, 1], got {self.baseline_alpha}")
        if self.seed < 0:
            problems.append(f"seed: must be >= 0, got {self.seed}")
        if problems:
            raise ValueError("; ".join(problems))


# -- 2. the exact answers ----------------------------------------------------------------------
# A policy is a (3, 2) array of probabilities, one row per state; θ is (3, 2) logits and the
# policy is softmax(θ) row by row.

def trajectory_prob(policy: np.ndarray, a1: int, a2: int) -> float:
    """P(τ) = π(a1 | start) · π(a2 | s1), with s1 = next_state(a1)."""
    return float(policy[0, a1] * policy[next_state(a1), a2])


def expected_return(policy: np.ndarray) -> float:
    """J(π) = Σ_τ P(τ) r(τ), exactly, by enumerating the 4 trajectories."""
    return sum(trajectory_prob(policy, a1, a2) * TERMINAL_REWARD[a1, a2]
               for a1, a2 in TRAJECTORIES)


def step1_values(policy: np.ndarray) -> np.ndarray:
    """Q^π(start, a1) = Σ_a2 π(a2 | s1) r(a1, a2): what each opening earns if step 2 keeps
    following `policy`; shape (2,)."""
    return np.array([policy[next_state(a1)] @ TERMINAL_REWARD[a1] for a1 in range(2)])


def optimal_values() -> dict[str, Any]:
    """The optimum, solved by hand backwards from the end (the tests re-derive it by brute force).

    Step 2 (the last decision, the reward is immediate):
        Q*(L, a) = 0.6, Q*(L, b) = 0.5   so V*(L) = 0.6, best a
        Q*(R, a) = 1.0, Q*(R, b) = 0.0   so V*(R) = 1.0, best a
    Step 1 (no reward yet; an opening is worth the value of where it leads):
        Q*(start, left) = V*(L) = 0.6,  Q*(start, right) = V*(R) = 1.0
        so V*(start) = 1.0 and the optimal policy is: right, then a (in either state).

    The trap: under the uniform policy Q(start, left) = (0.6 + 0.5)/2 = 0.55 beats
    Q(start, right) = (1.0 + 0.0)/2 = 0.50, and J(uniform) = 0.525. Right is only better once
    step 2 has learned to pick a.
    """
    return {
        "V": {"start": 1.0, "L": 0.6, "R": 1.0},
        "Q": {"start": {"left": 0.6, "right": 1.0},
              "L": {"a": 0.6, "b": 0.5},
              "R": {"a": 1.0, "b": 0.0}},
        "policy": {"start": "right", "L": "a", "R": "a"},
    }


def trajectory_score(policy: np.ndarray, a1: int, a2: int) -> np.ndarray:
    """∇θ log P(τ), shape (3, 2). log P(τ) = log π(a1 | start) + log π(a2 | s1), so the
    gradient is onehot(a1) - π(· | start) in row `start`, onehot(a2) - π(· | s1) in row s1,
    and 0 in the state this episode never visited."""
    score = np.zeros_like(policy)
    score[0] = grad_log_prob(a1, policy[0])
    score[next_state(a1)] = grad_log_prob(a2, policy[next_state(a1)])
    return score


def expected_gradient(theta: np.ndarray, baseline: float = 0.0) -> np.ndarray:
    """The REINFORCE update direction averaged exactly over the 4 trajectories:

        ∇θ J(θ) = Σ_τ P(τ) (r(τ) - b) ∇θ log P(τ)        (any constant b gives the same sum)
    """
    policy = softmax(theta)
    return sum(trajectory_prob(policy, a1, a2) * (TERMINAL_REWARD[a1, a2] - baseline)
               * trajectory_score(policy, a1, a2) for a1, a2 in TRAJECTORIES)


# -- 3. REINFORCE over episodes ------------------------------------------------------------------

@dataclass(frozen=True)
class Episode:
    """One episode and the update it caused."""

    a1: int                 # step-1 action at start (0 left, 1 right)
    a2: int                 # step-2 action in state next_state(a1) (0 a, 1 b)
    reward: float           # the terminal reward; the return G equals it
    baseline: float         # b used for this update
    theta: np.ndarray       # (3, 2) logits before the update
    new_theta: np.ndarray   # (3, 2) logits after it

    @property
    def advantage(self) -> float:
        return self.reward - self.baseline


def play_episode(theta: np.ndarray, baseline: float, lr: float,
                 rng: np.random.Generator) -> Episode:
    """Sample a1 at start, move to s1, sample a2, collect the end reward, update θ.

    The credit rule: the return G = r is applied to EVERY step's log-probability gradient,

        θ <- θ + lr (G - b) [∇θ log π(a1 | start) + ∇θ log π(a2 | s1)]

    so the step-1 action is reinforced or suppressed by a reward it only indirectly caused.
    """
    policy = softmax(theta)
    a1 = int(sample_actions(policy[0], 1, rng)[0])
    a2 = int(sample_actions(policy[next_state(a1)], 1, rng)[0])
    reward = float(TERMINAL_REWARD[a1, a2])
    new_theta = theta + lr * (reward - baseline) * trajectory_score(policy, a1, a2)
    return Episode(a1, a2, reward, baseline, theta, new_theta)


def train(config: MDPConfig, rng: np.random.Generator) -> list[Episode]:
    """`config.episodes` REINFORCE updates from θ = 0 (uniform in every state)."""
    theta, running_mean = np.zeros((3, 2)), 0.0
    history = []
    for _ in range(config.episodes):
        baseline = running_mean if config.baseline == "running" else 0.0
        episode = play_episode(theta, baseline, config.lr, rng)
        history.append(episode)
        theta = episode.new_theta
        running_mean = (1 - config.baseline_alpha) * running_mean \
            + config.baseline_alpha * episode.reward        # b <- (1-α) b + α G
    return history


# -- 4. the episode log ---------------------------------------------------------------------------

CREDIT_RULE = paragraph("Credit rule: the return G is the end reward; A = G - b multiplies the "
                        "log-prob gradient of BOTH actions, the step-1 choice at start and the "
                        "step-2 choice after it.")

CHECKPOINT_EVERY = 50

EPISODE_LEGEND = paragraph(
    "Columns: ep = episode; path = the two actions taken from start; G = the end reward; "
    "b = baseline; A = G - b; step 1, step 2 = the probability of the action chosen at that "
    "step (at start, then in L or R), before -> after the update.")
"""Printed once, above the episode table."""

_PATH = 21   # len("start -right-> R -a->")
EPISODE_HEADER = (f"{'ep':>3}  {'path':<{_PATH}}  {'G':>3}  {'b':>5}  {'A':>6}  "
                  f"{'step 1':<14}  step 2")


def _trajectory(a1: int, a2: int) -> str:
    s1 = next_state(a1)
    return f"start -{ACTIONS[0][a1]}-> {STATES[s1]} -{ACTIONS[s1][a2]}->"


def _credit_note(episode: Episode) -> str | None:
    """Point out when the shared credit lands on the step-1 action for the 'wrong' reason."""
    best_a1 = ACTIONS[0].index(optimal_values()["policy"]["start"])
    first = ACTIONS[0][episode.a1]
    if episode.a1 == best_a1 and episode.advantage < 0:
        return (f"'{first}' is blamed for what step 2 did: the end reward cannot say which "
                "step went wrong")
    if episode.a1 != best_a1 and episode.advantage > 0:
        return (f"'{first}' is reinforced because G beat b, although the other opening could "
                "have earned more")
    return None


def describe_episode(number: int, episode: Episode) -> str:
    """One episode as a row of the episode table (`EPISODE_HEADER`, `EPISODE_LEGEND`):
    trajectory, reward, baseline, advantage, and what the update did to both chosen actions'
    probabilities; then a wrapped `note:` when the shared credit misleads."""
    before, after = softmax(episode.theta), softmax(episode.new_theta)
    s1 = next_state(episode.a1)
    line = (f"{number:>3}  {_trajectory(episode.a1, episode.a2):<{_PATH}}  "
            f"{episode.reward:3.1f}  {fixed(episode.baseline):>5}  "
            f"{fixed(episode.advantage, signed=True):>6}  "
            f"{fixed(before[0, episode.a1])} -> {fixed(after[0, episode.a1])}  "
            f"{fixed(before[s1, episode.a2])} -> {fixed(after[s1, episode.a2])}")
    note = _credit_note(episode)
    return "\n".join([line, *(wrap(note, indent="     note: ") if note else [])])


def checkpoint(number: int, theta: np.ndarray) -> str:
    """Two lines: the exact expected return after `number` episodes, then the probabilities of
    the three decisions the optimal policy takes."""
    policy = softmax(theta)
    return (f"-- after {number} episodes: exact J = {fixed(expected_return(policy))}\n"
            f"   P(right|start) = {fixed(policy[0, 1])}, P(a|L) = {fixed(policy[1, 0])}, "
            f"P(a|R) = {fixed(policy[2, 0])}")


def world_lines() -> list[str]:
    lines = ["Two-step MDP, reward only at the end (deterministic transitions):"]
    for a1 in range(2):
        s1 = next_state(a1)
        ends = " | ".join(f"-{ACTIONS[s1][a2]}-> {TERMINAL_REWARD[a1, a2]:.1f}"
                          for a2 in range(2))
        lines.append(f"  start -{ACTIONS[0][a1]}-> {STATES[s1]}: {ends}")
    return lines


def toy_mdp_log(history: list[Episode], config: MDPConfig, shown: int | None = None) -> str:
    """Every episode on one line (plus a note when the credit is misleading) and a checkpoint
    with the exact expected return every CHECKPOINT_EVERY episodes. With `shown`, only the
    first `shown` episodes are printed; the checkpoints still cover the whole run."""
    lines = [*world_lines(),
             *fill("Settings: ", [f"lr = {config.lr},", f"baseline = {config.baseline},",
                                  f"episodes = {config.episodes},", f"seed = {config.seed};",
                                  "θ starts at 0 (uniform everywhere)."], COLUMNS, gap=" "),
             CREDIT_RULE, "", checkpoint(0, history[0].theta), EPISODE_LEGEND, EPISODE_HEADER]
    for number, episode in enumerate(history, start=1):
        if shown is None or number <= shown:
            lines.append(describe_episode(number, episode))
        if number % CHECKPOINT_EVERY == 0 or number == len(history):
            lines.append(checkpoint(number, episode.new_theta))
    return "\n".join(lines) + "\n"
