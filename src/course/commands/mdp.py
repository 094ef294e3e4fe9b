"""`course mdp`: Loop C's second step, a delayed reward shared by two decisions."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from course.commands.config_options import add_options, config_of
from course.commands.options import Output, add_output_arguments, output_of
from course.formatting import one_line
from course.mdp import MDPConfig, toy_mdp_log, train
from course.paths import display_path
from course.reports.mdp import build_run
from course.runs import write_run

OPTIONS = ("episodes", "lr", "baseline", "seed")
"""The fields of `MDPConfig` the command line sets (the others keep run_004's values)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mdp", help="Loop C: REINFORCE on a two-step MDP with a delayed reward",
        description="Train a tabular softmax policy on a two-step MDP whose only reward comes "
                    "at the end, printing how each episode credits both decisions. Writes a "
                    "run folder only with --out.")
    add_options(parser, MDPConfig, OPTIONS)
    parser.add_argument("--log-every-episode", action="store_true",
                        help="print every episode (default: the first 10 and checkpoints)")
    add_output_arguments(parser)
    parser.set_defaults(func=_parsed)


def _parsed(values: argparse.Namespace) -> int:
    output = output_of(values)
    return _main(config_of(MDPConfig, values, OPTIONS), values.log_every_episode, output)


def _main(config: MDPConfig, every_episode: bool, output: Output) -> int:
    history = train(config, np.random.default_rng(config.seed))  # same draws as build_run's
    print(toy_mdp_log(history, config, shown=None if every_episode else 10), end="")
    if output.folder is not None:
        path = write_run(output.folder, build_run(config, output.note))
        print(f"wrote {one_line(display_path(path))}")
    return 0
