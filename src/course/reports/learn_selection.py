"""Learning versus selection at equal compute (canonical `runs/run_009`), on tokens.

Two ways to spend the same number of samples on each prompt: Loop C trains the policy on
them (pass@1 of fresh samples, step by step); Loop B draws as many from the unchanged
reference and keeps the best (Best-of-N with the strict scorer, an oracle: pass@N). Then
pass@k for k = 1..64 before and after training, each from `EVAL_SAMPLES` fresh samples per
prompt: does learning raise pass@1 while lowering pass@k at large k (sharpening)?

Equal compute, counted honestly: step s's pass@1 is measured on the batch drawn *before* step
s's update, by a policy that has learned from (s - 1) · B samples per prompt, so that is where
the curve plots it. The final comparison sets the trained policy (all steps · B samples spent)
against Best-of-(steps · B). The policy is trained and measured on the same 60 prompts (train
= eval): pass@1 here says what the policy learned about these prompts, not how it generalises.

So two more measurements ask what the learner learned. The ablation draws fresh samples from
the trained policy with one of its two tables set back to zero (`ablations`): the shared
format table alone, the per-problem rows alone, both. The held-out training (`held_out`)
trains the same way on every other prompt only (`LearnConfig.held_out`) and measures pass@1 on
the prompts it trained on and on the ones it never saw, before and after.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from course import runs
from course.data import Record
from course.formatting import prose_text, rounded
from course.jsonfiles import json_bytes
from course.learn import LearnConfig, correct_counts, fresh_samples, train, trained_prompts
from course.reports import learn
from course.reports.learn import (
    SEEDS,
    SEEDS_LOG,
    checkpoints,
    config_record,
    over_seeds,
    run_manifest,
    saved_samples,
    seeds_log,
    seeds_table,
    train_log_bytes,
)
from course.reports.png import figure_png, new_figure, styled
from course.runs import RunFiles
from course.selection import pass_at_k_curve
from course.token_policy import Policy

K_MAX = 64
"""pass@k is reported for k = 1..64."""
EVAL_SAMPLES = 256
"""Fresh completions per prompt behind each pass@k curve (the estimator needs n >= k)."""

CONFIG = LearnConfig(reward="strict", lr=3.0, steps=100, batch_size=8)
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
            "ablation": ablations(learner, problems, rng),
            "held_out": held_out(config),
            "best_of_n": mean_curve(selection, budget, budget),
            "before": mean_curve(before, EVAL_SAMPLES, K_MAX),
            "after": mean_curve(after, EVAL_SAMPLES, K_MAX),
            "lost": [p["id"] for p, b, a in zip(problems, before, after, strict=True)
                     if b > 0 and a == 0],
            "gained": [p["id"] for p, b, a in zip(problems, before, after, strict=True)
                       if b == 0 and a > 0]}


ABLATIONS = {"format_table_only": (True, False), "problem_rows_only": (False, True),
             "both_tables": (True, True)}
"""Which of the trained tables each ablation keeps: (the shared format table, the rows of each
problem); a table not kept is set back to zero, where the learner started."""


def ablations(learner: Policy, problems: list[Record], rng: np.random.Generator
              ) -> dict[str, float]:
    """Strict pass@1 of `learner` with some of its tables set back to zero (`ABLATIONS`), each
    from `EVAL_SAMPLES` fresh samples per prompt."""
    out = {}
    for name, kept in ABLATIONS.items():
        tables = [t if keep else np.zeros_like(t)
                  for t, keep in zip(learner.tables, kept, strict=True)]
        counts = correct_counts(problems, fresh_samples(replace(learner, tables=tables),
                                                        len(problems), EVAL_SAMPLES, rng),
                                EVAL_SAMPLES)
        out[name] = float(counts.mean() / EVAL_SAMPLES)
    return out


def held_out(config: LearnConfig) -> dict[str, float]:
    """Train on every other prompt only (`LearnConfig.held_out`), from the same seed, then
    strict pass@1 of the reference and of the trained policy on the trained prompts and on the
    held-out ones, each from `EVAL_SAMPLES` fresh samples per prompt."""
    split = replace(config, held_out=True)
    rng = np.random.default_rng([config.seed, 3])    # a generator of its own
    run = train(split, rng)
    n = len(run.problems)
    trained = np.isin(np.arange(n), trained_prompts(split, n))
    out = {}
    for name, policy in (("reference", run.reference), ("trained", run.learner)):
        counts = correct_counts(run.problems, fresh_samples(policy, n, EVAL_SAMPLES, rng),
                                EVAL_SAMPLES) / EVAL_SAMPLES
        out[f"{name}_on_trained_prompts"] = float(counts[trained].mean())
        out[f"{name}_on_held_out_prompts"] = float(counts[~trained].mean())
    return out


def summarise(config: LearnConfig, m: dict[str, Any]) -> dict[str, Any]:
    b, budget = config.batch_size, config.steps * config.batch_size
    at_step = [{"step": e.step, "samples_per_prompt": (e.step - 1) * b,
                "learning_pass_at_1": rounded(e.pass_at_1),
                "selection_best_of_n": rounded(m["best_of_n"][(e.step - 1) * b - 1])}
               for e in m["logs"][1:]]          # step 1's policy has spent nothing yet
    before, after = m["before"], m["after"]
    gap = after - before
    crossing = next((k for k in range(1, K_MAX + 1) if after[k - 1] < before[k - 1]), None)
    return {
        "kind": "learn_vs_select",
        "equal_compute": at_step,
        "final": {"samples_per_prompt": budget, "learning_pass_at_1": rounded(after[0]),
                  "selection_best_of_n": rounded(m["best_of_n"][budget - 1])},
        "pass_at_k": {"k": list(range(1, K_MAX + 1)),
                      "before": [rounded(v) for v in before],
                      "after": [rounded(v) for v in after]},
        "pass_at_1_before_after": [rounded(before[0]), rounded(after[0])],
        "pass_at_64_before_after": [rounded(before[-1]), rounded(after[-1])],
        "smallest_gap": {"k": int(np.argmin(gap)) + 1, "gap": rounded(gap.min())},
        "first_k_where_training_is_worse": crossing,
        "prompts_lost": m["lost"],
        "prompts_gained": m["gained"],
        "ablation_pass_at_1": {k: rounded(v) for k, v in m["ablation"].items()},
        "held_out_pass_at_1": {k: rounded(v) for k, v in m["held_out"].items()},
    }


def key_numbers(summary: dict[str, Any]) -> dict[str, float]:
    """What a lesson quotes from one seed's run."""
    final = summary["final"]
    return {"trained_pass_at_1": final["learning_pass_at_1"],
            "best_of_budget": final["selection_best_of_n"],
            "selection_minus_learning": final["selection_best_of_n"]
            - final["learning_pass_at_1"],
            "reference_pass_at_1": summary["pass_at_1_before_after"][0],
            "reference_pass_at_64": summary["pass_at_64_before_after"][0],
            "trained_pass_at_64": summary["pass_at_64_before_after"][1],
            "smallest_gap_k_up_to_64": summary["smallest_gap"]["gap"],
            "prompts_lost": len(summary["prompts_lost"]),
            "prompts_gained": len(summary["prompts_gained"]),
            **{f"ablation_{k}": v for k, v in summary["ablation_pass_at_1"].items()},
            **{f"held_out_{k}": v for k, v in summary["held_out_pass_at_1"].items()}}


SEED_LABELS = {
    "trained_pass_at_1": "pass@1 of the trained policy",
    "best_of_budget": "Best-of-N from the reference, N = the learner's budget",
    "selection_minus_learning": "selection minus learning",
    "reference_pass_at_1": "pass@1 of the reference",
    "reference_pass_at_64": "pass@64 of the reference",
    "trained_pass_at_64": "pass@64 of the trained policy",
    "smallest_gap_k_up_to_64": "smallest after-minus-before gap, k = 1 to 64",
    "prompts_lost": "prompts lost (some of 256 right before, none after)",
    "prompts_gained": "prompts gained (none of 256 right before, some after)",
    "ablation_format_table_only": "pass@1, trained format table only",
    "ablation_problem_rows_only": "pass@1, trained problem rows only",
    "ablation_both_tables": "pass@1, both trained tables",
    "held_out_reference_on_trained_prompts": "held-out split: reference, trained prompts",
    "held_out_trained_on_trained_prompts": "held-out split: trained, trained prompts",
    "held_out_reference_on_held_out_prompts": "held-out split: reference, held-out prompts",
    "held_out_trained_on_held_out_prompts": "held-out split: trained, held-out prompts",
}
"""The rows of the README's table over seeds, in the order a reader meets them."""


@styled
def figure(config: LearnConfig, summary: dict[str, Any]) -> bytes:
    fig = new_figure(4.6)
    left, right = fig.subplots(1, 2)
    rows = summary["equal_compute"]
    samples = [r["samples_per_prompt"] for r in rows]
    final = summary["final"]
    left.plot([*samples, final["samples_per_prompt"]],
              [*(r["learning_pass_at_1"] for r in rows), final["learning_pass_at_1"]],
              color="tab:blue", label="Loop C: pass@1 of\nthe policy being trained")
    left.plot([*samples, final["samples_per_prompt"]],
              [*(r["selection_best_of_n"] for r in rows), final["selection_best_of_n"]],
              color="tab:green",
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
    ab, ho = summary["ablation_pass_at_1"], summary["held_out_pass_at_1"]
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
        f"After {config.steps} steps the learner has used {final['samples_per_prompt']} "
        f"samples per prompt. Its pass@1 (from {EVAL_SAMPLES} fresh samples per prompt) is "
        f"{final['learning_pass_at_1']:.3f}; Best-of-{final['samples_per_prompt']} from the "
        "untouched reference, with the strict scorer as the oracle, solves "
        f"{final['selection_best_of_n']:.3f} of the prompts. Train = eval: the policy is "
        "trained and measured on the same prompts.",
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
        "## What it learned: an ablation and a held-out split",
        "",
        "Strict pass@1 of the trained policy with a table set back to zero: the shared "
        f"format table alone {ab['format_table_only']:.3f}, the per-problem rows alone "
        f"{ab['problem_rows_only']:.3f}, both {ab['both_tables']:.3f} (the reference: "
        f"{b1:.3f}). The same training on every other prompt only: pass@1 on the prompts it "
        f"trained on goes from {ho['reference_on_trained_prompts']:.3f} to "
        f"{ho['trained_on_trained_prompts']:.3f}, on the prompts it never saw from "
        f"{ho['reference_on_held_out_prompts']:.3f} to {ho['trained_on_held_out_prompts']:.3f}. "
        "The per-problem rows are read by one prompt each: what they learn is that prompt's "
        "completion, memorised.",
        "",
        f"## Over seeds {SEEDS[0]}-{SEEDS[-1]}",
        "",
        "The same run from each seed; the files of this folder are seed 0's.",
        "",
        *seeds_table(summary["over_seeds"], SEED_LABELS),
        "",
        "![learning vs selection](learn_vs_select.png)",
        "",
        "Files: `summary.json`, `learn_vs_select.png`, `train_log.txt`, `samples/`, "
        f"`{SEEDS_LOG}` (each seed's numbers), `manifest.json` (with how the reference policy "
        "was made, and the sha256 of every file).",
        "",
    ]
    return "\n".join(lines)


def files(config: LearnConfig, note: str, m: dict[str, Any], later: list[dict[str, Any]],
          record_git: bool = False) -> RunFiles:
    """The run folder: seed 0's measurement `m` in full, with `later` (the other seeds'
    `key_numbers`) in the table over seeds and `SEEDS_LOG`; the manifest seals every file."""
    summary = summarise(config, m)
    every = [key_numbers(summary), *later]
    summary["over_seeds"] = over_seeds(every)
    record = {**config_record(config), "eval_samples": EVAL_SAMPLES, "k_max": K_MAX}
    return runs.sealed(run_manifest("learn_vs_select", note, record, config, m["fit"],
                                    record_git), {
        "README.md": render_readme(config, note, summary).encode("utf-8"),
        "learn_vs_select.png": figure(config, summary),
        **saved_samples(m["problems"], m["saved"], config.reward),
        SEEDS_LOG: seeds_log(every),
        "summary.json": json_bytes(summary),
        "train_log.txt": train_log_bytes(m["logs"]),
    })


def seed_numbers(config: LearnConfig) -> dict[str, Any]:
    """The key numbers of `config` measured from its seed."""
    return key_numbers(summarise(config, measure(config)))


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Measure from every seed (about 15 s on one core), and the run's files."""
    return learn.build_over_seeds(config, note, measure, files, seed_numbers, record_git)
