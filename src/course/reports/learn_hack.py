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

Both runs train from each seed of `SEEDS` (`measure` keeps each seed's training, so the two
runs share it) and report the numbers a lesson quotes over all of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from course import data, runs
from course.data import Record
from course.evaluation import evaluate
from course.formatting import code_span, inline_code, markdown_table, prose_text, rounded
from course.jsonfiles import json_bytes
from course.learn import LearnConfig, fresh_samples, rewards_of, train
from course.reports import learn
from course.reports.learn import (
    SEEDS,
    SEEDS_LOG,
    checkpoints,
    config_record,
    curve_png,
    over_seeds,
    run_manifest,
    saved_samples,
    seeds_log,
    seeds_table,
    smoothed,
    train_log_bytes,
)
from course.reports.png import figure_png, new_figure, plain, styled
from course.rubrics import RUBRICS
from course.runs import RunFiles
from course.scorer import score
from course.token_policy import Rollouts, sequence_log_prob

CONFIG = LearnConfig(reward="answer_anywhere", lr=10.0, steps=300, batch_size=8)
"""The canonical runs: a hackable proxy pays, no KL penalty, lr 10 (the top of the range
measured stable for β = 0 on the strict reward), 300 steps."""
EVAL_SAMPLES = 32
"""Fresh completions per prompt drawn from the reference (step 0) and the trained policy."""
SHOWN = 10
"""How many distinct strings each table lists."""
SMOOTH = 10
"""The strict curve's peak is read on a mean over 10 steps (one step is one noisy batch)."""


@cache
def measure(config: LearnConfig) -> dict[str, Any]:
    """Train on the proxy; then draw fresh samples of the reference and of the trained policy,
    score both with the proxy and the strict scorer, and score the snapshot too. Kept per
    config: run_010 and run_011 read the same trainings (callers must not change the result)."""
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
            "entropy": [float(-sequence_log_prob(policy, rollouts).mean())
                        for policy, rollouts in ((reference, start), (learner, end))],
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


def mean_length(rows: Sequence[dict[str, Any]]) -> float:
    """Mean length in characters of the completions in `rows` (0 if there are none)."""
    return float(np.mean([len(r["completion"]) for r in rows])) if rows else 0.0


def summarise(config: LearnConfig, m: dict[str, Any]) -> dict[str, Any]:
    logs, start, end = m["logs"], m["start"], m["end"]
    curve = smoothed([e.pass_at_1 for e in logs], SMOOTH)
    peak = int(np.argmax(curve))
    found = exploits(end)
    in_snapshot = Counter(r["completion"] for r in m["snapshot"])
    at_start = Counter(r["completion"] for r in start)
    n_end = len(end)
    never_written = sum(n for text, n in found.items() if at_start[text] == 0)
    return {
        "kind": "learn_hack",
        "proxy": config.reward,
        "curve": [{"step": e.step, "proxy": rounded(e.mean_reward),
                   "strict": rounded(e.pass_at_1), "kl": rounded(e.kl)} for e in logs],
        "start": {"proxy": rounded(np.mean([r["proxy"] for r in start])),
                  "strict": rounded(np.mean([r["strict"] for r in start]))},
        "strict_peak": {"step": peak + 1, "strict": rounded(curve[peak]),
                        "smoothing": SMOOTH},
        "end": {"proxy": rounded(np.mean([r["proxy"] for r in end])),
                "strict": rounded(np.mean([r["strict"] for r in end]))},
        "exploit_share": {"start": rounded(sum(exploits(start).values()) / n_end),
                          "end": rounded(sum(found.values()) / n_end)},
        "exploit_mass_never_written_by_reference": rounded(never_written
                                                           / max(1, sum(found.values()))),
        "mean_length": {"exploits": rounded(mean_length([r for r in end if r["proxy"] == 1.0
                                                         and r["strict"] == 0.0])),
                        "correct": rounded(mean_length([r for r in end if r["strict"] == 1.0]))},
        "entropy": {"start": rounded(m["entropy"][0]), "end": rounded(m["entropy"][1])},
        "exploits_found": [{"completion": text, "count_at_end": count,
                            "in_snapshot": in_snapshot[text], "in_reference_samples":
                            at_start[text]} for text, count in found.most_common(SHOWN)],
        "found_never_in_snapshot": sum(1 for text in found if in_snapshot[text] == 0),
        "distinct_exploits": len(found),
        "eval_samples_per_prompt": EVAL_SAMPLES,
    }


def key_numbers(s: dict[str, Any]) -> dict[str, float]:
    """What a lesson quotes from one seed's run_011."""
    return {"strict_start": s["start"]["strict"], "strict_peak": s["strict_peak"]["strict"],
            "strict_peak_step": s["strict_peak"]["step"], "strict_end": s["end"]["strict"],
            "proxy_start": s["start"]["proxy"], "proxy_end": s["end"]["proxy"],
            "exploit_share_start": s["exploit_share"]["start"],
            "exploit_share_end": s["exploit_share"]["end"],
            "exploit_mass_never_written_by_reference":
                s["exploit_mass_never_written_by_reference"],
            "exploit_length": s["mean_length"]["exploits"],
            "correct_length": s["mean_length"]["correct"],
            "entropy_start": s["entropy"]["start"], "entropy_end": s["entropy"]["end"]}


SEED_LABELS = {
    "strict_start": "strict pass@1, reference (fresh samples)",
    "strict_peak": "strict pass@1, best 10-step mean during training",
    "strict_peak_step": "... at step",
    "strict_end": "strict pass@1, trained (fresh samples)",
    "proxy_start": "proxy reward, reference",
    "proxy_end": "proxy reward, trained",
    "exploit_share_start": "exploit share, reference",
    "exploit_share_end": "exploit share, trained",
    "exploit_mass_never_written_by_reference":
        "share of the exploits on strings the reference never wrote in its samples",
    "exploit_length": "mean length of an exploit (characters)",
    "correct_length": "mean length of a correct answer (characters)",
    "entropy_start": "entropy -log pi(y), reference (nats)",
    "entropy_end": "entropy -log pi(y), trained (nats)",
}
"""The rows of run_011's table over seeds."""


def kept_numbers(summary: dict[str, Any]) -> dict[str, Any]:
    """What run_011 keeps of one seed's run: its key numbers, and its most written exploit."""
    found = summary["exploits_found"]
    return {**key_numbers(summary), "top_exploit": found[0]["completion"] if found else None}


def with_seeds(summary: dict[str, Any], every: list[dict[str, Any]]) -> dict[str, Any]:
    """`summary` (seed 0's) with `over_seeds` added from `every` seed's `kept_numbers`: the key
    numbers over seeds, and each seed's most written exploit."""
    return {**summary, "over_seeds": {
        **over_seeds([{k: v for k, v in x.items() if k != "top_exploit"} for x in every]),
        "top_exploit": [x["top_exploit"] for x in every]}}


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
        f"{config.steps} steps, lr = {config.lr}, β = {config.beta}, seed {config.seed}. On "
        f"{s['eval_samples_per_prompt']} fresh samples per prompt of the reference and of the "
        f"trained policy: the proxy pays {s['start']['proxy']:.3f}, then "
        f"{s['end']['proxy']:.3f}; the strict pass@1 goes from {s['start']['strict']:.3f} to "
        f"{s['end']['strict']:.3f} (its best {s['strict_peak']['smoothing']}-step mean during "
        f"training was {s['strict_peak']['strict']:.3f}, at step {s['strict_peak']['step']}). "
        f"Exploits (paid, refused by the spec) are {s['exploit_share']['start']:.1%} of the "
        f"reference's samples and {s['exploit_share']['end']:.1%} of the trained policy's. "
        "Train = eval: the policy is trained and measured on the same prompts.",
        "",
        "Every string below was assembled piece by piece by the policy; none is a piece of the "
        f"vocabulary or a completion written into the code. {s['found_never_in_snapshot']} of "
        f"the {s['distinct_exploits']} distinct exploit strings never occur in the frozen "
        "snapshot.",
        "",
        *table,
        "",
        f"## Over seeds {SEEDS[0]}-{SEEDS[-1]}",
        "",
        "The same run from each seed; the files of this folder are seed 0's. The most written "
        "exploit, per seed: " + ", ".join(code_span(t) if t is not None else "none"
                                          for t in s["over_seeds"]["top_exploit"]) + ".",
        "",
        *seeds_table(s["over_seeds"], SEED_LABELS),
        "",
        "![proxy and strict over training](learning_curve.png)",
        "",
        "Files: `summary.json`, `learning_curve.png`, `train_log.txt`, `samples/`, "
        f"`{SEEDS_LOG}` (each seed's numbers), `manifest.json` (with the sha256 of every "
        "file).",
        "",
    ])


def files(config: LearnConfig, note: str, m: dict[str, Any], later: list[dict[str, Any]],
          record_git: bool = False) -> RunFiles:
    """run_011's folder: seed 0's measurement `m` in full, with `later` (the other seeds'
    `kept_numbers`) over seeds and in `SEEDS_LOG`; the manifest seals every file."""
    summary = summarise(config, m)
    every = [kept_numbers(summary), *later]
    summary = with_seeds(summary, every)
    record = {**config_record(config), "eval_samples": EVAL_SAMPLES}
    return runs.sealed(run_manifest("learn_hack", note, record, config, m["fit"], record_git), {
        "README.md": render_readme(config, note, summary).encode("utf-8"),
        "learning_curve.png": curve_png(m["logs"], config,
                                        f"Optimising {config.reward}, measuring strict"),
        **saved_samples(m["problems"], m["saved"], config.reward),
        SEEDS_LOG: seeds_log(every),
        "summary.json": json_bytes(summary),
        "train_log.txt": train_log_bytes(m["logs"]),
    })


def seed_numbers(config: LearnConfig) -> dict[str, Any]:
    """run_011's `kept_numbers` of `config` trained from its seed."""
    return kept_numbers(summarise(config, measure(config)))


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """run_011 from every seed (about 13 s on one core, shared with run_010), and its files."""
    return learn.build_over_seeds(config, note, measure, files, seed_numbers, record_git)


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
    groups = [("frozen snapshot (scripted stand-in)", s["stale"]["codes"]),
              ("token policy's reference, fresh (step 0)", s["fresh_step_0"]["codes"]),
              (f"trained, fresh (step {s['steps']})", s["fresh_trained"]["codes"])]
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
        f"Over seeds {SEEDS[0]}-{SEEDS[-1]} (the same training from each seed; the tables "
        "and the figure are seed 0's):",
        "",
        *seeds_table(s["over_seeds"], SHIFT_LABELS),
        "",
        *markdown_table(["completion never in the snapshot", "count", "strict code"], rows),
        "",
        "![failure codes: snapshot vs fresh](distribution_shift.png)",
        "",
        f"Files: `summary.json`, `distribution_shift.png`, `{SEEDS_LOG}` (each seed's numbers), "
        "`manifest.json` (with the sha256 of every file).",
        "",
    ])


SHIFT_LABELS = {
    "stale": "pass rate on the frozen snapshot (what stale Loop A reports)",
    "fresh_reference": "pass rate, reference's fresh samples",
    "fresh_trained": "pass rate, trained policy's fresh samples",
    "share_never_in_snapshot": "share of the trained policy's completions never in the snapshot",
}
"""The rows of run_010's table over seeds."""


def shift_numbers(s: dict[str, Any]) -> dict[str, float]:
    """What a lesson quotes from one seed's run_010."""
    return {"stale": s["stale"]["pass_rate"], "fresh_reference": s["fresh_step_0"]["pass_rate"],
            "fresh_trained": s["fresh_trained"]["pass_rate"],
            "share_never_in_snapshot": s["share_of_fresh_never_in_snapshot"]}


def shift_files(config: LearnConfig, note: str, m: dict[str, Any],
                later: list[dict[str, Any]], record_git: bool = False) -> RunFiles:
    """run_010's folder: seed 0's measurement `m` in full, with `later` (the other seeds'
    `shift_numbers`) over seeds and in `SEEDS_LOG`; the manifest seals every file."""
    summary = summarise_shift(config, m)
    every = [shift_numbers(summary), *later]
    summary["over_seeds"] = over_seeds(every)
    record = {**config_record(config), "eval_samples": EVAL_SAMPLES}
    return runs.sealed(run_manifest("learn_shift", note, record, config, m["fit"], record_git), {
        "README.md": render_shift_readme(note, summary).encode("utf-8"),
        "distribution_shift.png": shift_figure(summary),
        SEEDS_LOG: seeds_log(every),
        "summary.json": json_bytes(summary),
    })


def shift_seed_numbers(config: LearnConfig) -> dict[str, Any]:
    """run_010's `shift_numbers` of `config` trained from its seed."""
    return shift_numbers(summarise_shift(config, measure(config)))


def build_shift_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """run_010 from every seed (the trainings of run_011), and its files."""
    return learn.build_over_seeds(config, note, measure, shift_files, shift_seed_numbers,
                                  record_git)
