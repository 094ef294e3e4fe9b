"""The KL sweep on tokens (canonical `runs/run_012`): does a KL penalty delay or prevent the
hack of `runs/run_011`?

The same proxy training as run_011, once per β in `BETAS` and seed in `SEEDS`: the reward is
r - β · log(π_θ(y) / π_ref(y)). For each β: the final proxy reward, the final strict pass@1,
the final KL to the reference, and the exploit share over training (completions the proxy pays
and the spec refuses), with the first step at which it reaches `EXPLOIT_LINE`. The curves are
seed 0's; the finals are given for every seed, with their median and range.

The run keeps every training's rows (`RAW`); its other files are made from them alone
(`derived_files`), so that `course runs verify` checks the run in seconds (`spot_check`: every
file made again from the saved rows, and one training per β trained again), while `course runs
regenerate run_012` trains all of them again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from course import runs
from course.data import Record
from course.formatting import inline_code, markdown_table, prose_text, rounded
from course.jsonfiles import json_bytes, jsonl_bytes
from course.learn import LearnConfig, learner_of, reinforce_step, setup
from course.progress import Tally
from course.reports.learn import (
    SEEDS,
    config_record,
    exploit_share,
    over_seeds,
    run_manifest,
    spread,
)
from course.reports.learn_hack import CONFIG as HACK_CONFIG
from course.reports.png import figure_png, new_figure, plain, styled
from course.runs import RunFiles
from course.token_policy import Policy

BETAS = (0.0, 0.05, 0.1, 0.2)
"""The KL coefficients compared; 0 is run_011's setting. At run_011's lr of 10 the learner is
stable only up to β = 0.2 (`scripts/stability_sweep.py`), so the sweep stops there."""
CONFIG = HACK_CONFIG
"""run_011's proxy training, for each β."""
EXPLOIT_LINE = 0.4
"""The exploit share that counts as "the hack has taken over" in the summary."""
LAST = 10
"""Final values are means over the last 10 steps (one step is one noisy batch)."""
RAW = "logs/sweep.jsonl"
"""Every training, one line each: β, seed, and per step [proxy, strict, KL, exploit share]."""
COLUMNS = ("proxy", "strict", "kl", "exploits")
SPOT_SEED = SEEDS[0]
"""`spot_check` trains this seed again for every β."""


def training(config: LearnConfig, problems: Sequence[Record], reference: Policy
             ) -> list[dict[str, Any]]:
    """One training of `config`'s β and seed; per step: proxy, strict, KL, exploit share."""
    rng = np.random.default_rng(config.seed)
    learner = learner_of(config, reference, len(problems))
    rows = []
    for step in range(1, config.steps + 1):
        update = reinforce_step(learner, problems, config, rng)
        rows.append({"step": step, "proxy": float(update.reward.mean()),
                     "strict": float(update.strict.mean()),
                     "kl": float(update.kl_steps.mean()),
                     "exploits": exploit_share(update.reward, update.strict)})
    return rows


def sweep(config: LearnConfig) -> list[dict[str, Any]]:
    """Train once per β and seed."""
    problems, reference, _ = setup(config)
    tally = Tally(len(BETAS) * len(SEEDS))
    return [{"beta": beta, "seed": seed,
             "rows": training(replace(config, beta=beta, seed=seed), problems, reference)}
            for beta, seed in tally.counted(product(BETAS, SEEDS))]


def raw_line(result: dict[str, Any]) -> dict[str, Any]:
    """A training as one line of `RAW` (floats exactly, as JSON writes them)."""
    return {"beta": result["beta"], "seed": result["seed"],
            "rows": [[row[column] for column in COLUMNS] for row in result["rows"]]}


def read_raw(raw: bytes) -> list[dict[str, Any]]:
    """The trainings of `RAW` as `sweep` returns them; ValueError if a line is not one."""
    results = []
    for line in raw.decode("utf-8").split("\n"):
        if line:
            record = json.loads(line)
            rows = [{"step": step, **dict(zip(COLUMNS, values, strict=True))}
                    for step, values in enumerate(record["rows"], start=1)]
            results.append({"beta": record["beta"], "seed": record["seed"], "rows": rows})
    if [(r["beta"], r["seed"]) for r in results] != list(product(BETAS, SEEDS)):
        raise ValueError(f"{RAW} must hold one training per β of {BETAS} and seed of {SEEDS}")
    return results


def finals(rows: list[dict[str, Any]]) -> dict[str, float]:
    """One training's final values: means over its last `LAST` steps."""
    last = rows[-LAST:]
    return {"final_proxy": float(np.mean([r["proxy"] for r in last])),
            "final_strict": float(np.mean([r["strict"] for r in last])),
            "final_kl": float(np.mean([r["kl"] for r in last])),
            "final_exploit_share": float(np.mean([r["exploits"] for r in last]))}


def summarise(config: LearnConfig, results: list[dict[str, Any]]) -> dict[str, Any]:
    per_beta = []
    for beta in BETAS:
        runs = [r for r in results if r["beta"] == beta]
        seed_0 = runs[0]["rows"]
        per_beta.append({
            "beta": beta,
            **{key: rounded(value) for key, value in finals(seed_0).items()},
            "first_step_exploits_reach_line": [
                next((r["step"] for r in run["rows"] if r["exploits"] >= EXPLOIT_LINE), None)
                for run in runs],
            "over_seeds": over_seeds([finals(run["rows"]) for run in runs]),
            "curve": [{k: (v if k == "step" else rounded(v)) for k, v in r.items()}
                      for r in seed_0],
        })
    # step 1 samples the reference before any update: the same batch for every β of a seed
    start = [r["rows"][0]["exploits"] for r in results if r["beta"] == BETAS[0]]
    return {"kind": "learn_kl_sweep", "proxy": config.reward, "steps": config.steps,
            "lr": config.lr, "exploit_line": EXPLOIT_LINE, "final_is_mean_of_last": LAST,
            "seeds": list(SEEDS), "exploit_share_at_step_1": spread(start), "betas": per_beta}


@styled
def figure(summary: dict[str, Any]) -> bytes:
    fig = new_figure(6.4)
    top, bottom = fig.subplots(2, 1, sharex=True)
    for row in summary["betas"]:
        steps = [r["step"] for r in row["curve"]]
        top.plot(steps, [r["strict"] for r in row["curve"]], label=rf"$\beta$ = {row['beta']}")
        bottom.plot(steps, [r["exploits"] for r in row["curve"]],
                    label=rf"$\beta$ = {row['beta']}")
    top.set(ylabel="strict pass@1 (measured)", ylim=(0, 1),
            title=r"The true goal, per $\beta$ (seed 0)")
    bottom.axhline(summary["exploit_line"], color="gray", ls=":")
    bottom.set(xlabel="update step", ylabel="share of exploits\nin the batch", ylim=(0, 1),
               title=f"Exploits ({plain(summary['proxy'])} pays, the spec refuses)")
    fig.legend(*top.get_legend_handles_labels(), loc="outside right center")
    return figure_png(fig)


def render_readme(note: str, s: dict[str, Any]) -> str:
    def cell(row: dict[str, Any], key: str) -> str:
        v = row["over_seeds"][key]
        return f"{v['median']:.3f} ({v['min']:.3f} to {v['max']:.3f})"
    rows = [[str(r["beta"]), cell(r, "final_proxy"), cell(r, "final_strict"),
             cell(r, "final_kl"), cell(r, "final_exploit_share"),
             ", ".join(str(step or "never") for step in r["first_step_exploits_reach_line"])]
            for r in s["betas"]]
    start = s["exploit_share_at_step_1"]
    return "\n".join([
        f"# KL sweep: does staying near the reference delay the {inline_code(s['proxy'])} hack?",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"{s['steps']} steps per β at lr = {s['lr']}, from each of seeds "
        f"{s['seeds'][0]}-{s['seeds'][-1]}. Each cell is the median over seeds, with the "
        f"range in brackets, of the mean of the last {s['final_is_mean_of_last']} steps. At "
        f"step 1, before any update, exploits are {start['median']:.3f} of the batch "
        f"({start['min']:.3f} to {start['max']:.3f}). The curves in the figure are seed 0's.",
        "",
        *markdown_table(["β", "proxy reward", "strict pass@1", "KL (nats)", "exploit share",
                         f"first step with exploits ≥ {s['exploit_line']}, per seed"], rows),
        "",
        "![strict pass@1 and exploit share per β](kl_sweep.png)",
        "",
    ])


def derived_files(config: LearnConfig, raw: bytes, note: str,
                  record_git: bool = False) -> RunFiles:
    """The whole run folder from `RAW` alone: the summary, README, figure, and the manifest
    sealing every file (`runs.sealed`)."""
    summary = summarise(config, read_raw(raw))
    _, _, fit = setup(config)
    record = {**config_record(config), "betas": list(BETAS), "exploit_line": EXPLOIT_LINE}
    files = {RAW: raw, "README.md": render_readme(note, summary).encode("utf-8"),
             "kl_sweep.png": figure(summary), "summary.json": json_bytes(summary)}
    return runs.sealed(run_manifest("learn_kl_sweep", note, record, config, fit, record_git),
                       files)


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Train every β from every seed (about 45 s on one core), and the run's files."""
    raw = jsonl_bytes([raw_line(result) for result in sweep(config)])
    return derived_files(config, raw, note, record_git)


def spot_check(config: LearnConfig, note: str, folder: Path) -> list[str]:
    """What `course runs verify` checks of the run in `folder`, in seconds: every file made
    again from the committed `RAW` (and the seal), compared byte for byte; then seed
    `SPOT_SEED` trained again for every β, whose rows must be its saved ones exactly. One line
    per difference."""
    committed = runs.read_files(folder)
    try:
        results = read_raw(committed[RAW])
        differences = (runs.diff_files(committed, derived_files(config, committed[RAW], note))
                       + runs.unsealed(folder))
    except (KeyError, ValueError, TypeError) as err:
        return [f"{RAW} cannot be read back: {' '.join(str(err).split())}"]
    problems, reference, _ = setup(config)
    for beta in BETAS:
        again = training(replace(config, beta=beta, seed=SPOT_SEED), problems, reference)
        saved = next(r["rows"] for r in results if (r["beta"], r["seed"]) == (beta, SPOT_SEED))
        if again != saved:
            step = next(a["step"] for a, b in zip(again, saved, strict=False) if a != b)
            differences.append(f"{RAW}: β {beta}, seed {SPOT_SEED} trained again differs "
                               f"from step {step}")
    return differences
