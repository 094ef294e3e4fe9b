"""The course's concept figures, drawn by code from real numbers of the harness and its runs.

Each figure is two functions: `<name>_data()` gathers the numbers (from a run folder, the
scorer or the tokenizer) and `<name>_figure(data)` draws them. `FIGURES` turns each pair into
PNG bytes (`course.reports.png.figure_png`, reproducible); the site renders them at build time
into `assets/figures/` (see `site_hooks/figures.py`), so a figure cannot drift from the code
or the run it illustrates.

- `distribution_shift`: the frozen snapshot (written by π_0) and the fresh samples of the token
  policy trained on a proxy (π_t), as shares of failure codes read from
  `runs/run_010/summary.json`: π_t puts its mass where the snapshot has almost no examples,
  a blind spot.
- `gradient_connection`: the token chain of `Final: 323`, one scalar advantage A from
  `score()` and run_001's mean reward, and the same A multiplying every token's
  log-probability gradient.
- `token_text_interface`: token ids -> detokenize -> text -> parse -> checks -> reward, with
  the values our scorer and cl100k_base give for `Final: 323`; gradients live above the line,
  the verifier below it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from course.paths import RUNS_DIR
from course.reports.png import figure_png
from course.runs import read_json
from course.scorer import CHECKS, score

RUNNING_EXAMPLE = {"id": "dev-001", "prompt": "Compute 17*19. Output exactly one line: "
                   "Final: <int>", "expected_answer": 323}
FROZEN_SET_SIZE = 60
"""How many completions the frozen snapshot holds (as many as our dev split)."""
LATER_SAMPLES = 400
"""How many completions of the trained policy the sketch draws."""
CLUSTER_CENTRES = {"correct": (-1.9, 1.7), "wrong answer": (1.9, 1.7),
                   "not an integer": (1.9, -1.0), "other failures": (-1.9, -1.0)}
"""Where each style sits in the sketch's 2-D 'completion space' (layout only, not data)."""


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


GROUPS = {"correct": ("correct",), "wrong answer": ("wrong_answer",),
          "not an integer": ("not_an_integer",)}
"""The clusters of the sketch: failure codes of the strict scorer; every other code is
"other failures"."""


def distribution_shift_data(run: Path = RUNS_DIR / "run_010") -> dict[str, Any]:
    """What the frozen snapshot holds (π_0's completions, scored) and what the trained token
    policy writes (π_t's fresh samples, scored), as shares per cluster of failure codes, read
    from the run's `summary.json` (run_010: trained on the `answer_anywhere` proxy).

    Returns `{groups, pi_0, pi_t, frozen, later}`: shares (S,) and the number of dots drawn
    for each, `FROZEN_SET_SIZE` for the snapshot and `LATER_SAMPLES` for π_t.
    """
    summary = read_json(run, "summary.json")
    names = (*GROUPS, "other failures")

    def shares(codes: dict[str, float]) -> np.ndarray:
        grouped = [sum(codes.get(c, 0.0) for c in GROUPS[name]) for name in GROUPS]
        return np.array([*grouped, max(0.0, 1.0 - sum(grouped))])

    pi_0, pi_t = shares(summary["stale"]["codes"]), shares(summary["fresh_trained"]["codes"])
    return {"groups": names, "pi_0": pi_0, "pi_t": pi_t, "steps": summary["steps"],
            "frozen": np.rint(pi_0 * FROZEN_SET_SIZE).astype(int),
            "later": np.rint(pi_t * LATER_SAMPLES).astype(int)}


def distribution_shift_figure(data: dict[str, Any], seed: int = 0) -> Any:
    """Frozen data from π_0 versus completions of π_t: one cluster per group of failure codes,
    one dot per completion; the blind spot is where π_t's share most exceeds π_0's."""
    pi_0, pi_t, frozen, later = data["pi_0"], data["pi_t"], data["frozen"], data["later"]
    rng = np.random.default_rng(seed)
    fig = _figure(8.0, 4.8)
    ax = fig.add_subplot()
    for g, group in enumerate(data["groups"]):
        cx, cy = CLUSTER_CENTRES[group]
        old = rng.normal((cx, cy), 0.28, size=(frozen[g], 2))
        new = rng.normal((cx, cy), 0.34, size=(later[g], 2))
        ax.scatter(new[:, 0], new[:, 1], s=8, color="tab:orange", alpha=0.35,
                   label=f"π_t: fresh samples after {data['steps']} steps" if g == 0 else None)
        ax.scatter(old[:, 0], old[:, 1], s=22, color="tab:blue", edgecolor="white", lw=0.5,
                   label="the frozen snapshot, from π_0" if g == 0 else None)
        ax.annotate(f"{group}\nπ_0 = {pi_0[g]:.2f}, π_t = {pi_t[g]:.2f}\n"
                    f"frozen examples: {frozen[g]}", (cx, cy - 1.55), ha="center", fontsize=8)
    blind = data["groups"][int(np.argmax(pi_t - pi_0))]
    centre = CLUSTER_CENTRES[blind]
    ax.add_patch(_ellipse(centre, "tab:red"))
    ax.annotate("blind spot: where π_t lives,\nthe frozen set barely looks",
                (centre[0] - 2.2, centre[1] - 0.2), ha="center", color="tab:red", fontsize=9)
    ax.set(xlim=(-3.6, 3.6), ylim=(-3.0, 2.9), xticks=[], yticks=[],
           title="Frozen rollouts lie about the future: π_0 versus π_t (token policy, run_010)")
    ax.legend(loc="upper center", fontsize=8)
    fig.tight_layout()
    return fig


def _ellipse(centre: tuple[float, float], color: str) -> Any:
    from matplotlib.patches import Ellipse

    return Ellipse(centre, 2.2, 1.8, fill=False, ls="--", lw=1.5, color=color)


def gradient_connection_data(run: Path = RUNS_DIR / "run_001") -> dict[str, Any]:
    """The pieces of `Final: 323` under cl100k_base, the strict scorer's reward for it, the
    baseline b = the run's mean reward (run_001: the frozen rollouts), and A = r - b."""
    from course.tokens import tokenize

    pieces = [piece for _id, piece in tokenize("Final: 323")]
    reward = score(RUNNING_EXAMPLE, "Final: 323")["reward"]
    baseline = read_json(run, "summary.json")["mean_reward"]
    return {"pieces": pieces, "reward": reward, "baseline": baseline,
            "advantage": reward - baseline}


def gradient_connection_figure(data: dict[str, Any]) -> Any:
    """One advantage, every token: Δ log π(y_t) ∝ A · ∇ log π(y_t | prefix) for each t."""
    pieces, reward, baseline = data["pieces"], data["reward"], data["baseline"]
    advantage = data["advantage"]
    fig = _figure(8.5, 3.6)
    ax = fig.add_subplot()
    ax.set(xlim=(0, 10), ylim=(0, 4), xticks=[], yticks=[])
    ax.axis("off")
    chain = ["prompt", *[repr(p)[1:-1].replace(" ", "·") for p in pieces], "score()"]
    xs = np.linspace(0.7, 8.2, len(chain))
    for i, (x, label) in enumerate(zip(xs, chain, strict=True)):
        ax.text(x, 3.1, label, ha="center", va="center", fontsize=10,
                bbox={"boxstyle": "round", "fc": "#e8eefc" if 0 < i < len(chain) - 1
                      else "#f3f3f3", "ec": "#555"})
        if i:
            ax.annotate("", (x - 0.45, 3.1), (xs[i - 1] + 0.45, 3.1),
                        arrowprops={"arrowstyle": "->"})
    ax.text(9.4, 3.1, f"A = r − b\n= {reward:.0f} − {baseline:.2f}\n= {advantage:+.2f}",
            ha="center", va="center", fontsize=10,
            bbox={"boxstyle": "round", "fc": "#fff1d6", "ec": "tab:orange"})
    ax.annotate("", (9.4, 1.2), (9.4, 2.55), arrowprops={"arrowstyle": "->", "color": "tab:orange",
                                                           "lw": 2})
    ax.plot([xs[1], 9.4], [1.2, 1.2], color="tab:orange", lw=1.5)
    for x in xs[1:-1]:
        ax.annotate("", (x, 2.7), (x, 1.3), arrowprops={"arrowstyle": "->", "color": "#888"})
        ax.text(x, 1.0, f"{advantage:+.2f} · ∇log π", ha="center", fontsize=8.5,
                color="tab:orange")
    ax.text(5.0, 0.25, "The same scalar multiplies the log-prob gradient of every sampled token: "
            "loss = −A · Σ_t log π(y_t | prefix)", ha="center", fontsize=9.5)
    fig.tight_layout()
    return fig


def token_text_interface_data(text: str = "Final: 323") -> list[tuple[str, str]]:
    """The stack from logits to reward for `text`, one `(layer, value)` per row: the real
    cl100k_base ids, the text, the scorer's parse, how many checks pass, the reward."""
    from course.tokens import tokenize

    ids = [token_id for token_id, _piece in tokenize(text)]
    result = score(RUNNING_EXAMPLE, text)
    details = result["details"]
    passed = sum(ok for _name, ok in details["checks"])
    return [
        ("Policy π_θ (tokens, logits)", "samples token ids, one per step"),
        ("Token ids", str(ids)),
        ("Detokenize", f"ids → {text!r}"),
        ("Text completion", repr(text)),
        ("Parse / extract (course.scorer.parse)", f"parsed_answer = {details['parsed_answer']}"),
        ("Rubric checks", f"{passed}/{len(CHECKS)} checks pass"),
        ("Reward", f"{result['reward']:.1f}  (code {details['code']!r})"),
    ]


def token_text_interface_figure(layers: list[tuple[str, str]]) -> Any:
    """The layers top to bottom; the line between tokens and text separates gradients from
    the verifier."""
    fig = _figure(7.2, 6.4)
    ax = fig.add_subplot()
    ax.set(xlim=(0, 10), ylim=(0, len(layers) + 1), xticks=[], yticks=[])
    ax.axis("off")
    for row, (name, value) in enumerate(layers):
        y = len(layers) - row
        above = row < 2
        ax.text(3.2, y, name, ha="center", va="center", fontsize=10,
                bbox={"boxstyle": "round", "fc": "#e8eefc" if above else "#e9f7ec", "ec": "#555"})
        ax.text(6.4, y, value, ha="left", va="center", fontsize=9, family="monospace")
        if row:
            ax.annotate("", (3.2, y + 0.3), (3.2, y + 0.7), arrowprops={"arrowstyle": "->"})
    line_y = len(layers) - 1.5
    ax.axhline(line_y, xmin=0.02, xmax=0.98, color="tab:red", ls="--")
    ax.text(9.9, line_y + 0.12, "gradients live above the line", ha="right", fontsize=9,
            color="tab:red")
    ax.text(9.9, line_y - 0.3, "the verifier lives below it", ha="right", fontsize=9,
            color="tab:red")
    fig.tight_layout()
    return fig


FIGURES: dict[str, Callable[[], bytes]] = {
    "distribution_shift.png":
        lambda: figure_png(distribution_shift_figure(distribution_shift_data())),
    "gradient_connection.png":
        lambda: figure_png(gradient_connection_figure(gradient_connection_data())),
    "token_text_interface.png":
        lambda: figure_png(token_text_interface_figure(token_text_interface_data())),
}
"""File name -> function; the site hook renders each into `assets/figures/`."""
