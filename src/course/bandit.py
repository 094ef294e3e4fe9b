"""Loop C, first step: a four-armed bandit learned by REINFORCE, one update at a time.

The smallest learning problem with everything that matters: a policy, a sampled action, a
reward, and an update that makes rewarded actions more likely. No prompt, no tokens: the
"completion" is one of K whole styles, and the verifier's reward for a style is a coin flip
with a fixed chance of 1.

The module reads top to bottom:

1. the setup: the actions, their reward probabilities, and `BanditConfig`;
2. the formulas: `expected_reward`, `expected_update` (the exact average update, for
   checking the sampled one), on top of the softmax policy of `course.policy`;
3. the update: `reinforce_step` samples, scores, picks a baseline and moves the logits;
   `train` repeats it;
4. the log: the slow-motion story of each step and the one-line fast log;
5. the baseline ablation: none vs running mean vs batch mean over many independent learners.

The run folder (`runs/run_003`) is written by `course.reports.bandit`; the command is
`course bandit` (`course.commands.bandit`).

The update in one line (Williams' REINFORCE, with a baseline b)::

    theta <- theta + lr * (r - b) * grad_theta log pi_theta(a)

Nothing here differentiates through the reward: the reward only scales a step along the
log-probability gradient of the action that was actually sampled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from course.formatting import COLUMNS, fill, fixed, paragraph, vector, wrap
from course.limits import count_problem
from course.policy import grad_log_prob, sample_actions, softmax

# -- 1. the setup -------------------------------------------------------------------------------

ACTIONS = (
    "work it out, then 'Final: <int>'",
    "answer at once, 'Final: <int>'",
    "round estimate, 'Final: <int>'",
    "copy a number from the prompt",
)
"""The K = 4 completion styles. All four write the strict `Final: <int>` line, so the scorer
never rejects them for format; they differ in how the integer is chosen, hence how often it is
right."""

REWARD_PROBS = (0.9, 0.7, 0.5, 0.3)
"""r̄(a) = P(reward = 1 | style a): invented numbers, not measurements. Every style succeeds
often (think of easy problems), so a raw reward of 1 says little on its own; what carries
information is whether a reward beat what was expected. That is the baseline's job."""

BASELINES = ("none", "running", "batch")

MAX_STEPS = 3_000
"""Upper bound on `steps`, ten times the canonical 300: every step's arrays are kept for the
log and the plots, and the saved run's baseline ablation repeats the steps for 600 learners
(about 500 MB with `MAX_BATCH_SIZE` samples per step)."""
MAX_BATCH_SIZE = 1_000
"""Upper bound on `batch_size` (the lesson uses 1 to 8): every sample of every step is kept, so
the largest run, `MAX_STEPS` x `MAX_BATCH_SIZE` samples, stays within a few hundred MB."""


@dataclass(frozen=True)
class BanditConfig:
    """Everything that determines a bandit run. Defaults are the canonical run_003."""

    actions: tuple[str, ...] = ACTIONS
    """Names of the K actions, K >= 2; only used for printing."""
    reward_probs: tuple[float, ...] = REWARD_PROBS
    """r̄(a) for each action, K values in [0, 1]; the reward is Bernoulli(r̄(a))."""
    lr: float = 0.75
    """Learning rate (step size on the logits), > 0. Useful range here: about 0.1 to 2."""
    steps: int = 300
    """Number of updates, 1 to `MAX_STEPS`."""
    baseline: str = field(default="running", metadata={"choices": BASELINES})
    """`none` (b = 0), `running` (b = running mean of past rewards), or `batch` (b = mean reward
    of the current batch; needs batch_size >= 2)."""
    batch_size: int = 1
    """Samples per update, B from 1 to `MAX_BATCH_SIZE`. The update averages the B per-sample
    terms."""
    baseline_alpha: float = 0.1
    """Decay α of the running mean, b <- (1 - α) b + α r̄_batch, in (0, 1]. b starts at 0."""
    seed: int = 0
    """Seed of the one random generator of a run (numpy's default PCG64), >= 0."""
    ablation_learners: int = 200
    """Independent learners per baseline method in the ablation, >= 2."""
    ablation_batch_size: int = 4
    """Samples per update in the ablation, the same for all three methods, >= 2."""

    def __post_init__(self) -> None:
        problems = []
        if len(self.reward_probs) < 2:
            problems.append("reward_probs: need K >= 2 actions")
        if len(self.actions) != len(self.reward_probs):
            problems.append(f"actions: {len(self.actions)} names for "
                            f"{len(self.reward_probs)} reward probabilities")
        if not all(0.0 <= p <= 1.0 for p in self.reward_probs):
            problems.append(f"reward_probs: each must be in [0, 1], got {self.reward_probs}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            problems.append(f"lr: must be a finite number > 0, got {self.lr}")
        problems += filter(None, [
            count_problem("steps", self.steps, 1, MAX_STEPS, "every step is kept for the log"),
            count_problem("batch_size", self.batch_size, 1, MAX_BATCH_SIZE,
                          "every sample of every step is kept for the log")])
        if self.baseline not in BASELINES:
            problems.append(f"baseline: must be one of {', '.join(BASELINES)}, "
                            f"got {self.baseline!r}")
        if self.baseline == "batch" and self.batch_size == 1:
            problems.append("batch_size: the batch-mean baseline needs batch_size >= 2 (with "
                            "one sample, r - mean(r) is always 0 and nothing is learned)")
        if not 0.0 < self.baseline_alpha <= 1.0:
            problems.append(f"baseline_alpha: must be in (0, 1], got {self.baseline_alpha}")
        if self.seed < 0:
            problems.append(f"seed: must be >= 0, got {self.seed}")
        if self.ablation_learners < 2 or self.ablation_batch_size < 2:
            problems.append("ablation_learners and ablation_batch_size: must be >= 2")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def k(self) -> int:
        """K, the number of actions."""
        return len(self.reward_probs)

    @property
    def best_action(self) -> int:
        """The action with the highest r̄(a) (the first one on a tie)."""
        return int(np.argmax(self.reward_probs))


# -- 2. the formulas ------------------------------------------------------------------------------
# The policy is a softmax over K logits (`course.policy`: softmax, grad_log_prob, sample_actions).
# Every function broadcasts over leading axes: theta may be (K,) for one learner or (L, K) for
# L independent learners updated side by side.

def expected_reward(theta: np.ndarray, reward_means: np.ndarray) -> np.ndarray:
    """J(θ) = Σ_a π(a) r̄(a), the objective; (..., K) -> (...)."""
    return softmax(theta) @ np.asarray(reward_means)


def expected_update(theta: np.ndarray, reward_means: np.ndarray,
                    baseline: float | np.ndarray, lr: float) -> np.ndarray:
    """The REINFORCE update averaged exactly over actions and rewards, no sampling:

        E[Δθ] = lr * Σ_a π(a) (r̄(a) - b) (onehot(a) - π)

    for a baseline b that does not depend on the sampled action (shape () or (...)). It equals
    lr * ∇θ J(θ) = lr * π ⊙ (r̄ - J) whatever b is, because Σ_a π(a) (onehot(a) - π) = 0: the
    baseline changes the noise of an update, never its average. `tests/test_bandit.py` checks
    this against finite differences of J and against the closed form.
    """
    probs = softmax(theta)
    k = probs.shape[-1]
    grads = grad_log_prob(np.arange(k), probs[..., None, :])        # row a: onehot(a) - π
    weights = probs * (np.asarray(reward_means) - np.asarray(baseline)[..., None])
    return lr * (weights[..., None] * grads).sum(axis=-2)            # Σ_a π(a)(r̄(a)-b)(...)


def mean_gradient(theta: np.ndarray, config: BanditConfig) -> np.ndarray:
    """E[ĝ | θ], the average of the sampled gradient estimate `Step.gradient` at θ.

    For `none` and `running` the baseline is fixed before sampling, so this is ∇J(θ). For
    `batch` each reward also sits inside its own baseline, b = (1/B) Σ_j r_j, which shrinks the
    average by exactly (1 - 1/B): E[(r_i - b) ∇log π(a_i)] = (1 - 1/B) ∇J. Same direction,
    shorter step (the test checks it by enumerating every batch).
    """
    gradient = expected_update(theta, np.asarray(config.reward_probs), 0.0, 1.0)
    if config.baseline == "batch":
        return (1.0 - 1.0 / config.batch_size) * gradient
    return gradient


# -- 3. the update ----------------------------------------------------------------------------

def sample_rewards(actions: np.ndarray, reward_probs: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
    """A Bernoulli(r̄(a)) reward, 0.0 or 1.0, for each sampled action; same shape as actions."""
    return (rng.random(actions.shape) < reward_probs[actions]).astype(float)


@dataclass(frozen=True)
class Step:
    """One REINFORCE update. Shapes for L learners (L axis absent for one), B samples, K actions."""

    theta: np.ndarray        # (L, K) logits before the update
    probs: np.ndarray        # (L, K) π before the update
    actions: np.ndarray      # (L, B) sampled actions
    rewards: np.ndarray      # (L, B) their 0/1 rewards
    baseline: np.ndarray     # (L,)   the baseline b used in this update
    advantages: np.ndarray   # (L, B) A = r - b
    gradient: np.ndarray     # (L, K) ĝ = (1/B) Σ_i A_i ∇log π(a_i), the gradient estimate
    new_theta: np.ndarray    # (L, K) θ + lr ĝ
    new_probs: np.ndarray    # (L, K) π after the update
    next_baseline: np.ndarray  # (L,) the running mean carried to the next step (else 0)


def reinforce_step(theta: np.ndarray, running_mean: np.ndarray, config: BanditConfig,
                   rng: np.random.Generator) -> Step:
    """Sample B actions per learner, reward them, and take one REINFORCE step.

    Args:
        theta: logits, (K,) or (L, K).
        running_mean: the running-mean baseline carried from the last step, () or (L,); only
            read when `config.baseline == "running"`.
        config: reward probabilities, lr, baseline method, batch size B, α.
        rng: the run's random generator (the only source of randomness).
    """
    reward_probs = np.asarray(config.reward_probs)
    probs = softmax(theta)
    actions = sample_actions(probs, config.batch_size, rng)
    rewards = sample_rewards(actions, reward_probs, rng)
    batch_mean = rewards.mean(axis=-1)
    if config.baseline == "none":
        baseline = np.zeros_like(batch_mean)                         # b = 0
    elif config.baseline == "running":
        baseline = np.broadcast_to(running_mean, batch_mean.shape)   # b = mean of past rewards
    else:
        baseline = batch_mean                                        # b = (1/B) Σ_j r_j
    advantages = rewards - baseline[..., None]                       # A_i = r_i - b
    grads = grad_log_prob(actions, probs[..., None, :])              # onehot(a_i) - π
    gradient = (advantages[..., None] * grads).mean(axis=-2)         # ĝ = mean_i A_i ∇log π(a_i)
    new_theta = theta + config.lr * gradient                         # θ <- θ + lr ĝ
    if config.baseline == "running":                                 # b <- (1-α) b + α r̄_batch
        next_baseline = (1 - config.baseline_alpha) * baseline + config.baseline_alpha * batch_mean
    else:
        next_baseline = np.zeros_like(batch_mean)
    return Step(theta, probs, actions, rewards, baseline, advantages, gradient, new_theta,
                softmax(new_theta), next_baseline)


def train(config: BanditConfig, rng: np.random.Generator,
          learners: int | None = None) -> list[Step]:
    """Run `config.steps` updates from θ = 0 (the uniform policy); return every `Step`.

    With `learners=None` there is one learner and no learner axis (θ has shape (K,)); with
    `learners=L` the L learners are independent (their own samples, same generator).
    """
    shape = (config.k,) if learners is None else (learners, config.k)
    theta, running_mean = np.zeros(shape), np.zeros(shape[:-1])
    history = []
    for _ in range(config.steps):
        step = reinforce_step(theta, running_mean, config, rng)
        history.append(step)
        theta, running_mean = step.new_theta, step.next_baseline
    return history


# -- 4. the log: slow motion and fast -------------------------------------------------------------

ADVANTAGE_SIGN_NOTE = paragraph(
    "How to read the advantage A = r - b: positive means the sampled action did better than the "
    "baseline expected, so it is reinforced (its probability goes up); negative means it did "
    "worse, so it is suppressed (its probability goes down); zero leaves the policy unchanged."
)
"""Printed once, at the top of every log (slow motion and fast), wrapped to 80 columns."""

LABEL = 13
"""Width of a slow-motion line's label (`  advantage  `): what a long line wraps under."""

BASELINE_WORDS = {"none": "no baseline: b = 0",
                  "running": "running mean of past rewards",
                  "batch": "mean reward of this batch"}


def _sign_words(advantage: float) -> str:
    if advantage > 0:
        return "positive: better than expected, the sampled action is reinforced"
    if advantage < 0:
        return "negative: worse than expected, the sampled action is suppressed"
    return "zero: exactly as expected, nothing changes"


def setup_lines(config: BanditConfig) -> list[str]:
    """The header of every log: actions with their reward probabilities, and the settings."""
    lines = ["Actions (index: style, chance of reward 1):"]
    lines += [f"  {i}: {name:<36} r̄ = {p:.2f}"
              for i, (name, p) in enumerate(zip(config.actions, config.reward_probs, strict=True))]
    lines += fill("Settings: ", [
        f"lr = {config.lr},",
        f"baseline = {config.baseline} ({BASELINE_WORDS[config.baseline]}),",
        f"batch size = {config.batch_size},", f"steps = {config.steps},",
        f"seed = {config.seed};",
        "θ starts at 0 (uniform policy)" + (", b at 0." if config.baseline == "running" else ".")],
        COLUMNS, gap=" ")
    return lines


def _labelled(label: str, text: str) -> list[str]:
    """`  label      text`, wrapped under the text's first column."""
    return wrap(text, indent=f"  {label:<{LABEL - 2}}")


def describe_step(number: int, step: Step, config: BanditConfig) -> str:
    """One update of ONE learner (no learner axis) told as a story, several lines: a label
    (policy, sample, reward, ...) then what it holds, wrapped under it within 80 columns; the
    advantage's sign is read on a line of its own."""
    lines = [f"step {number}",
             *_labelled("policy", f"θ = {vector(step.theta, signed=True)}   "
                                  f"π = {vector(step.probs)}")]
    for i, (a, r, adv) in enumerate(zip(step.actions, step.rewards, step.advantages,
                                        strict=True)):
        tag = f" #{i + 1}" if config.batch_size > 1 else ""
        lines += [*_labelled(f"sample{tag}", f"a = {a} ({config.actions[a]}), "
                                             f"π(a) = {fixed(step.probs[a])}"),
                  *_labelled("reward", f"r = {r:.0f}")]
        if i == 0:
            lines += _labelled("baseline", f"b = {fixed(step.baseline)} "
                                           f"({BASELINE_WORDS[config.baseline]})")
        lines += [*_labelled("advantage", f"A = r - b = {fixed(adv, signed=True)}"),
                  *_labelled("", _sign_words(adv)),
                  *_labelled("direction", f"∇log π(a) = onehot(a) - π = "
                                          f"{vector(grad_log_prob(a, step.probs), signed=True)}")]
    average = " mean over the batch of" if config.batch_size > 1 else ""
    lines += _labelled("update", f"θ += lr ×{average} A × ∇log π(a) = "
                                 f"{vector(config.lr * step.gradient, signed=True)}")
    changes = []
    for a in sorted(set(step.actions.tolist())):
        before, after = step.probs[a], step.new_probs[a]
        trend = "up" if after > before else "down" if after < before else "unchanged"
        changes.append(f"π({a}) {fixed(before)} -> {fixed(after)} ({trend})")
    result = f"π = {vector(step.new_probs)}   " + ", ".join(changes)
    if LABEL + len(result) <= COLUMNS:
        lines += _labelled("result", result)
    else:  # several actions changed: the new π, then the changes, each kept whole
        lines += [*_labelled("result", f"π = {vector(step.new_probs)}"),
                  *fill(" " * LABEL, [*(f"{c}," for c in changes[:-1]), changes[-1]], COLUMNS,
                        gap=" ")]
    return "\n".join(lines)


def slow_motion_log(history: list[Step], config: BanditConfig) -> str:
    """The story of every step in `history` (one learner), with the sign note once on top."""
    parts = [*setup_lines(config), ADVANTAGE_SIGN_NOTE, ""]
    parts += [describe_step(n, step, config) + "\n" for n, step in enumerate(history, start=1)]
    return "\n".join(parts)


def one_line(number: int, step: Step, config: BanditConfig) -> str:
    """One update of one learner as one line: what was sampled, what it earned, where π is.
    With a large batch (many actions and rewards) the line wraps under its `a=`."""
    actions = " ".join(str(a) for a in step.actions)
    rewards = " ".join(f"{r:.0f}" for r in step.rewards)
    advantage = fixed(step.advantages.mean(), signed=True)
    j = expected_reward(step.new_theta, np.asarray(config.reward_probs))
    return "\n".join(wrap(f"a={actions}  r={rewards}  b={fixed(step.baseline)}  "
                          f"A={advantage}  P(best)={fixed(step.new_probs[config.best_action])}  "
                          f"J={fixed(j)}", indent=f"step {number:>4}  "))


def fast_log_legend(every: int) -> str:
    """What the fast log's short names mean, printed once above its lines."""
    return paragraph(
        f"Fast log, a line every {'step' if every == 1 else f'{every} steps'} (and the first "
        "and last): a = the sampled action(s), r = reward(s), b = baseline, A = r - b (mean "
        "over the batch), P(best) = π(best action) and J = expected reward, both after the "
        "update.")


def fast_log(history: list[Step], config: BanditConfig, every: int) -> str:
    """The legend once, then one line every `every` steps (and the first and the last step),
    then the final policy."""
    lines = [fast_log_legend(every)]
    lines += [one_line(n, step, config) for n, step in enumerate(history, start=1)
              if n % every == 0 or n == 1 or n == len(history)]
    final = history[-1].new_probs
    lines += wrap(", ".join(f"π({a}) = {fixed(p)}" for a, p in enumerate(final)),
                  indent="final policy: ")
    return "\n".join(lines)


# -- 5. the baseline ablation -------------------------------------------------------------------

def ablation(config: BanditConfig, rng: np.random.Generator) -> dict[str, Any]:
    """Train `ablation_learners` independent learners with each baseline method.

    All methods use `ablation_batch_size` samples per update (the batch mean needs a batch, and
    equal samples keep the comparison fair), the same lr and number of steps. For each method:

    - `p_best`: (steps + 1, L) the probability of the best action after each update (row 0 is
      the uniform start);
    - `variance`: (steps,) the gradient estimate's variance per step, E||ĝ - E[ĝ | θ]||²,
      averaged over learners; E[ĝ | θ] is exact (`mean_gradient`), so this is pure noise.

    The methods draw from `rng` one after the other; each learner has its own samples.
    """
    results = {}
    for method in BASELINES:
        method_config = replace(config, baseline=method, batch_size=config.ablation_batch_size)
        history = train(method_config, rng, learners=config.ablation_learners)
        start = history[0].probs[:, config.best_action]
        p_best = np.stack([start] + [s.new_probs[:, config.best_action] for s in history])
        noise = [((s.gradient - mean_gradient(s.theta, method_config)) ** 2).sum(-1).mean()
                 for s in history]
        results[method] = {"p_best": p_best, "variance": np.array(noise)}
    return results
