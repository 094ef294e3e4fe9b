"""Learning versus selection at equal compute (canonical `runs/run_009`), on tokens.

Two ways to spend the same number of samples on each prompt: Loop C trains the policy on
them (pass@1 of fresh samples, step by step); Loop B draws as many from the unchanged
reference and keeps the best (Best-of-N with the strict scorer, an oracle: pass@N). Then
pass@k for k = 1..64 before and after training, each from `EVAL_SAMPLES` fresh samples per
prompt: does learning raise pass@1 while lowering pass@k at large k (sharpening)?
"""

from __future__ import annotations

from typing import Any

import numpy as np

from course.formatting import prose_text, rounded
from course.jsonfiles import json_bytes
from course.learn import LearnConfig, correct_counts, fresh_samples, train
from course.reports.learn import (
    checkpoints,
    config_record,
    run_manifest,
    saved_samples,
    train_log_bytes,
)
from course.reports.png import figure_png, new_figure, styled
from course.runs import RunFiles
from course.selection import pass_at_k_curve

K_MAX = 64
"""pass@k is reported for k = 1..64."""
EVAL_SAMPLES = 256
"""Fresh completions per prompt behind each pass@k curve (the estimator needs n >= k)."""

CONFIG = LearnConfig(reward="strict", steps=100, batch_size=8)
"""The canonical run: strict reward, no KL penalty, 8 fresh samples per prompt per step."""


def mean_curve(counts: np.ndarray, n: int, k_max: int) -> np.ndarray:
    """Mean over prompts of the unbiased pass@k, k = 1..k_max, from c of n per prompt."""
    return np.mean([pass_at_k_curve(n, int(c))[:k_max] for c in counts], axis=0)


def measure(config: LearnConfig) -> dict[str, Any]:
    """Train, then draw the selection budget and the evaluation samples; one generator."""
    rng = np.random.default_rng(config.seed)
    run = train(config, rng, checkpoints(config.steps))
    problems, reference, learner = run.problems, run.reference, run.learner
    budget = config.steps * config.batch_size            # samples per prompt the learner used
    n = len(problems)
    selection = correct_counts(problems, fresh_samples(reference, n, budget, rng), budget)
    before = correct_counts(problems, fresh_samples(reference, n, EVAL_SAMPLES, rng),
                            EVAL_SAMPLES)
    after = correct_counts(problems, fresh_samples(learner, n, EVAL_SAMPLES, rng),
                           EVAL_SAMPLES)
    return {"problems": problems, "fit": run.fit, "logs": run.logs, "saved": run.saved,
            "best_of_n": mean_curve(selection, budget, budget),
            "before": mean_curve(before, EVAL_SAMPLES, K_MAX),
            "after": mean_curve(after, EVAL_SAMPLES, K_MAX),
            "lost": [p["id"] for p, b, a in zip(problems, before, after, strict=True)
                     if b > 0 and a == 0],
            "gained": [p["id"] for p, b, a in zip(problems, before, after, strict=True)
                       if b == 0 and a > 0]}


def summarise(config: LearnConfig, m: dict[str, Any]) -> dict[str, Any]:
    b = config.batch_size
    at_step = [{"step": e.step, "samples_per_prompt": e.step * b,
                "learning_pass_at_1": rounded(e.pass_at_1),
                "selection_best_of_n": rounded(m["best_of_n"][e.step * b - 1])}
               for e in m["logs"]]
    before, after = m["before"], m["after"]
    crossing = next((k for k in range(1, K_MAX + 1) if after[k - 1] < before[k - 1]), None)
    return {
        "kind": "learn_vs_select",
        "equal_compute": at_step,
        "final": at_step[-1],
        "pass_at_k": {"k": list(range(1, K_MAX + 1)),
                      "before": [rounded(v) for v in before],
                      "after": [rounded(v) for v in after]},
        "pass_at_1_before_after": [rounded(before[0]), rounded(after[0])],
        "pass_at_64_before_after": [rounded(before[-1]), rounded(after[-1])],
        "first_k_where_training_is_worse": crossing,
        "prompts_lost": m["lost"],
        "prompts_gained": m["gained"],
    }


@styled
def figure(config: LearnConfig, summary: dict[str, Any]) -> bytes:
    fig = new_figure(4.6)
    left, right = fig.subplots(1, 2)
    rows = summary["equal_compute"]
    samples = [r["samples_per_prompt"] for r in rows]
    left.plot(samples, [r["learning_pass_at_1"] for r in rows], color="tab:blue",
              label="Loop C: pass@1 of\nthe policy being trained")
    left.plot(samples, [r["selection_best_of_n"] for r in rows], color="tab:green",
              label="Loop B: Best-of-N from\nthe reference (oracle)")
    left.set(xscale="log", xlabel="samples per prompt spent so far", ylim=(0, 1.02),
             ylabel="share of prompts solved", title="Equal compute:\nlearn or select?")
    left.legend(loc="lower right")
    k = summary["pass_at_k"]["k"]
    right.plot(k, summary["pass_at_k"]["before"], color="tab:gray", label="reference (step 0)")
    right.plot(k, summary["pass_at_k"]["after"], color="tab:blue",
               label=f"after {config.steps} steps")
    right.set(xscale="log", xlabel="k", ylabel="pass@k", ylim=(0, 1.02),
              title=f"pass@k from {EVAL_SAMPLES} fresh\nsamples per prompt")
    right.legend(loc="lower right")
    return figure_png(fig)


def render_readme(config: LearnConfig, note: str, summary: dict[str, Any]) -> str:
    final = summary["final"]
    b1, a1 = summary["pass_at_1_before_after"]
    b64, a64 = summary["pass_at_64_before_after"]
    crossing = summary["first_k_where_training_is_worse"]
    sharpening = (f"From k = {crossing} on, the trained policy solves FEWER prompts than the "
                  "reference: training sharpened it onto what it already did well and lost "
                  f"the rest ({len(summary['prompts_lost'])} prompts it could once solve now "
                  "get no correct sample)." if crossing is not None else
                  "At no k up to 64 is the trained policy worse than the reference: no "
                  "sharpening shows in this run.")
    lines = [
        "# Learning versus selection at equal compute (Loop C on tokens vs Loop B)",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"After {final['step']} steps the learner has used {final['samples_per_prompt']} "
        f"samples per prompt. Its pass@1 is {final['learning_pass_at_1']:.3f}; Best-of-"
        f"{final['samples_per_prompt']} from the untouched reference, with the strict scorer "
        f"as the oracle, solves {final['selection_best_of_n']:.3f} of the prompts.",
        "",
        "Selection needs the answer key at deployment and many samples per question; the "
        "trained policy answers with one sample and no key. They are different products of "
        "the same compute.",
        "",
        "| | reference | trained |",
        "| --- | --- | --- |",
        f"| pass@1 | {b1:.3f} | {a1:.3f} |",
        f"| pass@64 | {b64:.3f} | {a64:.3f} |",
        "",
        sharpening,
        "",
        "![learning vs selection](learn_vs_select.png)",
        "",
        "Files: `summary.json`, `learn_vs_select.png`, `train_log.txt`, `samples/`, "
        "`manifest.json` (with how the reference policy was made).",
        "",
    ]
    return "\n".join(lines)


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    m = measure(config)
    summary = summarise(config, m)
    record = {**config_record(config), "eval_samples": EVAL_SAMPLES, "k_max": K_MAX}
    return {
        "README.md": render_readme(config, note, summary).encode("utf-8"),
        "learn_vs_select.png": figure(config, summary),
        "manifest.json": json_bytes(run_manifest("learn_vs_select", note, record, config,
                                                 m["fit"], record_git)),
        **saved_samples(m["problems"], m["saved"], config.reward),
        "summary.json": json_bytes(summary),
        "train_log.txt": train_log_bytes(m["logs"]),
    }
