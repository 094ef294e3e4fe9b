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

import csv
import io
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from course.bandit import softmax
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
    """Number of log-spaced β values, >= 2."""

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
        if self.num_betas < 2:
            raise ValueError(f"num_betas: must be >= 2, got {self.num_betas}")

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
    return float(np.sum(p[mass] * (np.log(p[mass]) - np.log(q[mass]))))


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


def describe_policy(config: KLConfig, beta: float) -> str:
    """A table for one β: each action's π_ref, π_β and reward, then E[r], KL and F."""
    pi_ref, rewards = np.asarray(config.pi_ref), np.asarray(config.rewards)
    pi = kl_regularized_optimum(pi_ref, rewards, beta)
    lines = [f"β = {beta:g}: π_β(a) ∝ π_ref(a) · exp(r(a) / β)",
             f"  {'action':<36} {'π_ref':>7} {'π_β':>7} {'r':>6}"]
    lines += [f"  {name:<36} {pr:7.4f} {p:7.4f} {r:6.2f}"
              for name, pr, p, r in zip(config.actions, pi_ref, pi, rewards, strict=True)]
    lines.append(f"  E[r] = {pi @ rewards:.4f} (reference {pi_ref @ rewards:.4f}), "
                 f"KL(π_β ‖ π_ref) = {kl_divergence(pi, pi_ref):.4f} nats, "
                 f"objective E[r] - β KL = {kl_objective(pi, pi_ref, rewards, beta):.4f}")
    return "\n".join(lines)


def sweep_table(config: KLConfig, rows: list[dict[str, Any]]) -> str:
    lines = [f"{'beta':>9}  {'E[r]':>6}  {'KL':>7}  top action (probability)"]
    for row in rows:
        top = row["top3"][0]
        lines.append(f"{row['beta']:9.4g}  {row['expected_reward']:6.4f}  {row['kl']:7.4f}  "
                     f"{config.actions[top]} ({row['policy'][top]:.3f})")
    return "\n".join(lines)


# -- 4. the run ------------------------------------------------------------------------------------

def _r(x: float) -> float:
    return round(float(x), 6) + 0.0


def tradeoff_csv(config: KLConfig, rows: list[dict[str, Any]]) -> bytes:
    """One line per β: beta, expected reward, KL, and the top-3 actions with probabilities."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["beta", "expected_reward", "kl_to_reference"]
    for rank in (1, 2, 3):
        header += [f"top{rank}_action", f"top{rank}_prob"]
    writer.writerow(header)
    for row in rows:
        line = [f"{row['beta']:.6g}", f"{row['expected_reward']:.6f}", f"{row['kl']:.6f}"]
        for a in row["top3"]:
            line += [config.actions[a], f"{row['policy'][a]:.6f}"]
        writer.writerow(line)
    return buffer.getvalue().encode("utf-8")


def summarise(config: KLConfig, rows: list[dict[str, Any]]) -> dict[str, Any]:
    pi_ref, rewards = np.asarray(config.pi_ref), np.asarray(config.rewards)
    best = int(np.argmax(np.where(pi_ref > 0, rewards, -np.inf)))
    reward, kl = np.array([r["expected_reward"] for r in rows]), np.array([r["kl"] for r in rows])
    return {
        "kind": "kl_tradeoff",
        "actions": [{"index": i, "style": name, "pi_ref": p, "reward": r} for i, (name, p, r)
                    in enumerate(zip(config.actions, config.pi_ref, config.rewards,
                                     strict=True))],
        "reference_expected_reward": _r(pi_ref @ rewards),
        "best_action": best,
        "best_reward": float(rewards[best]),
        "kl_of_all_mass_on_best": _r(-np.log(pi_ref[best])),
        "betas": {"min": config.beta_min, "max": config.beta_max, "count": config.num_betas},
        "frontier_monotone": bool(np.all(np.diff(reward) <= 0) and np.all(np.diff(kl) <= 0)),
        "sweep": [{"beta": _r(row["beta"]), "expected_reward": _r(row["expected_reward"]),
                   "kl": _r(row["kl"]), "top_action": config.actions[row["top3"][0]],
                   "top_prob": _r(row["policy"][row["top3"][0]])} for row in rows],
    }


def tradeoff_png(config: KLConfig, rows: list[dict[str, Any]], summary: dict[str, Any]) -> bytes:
    import matplotlib.pyplot as plt

    kl = [row["kl"] for row in rows]
    reward = [row["expected_reward"] for row in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(kl, reward, "-", color="grey", lw=1)
    points = ax.scatter(kl, reward, c=np.log10([row["beta"] for row in rows]), cmap="viridis",
                        zorder=3)
    # Label a point by its β only when it is far enough from the last labelled one to read.
    span_x, span_y = max(kl) or 1.0, (max(reward) - min(reward)) or 1.0
    last = None
    for row in rows:
        here = np.array([row["kl"] / span_x, row["expected_reward"] / span_y])
        if last is None or np.hypot(*(here - last)) > 0.09:
            ax.annotate(f"β={row['beta']:.3g}", (row["kl"], row["expected_reward"]),
                        textcoords="offset points", xytext=(6, -10), fontsize=7)
            last = here
    ax.axhline(summary["reference_expected_reward"], color="tab:red", ls=":",
               label="reference policy π_ref (β → ∞)")
    ax.axhline(summary["best_reward"], color="tab:green", ls=":",
               label="best style only (β → 0)")
    fig.colorbar(points, ax=ax, label="log10 β")
    ax.set(xlabel="KL(π_β ‖ π_ref)  [nats]", ylabel="expected reward E[r]",
           title="KL-regularised optimum: reward gained vs drift from the reference")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return figure_png(fig)


def render_readme(config: KLConfig, summary: dict[str, Any]) -> str:
    sweep_rows = summary["sweep"]
    picks = sweep_rows[::4] + ([] if (len(sweep_rows) - 1) % 4 == 0 else sweep_rows[-1:])
    table = "\n".join(f"| {r['beta']:.4g} | {r['expected_reward']:.4f} | {r['kl']:.4f} | "
                      f"{r['top_action']} ({r['top_prob']:.3f}) |" for r in picks)
    best = config.actions[summary["best_action"]]
    return f"""# KL tradeoff: reward versus staying near the reference (Loop C)

A categorical policy over {len(config.actions)} completion styles maximises
`E[r] − β · KL(π ‖ π_ref)`. The maximiser is exact: `π_β(a) ∝ π_ref(a) · exp(r(a) / β)`,
computed in log space. π_ref stands for the pretrained/SFT model; r(a) is each style's
(invented) chance of scoring 1 under the strict-v1 scorer, so format-breaking styles earn 0.

## The sweep: {config.num_betas} values of β, {config.beta_min:g} to {config.beta_max:g}

| β | E[r] | KL (nats) | top style (probability) |
| --- | --- | --- | --- |
{table}

The reference earns {summary['reference_expected_reward']:.4f}. As β shrinks (a weaker
constraint) the policy moves mass toward `{best}` (r = {summary['best_reward']}): reward rises
toward {summary['best_reward']} and KL rises toward {summary['kl_of_all_mass_on_best']:.4f}
nats (= −log π_ref of that style, all mass on it). As β grows the policy stays at π_ref.
Both curves move together: reward and KL increase as β decreases
(`frontier_monotone` = {str(summary['frontier_monotone']).lower()}).

In LLM terms: a strong KL penalty keeps the trained model close to the SFT model (safer,
more familiar behaviour, less reward gained); a weak one lets it chase reward wherever the
reward points, including into odd corners if the reward has loopholes. Note also that a style
the reference never produces can never be reached by this update: the KL would be infinite.

## Files

`kl_tradeoff.csv` (β, expected reward, KL, top-3 styles with probabilities), `kl_tradeoff.png`
(the reward-versus-KL frontier, points labelled by β), `summary.json`, `manifest.json`.
Reproduce: `course runs regenerate run_005` or `course kl --out runs/my_kl --note "..."`.
"""


def build_run(config: KLConfig, note: str, record_git: bool = True) -> RunFiles:
    """Sweep β and return the run's files. Everything is exact: no sampling, no seed."""
    rows = sweep(config)
    summary = summarise(config, rows)
    run_manifest = manifest(kind="kl_tradeoff", note=note, config=asdict(config), seed=None,
                            record_git=record_git)
    return {
        "README.md": render_readme(config, summary).encode("utf-8"),
        "kl_tradeoff.csv": tradeoff_csv(config, rows),
        "kl_tradeoff.png": tradeoff_png(config, rows, summary),
        "manifest.json": json_bytes(run_manifest),
        "summary.json": json_bytes(summary),
    }


# -- 5. command line: course kl ------------------------------------------------------------------

def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "kl", help="Loop C: the KL-regularised policy for one β, or the β sweep",
        description="Compute π_β ∝ π_ref · exp(r / β) over 10 completion styles. With --beta, "
                    "show that one policy; otherwise sweep β and print the frontier. Writes a "
                    "run folder only with --out.")
    parser.add_argument("--beta", type=float, help="show the optimum for this one β")
    parser.add_argument("--beta-min", type=float, default=KLConfig.beta_min)
    parser.add_argument("--beta-max", type=float, default=KLConfig.beta_max)
    parser.add_argument("--num-betas", type=int, default=KLConfig.num_betas)
    add_output_arguments(parser)  # the saved run is the whole sweep
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    check_output_arguments(args)
    try:
        config = KLConfig(beta_min=args.beta_min, beta_max=args.beta_max,
                          num_betas=args.num_betas)
        print(describe_policy(config, args.beta) if args.beta is not None
              else sweep_table(config, sweep(config)))
    except ValueError as err:
        print(f"course kl: error: {err}")
        return 2
    if args.out is not None:
        path = write_run(args.out, build_run(config, args.note))
        print(f"wrote {display_path(path)}")
    return 0
