"""`course mdp`: Loop C's second step, a delayed reward shared by two decisions."""

from __future__ import annotations

from typing import Any

import numpy as np

from course.commands.options import add_output_arguments, check_output_arguments, make_config
from course.formatting import one_line
from course.mdp import MDPConfig, toy_mdp_log, train
from course.paths import display_path
from course.reports.mdp import build_run
from course.runs import write_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mdp", help="Loop C: REINFORCE on a two-step MDP with a delayed reward",
        description="Train a tabular softmax policy on a two-step MDP whose only reward comes "
                    "at the end, printing how each episode credits both decisions. Writes a "
                    "run folder only with --out.")
    parser.add_argument("--episodes", type=int, default=MDPConfig.episodes,
                        help="number of episodes (default 300)")
    parser.add_argument("--lr", type=float, default=MDPConfig.lr, help="learning rate")
    parser.add_argument("--baseline", choices=("none", "running"), default="running",
                        help="how b is chosen (default running)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--log-every-episode", action="store_true",
                        help="print every episode (default: the first 10 and checkpoints)")
    add_output_arguments(parser)
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    check_output_arguments(args)
    config = make_config(MDPConfig, lr=args.lr, episodes=args.episodes, baseline=args.baseline,
                         seed=args.seed)
    history = train(config, np.random.default_rng(config.seed))  # same draws as build_run's
    print(toy_mdp_log(history, config, shown=None if args.log_every_episode else 10), end="")
    if args.out is not None:
        path = write_run(args.out, build_run(config, args.note))
        print(f"wrote {one_line(display_path(path))}")
    return 0
