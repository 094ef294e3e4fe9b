"""The Toy Tax, felt (canonical `runs/run_013`): the same REINFORCE, on four styles and on text.

Milestone 1's bandit (`course.bandit`, one learner as in run_003) and the token policy
(`course.learn`, strict reward) are both measured by the share of the gap they close between
where they start and the best expected reward their world allows (0.9 for the bandit's best
style; 1.0 for a policy that always writes the right answer). For each: the steps and samples
until half the gap is closed, and how much of it is closed at the end. Both learners run from
each seed of `SEEDS` (the bandit from the same seed); the curves are seed 0's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from course import runs
from course.bandit import BanditConfig, expected_reward
from course.bandit import train as train_bandit
from course.formatting import markdown_table, prose_text, rounded
from course.jsonfiles import json_bytes
from course.learn import LearnConfig, train
from course.reports import learn
from course.reports.learn import (
    SEEDS,
    SEEDS_LOG,
    config_record,
    over_seeds,
    run_manifest,
    seeds_log,
    seeds_table,
    smoothed,
)
from course.reports.png import figure_png, new_figure, styled
from course.runs import RunFiles

CONFIG = LearnConfig(reward="strict", lr=3.0, steps=200, batch_size=8)
"""The token learner: strict reward, no KL penalty, lr 3, 200 steps."""
SMOOTH = 10
"""The token curve is a mean over 10 consecutive steps (one batch is noisy)."""


def gap_closed(curve: Sequence[float], start: float, best: float) -> list[float]:
    """(r_t - start) / (best - start): 0 where a learner starts, 1 at the best possible."""
    return [(r - start) / (best - start) for r in curve]


def first_at(values: Sequence[float], line: float) -> int | None:
    """The first step (1-based) at which `values` reaches `line`, or None."""
    return next((i + 1 for i, v in enumerate(values) if v >= line), None)


def measure(config: LearnConfig) -> dict[str, Any]:
    bandit = BanditConfig(seed=config.seed)
    history = train_bandit(bandit, np.random.default_rng(bandit.seed))
    means = np.asarray(bandit.reward_probs)
    bandit_curve = [float(expected_reward(s.new_theta, means)) for s in history]
    bandit_start = float(expected_reward(history[0].theta, means))
    run = train(config, np.random.default_rng(config.seed))
    problems, fit, logs = run.problems, run.fit, run.logs
    raw = [e.pass_at_1 for e in logs]
    token_curve = smoothed(raw, SMOOTH)
    return {"fit": fit, "n_problems": len(problems),
            "bandit": {"curve": bandit_curve, "start": bandit_start, "best": max(means),
                       "samples_per_step": bandit.batch_size, "actions": bandit.k},
            "tokens": {"curve": token_curve, "start": float(raw[0]), "best": 1.0,
                       "samples_per_step": config.batch_size * len(problems)}}


def summarise(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "learn_toy_tax", "token_curve_smoothing": SMOOTH}
    for name in ("bandit", "tokens"):
        w = m[name]
        closed = gap_closed(w["curve"], w["start"], w["best"])
        half = first_at(closed, 0.5)
        out[name] = {"start": rounded(w["start"]), "best_possible": rounded(w["best"]),
                     "steps": len(closed), "samples_per_step": w["samples_per_step"],
                     "step_half_gap_closed": half,
                     "samples_half_gap_closed": None if half is None
                     else half * w["samples_per_step"],
                     "gap_closed_at_end": rounded(closed[-1]),
                     "gap_closed": [rounded(v) for v in closed]}
    out["bandit"]["actions"] = m["bandit"]["actions"]
    out["tokens"]["problems"] = m["n_problems"]
    return out


@styled
def figure(s: dict[str, Any]) -> bytes:
    fig = new_figure(4.4)
    ax = fig.add_subplot()
    for name, label in (("bandit", f"bandit: {s['bandit']['actions']} styles, 1 sample a step"),
                        ("tokens", f"tokens: {s['tokens']['problems']} problems, "
                                   f"{s['tokens']['samples_per_step']} samples a step")):
        w = s[name]
        samples = np.arange(1, len(w["gap_closed"]) + 1) * w["samples_per_step"]
        ax.plot(samples, w["gap_closed"], label=label)
    ax.axhline(0.5, color="gray", ls=":")
    ax.set(xscale="log", xlabel="samples drawn so far", ylim=(-0.1, 1.05),
           ylabel="share of the gap to the best closed", title="The Toy Tax: same update, "
           "different worlds")
    ax.legend(loc="upper right")
    return figure_png(fig)


def render_readme(note: str, s: dict[str, Any]) -> str:
    rows = []
    for name, world in (("bandit (run_003's learner)", s["bandit"]),
                        ("token policy (strict)", s["tokens"])):
        half = world["step_half_gap_closed"]
        rows.append([name, f"{world['start']:.3f} → best {world['best_possible']:.1f}",
                     "never" if half is None else f"{half} steps, "
                     f"{world['samples_half_gap_closed']:,} samples",
                     f"{world['gap_closed_at_end']:.0%} after {world['steps']} steps"])
    return "\n".join([
        "# The Toy Tax, felt: the same REINFORCE on four styles and on text",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        *markdown_table(["learner", "expected reward: start → best", "half the gap closed",
                         "gap closed at the end"], rows),
        "",
        "The bandit chooses among 4 whole styles and every sample tells it about the one thing "
        "it decides. The token policy decides up to 12 pieces per completion for each of "
        f"{s['tokens']['problems']} problems; one reward at the end is shared by every piece, a "
        "prompt whose right answer the reference almost never writes gives almost no signal, "
        "and what is learned for one problem's digits does not transfer to another's. Read "
        "the toy curves as a microscope on the mechanism, not as a speed to expect.",
        "",
        f"Over seeds {SEEDS[0]}-{SEEDS[-1]} (both learners from each seed; the table above and "
        "the figure are seed 0's; a learner that never closes half the gap counts as one step "
        "past its budget):",
        "",
        *seeds_table(s["over_seeds"], SEED_LABELS),
        "",
        "![gap closed against samples](toy_tax.png)",
        "",
        f"Files: `summary.json`, `toy_tax.png`, `{SEEDS_LOG}` (each seed's numbers), "
        "`manifest.json` (with the sha256 of every file).",
        "",
    ])


def key_numbers(s: dict[str, Any]) -> dict[str, float]:
    """What a lesson quotes from one seed's run: per learner, the gap closed at the end and the
    samples until half of it was closed (the whole budget and one more step if never)."""
    out = {}
    for name in ("bandit", "tokens"):
        w = s[name]
        never = (w["steps"] + 1) * w["samples_per_step"]
        out[f"{name}_gap_closed_at_end"] = w["gap_closed_at_end"]
        out[f"{name}_samples_half_gap_closed"] = w["samples_half_gap_closed"] or never
    return out


SEED_LABELS = {
    "bandit_gap_closed_at_end": "bandit: share of the gap closed at the end",
    "bandit_samples_half_gap_closed": "bandit: samples until half the gap is closed",
    "tokens_gap_closed_at_end": "token policy: share of the gap closed at the end",
    "tokens_samples_half_gap_closed": "token policy: samples until half the gap is closed",
}
"""The rows of the README's table over seeds."""


def files(config: LearnConfig, note: str, m: dict[str, Any], later: list[dict[str, Any]],
          record_git: bool = False) -> RunFiles:
    """The run folder: seed 0's measurement `m` in full, with `later` (the other seeds'
    `key_numbers`) in the table over seeds and `SEEDS_LOG`; the manifest seals every file."""
    summary = summarise(m)
    every = [key_numbers(summary), *later]
    summary["over_seeds"] = over_seeds(every)
    record = {**config_record(config), "bandit": "course.bandit.BanditConfig() (run_003)",
              "smoothing": SMOOTH}
    return runs.sealed(run_manifest("learn_toy_tax", note, record, config, m["fit"],
                                    record_git), {
        "README.md": render_readme(note, summary).encode("utf-8"),
        SEEDS_LOG: seeds_log(every),
        "summary.json": json_bytes(summary),
        "toy_tax.png": figure(summary),
    })


def seed_numbers(config: LearnConfig) -> dict[str, Any]:
    """The key numbers of both learners run from `config`'s seed."""
    return key_numbers(summarise(measure(config)))


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Both learners from every seed (about 7 s on one core), and the run's files."""
    return learn.build_over_seeds(config, note, measure, files, seed_numbers, record_git)
