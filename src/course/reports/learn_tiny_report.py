"""What run_021's raw files say: six questions of Loop C on the tiny transformer, the
summary, the report, and every file of the run made from the raw files alone.

`course.reports.learn_tiny` says what the run trains (five arms, three pre-trained bases, six
RL seeds each) and which raw files each training leaves. This module asks six questions of
those files:

1. transfer: RL samples train prompts only; does held-out strict pass@1 rise with train's?
2. sharpen or expand: does pass@k rise at every k, or only at small k; are there more or
   fewer prompts that no sample in 64 solves than the base has; and of the prompts the base
   rarely solves, are more or fewer solved at least once than by the base measured again?
3. decoding: is RL's policy better than its base decoded greedily, and than its base sampled
   at the temperature whose entropy per token is the policy's?
4. exploit and leash: trained on the hackable `answer_anywhere`, how much of what the policy
   writes is the exploit, what becomes of strict pass@1, and what does a KL leash of β = 0.1
   or 0.3 change?
5. entropy and reward: does the entropy per token fall as the reward rises?
6. the first steps: how much KL do the first updates spend, under the warm-up?

Every answer is a count over runs (a base and a seed each) with its Wilson interval
(`course.evaluation.in_how_many_seeds`), then base by base, and the numbers behind it, run
by run.

The module reads top to bottom: the summary and the six questions (`summarise`,
`questions`), then the report at 80 columns, the README, and the whole run folder from its raw
files alone (`derived_files`: `summary.json`, `report.txt`, `README.md`, the sealed
`manifest.json`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from course import runs
from course.evaluation import in_how_many_seeds
from course.formatting import (
    COLUMNS,
    fixed,
    inline_code,
    markdown_table,
    paragraph,
    prose_text,
    rounded,
)
from course.jsonfiles import json_bytes, jsonl_lines
from course.paths import display_path
from course.reports.learn import spread
from course.reports.learn_tiny import (
    ARMS,
    BASE_ROW,
    CHECKPOINTS_FILE,
    DECODING_FILE,
    PROXY_ARMS,
    STRICT_ARMS,
    RunConfig,
    log_name,
    raw_names,
    run_manifest,
)
from course.reports.tiny_steps import read_log
from course.runs import RunFiles
from course.selection import pass_at_k_curve
from course.tiny_learn import KS, SPLITS
from course.tiny_lm import count_params
from course.tiny_pretrain import BASE_DIR, base_dir, load_base

# -- 1. the summary and the six questions ---------------------------------------------------------

def measured(row: Mapping[str, Any]) -> dict[str, Any]:
    """One line of `CHECKPOINTS_FILE` or `DECODING_FILE` as the numbers the questions read:
    pass@k for each k of `KS` up to its samples (the mean over prompts of the unbiased
    estimator, from the raw counts), the counts themselves, the prompts no sample solved,
    entropy, length, exploit share."""
    n, correct = row["samples"], row["correct"]
    curves = np.array([pass_at_k_curve(n, c) for c in correct])
    return {"pass_at": {str(k): round(float(curves[:, k - 1].mean()), 4) for k in KS if k <= n},
            "correct": list(correct), "never_solved": sum(c == 0 for c in correct),
            "prompts": len(correct), "entropy": row["entropy"], "length": row["length"],
            "exploit_share": row["exploit_share"]}


Logs = dict[tuple[str, int, int], list[dict[str, float]]]
"""(arm, base, seed) -> the rows of its step log."""
Point = dict[tuple[str, int, int, int, str], dict[str, Any]]
"""(arm, base, seed, step, split) -> `measured`."""
Decoded = dict[tuple[str, int, int, float], dict[str, Any]]
"""(arm, base, seed, τ) -> `measured` on held-out prompts; a base's lines have arm `BASE_ROW`
and seed -1; τ = 0 is greedy."""


def read_raw(config: RunConfig, raw: Mapping[str, bytes]) -> tuple[Logs, Point, Decoded]:
    """The step logs, the checkpoints and the decoding control, checked to be exactly the
    ones `config` makes. `ValueError` otherwise."""
    logs = {(arm, base, seed): read_log(raw[log_name(arm, base, seed)])
            for arm in config.arms for base, seed in config.origins()}
    for (arm, base, seed), rows in logs.items():
        if len(rows) != config.learn.steps:
            raise ValueError(f"{log_name(arm, base, seed)}: {len(rows)} steps, not "
                             f"{config.learn.steps}")
    points: Point = {}
    for _, line in jsonl_lines(raw[CHECKPOINTS_FILE].decode("utf-8")):
        row = json.loads(line)
        points[(row["arm"], row["base"], row["seed"], row["step"], row["split"])] = \
            measured(row)
    expected = {(arm, base, seed, step, split) for arm in config.arms
                for base, seed in config.origins() for step in config.checkpoints
                for split in SPLITS}
    if set(points) != expected:
        raise ValueError(f"{CHECKPOINTS_FILE}: not one line per arm, base, seed, checkpoint "
                         f"and split ({len(points)} distinct, {len(expected)} expected)")
    decoded: Decoded = {}
    for _, line in jsonl_lines(raw[DECODING_FILE].decode("utf-8")):
        row = json.loads(line)
        decoded[(row["arm"], row["base"], row["seed"], row["temperature"])] = measured(row)
    wanted = {(BASE_ROW, base, -1, t) for base in config.bases
              for t in (0.0, *config.temperatures)}
    wanted |= {(arm, base, seed, 0.0) for arm in config.arms for base, seed in config.origins()}
    if set(decoded) != wanted:
        raise ValueError(f"{DECODING_FILE}: not one line per base and temperature and per "
                         f"trained policy ({len(decoded)} distinct, {len(wanted)} expected)")
    return logs, points, decoded


def window(rows: Sequence[Mapping[str, float]], field_name: str, first: bool,
           size: int = 10) -> float:
    """The mean of a step-log column over the first or the last `size` steps."""
    part = rows[:size] if first else rows[-size:]
    return float(np.mean([row[field_name] for row in part]))


def claim(text: str, holds: Sequence[bool | None], bases: Sequence[int]) -> dict[str, Any]:
    """A claim over runs (`holds`: one per (base, seed), base by base; None where it does not
    apply): the count over the runs it applies to with its Wilson interval, then base by
    base."""
    applies = [h for h in holds if h is not None]
    per = len(holds) // len(bases)
    by_base = [[h for h in holds[i * per:(i + 1) * per] if h is not None]
               for i in range(len(bases))]
    return {"claim": text, "holds": [None if h is None else bool(h) for h in holds],
            "count": f"{in_how_many_seeds(applies, 'runs')}; base by base "
                     + ", ".join(f"{sum(b)}/{len(b)}" for b in by_base)}


def rows_block(title: str, rows: Sequence[tuple[str, Sequence[float]]],
               claims: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One table of a question: a row per quantity, its value in each run (`spread`), shown
    with 3 decimals, or none for a count (a row of Python ints), and the claims it supports."""
    return {"title": title,
            "rows": [{"label": label, "digits": 0 if all(isinstance(v, int) for v in values)
                      else 3, **spread(values)} for label, values in rows],
            "claims": list(claims)}


RARE = 2
"""A prompt the base rarely solves: at most this many of its 64 samples correct at step 0."""


def matched(entropy: float, grid: Sequence[tuple[float, float, float]]
            ) -> tuple[float, float] | None:
    """The base's temperature whose entropy per token is `entropy`, and its pass@1 there, both
    interpolated linearly between the two measured temperatures around it (`grid`: (τ,
    entropy, pass@1) by rising τ); None if `entropy` is outside the measured range."""
    taus, entropies, passes = (np.array(column) for column in zip(*grid, strict=True))
    if not entropies[0] <= entropy <= entropies[-1] or np.any(np.diff(entropies) <= 0):
        return None
    tau = float(np.interp(entropy, entropies, taus))
    return tau, float(np.interp(tau, taus, passes))


def questions(config: RunConfig, logs: Logs, points: Point, decoded: Decoded
              ) -> dict[str, dict[str, Any]]:
    """The six questions, each a few `rows_block`s (per-run values and claims)."""
    origins, last, n = config.origins(), config.checkpoints[-1], config.measure.samples
    top = max(k for k in KS if k <= n)          # pass@64 with the canonical 64 samples

    def said(text: str, holds: Sequence[bool | None]) -> dict[str, Any]:
        return claim(text, holds, config.bases)

    def at(arm: str, step: int, split: str, key: str, k: int | None = None) -> list[Any]:
        values = [points[(arm, b, s, step, split)] for b, s in origins]
        return [v["pass_at"][str(k)] if k is not None else v[key] for v in values]

    def change(arm: str, split: str, key: str, k: int | None = None) -> list[float]:
        return [b - a for a, b in zip(at(arm, 0, split, key, k), at(arm, last, split, key, k),
                                      strict=True)]

    def logged(arm: str, key: str, first: bool) -> list[float]:
        return [window(logs[(arm, b, s)], key, first) for b, s in origins]

    def base_again(temperature: float) -> list[dict[str, Any]]:
        return [decoded[(BASE_ROW, b, -1, temperature)] for b, _ in origins]

    transfer, sharpen, decoding, first_steps = [], [], [], []
    for arm in (a for a in STRICT_ARMS if a in config.arms):
        gain_train = change(arm, "train", "pass_at", 1)
        gain_held = change(arm, "held_out", "pass_at", 1)
        watch_first, watch_last = (logged(arm, "held_out_pass_at_1", f) for f in (True, False))
        transfer.append(rows_block(f"{arm}: strict pass@1, step 0 -> {last}", [
            ("train, step 0", at(arm, 0, "train", "pass_at", 1)),
            (f"train, step {last}", at(arm, last, "train", "pass_at", 1)),
            ("held-out, step 0", at(arm, 0, "held_out", "pass_at", 1)),
            (f"held-out, step {last}", at(arm, last, "held_out", "pass_at", 1)),
            ("gain, train", gain_train), ("gain, held-out", gain_held),
            ("held-out, every step: first 10", watch_first),
            ("held-out, every step: last 10", watch_last)], [
            said("held-out pass@1 rose", [g > 0 for g in gain_held]),
            said("the held-out gain is at least half the train gain",
                 [h >= t / 2 for h, t in zip(gain_held, gain_train, strict=True)]),
            said("the held-out gain is at least the train gain",
                 [h >= t for h, t in zip(gain_held, gain_train, strict=True)]),
            said("held-out pass@1 of the last 10 steps' watch batches is above the first 10's",
                 [b > a for a, b in zip(watch_first, watch_last, strict=True)])]))
        for split in SPLITS:
            ks = [k for k in KS if k <= n]
            deltas = {k: change(arm, split, "pass_at", k) for k in ks}
            never, base_never = at(arm, last, split, "never_solved"), \
                at(arm, 0, split, "never_solved")
            rows: list[tuple[str, Sequence[float]]] = [
                *((f"pass@{k} change", deltas[k]) for k in ks),
                (f"pass@{top}, base", at(arm, 0, split, "pass_at", top)),
                (f"never solved in {n}, step {last}", never),
                (f"never solved in {n}, base", base_never)]
            claims = [*(said(f"pass@{k} rose", [d > 0 for d in deltas[k]])
                        for k in ks if k in (1, 4, 16)),
                      said(f"pass@{top} fell", [d < 0 for d in deltas[top]]),
                      said("more prompts never solved than the base",
                           [a > b for a, b in zip(never, base_never, strict=True)]),
                      said("fewer prompts never solved than the base",
                           [a < b for a, b in zip(never, base_never, strict=True)])]
            if split == "held_out":        # the base measured again: the decoding control's τ = 1
                rare = [[i for i, c in enumerate(counts) if c <= RARE]
                        for counts in at(arm, 0, split, "correct")]
                again = [sum(point["correct"][i] > 0 for i in chosen)
                         for point, chosen in zip(base_again(1.0), rare, strict=True)]
                after = [sum(counts[i] > 0 for i in chosen)
                         for counts, chosen in zip(at(arm, last, split, "correct"), rare,
                                                   strict=True)]
                rows += [(f"rare prompts (base: at most {RARE} of {n} at step 0)",
                          [len(chosen) for chosen in rare]),
                         ("of them solved at least once: the base measured again", again),
                         (f"of them solved at least once: step {last}", after)]
                claims += [said(f"of the rare prompts, more are solved at least once at step "
                                f"{last} than by the base measured again",
                                [a > b if chosen else None
                                 for a, b, chosen in zip(after, again, rare, strict=True)]),
                           said(f"of the rare prompts, fewer are solved at least once at step "
                                f"{last} than by the base measured again",
                                [a < b if chosen else None
                                 for a, b, chosen in zip(after, again, rare, strict=True)])]
            sharpen.append(rows_block(
                f"{arm}, {split.replace('_', '-')}: pass@k at step {last} minus the base's",
                rows, claims))

        sampled = at(arm, last, "held_out", "pass_at", 1)
        entropy = at(arm, last, "held_out", "entropy")
        greedy = [decoded[(arm, b, s, 0.0)]["pass_at"]["1"] for b, s in origins]
        base_greedy = [point["pass_at"]["1"] for point in base_again(0.0)]
        grids = {base: [(t, decoded[(BASE_ROW, base, -1, t)]["entropy"],
                         decoded[(BASE_ROW, base, -1, t)]["pass_at"]["1"])
                        for t in config.temperatures] for base in config.bases}
        twins = [matched(h, grids[b]) for h, (b, _) in zip(entropy, origins, strict=True)]
        found = [twin for twin in twins if twin is not None]
        decoding.append(rows_block(f"{arm}, held-out, step {last}: RL against its base "
                                   "decoded otherwise", [
            ("RL sampled (τ = 1): pass@1", sampled),
            ("RL greedy: pass@1", greedy),
            ("base sampled (τ = 1): pass@1", at(arm, 0, "held_out", "pass_at", 1)),
            ("base greedy: pass@1", base_greedy),
            ("RL's entropy per token (τ = 1)", entropy),
            *([("base's temperature of that entropy", [twin[0] for twin in found]),
               ("base at that temperature: pass@1", [twin[1] for twin in found]),
               ("RL sampled minus the base at that temperature",
                [p - twin[1] for p, twin in zip(sampled, twins, strict=True)
                 if twin is not None])]
              if found else [])], [
            said("RL sampled beats the base at the temperature of the same entropy",
                 [None if twin is None else p > twin[1]
                  for p, twin in zip(sampled, twins, strict=True)]),
            said("RL sampled is below the base greedy",
                 [p < g for p, g in zip(sampled, base_greedy, strict=True)]),
            said("RL greedy beats the base greedy",
                 [g > b for g, b in zip(greedy, base_greedy, strict=True)])]))

        kl = {update: [logs[(arm, b, s)][update]["kl"] for b, s in origins]
              for update in (1, 5, 20) if update < config.learn.steps}   # row u: after u
        kl_last = logged(arm, "kl", first=False)
        first_steps.append(rows_block(f"{arm}: KL from the base (nats), step by step", [
            *((f"after {u} update{'s' * (u > 1)}", values) for u, values in kl.items()),
            ("last 10 steps", kl_last)], [
            said("the first update spends less than a tenth of the last 10 steps' KL",
                 [a < b / 10 for a, b in zip(kl[1], kl_last, strict=True)])]))

    proxies = [a for a in PROXY_ARMS if a in config.arms]
    exploit = []
    for arm in proxies:
        kl_last = logged(arm, "kl", first=False)
        share = at(arm, last, "train", "exploit_share")
        strict = at(arm, last, "train", "pass_at", 1)
        claims = [said("the exploit share is above the base's",
                       [x > b for x, b in zip(share, at(arm, 0, "train", "exploit_share"),
                                              strict=True)]),
                  said("strict pass@1 is below the base's",
                       [p < b for p, b in zip(strict, at(arm, 0, "train", "pass_at", 1),
                                              strict=True)])]
        if arm != proxies[0]:
            free = proxies[0]
            claims += [
                said(f"the exploit share is below {free}'s, same base and seed",
                     [x < y for x, y in zip(share, at(free, last, "train", "exploit_share"),
                                            strict=True)]),
                said(f"strict pass@1 is above {free}'s, same base and seed",
                     [p > q for p, q in zip(strict, at(free, last, "train", "pass_at", 1),
                                            strict=True)])]
        exploit.append(rows_block(f"{arm} (β = {ARMS[arm]['beta']}), step {last}", [
            ("exploit share, base", at(arm, 0, "train", "exploit_share")),
            ("exploit share, train", share),
            ("exploit share, held-out", at(arm, last, "held_out", "exploit_share")),
            ("strict pass@1, base", at(arm, 0, "train", "pass_at", 1)),
            ("strict pass@1, train", strict),
            ("strict pass@1, held-out", at(arm, last, "held_out", "pass_at", 1)),
            ("reward paid, last 10 steps", logged(arm, "reward", first=False)),
            ("KL (nats), last 10 steps", kl_last),
            ("length, train", at(arm, last, "train", "length"))], claims))

    entropy_blocks = []
    for arm in config.arms:
        reward = [b - a for a, b in zip(logged(arm, "reward", True), logged(arm, "reward", False),
                                        strict=True)]
        per_token = [b - a for a, b in zip(logged(arm, "entropy", True),
                                           logged(arm, "entropy", False), strict=True)]
        entropy_blocks.append(rows_block(f"{arm}: last 10 steps minus first 10", [
            ("reward change", reward), ("entropy change (batch)", per_token),
            (f"entropy change (step 0 -> {last})", change(arm, "train", "entropy"))], [
            said("the reward rose", [r > 0 for r in reward]),
            said("the entropy per token fell", [e < 0 for e in per_token]),
            said("the reward rose and the entropy fell",
                 [r > 0 and e < 0 for r, e in zip(reward, per_token, strict=True)])]))
    return {
        "transfer": {"question": "Does learning on train prompts carry to held-out prompts?",
                     "blocks": transfer},
        "sharpen_or_expand": {"question": "Does RL sharpen (pass@1 up, pass@k at large k flat "
                                          "or down) or expand (pass@k up at every k, prompts "
                                          "the base rarely solves solved more often)?",
                              "blocks": sharpen},
        "decoding": {"question": "Did RL do more than a lower temperature would? Its policy "
                                 "against its own base decoded greedily and at the temperature "
                                 "of the same entropy per token.",
                     "blocks": decoding},
        "exploit_and_leash": {"question": "Trained on answer_anywhere, does the policy find the "
                                          "exploit, and does the KL leash hold it?",
                              "blocks": exploit},
        "entropy_and_reward": {"question": "Does the entropy per token fall as the reward "
                                           "rises?", "blocks": entropy_blocks},
        "first_steps": {"question": "How fast does the policy leave its base? The KL of the "
                                    "first updates, warmed up over 20 steps.",
                        "blocks": first_steps},
    }


CURVES = ("pass@1", "pass@16", "never_solved", "entropy", "length", "exploit_share")
"""What `summarise` keeps of every checkpoint, as curves over the steps."""


def value_of(point: Mapping[str, Any], key: str) -> float:
    """A key of `CURVES` read from a `measured` point."""
    return point["pass_at"][key.removeprefix("pass@")] if key.startswith("pass@") else point[key]


def band(values: Sequence[float]) -> dict[str, float]:
    """One number over runs as its median, smallest and largest value (4 decimals); each
    run's value is in `CHECKPOINTS_FILE`."""
    return {"median": rounded(np.median(values)), "min": rounded(min(values)),
            "max": rounded(max(values))}


def summarise(config: RunConfig, raw: Mapping[str, bytes]) -> dict[str, Any]:
    """Everything the run's report says, from its raw files alone."""
    logs, points, decoded = read_raw(config, raw)
    first = config.seeds[0]
    bases = {base: {split: points[(config.arms[0], base, first, 0, split)] for split in SPLITS}
             for base in config.bases}
    if any(points[(arm, base, seed, 0, split)] != bases[base][split] for arm in config.arms
           for base, seed in config.origins() for split in SPLITS):
        raise ValueError("the step-0 measurements of a base differ between runs: each is the "
                         "base, measured from the same generator")
    home = config.bases[0]
    dr_grpo = read_log(raw[log_name("strict_dr_grpo", home, config.dr_grpo_seed)])
    rloo = logs[("strict_rloo", home, config.dr_grpo_seed)]
    same = next((i for i, (a, b) in enumerate(zip(dr_grpo, rloo, strict=False)) if a != b),
                min(len(dr_grpo), len(rloo)))
    curves = {arm: {split: {"steps": list(config.checkpoints), **{
        key: [band([value_of(points[(arm, base, seed, step, split)], key)
                    for base, seed in config.origins()])
              for step in config.checkpoints] for key in CURVES
        if not key.startswith("pass@") or int(key[5:]) <= config.measure.samples}}
        for split in SPLITS} for arm in config.arms}
    return {
        "kind": "learn_tiny",
        "arms": {arm: ARMS[arm] for arm in config.arms},
        "bases": list(config.bases),
        "seeds": list(config.seeds),
        "steps": config.learn.steps,
        "learn": {key: getattr(config.learn, key)
                  for key in ("prompts", "group", "lr", "warmup", "temperature", "max_new")},
        "checkpoints": list(config.checkpoints),
        "measure": {"prompts": config.measure.prompts, "samples": config.measure.samples,
                    "seed": config.measure.seed, "watch": config.measure.watch,
                    "ks": [k for k in KS if k <= config.measure.samples]},
        "temperatures": list(config.temperatures),
        "base": {str(base): {**{split: {key: point[key] for key in point if key != "correct"}
                                for split, point in both.items()},
                             "held_out_greedy": decoded[(BASE_ROW, base, -1, 0.0)]["pass_at"]}
                 for base, both in bases.items()},
        "curves": curves,
        "dr_grpo": {"seed": config.dr_grpo_seed, "steps": len(dr_grpo),
                    "first_rows_equal_to_rloo": same,
                    "reward_last_50_steps": {
                        "dr_grpo": round(window(dr_grpo, "reward", False, 50), 4),
                        "rloo": round(window(rloo, "reward", False, 50), 4)}},
        "questions": questions(config, logs, points, decoded),
    }


# -- 2. the report, the README, and the run folder ------------------------------------------------

SEED_HEADER = ("", "median", "min", "max")
"""The columns of a block's table (`seed_table`); each run's value is in `summary.json`."""


def seed_table(block: Mapping[str, Any]) -> list[list[str]]:
    """A block's rows as cells: the label, then the median, smallest and largest value over
    runs."""
    return [[row["label"], *(fixed(row[key], digits=row["digits"]) for key in SEED_HEADER[1:])]
            for row in block["rows"]]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as fixed-width text: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                      for i, (cell, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in [header, *rows]]


def dr_grpo_text(dr: Mapping[str, Any]) -> str:
    """What Dr. GRPO's one run shows, in a few sentences."""
    last = dr["reward_last_50_steps"]
    return (f"Dr. GRPO, trained once from seed {dr['seed']}: the first "
            f"{dr['first_rows_equal_to_rloo']} of its {dr['steps']} step-log rows are RLOO's "
            "from the same seed, byte for byte. Its advantage is RLOO's times (G - 1)/G, a "
            "constant that Adam divides out; computed another way, it rounds differently in "
            "the last bits, until a sample drawn near a boundary flips and the two runs part. "
            f"Mean reward over the last 50 steps: {last['dr_grpo']:.3f} (Dr. GRPO), "
            f"{last['rloo']:.3f} (RLOO).")


def report_text(summary: Mapping[str, Any]) -> str:
    """The six answers at 80 columns: per question, a table per arm (the median, smallest and
    largest value over runs) and each claim as a count over runs."""
    bases, seeds, measure = summary["bases"], summary["seeds"], summary["measure"]
    lines = [
        *paragraph(f"Loop C on the tiny transformer: {len(summary['arms'])} arms x "
                   f"{len(bases)} pre-trained bases x {len(seeds)} seeds, {summary['steps']} "
                   f"steps each. Checkpoints measure {measure['prompts']} prompts of each "
                   f"split, {measure['samples']} fresh samples each; claims are counts over "
                   "runs (a base and a seed each) with the 95% Wilson interval, then base by "
                   "base (bases " + ", ".join(map(str, bases)) + ").").split("\n"), ""]
    for number, item in enumerate(summary["questions"].values(), start=1):
        lines += [*paragraph(f"{number}. {item['question']}").split("\n"), ""]
        for block in item["blocks"]:
            lines += [f"  {block['title']}",
                      *("  " + row for row in text_table(SEED_HEADER, seed_table(block)))]
            lines += [*("  " + line for c in block["claims"]
                        for line in paragraph(f"{c['claim']}: {c['count']}",
                                              hanging="    ", width=COLUMNS - 2).split("\n"))]
            lines.append("")
    lines += paragraph(dr_grpo_text(summary["dr_grpo"])).split("\n")
    wide = [line for line in lines if len(line) > COLUMNS]
    if wide:
        raise ValueError(f"a report line is wider than {COLUMNS} columns: {wide[0]!r}")
    return "\n".join(lines) + "\n"


def render_readme(summary: Mapping[str, Any], note: str) -> str:
    """The run's README: what was run, then each question's tables and claims."""
    bases, seeds, measure, learn = (summary["bases"], summary["seeds"], summary["measure"],
                                    summary["learn"])
    params, pretrain, _ = load_base()
    top = measure["ks"][-1]
    arms = [f"- `{arm}`: reward {inline_code(s['reward'])}, advantage `{s['advantage']}`, "
            f"β = {s['beta']}" for arm, s in summary["arms"].items()]
    base_rows = []
    for base in bases:
        held, greedy = summary["base"][str(base)]["held_out"], \
            summary["base"][str(base)]["held_out_greedy"]
        base_rows.append([str(base), fixed(held["pass_at"]["1"]), fixed(greedy["1"]),
                          fixed(held["pass_at"][str(top)]), str(held["never_solved"])])
    lines = [
        "# Loop C on a tiny transformer: transfer, sharpening, decoding, the proxy's exploit, "
        "entropy, the first steps",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"The tiny transformer ({pretrain.model.n_layer} layers, width "
        f"{pretrain.model.n_embd}, {count_params(params):,} parameters) is pre-trained from "
        f"{len(bases)} seeds with one config (`scripts/pretrain_tiny_lm.py --seed S`), and "
        f"each base is trained by `course.tiny_learn` for {summary['steps']} steps with each "
        f"of seeds {seeds[0]}-{seeds[-1]}, in each arm below: {learn['prompts']} train prompts "
        f"x {learn['group']} fresh samples a step, lr {learn['lr']:g} reached over a "
        f"{learn['warmup']}-step linear warm-up (Adam, gradient norm clipped at 1), "
        f"temperature {learn['temperature']:g}, at most {learn['max_new']} tokens a "
        "completion. RL draws train prompts only; held-out prompts are only measured. A run "
        "is one arm from one base with one seed.",
        "",
        *arms,
        "",
        f"Base 0 is the lessons' (`{display_path(base_dir(0))}/`), base S is in "
        f"`{display_path(BASE_DIR)}/bases/seed_S/`; each folder's `provenance.json` holds "
        "its sha256, and the manifest pins both files. On the "
        f"{measure['prompts']} held-out prompts of the checkpoints (strict pass@1 sampled at "
        f"τ = 1 and greedy, pass@{top}, prompts no sample in {measure['samples']} solved):",
        "",
        *markdown_table(["base seed", "pass@1", "greedy", f"pass@{top}", "never solved"],
                        base_rows),
        "",
        f"At steps {', '.join(map(str, summary['checkpoints']))}, "
        f"{measure['prompts']} prompts of each split (evenly spaced over the split) are "
        f"sampled {measure['samples']} times each, from a generator of their own: strict "
        "pass@k for k up to 64 (the unbiased estimator), the prompts no sample solved, "
        "entropy, length, exploit share. At step 0 this is the base. The decoding control "
        "decodes each base's held-out prompts greedily and samples them at temperatures "
        f"{summary['temperatures'][0]:g} to {summary['temperatures'][-1]:g}, and decodes each "
        "trained policy greedily.",
        "",
        f"At every step, before its update, {measure['watch']} held-out prompts drawn at "
        f"random are sampled {learn['group']} times each, as a training batch is, from a "
        "generator of their own, and scored strictly (never learned from): held-out pass@1 "
        "per step, the `held-out` column of each step log.",
        "",
        "Each run is `course learn --model tiny-lm --base B --reward R --advantage A --beta B "
        f"--steps {summary['steps']} --seed S`; its per-step table is "
        "`logs/base_B/ARM/seed_S.txt`. Each claim below is a count over runs with its 95% "
        "Wilson interval, then base by base; each table gives the median, smallest and "
        "largest value over the runs (each run's value is in `summary.json`).",
        "",
    ]
    for number, item in enumerate(summary["questions"].values(), start=1):
        lines += [f"## {number}. {item['question']}", ""]
        for block in item["blocks"]:
            lines += [f"**{prose_text(block['title'])}**", "",
                      *markdown_table(list(SEED_HEADER), seed_table(block)), "",
                      *(f"- {c['claim']}: {c['count']}" for c in block["claims"]), ""]
    dr = summary["dr_grpo"]
    lines += [
        "## Dr. GRPO",
        "",
        f"{dr_grpo_text(dr)} So it is not run as an arm of its own (its log: "
        f"`logs/base_{bases[0]}/strict_dr_grpo/seed_{dr['seed']}.txt`).",
        "",
        "## Files",
        "",
        "- `report.txt`: the answers above at 80 columns.",
        "- `logs/base_B/ARM/seed_S.txt`: every step's table row (reward, strict pass@1, KL, "
        "entropy, length, exploit share on the step's fresh samples of train prompts; strict "
        "pass@1 on "
        f"a watch batch of {measure['watch']} held-out prompts, never learned "
        "from).",
        f"- `{CHECKPOINTS_FILE}`: per arm, base, seed, checkpoint and split, how many of "
        "each prompt's samples the strict scorer pays, with entropy, length and exploit "
        "share.",
        f"- `{DECODING_FILE}`: the same counts for the decoding control, on held-out prompts "
        "(each base greedy and at each temperature; each trained policy greedy).",
        "- `summary.json`: every number above, made from those alone; `manifest.json`: "
        "the settings, each base's sha256 and each file's.",
        "",
        "## Reproduce",
        "",
        "`course runs regenerate run_021 --force` trains every arm again (minutes) and rewrites "
        "the folder; the bytes match on one machine with numpy's BLAS on one thread (another "
        "CPU may round float32 differently and draw other samples). `course runs verify "
        "run_021` checks it in seconds: the seal, every file made from the raw files, the "
        "first steps of one arm trained again, and the first base measured again.",
        "",
    ]
    return "\n".join(lines)


def derived_files(config: RunConfig, raw: Mapping[str, bytes], note: str,
                  record_git: bool = False) -> RunFiles:
    """The whole run folder from its raw files alone: the raw files, `summary.json`,
    `report.txt` and `README.md` made from them, and `manifest.json` sealing them all
    (`runs.sealed`: each file's sha256 and the manifest's own). `ValueError` if a raw file is
    missing or cannot be read."""
    missing = [name for name in raw_names(config) if name not in raw]
    if missing:
        raise ValueError(f"missing: {', '.join(missing)}")
    summary = summarise(config, raw)
    files = {**{name: raw[name] for name in raw_names(config)},
             "summary.json": json_bytes(summary),
             "report.txt": report_text(summary).encode("utf-8"),
             "README.md": render_readme(summary, note).encode("utf-8")}
    return runs.sealed(run_manifest(config, note, record_git), files)
