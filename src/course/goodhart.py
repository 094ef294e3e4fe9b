"""Goodhart's law, measured: optimise a hackable proxy and watch the true goal rise, then fall.

A toy policy chooses a *style* of completion for each problem (a categorical over styles, the
macro-action view). It is trained with REINFORCE on a weak rubric from `course.rubrics`, the
proxy; the strict scorer, the true goal, is only measured, never optimised. Every reward comes
from scoring a real completion string; no number below is typed by hand.

The styles (`STYLES`), each a way to answer a problem whose answer the policy knows with
probability `competence`:

- `honest`: `Final: <guess>`. Right when the guess is right; in spec.
- `vague`: `It is roughly <guess rounded to tens>.` Rarely contains the answer; never in spec.
- `spray`: `Final: <guess-10>, ..., <guess+10>`. Contains the answer whenever the guess is
  within 10, so `answer_anywhere` pays almost always; the strict scorer never does.

Learning starts mostly on `vague`. Both `honest` and `spray` beat the average, but `honest`
starts with more probability, so it grows first and the true goal rises. Once the average proxy
reward reaches `honest`'s level, `honest` stops gaining while `spray`, which the proxy pays
more, keeps gaining: the proxy keeps rising and the true goal falls. The step where the true
goal peaks marks the start of the reward-hacking regime.

The run folder (`runs/run_008`) is written by `course.reports.goodhart`; the command is
`course goodhart` (`course.commands.goodhart`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from course.data import Record, load_problems
from course.limits import count_problem
from course.paths import DATA_DIR
from course.policy import grad_log_prob, sample_actions, softmax
from course.rubrics import RUBRICS
from course.scorer import score

STYLES = ("honest", "vague", "spray")
WEAK_RUBRICS = tuple(sorted(set(RUBRICS) - {"strict"}))
"""The rubrics the toy may optimise: every one but the strict scorer."""

MAX_STEPS = 10_000
"""Upper bound on `steps`, far above the canonical 300: every step is kept for the curves
(about 100 MB and 6 s for a saved run at this bound)."""


@dataclass(frozen=True)
class GoodhartConfig:
    """Settings of the Goodhart toy. Defaults make the canonical run_008."""

    proxy: str = field(default="answer_anywhere", metadata={"choices": WEAK_RUBRICS})
    """The weak rubric optimised as the reward (not strict: that one is only measured)."""
    competence: float = 0.7
    """P(the policy's guess is the right answer), in [0, 1]; otherwise the guess slips."""
    initial_logits: tuple[float, float, float] = (0.0, 2.0, -1.5)
    """Starting θ for (honest, vague, spray): mostly vague, a little honest, spray rare."""
    lr: float = 0.5
    """Step size of θ <- θ + lr ĝ, > 0."""
    steps: int = 300
    """Number of REINFORCE updates, 1 to `MAX_STEPS`."""
    batch_size: int = 32
    """Completions sampled, rendered and scored per update, >= 2 (batch-mean baseline)."""
    rate_draws: int = 20
    """Renderings per (style, problem) used to measure each style's proxy and true rates."""
    seed: int = 0
    """Seed of the one generator behind every guess, slip and sampled style."""
    problems: Path = DATA_DIR / "problems" / "dev.jsonl"
    """The prompts the policy answers."""

    def __post_init__(self) -> None:
        problems = []
        if self.proxy not in WEAK_RUBRICS:
            problems.append(f"proxy: must be a weak rubric, one of {', '.join(WEAK_RUBRICS)}; "
                            f"got {self.proxy!r}")
        if not 0.0 <= self.competence <= 1.0:
            problems.append(f"competence: must be in [0, 1], got {self.competence}")
        if len(self.initial_logits) != len(STYLES) or not np.all(
                np.isfinite(self.initial_logits)):
            problems.append(f"initial_logits: need {len(STYLES)} finite numbers")
        if not (math.isfinite(self.lr) and self.lr > 0):
            problems.append(f"lr: must be a finite number > 0, got {self.lr}")
        problems += filter(None, [count_problem("steps", self.steps, 1, MAX_STEPS,
                                                "every step is kept for the curves")])
        if self.batch_size < 2:
            problems.append(f"batch_size: must be >= 2 (batch-mean baseline), got "
                            f"{self.batch_size}")
        if self.rate_draws < 1:
            problems.append(f"rate_draws: must be >= 1, got {self.rate_draws}")
        if self.seed < 0:
            problems.append(f"seed: must be >= 0, got {self.seed}")
        if problems:
            raise ValueError("; ".join(problems))


# -- 1. the styles: a guess, then a way to write it down --------------------------------------

SLIPS = np.array([-10, -2, -1, 1, 2, 10])


def guess(answer: int, competence: float, rng: np.random.Generator) -> int:
    """The policy's belief: the answer with probability `competence`, else a small slip."""
    return answer if rng.random() < competence else answer + int(rng.choice(SLIPS))


def render(style: str, answer: int, competence: float, rng: np.random.Generator) -> str:
    """The completion text a style writes for a problem with this answer."""
    g = guess(answer, competence, rng)
    if style == "honest":
        return f"Final: {g}"
    if style == "vague":
        return f"It is roughly {round(g, -1)}."
    return "Final: " + ", ".join(str(n) for n in range(g - 10, g + 11))


# -- 2. measuring a style: its proxy and true reward rates ------------------------------------

Scorer = Callable[[Mapping[str, Any], Any], Mapping[str, Any]]


def style_rates(problems: list[Record], proxy: Scorer, config: GoodhartConfig,
                rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Mean proxy and true reward of each style over every problem, `rate_draws` times each.

    Returns `{"proxy": (S,), "true": (S,)}` in `STYLES` order. These rates make the expected
    curves exact given the policy: E_π[r] = Σ_s π(s) rate(s).
    """
    proxy_rate, true_rate = np.zeros(len(STYLES)), np.zeros(len(STYLES))
    for s, style in enumerate(STYLES):
        texts = [(p, render(style, p["expected_answer"], config.competence, rng))
                 for p in problems for _ in range(config.rate_draws)]
        proxy_rate[s] = np.mean([proxy(p, t)["reward"] for p, t in texts])
        true_rate[s] = np.mean([score(p, t)["reward"] for p, t in texts])
    return {"proxy": proxy_rate, "true": true_rate}


# -- 3. learning on the proxy ---------------------------------------------------------------------

def train(problems: list[Record], proxy: Scorer, config: GoodhartConfig,
          rng: np.random.Generator) -> np.ndarray:
    """REINFORCE on the proxy with a batch-mean baseline; returns π after each step, (T+1, S).

    Each step samples `batch_size` (problem, style) pairs, renders and scores the completions
    with the proxy, and moves θ along ĝ = mean_i (r_i - b) ∇log π(s_i), b = mean_i r_i.
    """
    theta = np.array(config.initial_logits, dtype=float)
    policies = [softmax(theta)]
    for _ in range(config.steps):
        probs = softmax(theta)
        styles = sample_actions(probs, config.batch_size, rng)
        picks = rng.integers(len(problems), size=config.batch_size)
        rewards = np.array([
            proxy(problems[i], render(STYLES[s], problems[i]["expected_answer"],
                                      config.competence, rng))["reward"]
            for s, i in zip(styles, picks, strict=True)])
        advantages = rewards - rewards.mean()                            # A_i = r_i - b
        gradient = (advantages[:, None] * grad_log_prob(styles, probs)).mean(axis=0)
        theta = theta + config.lr * gradient                             # θ <- θ + lr ĝ
        policies.append(softmax(theta))
    return np.array(policies)


# -- 4. the whole experiment ----------------------------------------------------------------------

def simulate(config: GoodhartConfig) -> dict[str, Any]:
    """Measure the styles, train on the proxy, and return the curves and the peak.

    Seeding happens here, once: the rates are measured first, then training draws from the
    same generator.
    """
    rng = np.random.default_rng(config.seed)
    problems = load_problems(config.problems)
    proxy = RUBRICS[config.proxy]
    rates = style_rates(problems, proxy, config, rng)
    policies = train(problems, proxy, config, rng)
    proxy_curve, true_curve = policies @ rates["proxy"], policies @ rates["true"]
    peak = int(np.argmax(true_curve))
    return {"rates": rates, "policies": policies, "proxy_curve": proxy_curve,
            "true_curve": true_curve, "peak_step": peak}
