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
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from course.bandit import grad_log_prob, sample_actions, softmax
from course.data import display_path
from course.runs import (
    RunFiles,
    add_output_arguments,
    check_output_arguments,
    figure_png,
    json_bytes,
    manifest,
    write_run,
)

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


def next_state(a1: int) -> int:
    """Deterministic transition: left (0) leads to L (row 1), right (1) to R (row 2)."""
    return 1 + a1


@dataclass(frozen=True)
class MDPConfig:
    """Everything that determines a training run. Defaults are the canonical run_004."""

    lr: float = 0.5
    """Learning rate on the logits, > 0. Useful range here: about 0.1 to 2."""
    episodes: int = 300
    """Number of episodes, one REINFORCE update each, >= 1."""
    baseline: str = "running"
    """`none` (b = 0) or `running` (running mean of past returns, starting at 0)."""
    baseline_alpha: float = 0.1
    """Decay α of the running mean, b <- (1 - α) b + α G, in (0, 1]."""
    seed: int = 0
    """Seed of the run's one random generator, >= 0."""

    def __post_init__(self) -> None:
        problems = []
        if not self.lr > 0:
            problems.append(f"lr: must be > 0, got {self.lr}")
        if self.episodes < 1:
            problems.append(f"episodes: must be >= 1, got {self.episodes}")
        if self.baseline not in ("none", "running"):
            problems.append(f"baseline: must be none or running, got {self.baseline!r}")
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

CREDIT_RULE = ("Credit rule: the return G is the end reward; A = G - b multiplies the "
               "log-prob gradient of BOTH actions, the step-1 choice at start and the step-2 "
               "choice after it.")

CHECKPOINT_EVERY = 50


def _num(x: float, signed: bool = False) -> str:
    x = round(float(x), 3) + 0.0
    return f"{x:+.3f}" if signed else f"{x:.3f}"


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
    """One episode: trajectory, reward, advantage, and what it did to both decisions."""
    before, after = softmax(episode.theta), softmax(episode.new_theta)
    s1 = next_state(episode.a1)
    first, second = ACTIONS[0][episode.a1], ACTIONS[s1][episode.a2]
    line = (f"ep {number:>3}  {_trajectory(episode.a1, episode.a2)} G = {episode.reward:.1f}  "
            f"b = {_num(episode.baseline)}  A = {_num(episode.advantage, signed=True)}  |  "
            f"step 1: P({first}|start) {_num(before[0, episode.a1])} -> "
            f"{_num(after[0, episode.a1])}  step 2: P({second}|{STATES[s1]}) "
            f"{_num(before[s1, episode.a2])} -> {_num(after[s1, episode.a2])}")
    note = _credit_note(episode)
    return line + (f"\n        note: {note}" if note else "")


def checkpoint(number: int, theta: np.ndarray) -> str:
    policy = softmax(theta)
    return (f"-- after {number} episodes: exact J = {_num(expected_return(policy))}, "
            f"P(right|start) = {_num(policy[0, 1])}, P(a|L) = {_num(policy[1, 0])}, "
            f"P(a|R) = {_num(policy[2, 0])}")


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
             f"Settings: lr = {config.lr}, baseline = {config.baseline}, episodes = "
             f"{config.episodes}, seed = {config.seed}; θ starts at 0 (uniform everywhere).",
             CREDIT_RULE, "", checkpoint(0, history[0].theta)]
    for number, episode in enumerate(history, start=1):
        if shown is None or number <= shown:
            lines.append(describe_episode(number, episode))
        if number % CHECKPOINT_EVERY == 0 or number == len(history):
            lines.append(checkpoint(number, episode.new_theta))
    return "\n".join(lines) + "\n"


# -- 5. the run ---------------------------------------------------------------------------------

P_RIGHT_TARGET = 0.9


def _r(x: float) -> float:
    return round(float(x), 4) + 0.0


def _policy_record(policy: np.ndarray) -> dict[str, dict[str, float]]:
    return {state: {name: _r(p) for name, p in zip(ACTIONS[i], policy[i], strict=True)}
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
        "uniform_step1_values": dict(zip(ACTIONS[0], map(_r, step1_values(before)),
                                         strict=True)),
        "before": {"expected_return": _r(expected_return(before)),
                   "policy": _policy_record(before)},
        "after": {"expected_return": _r(expected_return(after)),
                  "policy": _policy_record(after), "greedy_policy": _greedy(after)},
        "learned_greedy_matches_optimal": _greedy(after) == optimum["policy"],
        "episodes": config.episodes,
        "mean_sampled_return": _r(np.mean([e.reward for e in history])),
        "first_episode_p_right_above_0.9": int(above[0]) + 1 if above.size else None,
    }


def learning_curve_png(history: list[Episode]) -> bytes:
    import matplotlib.pyplot as plt

    policies = [softmax(history[0].theta)] + [softmax(e.new_theta) for e in history]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([expected_return(p) for p in policies], "k", lw=2, label="exact expected return J")
    ax.plot([p[0, 1] for p in policies], label="P(right | start)  (step 1)")
    ax.plot([p[2, 0] for p in policies], label="P(a | R)  (step 2 after right)")
    ax.plot([p[1, 0] for p in policies], label="P(a | L)  (step 2 after left)")
    ax.axhline(optimal_values()["V"]["start"], color="grey", ls=":", label="V*(start) = 1.0")
    ax.set(xlabel="episode", ylabel="probability / return", ylim=(0, 1.05),
           title="Two-step MDP: REINFORCE with the end reward crediting both steps")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
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


def build_run(config: MDPConfig, note: str, record_git: bool = True) -> RunFiles:
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


# -- 6. command line: course mdp -----------------------------------------------------------------

def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mdp", help="Loop C: REINFORCE on a two-step MDP with a delayed reward",
        description="Train a tabular softmax policy on a two-step MDP whose only reward comes "
                    "at the end, printing how each episode credits both decisions. Writes a "
                    "run folder only with --out.")
    parser.add_argument("--episodes", type=int, default=MDPConfig.episodes,
                        help="number of episodes (default 300)")
    parser.add_argument("--lr", type=float, default=MDPConfig.lr, help="learning rate")
    parser.add_argument("--baseline", choices=("none", "running"), default="running",
                        help="how b is chosen (default running)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--log-every-episode", action="store_true",
                        help="print every episode (default: the first 10 and checkpoints)")
    add_output_arguments(parser)
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    check_output_arguments(args)
    try:
        config = MDPConfig(lr=args.lr, episodes=args.episodes, baseline=args.baseline,
                           seed=args.seed)
    except ValueError as err:
        print(f"course mdp: error: {err}")
        return 2
    history = train(config, np.random.default_rng(config.seed))  # same draws as build_run's
    print(toy_mdp_log(history, config, shown=None if args.log_every_episode else 10), end="")
    if args.out is not None:
        path = write_run(args.out, build_run(config, args.note))
        print(f"wrote {display_path(path)}")
    return 0
