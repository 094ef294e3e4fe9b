"""The KL sweep on tokens (canonical `runs/run_012`): does a KL penalty delay or prevent the
hack of `runs/run_011`?

The same proxy training as run_011, once per β in `BETAS`, each from the same seed: the
reward is r - β · log(π_θ(y) / π_ref(y)). For each β: the final proxy reward, the final
strict pass@1, the final KL to the reference, and the exploit share over training (completions
the proxy pays and the spec refuses), with the first step at which it reaches
`EXPLOIT_LINE`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from course.formatting import inline_code, markdown_table, prose_text, rounded
from course.jsonfiles import json_bytes
from course.learn import LearnConfig, Update, reinforce_step, setup
from course.reports.learn import config_record, run_manifest
from course.reports.learn_hack import CONFIG as HACK_CONFIG
from course.reports.png import figure_png, new_figure, plain, styled
from course.runs import RunFiles
from course.token_policy import learner_for

BETAS = (0.0, 0.05, 0.1, 0.2, 0.5)
"""The KL coefficients compared; 0 is run_011's setting."""
CONFIG = replace(HACK_CONFIG, steps=120)
"""run_011's proxy training, 120 steps per β."""
EXPLOIT_LINE = 0.4
"""The exploit share that counts as "the hack has taken over" in the summary."""
LAST = 10
"""Final values are means over the last 10 steps (one step is one noisy batch)."""


def exploit_share(update: Update) -> float:
    """Share of the batch the proxy pays and the strict scorer refuses."""
    return float(np.mean((update.reward == 1.0) & (update.strict == 0.0)))


def sweep(config: LearnConfig) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Train once per β (same seed each time); per step: proxy, strict, KL, exploit share."""
    problems, reference, fit = setup(config)
    results = []
    for beta in BETAS:
        run = replace(config, beta=beta)
        rng = np.random.default_rng(run.seed)
        learner = learner_for(reference, len(problems))
        rows = []
        for step in range(1, run.steps + 1):
            update = reinforce_step(learner, problems, run, rng)
            rows.append({"step": step, "proxy": float(update.reward.mean()),
                         "strict": float(update.strict.mean()),
                         "kl": float(update.kl_steps.mean()), "exploits": exploit_share(update)})
        results.append({"beta": beta, "rows": rows})
    return fit, results


def summarise(config: LearnConfig, results: list[dict[str, Any]]) -> dict[str, Any]:
    per_beta = []
    for result in results:
        rows = result["rows"][-LAST:]
        first = next((r["step"] for r in result["rows"] if r["exploits"] >= EXPLOIT_LINE), None)
        per_beta.append({
            "beta": result["beta"],
            "final_proxy": rounded(np.mean([r["proxy"] for r in rows])),
            "final_strict": rounded(np.mean([r["strict"] for r in rows])),
            "final_kl": rounded(np.mean([r["kl"] for r in rows])),
            "final_exploit_share": rounded(np.mean([r["exploits"] for r in rows])),
            "first_step_exploits_reach_line": first,
            "curve": [{k: (v if k == "step" else rounded(v)) for k, v in r.items()}
                      for r in result["rows"]],
        })
    return {"kind": "learn_kl_sweep", "proxy": config.reward, "steps": config.steps,
            "exploit_line": EXPLOIT_LINE, "final_is_mean_of_last": LAST, "betas": per_beta}


@styled
def figure(summary: dict[str, Any]) -> bytes:
    fig = new_figure(6.4)
    top, bottom = fig.subplots(2, 1, sharex=True)
    for row in summary["betas"]:
        steps = [r["step"] for r in row["curve"]]
        top.plot(steps, [r["strict"] for r in row["curve"]], label=rf"$\beta$ = {row['beta']}")
        bottom.plot(steps, [r["exploits"] for r in row["curve"]],
                    label=rf"$\beta$ = {row['beta']}")
    top.set(ylabel="strict pass@1 (measured)", ylim=(0, 1), title=r"The true goal, per $\beta$")
    bottom.axhline(summary["exploit_line"], color="gray", ls=":")
    bottom.set(xlabel="update step", ylabel="share of exploits\nin the batch", ylim=(0, 1),
               title=f"Exploits ({plain(summary['proxy'])} pays, the spec refuses)")
    fig.legend(*top.get_legend_handles_labels(), loc="outside right center")
    return figure_png(fig)


def render_readme(note: str, s: dict[str, Any]) -> str:
    rows = [[str(r["beta"]), f"{r['final_proxy']:.3f}", f"{r['final_strict']:.3f}",
             f"{r['final_kl']:.3f}", f"{r['final_exploit_share']:.3f}",
             str(r["first_step_exploits_reach_line"] or "never")] for r in s["betas"]]
    return "\n".join([
        f"# KL sweep: does staying near the reference delay the {inline_code(s['proxy'])} hack?",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"{s['steps']} steps per β, the same seed each time; final values are the mean of the "
        f"last {s['final_is_mean_of_last']} steps.",
        "",
        *markdown_table(["β", "proxy reward", "strict pass@1", "KL (nats)", "exploit share",
                         f"first step with exploits ≥ {s['exploit_line']}"], rows),
        "",
        "![strict pass@1 and exploit share per β](kl_sweep.png)",
        "",
    ])


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    fit, results = sweep(config)
    summary = summarise(config, results)
    record = {**config_record(config), "betas": list(BETAS), "exploit_line": EXPLOIT_LINE}
    return {
        "README.md": render_readme(note, summary).encode("utf-8"),
        "kl_sweep.png": figure(summary),
        "manifest.json": json_bytes(run_manifest("learn_kl_sweep", note, record, config, fit,
                                                 record_git)),
        "summary.json": json_bytes(summary),
    }
