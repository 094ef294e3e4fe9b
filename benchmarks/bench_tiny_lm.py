"""How long do the tiny transformer's pre-training and one RL run take, and what do they make?

Run:  .venv/bin/python benchmarks/bench_tiny_lm.py [--part pretrain|rl]   (default: both)

Pre-trains the committed config (`PretrainConfig()`, `course.tiny_pretrain`) from its seed, as
`scripts/pretrain_tiny_lm.py` does, with numpy's BLAS on one thread (set before numpy loads, as
the script does), and times it with `time.perf_counter`. Then:

1. whether the weights are the committed ones, byte for byte (their sha256 against
   `data/tiny_lm/provenance.json`);
2. the base's strict pass@1 at temperature 1 on train and held-out prompts, the share of each
   kind of completion, and what each hackable rubric pays (`measure_base`, from the
   provenance's measurement seed: the numbers the provenance records);
3. the cheap check of the committed base (`check_base`: sha256, shapes, the first 10 steps).

RL (`--part rl`): one run of the canonical `runs/run_021` (one seed, one arm: 200 steps of 16
prompts x 8 samples, with its four checkpoints of 128 prompts x 64 samples on each split), for
the quickest arm (`strict_rloo`) and the slowest (`proxy_beta_0`, whose completions grow to
the 24-token cut), each timed whole and without its checkpoints, and each step log compared
byte for byte with the one the run saved.

Targets (PASS/FAIL at the end): pre-training within 180 s, one RL run within 120 s (issue 33:
3 minutes and 2 minutes or less on the 2-core machine). One run each, not a best-of: the time
depends on what else the machine runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"  # before numpy loads, as scripts/pretrain_tiny_lm.py does

TARGET_PRETRAIN_S = 180.0
TARGET_RL_S = 120.0
RL_ARMS = ("strict_rloo", "proxy_beta_0")
"""The quickest arm of run_021 and the slowest."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("pretrain", "rl"), help="time only this part")
    part = parser.parse_args().part
    passed = True
    if part in (None, "pretrain"):
        passed &= pretraining()
    if part in (None, "rl"):
        passed &= reinforcement()
    return 0 if passed else 1


def reinforcement() -> bool:
    """One run of runs/run_021 per arm of `RL_ARMS`, timed whole and without its checkpoints,
    its step log compared with the saved one. True if every whole run is within the target."""
    from course.paths import RUNS_DIR
    from course.reports.learn_tiny import CONFIG, log_name, train_arm
    from course.reports.tiny_steps import log_bytes
    from course.tiny_pretrain import load_base

    base, pretrain, _ = load_base()
    config = CONFIG
    print(f"one RL run of run_021: {config.learn.steps} steps of {config.learn.prompts} "
          f"prompts x {config.learn.group} samples; checkpoints at "
          f"{', '.join(map(str, config.checkpoints))}, each {config.measure.prompts} prompts x "
          f"{config.measure.samples} samples on both splits")
    passed = True
    for arm in RL_ARMS:
        arm_config = config.arm_config(arm, config.seeds[0])
        start = time.perf_counter()
        run = train_arm(arm_config, pretrain.model, base, config.checkpoints, config.measure)
        whole = time.perf_counter() - start
        start = time.perf_counter()
        train_arm(arm_config, pretrain.model, base, (), config.measure)
        alone = time.perf_counter() - start
        saved = RUNS_DIR / "run_021" / log_name(arm, config.bases[0], config.seeds[0])
        same = saved.is_file() and saved.read_bytes() == log_bytes(run.logs)
        print(f"  {arm:<14} seed {config.seeds[0]}: {whole:5.1f} s with its checkpoints, "
              f"{alone:5.1f} s without; step log "
              + ("the saved one, byte for byte" if same else "NOT the saved one"))
        ok = whole <= TARGET_RL_S
        passed &= ok
        print(f"{'PASS' if ok else 'FAIL'}  one RL run <= {TARGET_RL_S:.0f} s  {whole:.1f} s "
              f"({arm})")
    return passed


def pretraining() -> bool:
    """Pre-train the committed config, measure it, check the committed base. True if it is
    within the target and the check finds no problem."""
    import hashlib

    import numpy as np  # here, after the thread count is set

    from course.tiny_lm import count_params
    from course.tiny_pretrain import (
        MEASURE_SEED,
        PretrainConfig,
        check_base,
        load_base,
        measure_base,
        npz_bytes,
        pretrain,
    )
    from course.tiny_tasks import HACKABLE, KINDS

    config = PretrainConfig()
    model = config.model
    start = time.perf_counter()
    params, curve = pretrain(config, np.random.default_rng(config.seed))
    seconds = time.perf_counter() - start
    print(f"model: {model.n_layer} layers, width {model.n_embd}, {model.n_head} heads, "
          f"{model.dtype}, {count_params(params):,} parameters")
    print(f"pre-training: {config.steps} steps of {config.batch_size} lines, loss on the "
          f"{config.loss_on}, lr {config.lr} (warm-up {config.warmup}, cosine to "
          f"{config.final_lr:g}x), {config.writer.lines:,} corpus lines, seed {config.seed}")
    print(f"  {seconds:.1f} s ({1000 * seconds / config.steps:.0f} ms a step); loss "
          f"{curve[0]:.3f} at the start, {np.mean(curve[-10:]):.4f} over the last 10 steps")
    digest = hashlib.sha256(npz_bytes(params)).hexdigest()
    recorded = load_base()[2]["sha256"]
    print(f"  sha256 {digest[:16]}: "
          + ("the committed weights" if digest == recorded else
             f"NOT the committed weights ({recorded[:16]})"))

    start = time.perf_counter()
    measured = measure_base(params, model, np.random.default_rng(MEASURE_SEED))
    print(f"\nthe base on fresh samples ({time.perf_counter() - start:.1f} s)")
    print(f"  {'':<26} {'train':>8} {'held-out':>9}")
    train, held_out = measured["train"], measured["held_out"]
    rows = [("strict pass@1, τ = 1", train.strict, held_out.strict),
            ("strict, greedy", measured["train_greedy"].strict,
             measured["held_out_greedy"].strict)]
    rows += [(f"  {kind}", train.kinds[kind], held_out.kinds[kind]) for kind in KINDS]
    for label, a, b in rows:
        print(f"  {label:<26} {a:>8.3f} {b:>9.3f}")
    print(f"\n  {'rubric: paid, unearned':<26} {'train':>17} {'held-out':>17}")
    for name in HACKABLE:
        print(f"  {name:<26} {train.paid[name]:>8.3f} {train.unearned[name]:>8.3f} "
              f"{held_out.paid[name]:>8.3f} {held_out.unearned[name]:>8.3f}")
    print(f"  (τ = 1: {train.samples:,} samples of {train.prompts} train prompts and "
          f"{held_out.samples:,} of {held_out.prompts} held-out prompts; greedy: one each)")

    start = time.perf_counter()
    problems = check_base()
    print(f"\ncheck_base: {len(problems)} problem(s), {time.perf_counter() - start:.1f} s")

    passed = seconds <= TARGET_PRETRAIN_S
    print(f"\n{'PASS' if passed else 'FAIL'}  pre-training <= {TARGET_PRETRAIN_S:.0f} s  "
          f"{seconds:.1f} s\n")
    return passed and not problems


if __name__ == "__main__":
    sys.exit(main())
