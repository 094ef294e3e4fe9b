"""Training run_021 whole, side by side on the machine's cores, and checking it in seconds.

`course.reports.learn_tiny` says what the run trains and keeps; `build_run` trains every arm
from every base with every seed, and Dr. GRPO once, and measures each base's decoding control,
in one process per core (about 27 minutes on two: `course runs regenerate run_021`), then makes
the run folder from the raw files (`course.reports.learn_tiny_report.derived_files`). Each
training starts from its base with its own seed, so the bytes do not depend on the number of
processes. `spot_check` is what `course runs verify` runs instead, in a few seconds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from course import runs
from course.blas import one_blas_thread
from course.jsonfiles import jsonl_bytes, jsonl_lines
from course.progress import Tally
from course.reports.learn_tiny import (
    BASE_ROW,
    CHECKPOINTS_FILE,
    DECODING_FILE,
    Origin,
    RunConfig,
    base_at,
    checkpoint_rows,
    greedy_held_out,
    log_name,
    measure_row,
    train_arm,
)
from course.reports.learn_tiny_report import derived_files
from course.reports.tiny_steps import LOG_HEADER, log_bytes, log_line
from course.runs import RunFiles
from course.tiny_learn import TinyLearnConfig, evaluate, evaluation_problems
from course.tiny_pretrain import base_dir, load_base


def _trained(arm: str, origin: Origin, training: TinyLearnConfig, config: RunConfig,
             checkpoints: Sequence[int]) -> tuple[bytes, list[dict[str, Any]], dict[str, Any]]:
    """One training of `build_run`, in a process of its own: its step log, its checkpoint rows
    and its trained policy decoded greedily (a `DECODING_FILE` line). Each training starts
    from its base with its own seed, so which process runs it, and when, changes no byte."""
    one_blas_thread()
    base, pretrain, _ = load_base(base_dir(origin[0]))
    run = train_arm(training, pretrain.model, base, checkpoints, config.measure)
    greedy = measure_row({"arm": arm, "base": origin[0], "seed": origin[1], "temperature": 0.0,
                          "split": "held_out"}, greedy_held_out(run.params, pretrain.model, config))
    return log_bytes(run.logs), checkpoint_rows(arm, origin, run.evaluations), greedy


def _decoded(base: int, config: RunConfig) -> list[dict[str, Any]]:
    """The decoding control of one base, in a process of its own: its held-out prompts decoded
    greedily, then sampled at each of `config.temperatures`."""
    one_blas_thread()
    params, pretrain, _ = load_base(base_dir(base))
    measures = {0.0: greedy_held_out(params, pretrain.model, config),
                **{t: base_at(params, pretrain.model, config, t) for t in config.temperatures}}
    return [measure_row({"arm": BASE_ROW, "base": base, "seed": -1, "temperature": t,
                         "split": "held_out"}, m) for t, m in measures.items()]


def build_run(config: RunConfig, note: str, *, record_git: bool = True,
              jobs: int | None = None) -> RunFiles:
    """Train every arm from every base with every seed, and Dr. GRPO once (about 35 s a
    training on one core), measure each base's decoding control, all in `jobs` processes side
    by side (default: one per core), and return the run folder's files, the same bytes
    whatever `jobs` is."""
    trainings = {(arm, *origin): (config.arm_config(arm, origin[1]), config.checkpoints)
                 for arm in config.arms for origin in config.origins()}
    dr_grpo = ("strict_dr_grpo", config.bases[0], config.dr_grpo_seed)
    trainings[dr_grpo] = (config.arm_config("strict_rloo", config.dr_grpo_seed,
                                            advantage="dr_grpo"), ())
    tally = Tally(len(trainings) + len(config.bases))
    with ProcessPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        futures: dict[Any, Any] = {
            pool.submit(_trained, key[0], key[1:], training, config, checkpoints): key
            for key, (training, checkpoints) in trainings.items()}
        futures |= {pool.submit(_decoded, base, config): base for base in config.bases}
        done = {futures[future]: future.result()
                for future in tally.counted(as_completed(futures))}
    raw = {log_name(*key): done[key][0] for key in trainings}
    raw[CHECKPOINTS_FILE] = jsonl_bytes([row for key in trainings if key != dr_grpo
                                         for row in done[key][1]])
    raw[DECODING_FILE] = jsonl_bytes([*(row for base in config.bases for row in done[base]),
                                      *(done[key][2] for key in trainings if key != dr_grpo)])
    return derived_files(config, raw, note, record_git)


SPOT_CHUNK = 64
"""Prompts of the base's train measurement that `spot_check` samples again: its first chunk
(`tiny_learn.SIDE_BY_SIDE` samples side by side, 64 prompts x 64)."""


def spot_check(config: RunConfig, note: str, folder: Path) -> list[str]:
    """What `course runs verify` checks of the run in `folder`, in seconds (the whole run takes
    minutes; `course runs regenerate` rebuilds it whole). One line per difference:

    1. every file made from the raw files (`summary.json`, `report.txt`, `README.md`,
       `manifest.json` with its seal of each file's sha256) is made again from the committed
       raw files and compared byte for byte: an edited number, a missing or extra file, a
       setting of `config` that is not the run's, or a raw file changed after it was sealed,
       all show;
    2. the first `config.spot_steps` steps of `config.spot_arm` from the first base and seed
       are trained again: their rows must be the first rows of its saved log, byte for byte;
    3. the first `SPOT_CHUNK` prompts of the first base's train measurement (step 0) are
       sampled again, and its held-out prompts decoded greedily: their correct counts must be
       the saved ones.
    """
    one_blas_thread()
    committed = runs.read_files(folder)
    raw = {name: content for name, content in committed.items()
           if name.startswith("logs/") or name in (CHECKPOINTS_FILE, DECODING_FILE)}
    try:
        rebuilt = derived_files(config, raw, note)
    except (ValueError, KeyError, TypeError) as err:
        return [f"the raw files cannot be read back: {' '.join(str(err).split())}"]
    differences = runs.diff_files(committed, rebuilt) + runs.unsealed(folder)
    home, seed, steps = config.bases[0], config.seeds[0], config.spot_steps
    base, pretrain, _ = load_base(base_dir(home))
    again = train_arm(config.arm_config(config.spot_arm, seed, steps=steps), pretrain.model,
                      base, (), config.measure).logs
    name = log_name(config.spot_arm, home, seed)
    saved = raw[name].decode("utf-8").splitlines()
    header = saved.index(LOG_HEADER) + 1 if LOG_HEADER in saved else len(saved)
    for row, line in zip(map(log_line, again), saved[header:header + steps], strict=False):
        if row != line:
            differences.append(f"{name}: trained again, step {row.split()[0]} reads "
                               f"{row.split()[1:]}, saved {line.split()[1:]}")
            break
    measure = config.measure
    first = evaluate(base, pretrain.model, evaluation_problems("train", measure.prompts)
                     [:SPOT_CHUNK], measure.samples, config.learn.temperature,
                     config.learn.max_new, np.random.default_rng(measure.seed)).correct
    rows = [json.loads(line) for name in (CHECKPOINTS_FILE, DECODING_FILE)
            for _, line in jsonl_lines(raw[name].decode("utf-8"))]
    saved_counts = next(row["correct"] for row in rows if row.get("step") == 0
                        and row["base"] == home and row["split"] == "train")
    if list(first) != saved_counts[:SPOT_CHUNK]:
        differences.append(f"{CHECKPOINTS_FILE}: the base's train measurement, sampled again, "
                           f"differs in its first {SPOT_CHUNK} prompts")
    greedy = next(row["correct"] for row in rows if row["arm"] == BASE_ROW
                  and row["base"] == home and row["temperature"] == 0.0)
    if list(greedy_held_out(base, pretrain.model, config).correct) != greedy:
        differences.append(f"{DECODING_FILE}: the base decoded greedily again differs")
    return differences
