"""The course's concept figures, drawn by code from real numbers of the harness and its runs.

Each figure is two functions: `<name>_data()` gathers the numbers (from a run folder, the
scorer or the tokenizer) and `<name>_figure(data)` draws them. `FIGURES` turns each pair into
PNG bytes (`course.reports.png.figure_png`, reproducible); the site renders them at build time
into `assets/figures/` (see `src/course_site/figures.py`), so a figure cannot drift from the code
or the run it illustrates.

- `distribution_shift`: the frozen snapshot (written by the scripted stand-in) and the fresh
  samples of the token policy trained on a proxy (π_t), as shares of failure codes read from
  `runs/run_010/summary.json`: π_t puts its mass where the snapshot has almost no examples,
  a blind spot.
- `gradient_connection`: the token chain y_1 ... y_T of a correct completion of the running
  example, one scalar advantage A from `score()` and run_001's mean reward, and the same A
  multiplying every token's log-probability gradient. The tokens are named, not cut by a
  tokenizer: how many tokens `Final: 323` takes is Milestone 3's question to predict.
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
from course.reports.png import SMALL_PT, figure_png, new_figure, plain, styled
from course.runs import read_json
from course.scorer import CHECKS, score

RUNNING_EXAMPLE = {"id": "dev-001", "prompt": "Compute 17*19. Output exactly one line: "
                   "Final: <int>", "expected_answer": 323}
FROZEN_SET_SIZE = 60
"""How many completions the frozen snapshot holds (as many as our dev split)."""
LATER_SAMPLES = 400
"""How many completions of the trained policy the sketch draws."""
CLUSTER_CENTRES = {"correct": (-1.9, 1.95), "wrong answer": (1.9, 1.95),
                   "not an integer": (1.9, -1.15), "other failures": (-1.9, -1.15)}
"""Where each style sits in the sketch's 2-D 'completion space' (layout only, not data)."""


GROUPS = {"correct": ("correct",), "wrong answer": ("wrong_answer",),
          "not an integer": ("not_an_integer",)}
"""The clusters of the sketch: failure codes of the strict scorer; every other code is
"other failures"."""


def distribution_shift_data(run: Path = RUNS_DIR / "run_010") -> dict[str, Any]:
    """What the frozen snapshot holds (the stand-in's completions, scored) and what the trained
    token policy writes (π_t's fresh samples, scored), as shares per cluster of failure codes,
    read from the run's `summary.json` (run_010: trained on the `answer_anywhere` proxy).

    Returns `{groups, snapshot, pi_t, frozen, later}`: shares (S,) and the number of dots drawn
    for each, `FROZEN_SET_SIZE` for the snapshot and `LATER_SAMPLES` for π_t.
    """
    summary = read_json(run, "summary.json")
    names = (*GROUPS, "other failures")

    def shares(codes: dict[str, float]) -> np.ndarray:
        grouped = [sum(codes.get(c, 0.0) for c in GROUPS[name]) for name in GROUPS]
        return np.array([*grouped, max(0.0, 1.0 - sum(grouped))])

    snapshot = shares(summary["stale"]["codes"])
    pi_t = shares(summary["fresh_trained"]["codes"])
    return {"groups": names, "snapshot": snapshot, "pi_t": pi_t, "steps": summary["steps"],
            "frozen": np.rint(snapshot * FROZEN_SET_SIZE).astype(int),
            "later": np.rint(pi_t * LATER_SAMPLES).astype(int)}


@styled
def distribution_shift_figure(data: dict[str, Any], seed: int = 0) -> Any:
    """The frozen snapshot (written by the scripted stand-in, not by a policy at step 0, so not
    called π_0) versus completions of π_t: one cluster per group of failure codes, one dot per
    completion; the blind spot is where π_t's share most exceeds the snapshot's."""
    snapshot, pi_t, frozen, later = (data["snapshot"], data["pi_t"], data["frozen"],
                                     data["later"])
    rng = np.random.default_rng(seed)
    fig = new_figure(5.6)
    ax = fig.add_subplot()
    for g, group in enumerate(data["groups"]):
        cx, cy = CLUSTER_CENTRES[group]
        old = rng.normal((cx, cy), 0.28, size=(frozen[g], 2))
        new = rng.normal((cx, cy), 0.34, size=(later[g], 2))
        ax.scatter(new[:, 0], new[:, 1], s=10, color="tab:orange", alpha=0.4,
                   label=rf"$\pi_t$: fresh samples after {data['steps']} steps"
                   if g == 0 else None)
        ax.scatter(old[:, 0], old[:, 1], s=26, color="tab:blue", edgecolor="white", lw=0.5,
                   label="the frozen snapshot, written by the scripted stand-in"
                   if g == 0 else None)
        ax.annotate(shift_label(group, snapshot[g], pi_t[g], frozen[g]), (cx, cy - 1.5),
                    ha="center", va="center", fontsize=SMALL_PT,
                    bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1})
    blind = data["groups"][int(np.argmax(pi_t - snapshot))]
    centre = CLUSTER_CENTRES[blind]
    ax.add_patch(_ellipse(centre, "tab:red"))
    ax.annotate("blind spot:\nwhere $\\pi_t$ lives,\nthe frozen set\nbarely looks",
                (centre[0] - 1.9, centre[1]), ha="center", va="center", color="tab:red")
    ax.set(xlim=(-3.5, 3.5), ylim=(-3.2, 3.0), xticks=[], yticks=[],
           title="Frozen rollouts lie about the future: the snapshot\n"
                 r"(scripted stand-in) versus $\pi_t$ (trained token policy, run_010)")
    ax.grid(False)
    fig.legend(loc="outside lower center", ncol=2)
    return fig


def shift_label(group: str, snapshot: float, pi_t: float, frozen: int) -> str:
    """The text under one cluster of the distribution-shift sketch."""
    return (f"{group}\nsnapshot = {snapshot:.2f}, $\\pi_t$ = {pi_t:.2f}\n"
            f"frozen examples: {frozen}")


def _ellipse(centre: tuple[float, float], color: str) -> Any:
    from matplotlib.patches import Ellipse

    return Ellipse(centre, 2.2, 1.8, fill=False, ls="--", lw=1.5, color=color)


TOKENS = ("$y_1$", "$y_2$", r"$\cdots$", "$y_T$")
"""The completion's tokens as the figure names them (mathtext), the gap `$\\cdots$` standing
for the tokens between y_2 and y_T. Milestone 1 draws this figure, and Milestone 3 asks its
reader to predict how many tokens `Final: 323` takes and whether ` 323` is one: a figure
drawn with a real tokenizer's pieces gave that answer away two milestones early (issue 31)."""
GAP = r"$\cdots$"


def gradient_connection_data(run: Path = RUNS_DIR / "run_001") -> dict[str, Any]:
    """A correct completion of the running example (`dev-001`), its tokens named y_1 ... y_T
    (`TOKENS`), the strict scorer's reward for it, the baseline b = the run's mean reward
    (run_001: the frozen rollouts), and A = r - b."""
    answer = f"Final: {RUNNING_EXAMPLE['expected_answer']}"
    reward = score(RUNNING_EXAMPLE, answer)["reward"]
    baseline = read_json(run, "summary.json")["mean_reward"]
    return {"tokens": list(TOKENS), "reward": reward, "baseline": baseline,
            "advantage": reward - baseline}


CHAIN_X = (0.5, 1.95, 3.25, 4.55, 5.85, 7.3)
"""Where the prompt, each token and `score()` sit (axis units, 0 to 10)."""


def gradient_label(advantage: float) -> str:
    """What reaches each token: the advantage times its log-probability gradient."""
    return f"${advantage:+.2f}$\n" + r"$\cdot\,\nabla \log \pi$"


def advantage_label(reward: float, baseline: float, advantage: float) -> str:
    """The box that computes the advantage: A = r - b with the numbers put in."""
    return f"$A = r - b$\n$= {reward:.0f} - {baseline:.2f}$\n$= {advantage:+.2f}$"


@styled
def gradient_connection_figure(data: dict[str, Any]) -> Any:
    """One advantage, every token: Δ log π(y_t) ∝ A · ∇ log π(y_t | prefix) for each t; under
    the gap between y_2 and y_T, the same gap."""
    tokens, reward, baseline = data["tokens"], data["reward"], data["baseline"]
    advantage = data["advantage"]
    fig = new_figure(3.4)
    ax = fig.add_subplot()
    ax.set(xlim=(-0.1, 10), ylim=(-0.3, 3.7), xticks=[], yticks=[])
    ax.axis("off")
    chain = ["prompt", *tokens, "score($y$)"]
    xs = CHAIN_X if len(chain) == len(CHAIN_X) else \
        tuple(np.linspace(CHAIN_X[0], CHAIN_X[-1], len(chain)))
    boxes = []
    for i, (x, label) in enumerate(zip(xs, chain, strict=True)):
        boxes.append(ax.text(x, 3.2, label, ha="center", va="center",
                             bbox={"boxstyle": "round", "fc": "#e8eefc"
                                   if 0 < i < len(chain) - 1 else "#f3f3f3", "ec": "#555"}))
        if i:
            ax.annotate("", (x, 3.2), (xs[i - 1], 3.2),
                        arrowprops={"arrowstyle": "->", "patchA": boxes[i - 1].get_bbox_patch(),
                                    "patchB": boxes[i].get_bbox_patch(), "shrinkA": 3,
                                    "shrinkB": 3})
    a_x = 9.1
    a_box = ax.text(a_x, 3.2, advantage_label(reward, baseline, advantage), ha="center",
                    va="center", bbox={"boxstyle": "round", "fc": "#fff1d6",
                                       "ec": "tab:orange"})
    ax.annotate("", (a_x, 3.2), (xs[-1], 3.2),
                arrowprops={"arrowstyle": "->", "patchA": boxes[-1].get_bbox_patch(),
                            "patchB": a_box.get_bbox_patch(), "shrinkA": 3, "shrinkB": 3})
    ax.annotate("", (a_x, 1.35), (a_x, 2.7),
                arrowprops={"arrowstyle": "->", "color": "tab:orange", "lw": 2})
    ax.plot([xs[1], a_x], [1.35, 1.35], color="tab:orange", lw=1.8)
    for x, token in zip(xs[1:-1], tokens, strict=True):
        ax.annotate("", (x, 2.85), (x, 1.45), arrowprops={"arrowstyle": "->", "color": "#888"})
        ax.text(x, 0.95, GAP if token == GAP else gradient_label(advantage), ha="center",
                va="center", color="tab:orange")
    ax.text(5.0, 0.0, "The same scalar multiplies the log-prob gradient of every sampled "
            "token:\n" + r"loss $= -A \cdot \Sigma_t\, \log \pi(y_t \mid \mathrm{prefix})$",
            ha="center", va="center")
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
        (r"Policy $\pi_\theta$ (tokens, logits)", "samples token ids, one per step"),
        ("Token ids", str(ids)),
        ("Detokenize", f"ids → {text!r}"),
        ("Text completion", repr(text)),
        ("Parse / extract (course.scorer.parse)", f"parsed_answer = {details['parsed_answer']}"),
        ("Rubric checks", f"{passed}/{len(CHECKS)} checks pass"),
        ("Reward", f"{result['reward']:.1f}  (code {details['code']!r})"),
    ]


@styled
def token_text_interface_figure(layers: list[tuple[str, str]]) -> Any:
    """The layers top to bottom; the line between tokens and text separates gradients from
    the verifier."""
    fig = new_figure(5.4)
    ax = fig.add_subplot()
    ax.set(xlim=(0, 10), ylim=(0.4, len(layers) + 0.6), xticks=[], yticks=[])
    ax.axis("off")
    for row, (name, value) in enumerate(layers):
        y = len(layers) - row
        above = row < 2
        ax.text(2.45, y, name, ha="center", va="center",
                bbox={"boxstyle": "round", "fc": "#e8eefc" if above else "#e9f7ec", "ec": "#555"})
        ax.text(5.15, y, plain(value), ha="left", va="center", fontsize=SMALL_PT,
                family="monospace")
        if row:
            ax.annotate("", (2.45, y + 0.28), (2.45, y + 0.72), arrowprops={"arrowstyle": "->"})
    line_y = len(layers) - 1.5
    ax.axhline(line_y, xmin=0.0, xmax=1.0, color="tab:red", ls="--")
    ax.text(10, line_y + 0.1, "gradients live above the line", ha="right", va="bottom",
            color="tab:red")
    ax.text(10, line_y - 0.1, "the verifier lives below it", ha="right", va="top",
            color="tab:red")
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
