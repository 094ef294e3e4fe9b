"""The KL tradeoff run (`runs/run_005`): the exact optimum for a sweep of β, as a table, a CSV
and the reward-versus-KL frontier."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from typing import Any

import numpy as np

from course.formatting import inline_code, rounded
from course.jsonfiles import json_bytes
from course.kl import KLConfig, sweep
from course.reports.png import SMALL_PT, figure_png, new_figure, styled
from course.runs import RunFiles, manifest


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
        "reference_expected_reward": rounded(pi_ref @ rewards, 6),
        "best_action": best,
        "best_reward": float(rewards[best]),
        "kl_of_all_mass_on_best": rounded(-np.log(pi_ref[best]), 6),
        "betas": {"min": config.beta_min, "max": config.beta_max, "count": config.num_betas},
        "frontier_monotone": bool(np.all(np.diff(reward) <= 0) and np.all(np.diff(kl) <= 0)),
        "sweep": [{"beta": rounded(row["beta"], 6),
                   "expected_reward": rounded(row["expected_reward"], 6),
                   "kl": rounded(row["kl"], 6), "top_action": config.actions[row["top3"][0]],
                   "top_prob": rounded(row["policy"][row["top3"][0]], 6)} for row in rows],
    }


@styled
def tradeoff_png(config: KLConfig, rows: list[dict[str, Any]], summary: dict[str, Any]) -> bytes:
    kl = [row["kl"] for row in rows]
    reward = [row["expected_reward"] for row in rows]
    fig = new_figure(4.8)
    ax = fig.add_subplot()
    ax.plot(kl, reward, "-", color="grey", lw=1)
    points = ax.scatter(kl, reward, c=np.log10([row["beta"] for row in rows]), cmap="viridis",
                        zorder=3)
    # Label a point by its β only when it is far enough from the last labelled one to read.
    span_x, span_y = max(kl) or 1.0, (max(reward) - min(reward)) or 1.0
    last = None
    for row in rows:
        here = np.array([row["kl"] / span_x, row["expected_reward"] / span_y])
        if last is None or np.hypot(*(here - last)) > 0.12:
            ax.annotate(rf"$\beta$ = {row['beta']:.3g}", (row["kl"], row["expected_reward"]),
                        textcoords="offset points", xytext=(7, -12), fontsize=SMALL_PT)
            last = here
    ax.axhline(summary["reference_expected_reward"], color="tab:red", ls=":",
               label=r"reference policy $\pi_{\mathrm{ref}}$ ($\beta \to \infty$)")
    ax.axhline(summary["best_reward"], color="tab:green", ls=":",
               label=r"best style only ($\beta \to 0$)")
    fig.colorbar(points, ax=ax, label=r"$\log_{10} \beta$")
    ax.set(xlabel=r"$\mathrm{KL}(\pi_\beta \,\Vert\, \pi_{\mathrm{ref}})$  [nats]",
           ylabel=r"expected reward $\mathbb{E}[r]$",
           title="KL-regularised optimum: reward gained\nversus drift from the reference")
    ax.set_xlim(-0.04 * span_x, 1.16 * span_x)          # room for the last point's label
    ax.legend(loc="lower right")
    return figure_png(fig)


def render_readme(config: KLConfig, summary: dict[str, Any]) -> str:
    sweep_rows = summary["sweep"]
    picks = sweep_rows[::4] + ([] if (len(sweep_rows) - 1) % 4 == 0 else sweep_rows[-1:])
    table = "\n".join(f"| {r['beta']:.4g} | {r['expected_reward']:.4f} | {r['kl']:.4f} | "
                      f"{r['top_action']} ({r['top_prob']:.3f}) |" for r in picks)
    best = inline_code(config.actions[summary["best_action"]])
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
constraint) the policy moves mass toward {best} (r = {summary['best_reward']}): reward rises
toward {summary['best_reward']} and KL rises toward {summary['kl_of_all_mass_on_best']:.4f}
nats (= −log π_ref of that style, all mass on it). As β grows the policy stays at π_ref.
Both curves move together: reward and KL increase as β decreases
(`frontier_monotone` = {str(summary['frontier_monotone']).lower()}).

![Expected reward against KL from the reference, one point per β](kl_tradeoff.png)

In LLM terms: a strong KL penalty keeps the trained model close to the SFT model (safer,
more familiar behaviour, less reward gained); a weak one lets it chase reward wherever the
reward points, including into odd corners if the reward has loopholes. Note also that a style
the reference never produces can never be reached by this update: the KL would be infinite.

## Files

`kl_tradeoff.csv` (β, expected reward, KL, top-3 styles with probabilities), `kl_tradeoff.png`
(the reward-versus-KL frontier, points labelled by β), `summary.json`, `manifest.json`.
Reproduce: `course runs regenerate run_005` or `course kl --out runs/my_kl --note "..."`.
"""


def build_run(config: KLConfig, note: str, *, record_git: bool = True) -> RunFiles:
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
