"""`course kl`: Loop C's third step, the KL-regularised optimum for one β or a sweep of β."""

from __future__ import annotations

from typing import Any

from course.commands.options import add_output_arguments, check_output_arguments, make_config
from course.formatting import one_line
from course.kl import KLConfig, describe_policy, sweep, sweep_table
from course.paths import display_path
from course.reports.kl import build_run
from course.runs import write_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "kl", help="Loop C: the KL-regularised policy for one β, or the β sweep",
        description="Compute π_β ∝ π_ref · exp(r / β) over 10 completion styles. With --beta, "
                    "show that one policy; otherwise sweep β and print the frontier. Writes a "
                    "run folder only with --out.")
    parser.add_argument("--beta", type=float, help="show the optimum for this one β")
    parser.add_argument("--beta-min", type=float, default=KLConfig.beta_min)
    parser.add_argument("--beta-max", type=float, default=KLConfig.beta_max)
    parser.add_argument("--num-betas", type=int, default=KLConfig.num_betas)
    add_output_arguments(parser)  # the saved run is the whole sweep
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    check_output_arguments(args)
    config = make_config(KLConfig, beta_min=args.beta_min, beta_max=args.beta_max,
                         num_betas=args.num_betas)
    if args.beta is not None:
        print(make_config(describe_policy, config=config, beta=args.beta))
    else:
        print(sweep_table(config, sweep(config)))
    if args.out is not None:
        path = write_run(args.out, build_run(config, args.note))
        print(f"wrote {one_line(display_path(path))}")
    return 0
