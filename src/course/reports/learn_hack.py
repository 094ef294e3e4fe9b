"""A hack the optimiser finds (canonical `runs/run_011`), and what the frozen snapshot misses
about the policy that found it (canonical `runs/run_010`).

The token policy is trained on `answer_anywhere` (pays whenever the expected digits occur
anywhere in the text) while the strict scorer only measures. Nobody writes the exploit into
the policy or the vocabulary: every completion is assembled piece by piece. This module
measures what the optimiser found:

- `build_run` (run_011): the proxy and the true goal over training, and the exploit strings
  the trained policy writes (paid by the proxy, refused by the spec), verbatim, each with how
  often it appears in the frozen snapshot and in the reference's own samples at step 0;
- `build_shift_run` (run_010): the trained policy scored on the frozen step-0 snapshot (what
  Loop A on old data would report) versus on its own fresh samples, and the completions and
  failure codes that appear in fresh samples but never in the snapshot: the blind spot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from course import data
from course.data import Record
from course.evaluation import evaluate
from course.formatting import code_span, inline_code, markdown_table, prose_text, rounded
from course.jsonfiles import json_bytes
from course.learn import LearnConfig, fresh_samples, rewards_of, train
from course.reports.learn import (
    checkpoints,
    config_record,
    curve_png,
    run_manifest,
    saved_samples,
    train_log_bytes,
)
from course.reports.png import figure_png, new_figure, plain, styled
from course.rubrics import RUBRICS
from course.runs import RunFiles
from course.scorer import score
from course.token_policy import Rollouts

CONFIG = LearnConfig(reward="answer_anywhere", steps=150, batch_size=8)
"""The canonical runs: a hackable proxy pays, no KL penalty, 150 steps."""
EVAL_SAMPLES = 32
"""Fresh completions per prompt drawn from the reference (step 0) and the trained policy."""
SHOWN = 10
"""How many distinct strings each table lists."""


def measure(config: LearnConfig) -> dict[str, Any]:
    """Train on the proxy; then draw fresh samples of the reference and of the trained policy,
    score both with the proxy and the strict scorer, and score the snapshot too."""
    rng = np.random.default_rng(config.seed)
    run = train(config, rng, checkpoints(config.steps))
    problems, reference, learner = run.problems, run.reference, run.learner
    n = len(problems)
    start = fresh_samples(reference, n, EVAL_SAMPLES, rng)
    end = fresh_samples(learner, n, EVAL_SAMPLES, rng)
    snapshot = data.load_rollouts(config.snapshot)
    return {"problems": problems, "fit": run.fit, "logs": run.logs, "saved": run.saved,
            "start": judged(problems, start, config.reward),
            "end": judged(problems, end, config.reward),
            "snapshot": [{"completion": r["completion"], "code": r["details"]["code"],
                          "strict": r["reward"]}
                         for r in evaluate(problems, snapshot, config.snapshot)]}


def judged(problems: Sequence[Record], rollouts: Rollouts, reward: str) -> list[dict[str, Any]]:
    """Each completion with the proxy's and the strict scorer's verdict."""
    proxy = rewards_of(RUBRICS[reward], problems, rollouts)
    strict = [score(problems[x], text) for x, text in zip(rollouts.x, rollouts.texts, strict=True)]
    return [{"completion": text, "proxy": float(p), "strict": s["reward"],
             "code": s["details"]["code"]}
            for text, p, s in zip(rollouts.texts, proxy, strict, strict=True)]


def exploits(rows: Sequence[dict[str, Any]]) -> Counter[str]:
    """Completions the proxy pays and the spec refuses: the reward hacks, by string."""
    return Counter(r["completion"] for r in rows if r["proxy"] == 1.0 and r["strict"] == 0.0)


def summarise(config: LearnConfig, m: dict[str, Any]) -> dict[str, Any]:
    logs = m["logs"]
    peak = max(logs, key=lambda e: e.pass_at_1)
    found = exploits(m["end"])
    in_snapshot = Counter(r["completion"] for r in m["snapshot"])
    at_start = Counter(r["completion"] for r in m["start"])
    n_end = len(m["end"])
    return {
        "kind": "learn_hack",
        "proxy": config.reward,
        "curve": [{"step": e.step, "proxy": rounded(e.mean_reward),
                   "strict": rounded(e.pass_at_1), "kl": rounded(e.kl)} for e in logs],
        "start": {"proxy": rounded(logs[0].mean_reward), "strict": rounded(logs[0].pass_at_1)},
        "strict_peak": {"step": peak.step, "strict": rounded(peak.pass_at_1),
                        "proxy": rounded(peak.mean_reward)},
        "end": {"proxy": rounded(logs[-1].mean_reward), "strict": rounded(logs[-1].pass_at_1)},
        "exploit_share": {"start": rounded(sum(exploits(m["start"]).values()) / n_end),
                          "end": rounded(sum(found.values()) / n_end)},
        "exploits_found": [{"completion": text, "count_at_end": count,
                            "in_snapshot": in_snapshot[text], "in_reference_samples":
                            at_start[text]} for text, count in found.most_common(SHOWN)],
        "found_never_in_snapshot": sum(1 for text in found if in_snapshot[text] == 0),
        "distinct_exploits": len(found),
        "eval_samples_per_prompt": EVAL_SAMPLES,
    }


def render_readme(config: LearnConfig, note: str, s: dict[str, Any]) -> str:
    table = markdown_table(
        ["exploit string (verbatim)", f"times in the trained policy's "
         f"{s['eval_samples_per_prompt']} fresh samples per prompt", "in the frozen snapshot",
         "in the reference's samples at step 0"],
        [[code_span(e["completion"]), str(e["count_at_end"]), str(e["in_snapshot"]),
          str(e["in_reference_samples"])] for e in s["exploits_found"]])
    return "\n".join([
        f"# A hack the optimiser found: training on {inline_code(s['proxy'])}, measuring the spec",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"The proxy pays from {s['start']['proxy']:.3f} up to {s['end']['proxy']:.3f}; the "
        f"strict pass@1 goes from {s['start']['strict']:.3f} to a peak of "
        f"{s['strict_peak']['strict']:.3f} at step {s['strict_peak']['step']}, then down to "
        f"{s['end']['strict']:.3f}. Exploits (paid, refused by the spec) are "
        f"{s['exploit_share']['start']:.1%} of the reference's samples and "
        f"{s['exploit_share']['end']:.1%} of the trained policy's.",
        "",
        "Every string below was assembled piece by piece by the policy; none is a piece of the "
        f"vocabulary or a completion written into the code. {s['found_never_in_snapshot']} of "
        f"the {s['distinct_exploits']} distinct exploit strings never occur in the frozen "
        "snapshot.",
        "",
        *table,
        "",
        "![proxy and strict over training](learning_curve.png)",
        "",
        "Files: `summary.json`, `learning_curve.png`, `train_log.txt`, `samples/`, "
        "`manifest.json`.",
        "",
    ])


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    m = measure(config)
    summary = summarise(config, m)
    record = {**config_record(config), "eval_samples": EVAL_SAMPLES}
    return {
        "README.md": render_readme(config, note, summary).encode("utf-8"),
        "learning_curve.png": curve_png(m["logs"], config,
                                        f"Optimising {config.reward}, measuring strict"),
        "manifest.json": json_bytes(run_manifest("learn_hack", note, record, config, m["fit"],
                                                 record_git)),
        **saved_samples(m["problems"], m["saved"], config.reward),
        "summary.json": json_bytes(summary),
        "train_log.txt": train_log_bytes(m["logs"]),
    }


# -- run_010: the frozen snapshot versus fresh samples of the trained policy ----------------------

def codes(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    counts = Counter(r["code"] for r in rows)
    return {code: rounded(count / len(rows)) for code, count in counts.most_common()}


def summarise_shift(config: LearnConfig, m: dict[str, Any]) -> dict[str, Any]:
    snapshot_texts = {r["completion"] for r in m["snapshot"]}
    snapshot_codes = codes(m["snapshot"])
    fresh = m["end"]
    unseen = Counter(r["completion"] for r in fresh if r["completion"] not in snapshot_texts)
    return {
        "kind": "learn_shift",
        "stale": {"what": "the frozen step-0 snapshot, scored by the strict scorer",
                  "pass_rate": rounded(np.mean([r["strict"] for r in m["snapshot"]])),
                  "codes": snapshot_codes},
        "fresh_step_0": {"pass_rate": rounded(np.mean([r["strict"] for r in m["start"]])),
                         "codes": codes(m["start"])},
        "fresh_trained": {"pass_rate": rounded(np.mean([r["strict"] for r in fresh])),
                          "codes": codes(fresh)},
        "codes_never_in_snapshot": sorted(set(codes(fresh)) - set(snapshot_codes)),
        "share_of_fresh_never_in_snapshot": rounded(sum(unseen.values()) / len(fresh)),
        "blind_spot_examples": [{"completion": text, "count": n,
                                 "code": next(r["code"] for r in fresh
                                              if r["completion"] == text)}
                                for text, n in unseen.most_common(SHOWN)],
        "steps": config.steps,
        "eval_samples_per_prompt": EVAL_SAMPLES,
    }


@styled
def shift_figure(s: dict[str, Any]) -> bytes:
    """The distribution-shift picture of Milestone 0, from measured shares of failure codes."""
    groups = [("frozen snapshot (step 0)", s["stale"]["codes"]),
              ("fresh, reference (step 0)", s["fresh_step_0"]["codes"]),
              (f"fresh, trained (step {s['steps']})", s["fresh_trained"]["codes"])]
    names = sorted({c for _, shares in groups for c in shares},
                   key=lambda c: -max(shares.get(c, 0) for _, shares in groups))
    fig = new_figure(4.8)
    ax = fig.add_subplot()
    ax.grid(False, axis="x")
    width = 0.27
    for i, (label, shares) in enumerate(groups):
        ax.bar(np.arange(len(names)) + (i - 1) * width, [shares.get(c, 0) for c in names],
               width, label=label)
    ax.set_xticks(np.arange(len(names)), [plain(n) for n in names], rotation=30, ha="right",
                  rotation_mode="anchor")
    ax.set(ylabel="share of completions", ylim=(0, 1),
           title="What the snapshot shows versus what the trained policy writes")
    ax.legend()
    return figure_png(fig)


def render_shift_readme(note: str, s: dict[str, Any]) -> str:
    rows = [[code_span(e["completion"]), str(e["count"]), f"`{e['code']}`"]
            for e in s["blind_spot_examples"]]
    return "\n".join([
        "# Frozen rollouts lie about a trained policy: stale versus fresh evaluation",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"Scored on the frozen step-0 snapshot, Loop A reports a pass rate of "
        f"{s['stale']['pass_rate']:.3f}, whatever the policy has become. Scored on its own "
        f"fresh samples, the policy trained for {s['steps']} steps passes "
        f"{s['fresh_trained']['pass_rate']:.3f} (the reference passed "
        f"{s['fresh_step_0']['pass_rate']:.3f} on its fresh samples at step 0).",
        "",
        f"{s['share_of_fresh_never_in_snapshot']:.1%} of the trained policy's completions never "
        "occur in the snapshot. Failure codes it produces that the snapshot never shows: "
        + (", ".join(f"`{c}`" for c in s["codes_never_in_snapshot"]) or "none") + ".",
        "",
        *markdown_table(["completion never in the snapshot", "count", "strict code"], rows),
        "",
        "![failure codes: snapshot vs fresh](distribution_shift.png)",
        "",
    ])


def build_shift_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    m = measure(config)
    summary = summarise_shift(config, m)
    record = {**config_record(config), "eval_samples": EVAL_SAMPLES}
    return {
        "README.md": render_shift_readme(note, summary).encode("utf-8"),
        "distribution_shift.png": shift_figure(summary),
        "manifest.json": json_bytes(run_manifest("learn_shift", note, record, config, m["fit"],
                                                 record_git)),
        "summary.json": json_bytes(summary),
    }
