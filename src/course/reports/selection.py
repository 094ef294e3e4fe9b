"""The Loop B run (`runs/run_002` and every `course select`): every pick for every prompt,
pass@k, the two controls, the plot, and where selection still fails."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np

from course import data
from course.data import DataError
from course.formatting import inline_code
from course.jsonfiles import json_bytes, jsonl_bytes
from course.paths import display_path
from course.reports.png import figure_png, new_figure, styled
from course.runs import RunFiles, manifest
from course.selection import (
    SelectionConfig,
    prompt_row,
    score_samples,
    summarise,
    why_no_sample_passes,
)


def _load_inputs(config: SelectionConfig) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Problems paired with their packs, after checking the pack fits the config."""
    problems = data.load_problems(config.problems)
    pairs = data.join_on_id(problems, data.load_pack(config.pack), config.pack)
    n_samples = len(pairs[0][1]["samples"])
    for _, pack in pairs:
        if len(pack["samples"]) != n_samples:
            raise DataError(config.pack, None, "samples",
                            f"prompt {pack['id']!r} has {len(pack['samples'])} samples but "
                            f"{pairs[0][1]['id']!r} has {n_samples}: pass@k needs one N")
    if config.n_values[-1] > n_samples:
        raise DataError(config.pack, None, "samples",
                        f"{n_samples} samples per prompt, but n_values asks for "
                        f"{config.n_values[-1]}")
    return pairs


def build_run(config: SelectionConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Score the pack, make every pick, and return the run folder's files.

    Files: `selection_demo.jsonl` (one line per prompt: the picks with their sample ids and
    rewards, pass@k, each sample's code and answer), `summary.json` (`summarise`),
    `pass_at_k.png`, `manifest.json` and `README.md`.
    """
    origin = data.origin(config.pack, config.provenance)  # the locked room's walls, read first
    pairs = _load_inputs(config)
    rng = np.random.default_rng(config.seed)  # the run's only randomness: the random control
    scored = {problem["id"]: score_samples(problem, pack["samples"]) for problem, pack in pairs}
    rows = [prompt_row(problem, scored[problem["id"]], config.n_values, rng)
            for problem, _ in pairs]
    summary = summarise(rows, config.n_values)
    why = {pid: why_no_sample_passes(scored[pid]) for pid in summary["selection_fails"]}
    record = manifest(
        kind="selection", note=note, config=_config_record(config, note),
        inputs={"pack": config.pack, "problems": config.problems}, seed=config.seed,
        prompt_version=origin["prompt_version"], sampling=origin["sampling"],
        origin=data.manifest_origin(origin), record_git=record_git)
    return {
        "manifest.json": json_bytes(record),
        "summary.json": json_bytes(summary),
        "selection_demo.jsonl": jsonl_bytes(rows),
        "pass_at_k.png": plot_pass_at_k(summary),
        "README.md": render_readme(config, summary, why).encode("utf-8"),
    }


def _config_record(config: SelectionConfig, note: str) -> dict[str, Any]:
    """The config as JSON: paths relative to the repository, so the bytes are portable. The
    note leads the record, as in every selection manifest since run_002."""
    record = {"note": note, **asdict(config)}
    for field in ("pack", "problems"):
        record[field] = display_path(record[field])
    record["n_values"] = list(config.n_values)
    if config.provenance is None:
        del record["provenance"]
    else:
        record["provenance"] = display_path(config.provenance)
    return record


MARKED_KS = 32
"""Up to this many samples per prompt, `plot_pass_at_k` marks and ticks every k."""


@styled
def plot_pass_at_k(summary: Mapping[str, Any]) -> bytes:
    """Mean pass@k against k, with Best-of-n and the two controls at each compared n. Each k
    gets a marker and a tick up to `MARKED_KS` samples; beyond, the curve is a line and the
    ticks are chosen by matplotlib (a tick per k at N = 3,000 made 54,000 artists, and the
    figure took most of a run's time)."""
    ks = list(range(1, summary["n_samples"] + 1))
    ns = [row["n"] for row in summary["by_n"]]
    fig = new_figure(5.8)
    ax = fig.add_subplot()
    marked = len(ks) <= MARKED_KS
    ax.plot(ks, [summary["pass_at_k"][str(k)] for k in ks], "-o" if marked else "-",
            color="tab:blue", label="pass@k (unbiased estimate over all k-subsets)")
    ax.plot(ns, [row["best_of_n"] for row in summary["by_n"]], "s", color="tab:green",
            markersize=10, fillstyle="none", markeredgewidth=1.8,
            label="Best-of-n by scorer, first n samples (oracle)")
    ax.plot(ns, [row["majority_vote"] for row in summary["by_n"]], "--^", color="tab:orange",
            label="majority vote of first n (deployable control)")
    ax.plot(ns, [row["random"] for row in summary["by_n"]], ":v", color="tab:gray",
            label="random pick among first n (luck control)")
    ax.axhline(summary["pass_at_1"], color="tab:red", linewidth=1.2,
               label=f"pass@1 = {summary['pass_at_1']:.3f}: the policy itself, unchanged")
    if marked:
        ax.set_xticks(ks)
    ax.set(xlabel="k = n, samples per prompt", ylabel="share of prompts solved",
           ylim=(0, 1.05),
           title="Loop B: more samples raise pass@k;\nthe policy did not change")
    fig.legend(loc="outside lower center")
    return figure_png(fig)


def render_readme(config: SelectionConfig, summary: Mapping[str, Any],
                  why: Mapping[str, str]) -> str:
    """The run's README: the comparison in plain words, and where selection still fails."""
    n = summary["n_samples"]
    lines = [
        f"# Loop B: selection from the frozen pack {inline_code(config.pack.name)} on "
        f"{inline_code(config.problems.name)}",
        "",
        f"{summary['n_prompts']} prompts from {inline_code(display_path(config.problems))}, "
        f"{n} frozen samples each from {inline_code(display_path(config.pack))}, scored by the "
        "strict verifier. "
        f"Seed {config.seed} drives the random control only.",
        "",
        "**The policy did not change.** Every number below comes from the same samples of the "
        "same frozen policy; what varies is how many we draw and how we pick one. A gain here "
        "is a *selection improvement* (more inference compute), never a *learning improvement*.",
        "",
        f"| strategy (N = {n}) | needs the expected answer? | share of prompts solved |",
        "| --- | --- | --- |",
        f"| first sample only (N = 1) | no | {summary['first_sample']:.3f} |",
        f"| pass@1 estimate (mean c/{n}) | - | {summary['pass_at_1']:.3f} |",
        f"| random pick among {n} (luck control) | no | {summary['random_control']:.3f} |",
        f"| majority vote over {n} parsed answers | no | {summary['majority_vote']:.3f} |",
        f"| Best-of-{n} by our scorer | **yes** (oracle) | {summary['best_of_n']:.3f} |",
        "",
        f"Best-of-{n} picks with a scorer that compares to the expected answer, so its rate is "
        f"pass@{n}: the share of prompts where *some* sample is right. That is an oracle, an "
        "upper bound on what selection can find in these samples, not a system you could "
        "deploy: at deployment nobody hands you the answer. Majority vote (self-consistency) "
        "needs no answer key, so it is the deployable comparison; the random pick shows what "
        "luck alone gives (its expectation is pass@1).",
        "",
        f"Mean reward over all {summary['n_prompts'] * n} samples: {summary['mean_reward']:.3f}. "
        f"Label: Best-of-{n} is a *selection improvement* of "
        f"{summary['best_of_n'] - summary['first_sample']:+.3f} over the first sample; the "
        "learning improvement is zero, because the policy was never trained.",
        "",
        "## Growing n",
        "",
        "| n | Best-of-n (oracle) | majority vote | random pick | pass@n estimate |",
        "| --- | --- | --- | --- | --- |",
        *(f"| {row['n']} | {row['best_of_n']:.3f} | {row['majority_vote']:.3f} | "
          f"{row['random']:.3f} | {row['pass_at_k']:.3f} |" for row in summary["by_n"]),
        "",
        "The picks look at the first n samples of each prompt, a single realisation; the pass@n "
        f"estimate averages over every n-subset of the {n}, so it is the smoother number (at "
        f"n = {n} the two agree).",
        "",
        "## pass@k",
        "",
        "| k | " + " | ".join(str(k) for k in range(1, n + 1)) + " |",
        "| --- |" + " --- |" * n,
        "| pass@k | " + " | ".join(f"{summary['pass_at_k'][str(k)]:.3f}"
                                    for k in range(1, n + 1)) + " |",
        "",
        "![mean pass@k against k](pass_at_k.png)",
        "",
        "## Where selection still fails",
        "",
    ]
    if why:
        lines += [f"No sample is correct on {len(why)} prompt(s), so no picking rule can help:",
                  ""]
        lines += [f"- {inline_code(str(pid))}: {reason}." for pid, reason in why.items()]
    else:
        lines.append(f"Every prompt has at least one correct sample among its {n}.")
    if summary["vote_misses"]:
        lines += ["", f"Best-of-{n} solves these but majority vote does not: a correct sample "
                  "exists, yet another answer gets more votes, or as many and appears first:", ""]
        lines += [f"- {inline_code(str(miss['id']))}: {miss['voted']} x{miss['votes']} against "
                  f"the right answer x{miss['correct_votes']}"
                  + (" (a tie, lost on first appearance)"
                     if miss["votes"] == miss["correct_votes"] else "")
                  for miss in summary["vote_misses"]]
    lines += [
        "",
        "## Files",
        "",
        "- `selection_demo.jsonl`: per prompt, the chosen sample ids and rewards for every "
        "strategy and n, pass@k for each k, and every sample's code and parsed answer.",
        "- `summary.json`: the numbers above (4 decimals).",
        "- `manifest.json`: inputs with sha256, scorer version, prompt version, sampling, seed.",
        "",
    ]
    return "\n".join(lines)
