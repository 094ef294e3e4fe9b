"""`course learn`: Loop C on tokens, REINFORCE on fresh samples of a policy that writes text."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np

from course.commands.options import (
    UsageError,
    add_output_arguments,
    check_output_arguments,
    make_config,
)
from course.formatting import one_line
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
from course.reports.learn import trained_run
from course.rubrics import RUBRICS
from course.runs import write_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "learn", help="Loop C on tokens: REINFORCE on a policy that writes its completions",
        description="Train a token-level policy, starting from a reference counted from the "
                    "frozen rollouts, on fresh samples scored as text by the strict scorer or "
                    "a hackable rubric. Prints a line per step; saves a run only with --out.")
    parser.add_argument("--reward", choices=list(RUBRICS), default=LearnConfig.reward,
                        help="what pays (default strict); a rubric makes strict a measurement")
    parser.add_argument("--beta", type=float, default=LearnConfig.beta,
                        help="KL coefficient toward the reference (default 0)")
    parser.add_argument("--lr", type=float, default=LearnConfig.lr,
                        help="step size (default 1; measured stable up to 10, with "
                             "beta x lr <= 2)")
    parser.add_argument("--advantage", choices=list(ADVANTAGES), default=LearnConfig.advantage,
                        help="rloo (default, leave-one-out), grpo (group mean and std, 1/|y|) "
                             "or dr_grpo (group mean only)")
    parser.add_argument("--batch-size", type=int, default=LearnConfig.batch_size,
                        help="fresh completions per prompt per step (default 8)")
    parser.add_argument("--steps", type=int, default=LearnConfig.steps, help="updates")
    parser.add_argument("--held-out", action="store_true",
                        help="train on every other prompt only; the rest are never trained on")
    parser.add_argument("--redraws", type=int, default=LearnConfig.redraws,
                        help="dynamic sampling: draw a group whose rewards are all equal again, "
                             "up to this many times a step (default 0)")
    parser.add_argument("--seed", type=int, default=LearnConfig.seed, help="random seed")
    parser.add_argument("--log-every", type=int, default=10, metavar="K",
                        help="print every K-th step (default 10)")
    parser.add_argument("--slow-motion", action="store_true",
                        help="tell the first update as a story, piece by piece, and stop")
    add_output_arguments(parser)
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    check_output_arguments(args)
    with warnings.catch_warnings():          # said below in one line of the command's own
        warnings.simplefilter("ignore", UnstableConfigWarning)
        config = make_config(LearnConfig, reward=args.reward, beta=args.beta, lr=args.lr,
                             advantage=args.advantage, batch_size=args.batch_size,
                             steps=args.steps, seed=args.seed, held_out=args.held_out,
                             redraws=args.redraws)
    if (warning := stability_warning(config)) is not None:
        print(f"course learn: warning: {warning}", file=sys.stderr, flush=True)
    if args.log_every < 1:
        raise UsageError(f"--log-every: must be >= 1, got {args.log_every}")
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
