"""`course bandit`: Loop C's first step, REINFORCE on a four-armed bandit, told as a story."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from course.bandit import (
    ADVANTAGE_SIGN_NOTE,
    BanditConfig,
    fast_log,
    setup_lines,
    slow_motion_log,
    train,
)
from course.commands.config_options import add_options, config_of
from course.commands.options import Output, add_output_arguments, output_of
from course.formatting import one_line
from course.paths import display_path
from course.reports.bandit import build_run
from course.runs import write_run

OPTIONS = ("steps", "baseline", "lr", "batch_size", "seed")
"""The fields of `BanditConfig` the command line sets (the ablation keeps run_003's)."""
SLOW_MOTION_STEPS = 10
"""Steps told as a story by `--slow-motion` when `--steps` does not say."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bandit", help="Loop C: REINFORCE on a 4-armed bandit, step by step",
        description="Train a softmax policy over completion styles with REINFORCE and print "
                    "the story. Writes a run folder only with --out.")
    parser.add_argument("--slow-motion", action="store_true",
                        help=f"tell every step as a story ({SLOW_MOTION_STEPS} steps unless "
                             "--steps says)")
    add_options(parser, BanditConfig, OPTIONS)
    parser.set_defaults(steps=None)             # None: the slow-motion rule above decides
    parser.add_argument("--log-every-step", action="store_true",
                        help="fast mode: print a one-line summary of every step")
    add_output_arguments(parser)  # the saved run also holds the baseline ablation
    parser.set_defaults(func=_parsed)


def _parsed(values: argparse.Namespace) -> int:
    output = output_of(values)
    if values.steps is None:
        values.steps = SLOW_MOTION_STEPS if values.slow_motion else BanditConfig.steps
    config = config_of(BanditConfig, values, OPTIONS)
    return _main(config, values.slow_motion, values.log_every_step, output)


def _main(config: BanditConfig, slow_motion: bool, every_step: bool, output: Output) -> int:
    history = train(config, np.random.default_rng(config.seed))  # same draws as build_run's
    if slow_motion:
        print(slow_motion_log(history, config))
    else:
        print("\n".join([*setup_lines(config), ADVANTAGE_SIGN_NOTE]))  # once, as in slow motion
        print(fast_log(history, config, every=1 if every_step else max(1, config.steps // 10)))
    if output.folder is not None:
        path = write_run(output.folder, build_run(config, output.note))
        print(f"wrote {one_line(display_path(path))}")
    return 0
