"""The token-level learning run (`course learn --out`), and what every token-level run shares.

`build_run` trains the policy of `course.token_policy` with `course.learn.train` and saves:
the per-step log (`train_log.txt`, `summary.json`), the raw completions sampled at the first,
middle and last step (`samples/step_NNNN.jsonl`: rule 5 of docs/rules.md, Save raw outputs), the
learning curve, and a README. The canonical token runs (`reports.learn_selection`,
`reports.learn_hack` (run_010 and run_011), `reports.learn_kl`, `reports.learn_toy_tax`,
`reports.learn_family`) use the helpers below.

One seed is one draw. Every canonical token run is therefore repeated from each seed of
`SEEDS`: seed 0's run is saved in full (its samples, its curves), and every number a lesson
quotes is also given as its median and range over all the seeds (`over_seeds`, `seeds_table`).
Each seed's numbers are kept in the run (`SEEDS_LOG`), so that `course runs verify` can
measure seed 0 again and make every file again from it and the log (`spot_check`) instead of
training all ten seeds again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from course.data import Record
from course.formatting import inline_code, markdown_table, prose_text, rounded
from course.jsonfiles import json_bytes, jsonl_bytes
from course.learn import LearnConfig, StepLog, log_table, train
from course.paths import display_path
from course.progress import Tally
from course.reports.png import figure_png, new_figure, plain, styled
from course.rubrics import RUBRICS
from course.runs import RunFiles, diff_files, manifest, read_files, unsealed
from course.scorer import score
from course.token_policy import T_MAX, Rollouts

REFERENCE_MADE = (
    "Counted, not trained: each frozen completion of {snapshot} was split into the "
    "vocabulary's pieces; pi_ref(y | problem, previous piece, digit run) mixes that problem's "
    "own counts (weight 0.9) with counts pooled over all problems (0.1), smoothed with 0.02 per "
    "piece so that every piece stays possible. No language model was run or downloaded.")


SEEDS = tuple(range(10))
"""The seeds every canonical token run is repeated from (0-9); seed 0's run is the one saved in
full. Ten, so that a claim about a stochastic run is a count with a margin ("in 9 of 10 seeds"),
not a pattern seen in five."""


def spread(values: Sequence[float]) -> dict[str, Any]:
    """One number over seeds: its median, smallest and largest value, and each seed's value in
    the order of `SEEDS` (4 decimals)."""
    return {"median": rounded(float(np.median(values))), "min": rounded(min(values)),
            "max": rounded(max(values)), "per_seed": [rounded(v) for v in values]}


def over_seeds(per_seed: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """The numbers measured from each seed (one mapping per seed, the same keys) as `spread`s,
    with the seeds they came from."""
    return {"seeds": list(SEEDS[:len(per_seed)]),
            **{key: spread([row[key] for row in per_seed]) for key in per_seed[0]}}


SEEDS_LOG = "logs/seeds.jsonl"
"""In a run repeated over seeds: the numbers each seed gave, one line per seed of `SEEDS` in
order (`{"seed": 3, ...}`, floats exactly as JSON writes them). The table over seeds is made
from it."""


def later_seeds(config: LearnConfig, numbers: Callable[[LearnConfig], dict[str, Any]]
                ) -> list[dict[str, Any]]:
    """`numbers` of `config` run from each seed of `SEEDS` after the first, in order (each
    counted on the status line of `course runs verify`, `Tally`)."""
    return [numbers(replace(config, seed=seed))
            for seed in Tally(len(SEEDS) - 1).counted(SEEDS[1:])]


def seeds_log(per_seed: Sequence[Mapping[str, Any]]) -> bytes:
    """`SEEDS_LOG`: one line per seed of `SEEDS`, `per_seed` in the same order."""
    return jsonl_bytes([{"seed": seed, **numbers}
                        for seed, numbers in zip(SEEDS, per_seed, strict=True)])


def read_seeds_log(raw: bytes) -> list[dict[str, Any]]:
    """The numbers of `SEEDS_LOG` for every seed after the first, as `later_seeds` returns
    them; ValueError unless each line is an object and the seeds are `SEEDS` in order."""
    rows = [json.loads(line) for line in raw.decode("utf-8").split("\n") if line]
    if not all(isinstance(row, dict) for row in rows) or (
            [row.get("seed") for row in rows] != list(SEEDS)):
        raise ValueError(f"{SEEDS_LOG} must hold one object per seed of {list(SEEDS)}, in order")
    return [{key: value for key, value in row.items() if key != "seed"} for row in rows[1:]]


def build_over_seeds(config: LearnConfig, note: str, measure: Callable[[LearnConfig], Any],
                     files: Callable[..., RunFiles],
                     numbers: Callable[[LearnConfig], dict[str, Any]],
                     record_git: bool) -> RunFiles:
    """A run repeated over seeds: `files(config, note, m, later, record_git)` from seed 0's
    measurement `m = measure(config)` and the later seeds' `numbers`."""
    return files(config, note, measure(config), later_seeds(config, numbers), record_git)


def spot_check(config: LearnConfig, note: str, folder: Path,
               measure: Callable[[LearnConfig], Any], files: Callable[..., RunFiles]
               ) -> list[str]:
    """What `course runs verify` checks of a run repeated over seeds (`build_over_seeds`), in
    seconds: every file made again from seed 0 measured again and the other seeds' numbers
    read back from the committed `SEEDS_LOG`, compared byte for byte with `folder`'s, and the
    seal. One line per difference."""
    committed, measured = read_files(folder), measure(config)
    try:
        again = files(config, note, measured, read_seeds_log(committed[SEEDS_LOG]), False)
    except (KeyError, ValueError, TypeError) as err:
        return [f"{SEEDS_LOG} cannot be read back: {' '.join(str(err).split())}"]
    return diff_files(committed, again) + unsealed(folder)


def seeds_table(seeds: Mapping[str, Any], labels: Mapping[str, str], digits: int = 3
                ) -> list[str]:
    """The README table of `over_seeds`: one row per labelled number, with seed 0's value (the
    run saved in full), the median and the range over every seed. A row whose values are all
    whole numbers (counts, steps) is written without decimals."""
    rows = []
    for key, label in labels.items():
        v = seeds[key]
        whole = all(float(x).is_integer() for x in v["per_seed"])
        text = (lambda x: f"{x:,.0f}") if whole else (lambda x: f"{x:.{digits}f}")
        rows.append([label, text(v["per_seed"][0]), text(v["median"]),
                     f"{text(v['min'])} to {text(v['max'])}"])
    first, last = seeds["seeds"][0], seeds["seeds"][-1]
    return markdown_table(["", f"seed {first} (this run)", f"median, seeds {first}-{last}",
                           "range"], rows)


def smoothed(values: Sequence[float], width: int) -> list[float]:
    """The mean of each value and the `width` - 1 before it (fewer at the start): a learning
    curve read through one batch's noise."""
    return [float(np.mean(values[max(0, i - width + 1):i + 1])) for i in range(len(values))]


def exploit_share(paid: np.ndarray, strict: np.ndarray) -> float:
    """Share of completions the optimised proxy pays (`paid` == 1) and the strict scorer
    refuses (`strict` == 0): the reward hacks. Both (N,)."""
    return float(np.mean((paid == 1.0) & (strict == 0.0)))


def checkpoints(steps: int) -> tuple[int, ...]:
    """The steps whose raw completions are saved: the first, the middle and the last."""
    return tuple(sorted({1, max(1, steps // 2), steps}))


def config_record(config: LearnConfig) -> dict[str, Any]:
    """The config as the manifest stores it: repository-relative paths."""
    return {**asdict(config), "problems": display_path(config.problems),
            "snapshot": display_path(config.snapshot)}


def reference_record(config: LearnConfig, fit: Mapping[str, Any]) -> dict[str, Any]:
    """How the reference policy was made, for the manifest and the README."""
    return {"made_by": REFERENCE_MADE.format(snapshot=display_path(config.snapshot)),
            "completions_used": fit["used"], "completions_skipped": list(fit["skipped"]),
            "max_pieces": T_MAX}


def run_manifest(kind: str, note: str, record: Mapping[str, Any], config: LearnConfig,
                 fit: Mapping[str, Any], record_git: bool) -> dict[str, Any]:
    """The manifest of a token-level run: inputs pinned by sha256, the reference described."""
    out = manifest(kind=kind, note=note, config=record,
                   inputs={"problems": config.problems, "snapshot": config.snapshot},
                   seed=config.seed, record_git=record_git)
    out["reference_policy"] = reference_record(config, fit)
    return out


def step_rows(logs: Sequence[StepLog]) -> list[dict[str, Any]]:
    """The per-step log as records (4 decimals): what `summary.json` stores."""
    return [{"step": e.step, "mean_reward": rounded(e.mean_reward), "pass_at_1":
             rounded(e.pass_at_1), "kl": rounded(e.kl), "entropy": rounded(e.entropy),
             "distinct": e.distinct, "top": [[text, n] for text, n in e.top]} for e in logs]


def train_log_bytes(logs: Sequence[StepLog]) -> bytes:
    """`train_log.txt`: what each column means, the headings, then one row per step
    (`course.learn.log_table`), as `course learn` prints them."""
    return (log_table(logs) + "\n").encode("utf-8")


def samples_jsonl(problems: Sequence[Record], rollouts: Rollouts, reward: str) -> bytes:
    """Raw completions with what the optimised scorer and the strict scorer said of each."""
    rows = []
    for x, text in zip(rollouts.x, rollouts.texts, strict=True):
        problem = problems[int(x)]
        strict = score(problem, text)
        rows.append({"id": problem["id"], "completion": text,
                     "reward": RUBRICS[reward](problem, text)["reward"],
                     "strict": strict["reward"], "code": strict["details"]["code"]})
    return jsonl_bytes(rows)


def saved_samples(problems: Sequence[Record], saved: Mapping[int, Rollouts],
                  reward: str) -> RunFiles:
    return {f"samples/step_{step:04d}.jsonl": samples_jsonl(problems, rollouts, reward)
            for step, rollouts in sorted(saved.items())}


@styled
def curve_png(logs: Sequence[StepLog], config: LearnConfig, title: str) -> bytes:
    """Reward paid, strict pass@1 and KL to the reference, per step."""
    steps = [e.step for e in logs]
    fig = new_figure(5.0)
    ax = fig.add_subplot()
    if config.reward != "strict":
        ax.plot(steps, [e.mean_reward for e in logs], color="tab:orange",
                label=f"reward paid ({plain(config.reward)}), optimised")
    ax.plot(steps, [e.pass_at_1 for e in logs], color="tab:blue",
            label="strict pass@1 on fresh samples" + (", optimised" if config.reward ==
                                                        "strict" else ", only measured"))
    ax.set(xlabel="update step", ylabel="share of fresh completions", ylim=(0, 1.02),
           title=plain(title))
    kl_ax = ax.twinx()
    kl_ax.grid(False)
    kl_ax.plot(steps, [e.kl for e in logs], color="tab:gray", ls=":",
               label=r"$\mathrm{KL}$ to the reference")
    kl_ax.set_ylabel(r"$\mathrm{KL}(\pi_\theta \,\Vert\, \pi_{\mathrm{ref}})$, "
                     "nats per completion")
    handles = ax.get_legend_handles_labels()[0] + kl_ax.get_legend_handles_labels()[0]
    fig.legend(handles=handles, loc="outside lower center")
    return figure_png(fig)


def render_readme(config: LearnConfig, note: str, logs: Sequence[StepLog],
                  fit: Mapping[str, Any]) -> str:
    first, last = logs[0], logs[-1]
    lines = [
        "# Loop C on tokens: a policy that writes text",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"REINFORCE on fresh samples: {config.batch_size} completions per prompt per step, "
        f"{config.steps} steps, reward {inline_code(config.reward)}, β = {config.beta}, "
        f"lr = {config.lr}, seed {config.seed}. Every completion is rendered to text and scored "
        "as text.",
        "",
        "| | step 1 | last step |",
        "| --- | --- | --- |",
        f"| reward paid | {first.mean_reward:.3f} | {last.mean_reward:.3f} |",
        f"| strict pass@1 (fresh samples) | {first.pass_at_1:.3f} | {last.pass_at_1:.3f} |",
        f"| KL to reference (nats) | {first.kl:.3f} | {last.kl:.3f} |",
        f"| distinct completions in the batch | {first.distinct} | {last.distinct} |",
        "",
        "## The reference policy",
        "",
        reference_record(config, fit)["made_by"],
        f"{fit['used']} completions counted, {len(fit['skipped'])} skipped (a character no "
        f"piece spells, or more than {T_MAX} pieces).",
        "",
        "## Files",
        "",
        "- `train_log.txt`: what its columns mean, then one row per step (reward, pass@1, KL, "
        "entropy, distinct, the most frequent completion).",
        "- `samples/step_NNNN.jsonl`: every completion sampled at that step, with both rewards.",
        "- `learning_curve.png`, `summary.json`, `manifest.json`.",
        "",
    ]
    return "\n".join(lines)


def build_run(config: LearnConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Train once from `config.seed` and return the run folder's files."""
    return trained_run(config, note, record_git=record_git)[0]


def trained_run(config: LearnConfig, note: str, *, record_git: bool = True
                ) -> tuple[RunFiles, list[StepLog]]:
    """`build_run`'s files and the per-step log they were written from (`course learn --out`
    prints the log without training twice)."""
    run = train(config, np.random.default_rng(config.seed), checkpoints(config.steps))
    problems, fit, logs, saved = run.problems, run.fit, run.logs, run.saved
    summary = {"kind": "learn", "steps": step_rows(logs)}
    return {
        "README.md": render_readme(config, note, logs, fit).encode("utf-8"),
        "learning_curve.png": curve_png(logs, config, "Loop C on tokens"),
        "manifest.json": json_bytes(run_manifest("learn", note, config_record(config), config,
                                                 fit, record_git)),
        **saved_samples(problems, saved, config.reward),
        "summary.json": json_bytes(summary),
        "train_log.txt": train_log_bytes(logs),
    }, logs
