"""`course learn`: Loop C on tokens, REINFORCE on fresh samples of a policy that writes text.

Two policies: the table of logits of `course.token_policy` (`--model table`, the default) and
the tiny transformer of `course.tiny_lm` from its committed base (`--model tiny-lm`,
`course.tiny_learn`). Both print a row per step (every `--log-every`-th); the tiny transformer
then measures strict pass@1 on train and held-out prompts before and after."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np

from course import progress
from course.blas import one_blas_thread
from course.commands.options import (
    UsageError,
    add_output_arguments,
    check_output_arguments,
    make_config,
)
from course.formatting import fixed, one_line
from course.learn import (
    ADVANTAGES,
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
from course.rubrics import RUBRICS
from course.runs import write_run
from course.tiny_learn import EvalConfig, Evaluation, TinyLearnConfig
from course.tiny_pretrain import BASES, base_dir, load_base

MODELS = ("table", "tiny-lm")
"""`--model`: the token policy's table of logits, or the tiny transformer."""

NOT_FOR = {
    "tiny-lm": {
        "held_out": "the tiny transformer always holds out the held-out split of "
                    "course.tiny_tasks",
        "redraws": "dynamic sampling is an option of --model table only",
        "slow_motion": "the story of one update is told by --model table only",
        "out": "--model tiny-lm saves no run; its canonical run is runs/run_021",
        "note": "--model tiny-lm saves no run; its canonical run is runs/run_021",
    },
    "table": {
        "base": "the table policy starts from counts of the frozen rollouts; --model tiny-lm "
                "takes a pre-trained base",
        "temperature": "the table policy samples at temperature 1; --model tiny-lm takes one",
        "prompts": "the table policy samples every prompt each step; --model tiny-lm draws "
                   "--prompts of them",
    },
}
"""Per model, the options it refuses (given at all) and why, in a clause."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "learn", help="Loop C on tokens: REINFORCE on a policy that writes its completions",
        description="Train a policy on fresh samples scored as text by the strict scorer or a "
                    "hackable rubric: the token-level table (--model table, starting from a "
                    "reference counted from the frozen rollouts) or the tiny transformer "
                    "(--model tiny-lm, from its pre-trained base, on ab+cd= prompts). Prints a "
                    "line per step; the table saves a run only with --out.")
    parser.add_argument("--model", choices=MODELS, default="table",
                        help="table (default): the token policy; tiny-lm: the tiny transformer")
    parser.add_argument("--reward", choices=list(RUBRICS), default=LearnConfig.reward,
                        metavar="REWARD",
                        help=f"what pays: {', '.join(RUBRICS)} (default strict); a rubric "
                             "makes strict a measurement")
    parser.add_argument("--beta", type=float, default=LearnConfig.beta,
                        help="KL coefficient toward the reference (default 0)")
    parser.add_argument("--lr", type=float,
                        help=f"step size (default {LearnConfig.lr:g} for the table, measured "
                             f"stable up to 10, with beta x lr <= 2; "
                             f"{TinyLearnConfig.lr:g} for tiny-lm, Adam's)")
    parser.add_argument("--advantage", choices=list(ADVANTAGES), default=LearnConfig.advantage,
                        help="rloo (default, leave-one-out), grpo (group mean and std, 1/|y|) "
                             "or dr_grpo (group mean only)")
    parser.add_argument("--batch-size", "--group", type=int, dest="batch_size",
                        help=f"fresh completions per prompt per step (default "
                             f"{LearnConfig.batch_size}; the tiny transformer's group)")
    parser.add_argument("--prompts", type=int,
                        help=f"tiny-lm only: train prompts drawn per step (default "
                             f"{TinyLearnConfig.prompts})")
    parser.add_argument("--steps", type=int,
                        help=f"updates (default {LearnConfig.steps} for the table, "
                             f"{learn_tiny.CONFIG.learn.steps} for tiny-lm)")
    parser.add_argument("--base", type=int, choices=BASES,
                        help="tiny-lm only: the pre-trained base's seed (default 0, the "
                             "lessons' base; runs/run_021 trains from each)")
    parser.add_argument("--temperature", type=float,
                        help=f"tiny-lm only: sampling temperature τ (default "
                             f"{TinyLearnConfig.temperature:g})")
    parser.add_argument("--held-out", action="store_true",
                        help="table only: train on every other prompt only; the rest are never "
                             "trained on")
    parser.add_argument("--redraws", type=int,
                        help="table only: dynamic sampling, draw a group whose rewards are all "
                             "equal again, up to this many times a step (default 0)")
    parser.add_argument("--seed", type=int, default=LearnConfig.seed, help="random seed")
    parser.add_argument("--log-every", type=int, default=10, metavar="K",
                        help="print every K-th step (default 10)")
    parser.add_argument("--slow-motion", action="store_true",
                        help="table only: tell the first update as a story, piece by piece, "
                             "and stop")
    add_output_arguments(parser)
    parser.set_defaults(func=_main)


def _refuse_foreign(args: Any) -> None:
    """A one-line `UsageError` for the first option given that `args.model` does not take."""
    for name, why in NOT_FOR[args.model].items():
        if getattr(args, name) not in (None, False):
            raise UsageError(f"--{name.replace('_', '-')}: not an option of --model "
                             f"{args.model} ({why})")


def _main(args: Any) -> int:
    _refuse_foreign(args)
    if args.log_every < 1:
        raise UsageError(f"--log-every: must be >= 1, got {args.log_every}")
    if args.model == "tiny-lm":
        return _tiny_main(args)
    check_output_arguments(args)
    with warnings.catch_warnings():          # said below in one line of the command's own
        warnings.simplefilter("ignore", UnstableConfigWarning)
        config = make_config(LearnConfig, reward=args.reward, beta=args.beta,
                             lr=LearnConfig.lr if args.lr is None else args.lr,
                             advantage=args.advantage,
                             batch_size=LearnConfig.batch_size if args.batch_size is None
                             else args.batch_size,
                             steps=LearnConfig.steps if args.steps is None else args.steps,
                             seed=args.seed, held_out=args.held_out,
                             redraws=LearnConfig.redraws if args.redraws is None
                             else args.redraws)
    if (warning := stability_warning(config)) is not None:
        print(f"course learn: warning: {warning}", file=sys.stderr, flush=True)
    rng = np.random.default_rng(config.seed)
    if args.slow_motion:
        problems, reference, _ = setup(config)
        print(slow_motion(learner_of(config, reference, len(problems)), problems, config, rng))
        return 0
    if args.out is None:
        logs = train(config, rng).logs
    else:  # the run trains from the same seed: its log is this log
        files, logs = trained_run(config, args.note)
    print(log_table([entry for entry in logs
                     if entry.step % args.log_every == 0 or entry.step in (1, config.steps)]))
    if args.out is not None:
        print(f"wrote {one_line(display_path(write_run(args.out, files)))}")
    return 0


def _tiny_main(args: Any) -> int:
    """The tiny transformer from its committed base, trained as each run of run_021 is
    (`learn_tiny.train_arm`), measured at step 0 and at the end as run_021's checkpoints are."""
    defaults = learn_tiny.CONFIG.learn
    given = {"lr": args.lr, "group": args.batch_size, "prompts": args.prompts,
             "steps": args.steps, "temperature": args.temperature}
    config = make_config(TinyLearnConfig, **{
        **{name: getattr(defaults, name) for name in given},
        **{name: value for name, value in given.items() if value is not None},
        "reward": args.reward, "beta": args.beta, "advantage": args.advantage,
        "seed": args.seed})
    if not one_blas_thread():
        print("course learn: warning: numpy's BLAS may run on several threads here (set "
              "OPENBLAS_NUM_THREADS=1 before the command): slower, and other bytes than "
              "runs/run_021", file=sys.stderr, flush=True)
    base, pretrain, _ = load_base(base_dir(args.base or 0))
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
                                if entry.step % args.log_every == 0
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
