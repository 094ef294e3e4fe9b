"""`course bandit`: Loop C's first step, REINFORCE on a four-armed bandit, told as a story."""

from __future__ import annotations

from typing import Any

import numpy as np

from course.bandit import (
    ADVANTAGE_SIGN_NOTE,
    BASELINES,
    BanditConfig,
    fast_log,
    setup_lines,
    slow_motion_log,
    train,
)
from course.commands.options import add_output_arguments, check_output_arguments, make_config
from course.formatting import one_line
from course.paths import display_path
from course.reports.bandit import build_run
from course.runs import write_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bandit", help="Loop C: REINFORCE on a 4-armed bandit, step by step",
        description="Train a softmax policy over completion styles with REINFORCE and print "
                    "the story. Writes a run folder only with --out.")
    parser.add_argument("--slow-motion", action="store_true",
                        help="tell every step as a story (default 10 steps)")
    parser.add_argument("--steps", type=int, help="number of updates (default 300)")
    parser.add_argument("--baseline", choices=BASELINES, default="running",
                        help="how b is chosen (default running)")
    parser.add_argument("--lr", type=float, default=BanditConfig.lr, help="learning rate")
    parser.add_argument("--batch-size", type=int, default=1, help="samples per update")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--log-every-step", action="store_true",
                        help="fast mode: print a one-line summary of every step")
    add_output_arguments(parser)  # the saved run also holds the baseline ablation
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    check_output_arguments(args)
    steps = args.steps if args.steps is not None else (10 if args.slow_motion else 300)
    config = make_config(BanditConfig, lr=args.lr, steps=steps, baseline=args.baseline,
                         batch_size=args.batch_size, seed=args.seed)
    history = train(config, np.random.default_rng(config.seed))  # same draws as build_run's
    if args.slow_motion:
        print(slow_motion_log(history, config))
    else:
        print("\n".join([*setup_lines(config), ADVANTAGE_SIGN_NOTE]))  # once, as in slow motion
        print(fast_log(history, config, every=1 if args.log_every_step else max(1, steps // 10)))
    if args.out is not None:
        path = write_run(args.out, build_run(config, args.note))
        print(f"wrote {one_line(display_path(path))}")
    return 0
