"""Loop C, third step: improve reward, but stay close to a reference policy (the KL tradeoff).

Real LLM training rarely maximises reward alone. It maximises

    E_{a~π}[r(a)] - β · KL(π ‖ π_ref)

where π_ref is the model before RL (the pretrained/SFT model) and β says how much drifting
away from it costs. Here the "model" is a categorical policy over K = 10 completion styles, so
everything can be computed exactly. For a categorical policy this objective has a closed-form
maximiser (a Gibbs / Boltzmann reweighting of the reference)::

    π_β(a) = π_ref(a) · exp(r(a) / β) / Z,      Z = Σ_b π_ref(b) · exp(r(b) / β)

Large β: π_β stays at π_ref (no reward gained, no drift). Small β: π_β piles onto the
highest-reward style that π_ref can produce. Sweeping β traces the frontier between reward
gained and KL spent. Note what the formula forbids: a style the reference never produces
(π_ref(a) = 0) keeps probability 0 for every β, since KL(π ‖ π_ref) would be infinite.

The module reads top to bottom: the styles, their reference probabilities and rewards, and
`KLConfig`; the formulas (`kl_divergence`, `kl_objective`, `kl_regularized_optimum`); the β
sweep; the run (`runs/run_005`); the command line `course kl`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from course.formatting import COLUMNS, fill, paragraph
from course.limits import count_problem
from course.policy import softmax

# -- 1. the setup ---------------------------------------------------------------------------------
# The reference policy is a made-up "SFT model" answering an arithmetic prompt. Each style's
# reward is its (invented) chance of scoring 1 under the strict-v1 scorer: format-breaking
# styles always score 0 (the failure code is named); in-format styles differ in how often the
# integer is right.

STYLES = (
    ("Final: <int>, answered at once", 0.22, 0.60),
    ("Final: <int>, after checking", 0.06, 0.90),          # the best style, and a rare one
    ("Final: <int>, a guessed number", 0.04, 0.15),
    ("Final: <int>. (trailing period)", 0.06, 0.0),         # not_an_integer
    ("Final:  <int> (two spaces)", 0.04, 0.0),              # bad_separator
    ("final: <int> (lower case)", 0.04, 0.0),               # no_final_prefix
    ("The answer is <int>.", 0.20, 0.0),                    # no_final_prefix
    ("<int> (bare number)", 0.10, 0.0),                     # no_final_prefix
    ("working lines, then Final: <int>", 0.20, 0.0),        # multiple_lines
    ("Final: 0<int> (leading zero)", 0.04, 0.0),            # non_canonical_integer
)
"""(style, π_ref(a), r(a)) for the K = 10 actions."""

MAX_BETAS = 10_000
"""Upper bound on `num_betas`, far above the canonical 25: each β is a printed and saved row of
the sweep (about 120 MB and 4 s for a saved run at this bound)."""


@dataclass(frozen=True)
class KLConfig:
    """The categorical world and the β sweep. Defaults are the canonical run_005."""

    actions: tuple[str, ...] = tuple(s[0] for s in STYLES)
    """Names of the K actions (K >= 2)."""
    pi_ref: tuple[float, ...] = tuple(s[1] for s in STYLES)
    """Reference policy: K probabilities, each >= 0, summing to 1."""
    rewards: tuple[float, ...] = tuple(s[2] for s in STYLES)
    """r(a) for each action: K finite numbers (any scale)."""
    beta_min: float = 1e-2
    """Smallest β of the sweep, > 0."""
    beta_max: float = 1e2
    """Largest β of the sweep, > beta_min."""
    num_betas: int = 25
    """Number of log-spaced β values, 2 to `MAX_BETAS`."""

    def __post_init__(self) -> None:
        check_distribution("pi_ref", np.asarray(self.pi_ref, dtype=float))
        k = len(self.pi_ref)
        if len(self.actions) != k or len(self.rewards) != k:
            raise ValueError(f"actions, pi_ref, rewards: need the same length, got "
                             f"{len(self.actions)}, {k}, {len(self.rewards)}")
        if not np.all(np.isfinite(self.rewards)):
            raise ValueError("rewards: every reward must be a finite number")
        if not 0 < self.beta_min < self.beta_max or not np.isfinite(self.beta_max):
            raise ValueError(f"beta_min, beta_max: need 0 < beta_min < beta_max < inf, got "
                             f"{self.beta_min}, {self.beta_max}")
        problem = count_problem("num_betas", self.num_betas, 2, MAX_BETAS,
                                "one row is printed and saved per β")
        if problem:
            raise ValueError(problem)

    @property
    def betas(self) -> np.ndarray:
        """The sweep: num_betas values from beta_min to beta_max, evenly spaced in log β."""
        return np.geomspace(self.beta_min, self.beta_max, self.num_betas)


# -- 2. the formulas ------------------------------------------------------------------------------

def check_distribution(name: str, p: np.ndarray) -> None:
    """Raise ValueError unless `p` is a 1-D probability vector: finite, >= 0, sums to 1."""
    if p.ndim != 1 or p.size < 1:
        raise ValueError(f"{name}: expected a 1-D array of probabilities, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name}: contains nan or inf")
    if np.any(p < 0):
        raise ValueError(f"{name}: probabilities must be >= 0, got min {p.min()}")
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name}: probabilities must sum to 1, got {p.sum()!r}")


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p ‖ q) = Σ_a p(a) log(p(a) / q(a)), natural log, in nats.

    Terms with p(a) = 0 count 0 (0 · log 0 = 0). If p puts mass where q has none, the result
    is inf. Always >= 0, and 0 exactly when p = q.
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    check_distribution("p", p)
    check_distribution("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p, q: shapes differ, {p.shape} vs {q.shape}")
    mass = p > 0
    if np.any(q[mass] == 0):
        return float("inf")
    total = float(np.sum(p[mass] * (np.log(p[mass]) - np.log(q[mass]))))
    return max(0.0, total)  # KL >= 0 (Gibbs' inequality); rounding can dip below when p ≈ q


def kl_objective(pi: np.ndarray, pi_ref: np.ndarray, rewards: np.ndarray, beta: float) -> float:
    """F(π) = E_π[r] - β · KL(π ‖ π_ref), the quantity the KL-regularised update maximises."""
    return float(np.asarray(pi) @ np.asarray(rewards)) - beta * kl_divergence(pi, pi_ref)


def kl_regularized_optimum(pi_ref: np.ndarray, rewards: np.ndarray, beta: float) -> np.ndarray:
    """argmax_π E_π[r] - β KL(π ‖ π_ref) = π_ref · exp(r / β) / Z, computed stably.

    In log space: log π_β(a) = log π_ref(a) + r(a) / β - log Z, a softmax of the logits
    log π_ref + r / β. Rewards are shifted by their maximum over π_ref's support first (Z
    absorbs the shift), so r / β <= 0 and nothing overflows for any β > 0 or reward scale;
    actions outside the support get logit -inf, i.e. probability exactly 0.

    Args:
        pi_ref: (K,) reference probabilities (>= 0, sum 1).
        rewards: (K,) finite rewards.
        beta: KL coefficient, > 0 and finite. β -> 0 concentrates on the best-rewarded
            actions of π_ref's support (ties keep π_ref's proportions); β -> ∞ returns π_ref.
    """
    pi_ref, rewards = np.asarray(pi_ref, dtype=float), np.asarray(rewards, dtype=float)
    check_distribution("pi_ref", pi_ref)
    if rewards.shape != pi_ref.shape or not np.all(np.isfinite(rewards)):
        raise ValueError(f"rewards: expected {pi_ref.shape[0]} finite numbers, got {rewards}")
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta: must be a finite number > 0, got {beta}")
    support = pi_ref > 0
    logits = np.full(pi_ref.shape, -np.inf)
    with np.errstate(over="ignore"):  # r - max can overflow to -inf: that is probability 0
        shifted = rewards[support] - rewards[support].max()          # <= 0 on the support
        logits[support] = np.log(pi_ref[support]) + shifted / beta    # log π_ref + r / β
    return softmax(logits)


def optimum_objective(pi_ref: np.ndarray, rewards: np.ndarray, beta: float) -> float:
    """max_π E_π[r] - β KL(π ‖ π_ref) = β · log Σ_a π_ref(a) exp(r(a) / β), the value reached
    by `kl_regularized_optimum`, computed without subtracting two nearly equal numbers.

    `kl_objective(π_β, ...)` computes the same value as E[r] minus β times a KL that rounding
    leaves at ~1e-17 even when π_β = π_ref; for a huge β that product is nonsense (β = 1e308
    would give ~1e291). Here, with m = max r on the support and x = (r - m) / β <= 0::

        β · log Σ π_ref e^{r/β} = m + β · log1p(Σ π_ref · expm1(x))    (Σ π_ref = 1)

    and expm1, log1p stay exact for tiny x, so β → ∞ gives E_ref[r] and β → 0 gives m.
    """
    pi_ref, rewards = np.asarray(pi_ref, dtype=float), np.asarray(rewards, dtype=float)
    check_distribution("pi_ref", pi_ref)
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta: must be a finite number > 0, got {beta}")
    support = pi_ref > 0
    best = float(rewards[support].max())
    with np.errstate(over="ignore", under="ignore"):
        x = (rewards[support] - best) / beta
        return best + beta * math.log1p(float(np.sum(pi_ref[support] * np.expm1(x))))


# -- 3. the β sweep ------------------------------------------------------------------------------

def top_actions(pi: np.ndarray, n: int = 3) -> list[int]:
    """Indices of the n most probable actions, ties broken by index."""
    return [int(i) for i in np.argsort(-pi, kind="stable")[:n]]


def sweep(config: KLConfig) -> list[dict[str, Any]]:
    """For each β (ascending): the optimal policy, its expected reward and its KL to π_ref."""
    pi_ref, rewards = np.asarray(config.pi_ref), np.asarray(config.rewards)
    rows = []
    for beta in config.betas:
        pi = kl_regularized_optimum(pi_ref, rewards, beta)
        rows.append({"beta": float(beta), "policy": pi,
                     "expected_reward": float(pi @ rewards),
                     "kl": kl_divergence(pi, pi_ref),
                     "objective": kl_objective(pi, pi_ref, rewards, beta),
                     "top3": top_actions(pi)})
    return rows


POLICY_LEGEND = paragraph(
    "Columns: π_ref = the reference's probability of the style; π_β = the KL-regularised "
    "optimum's; r = the style's reward.")
"""Printed once, above the table of `describe_policy`."""

SWEEP_LEGEND = paragraph(
    "Columns: beta = β, the price per nat of KL; E[r] = π_β's expected reward; KL = the "
    "KL(π_β ‖ π_ref), in nats; top action = π_β's most probable style, with its probability.")
"""Printed once, above the table of `sweep_table`."""


def describe_policy(config: KLConfig, beta: float) -> str:
    """A table for one β: each action's π_ref, π_β and reward, then E[r], KL and F."""
    pi_ref, rewards = np.asarray(config.pi_ref), np.asarray(config.rewards)
    pi = kl_regularized_optimum(pi_ref, rewards, beta)
    lines = [f"β = {beta:g}: π_β(a) ∝ π_ref(a) · exp(r(a) / β)", POLICY_LEGEND,
             f"  {'action':<36} {'π_ref':>7} {'π_β':>7} {'r':>6}"]
    lines += [f"  {name:<36} {pr:7.4f} {p:7.4f} {r:6.2f}"
              for name, pr, p, r in zip(config.actions, pi_ref, pi, rewards, strict=True)]
    lines += fill("  ", [f"E[r] = {pi @ rewards:.4f} (reference {pi_ref @ rewards:.4f}),",
                         f"KL(π_β ‖ π_ref) = {kl_divergence(pi, pi_ref):.4f} nats,",
                         "objective E[r] - β KL = "
                         f"{optimum_objective(pi_ref, rewards, beta):.4f}"], COLUMNS, gap=" ")
    return "\n".join(lines)


def sweep_table(config: KLConfig, rows: list[dict[str, Any]]) -> str:
    """The β sweep as a table, one row per β, under `SWEEP_LEGEND`."""
    lines = [SWEEP_LEGEND, f"{'beta':>9}  {'E[r]':>6}  {'KL':>7}  top action (probability)"]
    for row in rows:
        top = row["top3"][0]
        lines.append(f"{row['beta']:9.4g}  {row['expected_reward']:6.4f}  {row['kl']:7.4f}  "
                     f"{config.actions[top]} ({row['policy'][top]:.3f})")
    return "\n".join(lines)
