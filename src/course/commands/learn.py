"""`course learn`: Loop C on tokens, REINFORCE on fresh samples of a policy that writes text.

Two policies: the table of logits of `course.token_policy` (`--model table`, the default) and
the tiny transformer of `course.tiny_lm` from its committed base (`--model tiny-lm`,
`course.tiny_learn`). Both print a row per step (every `--log-every`-th); the tiny transformer
then measures strict pass@1 on train and held-out prompts before and after."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import numpy as np

from course import progress
from course.blas import one_blas_thread
from course.commands.config_options import add_options, add_shared_options, config_of, option
from course.commands.options import Output, UsageError, add_output_arguments, output_of
from course.formatting import fixed, one_line
from course.learn import (
    LearnConfig,
    UnstableConfigWarning,
    learner_of,
    log_table,
    setup,
    slow_motion,
    stability_warning,
    train,
)
from course.paths import display_path
from course.reports import learn_tiny, tiny_steps
from course.reports.learn import trained_run
from course.runs import write_run
from course.tiny_learn import EvalConfig, Evaluation, TinyLearnConfig
from course.tiny_pretrain import BASES, base_dir, load_base

CONFIGS = {"table": LearnConfig, "tiny-lm": TinyLearnConfig}
"""`--model`: the token policy's table of logits, or the tiny transformer, by its config."""
OPTIONS = {"table": ("reward", "beta", "lr", "advantage", "steps", "seed", "batch_size",
                     "held_out", "redraws"),
           "tiny-lm": ("reward", "beta", "lr", "advantage", "steps", "seed", "prompts", "group",
                       "temperature", "warmup", "max_new")}
"""The fields of each model's config the command line sets; a field both set is one option."""
COMMAND_ONLY = {"table": ("slow_motion", "out", "note"), "tiny-lm": ("base",)}
"""The command's own options that act on one model only: the table's story and saved run,
the tiny transformer's choice of base."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "learn", help="Loop C on tokens: REINFORCE on a policy that writes its completions",
        description="Train a policy on fresh samples scored as text by the strict scorer or a "
                    "hackable rubric: the token-level table (--model table, starting from a "
                    "reference counted from the frozen rollouts) or the tiny transformer "
                    "(--model tiny-lm, from its pre-trained base, on ab+cd= prompts). Prints a "
                    "line per step; the table saves a run only with --out. Each option comes "
                    "from a field of the model's config (course.learn.LearnConfig, "
                    "course.tiny_learn.TinyLearnConfig); an option of the other model is "
                    "refused.")
    parser.add_argument("--model", choices=CONFIGS, default="table",
                        help="table (default): the token policy; tiny-lm: the tiny transformer")
    parser.add_argument("--log-every", type=int, default=10, metavar="K",
                        help="print every K-th step (default 10)")
    shared = [name for name in OPTIONS["table"] if name in OPTIONS["tiny-lm"]]
    add_shared_options(parser.add_argument_group("both models"), CONFIGS, shared)
    table = parser.add_argument_group("--model table only")
    add_options(table, LearnConfig, _own("table", shared), given_only=True)
    table.add_argument("--slow-motion", action="store_true",
                       help="tell the first update as a story, piece by piece, and stop")
    add_output_arguments(table)
    tiny = parser.add_argument_group("--model tiny-lm only")
    add_options(tiny, TinyLearnConfig, _own("tiny-lm", shared), given_only=True)
    tiny.add_argument("--base", type=int, choices=BASES,
                      help="the pre-trained base's seed (default 0, the lessons' base; "
                           "runs/run_021 trains from each)")
    parser.set_defaults(func=_parsed)


def _own(model: str, shared: list[str]) -> list[str]:
    """The fields of `model`'s config that only its own options set."""
    return [name for name in OPTIONS[model] if name not in shared]


def _parsed(values: argparse.Namespace) -> int:
    """Refuse, in one line, the first option given that `--model` does not take (one of the
    other model's own), then run the model's handler."""
    model = values.model
    for other in CONFIGS.keys() - {model}:
        for name in [*_own(other, []), *COMMAND_ONLY[other]]:
            value = getattr(values, name)
            if name not in OPTIONS[model] and value is not None and value is not False:
                raise UsageError(f"{option(name)}: not an option of --model {model} (an "
                                 f"option of --model {other} only)")
    if values.log_every < 1:
        raise UsageError(f"--log-every: must be >= 1, got {values.log_every}")
    if model == "tiny-lm":
        return _tiny_main(config_of(TinyLearnConfig, values, OPTIONS[model]),
                          values.base or 0, values.log_every)
    output = output_of(values)
    with warnings.catch_warnings():          # said below in one line of the command's own
        warnings.simplefilter("ignore", UnstableConfigWarning)
        table = config_of(LearnConfig, values, OPTIONS[model])
    return _main(table, values.slow_motion, values.log_every, output)


def _main(config: LearnConfig, slow_motion_only: bool, log_every: int, output: Output) -> int:
    if (warning := stability_warning(config)) is not None:
        print(f"course learn: warning: {warning}", file=sys.stderr, flush=True)
    rng = np.random.default_rng(config.seed)
    if slow_motion_only:
        problems, reference, _ = setup(config)
        print(slow_motion(learner_of(config, reference, len(problems)), problems, config, rng))
        return 0
    if output.folder is None:
        logs = train(config, rng).logs
    else:  # the run trains from the same seed: its log is this log
        files, logs = trained_run(config, output.note)
    print(log_table([entry for entry in logs
                     if entry.step % log_every == 0 or entry.step in (1, config.steps)]))
    if output.folder is not None:
        print(f"wrote {one_line(display_path(write_run(output.folder, files)))}")
    return 0


def _tiny_main(config: TinyLearnConfig, base_seed: int, log_every: int) -> int:
    """The tiny transformer from its committed base `base_seed`, trained as each run of
    run_021 is (`learn_tiny.train_arm`), measured at step 0 and at the end as run_021's
    checkpoints are."""
    if not one_blas_thread():
        print("course learn: warning: numpy's BLAS may run on several threads here (set "
              "OPENBLAS_NUM_THREADS=1 before the command): slower, and other bytes than "
              "runs/run_021", file=sys.stderr, flush=True)
    base, pretrain, _ = load_base(base_dir(base_seed))
    if progress.enabled(sys.stderr):
        print(f"course learn: training the tiny transformer, {config.steps} steps of "
              f"{config.prompts} prompts x {config.group} samples, then measuring it (under a "
              "minute on a free core)...", file=sys.stderr, flush=True)
    try:
        run = learn_tiny.train_arm(config, pretrain.model, base, (0, config.steps),
                                   learn_tiny.CONFIG.measure)
    except ValueError as err:                # a max_new the model's positions cannot hold
        raise UsageError(str(err)) from None
    print(tiny_steps.log_table([entry for entry in run.logs
                                if entry.step % log_every == 0
                                or entry.step in (1, config.steps)]))
    print()
    print(_before_after(run.evaluations[0], run.evaluations[config.steps], config,
                        learn_tiny.CONFIG.measure))
    return 0


def _before_after(before: Evaluation, after: Evaluation, config: TinyLearnConfig,
                  measure: EvalConfig) -> str:
    """The base and the trained policy side by side, on both splits (at most 80 columns)."""
    n = measure.samples
    rows = [("strict pass@1", lambda m: fixed(m.pass_at[1])),
            (f"strict pass@{min(16, n)}", lambda m: fixed(m.pass_at[min(16, n)])),
            (f"never solved in {n}", lambda m: str(sum(c == 0 for c in m.correct))),
            ("exploit share", lambda m: fixed(m.exploit_share)),
            ("entropy (nats)", lambda m: fixed(m.entropy)),
            ("length (tokens)", lambda m: fixed(m.length, digits=2))]
    lines = [f"Measured on {measure.prompts} train and {measure.prompts} held-out prompts, "
             f"{n} fresh samples each (τ {config.temperature:g}):",
             f"{'':<18}{'step 0':^18}  {f'step {config.steps}':^18}",
             f"{'':<18}{'train':>8}  {'held-out':>8}  {'train':>8}  {'held-out':>8}"]
    for label, shown in rows:
        lines.append(f"{label:<18}" + "  ".join(
            f"{shown(point[split]):>8}" for point in (before, after)
            for split in ("train", "held_out")))
    return "\n".join(line.rstrip() for line in lines)
