"""`course kl`: Loop C's third step, the KL-regularised optimum for one β or a sweep of β."""

from __future__ import annotations

import argparse
from typing import Any

from course.commands.config_options import add_options, config_of
from course.commands.options import Output, add_output_arguments, make_config, output_of
from course.formatting import one_line
from course.kl import KLConfig, describe_policy, sweep, sweep_table
from course.paths import display_path
from course.reports.kl import build_run
from course.runs import write_run

OPTIONS = ("beta_min", "beta_max", "num_betas")
"""The fields of `KLConfig` the command line sets (the world itself keeps run_005's)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "kl", help="Loop C: the KL-regularised policy for one β, or the β sweep",
        description="Compute π_β ∝ π_ref · exp(r / β) over 10 completion styles. With --beta, "
                    "show that one policy; otherwise sweep β and print the frontier. Writes a "
                    "run folder only with --out.")
    parser.add_argument("--beta", type=float, help="show the optimum for this one β")
    add_options(parser, KLConfig, OPTIONS)
    add_output_arguments(parser)  # the saved run is the whole sweep
    parser.set_defaults(func=_parsed)


def _parsed(values: argparse.Namespace) -> int:
    output = output_of(values)
    return _main(config_of(KLConfig, values, OPTIONS), values.beta, output)


def _main(config: KLConfig, beta: float | None, output: Output) -> int:
    if beta is not None:
        print(make_config(describe_policy, config=config, beta=beta))
    else:
        print(sweep_table(config, sweep(config)))
    if output.folder is not None:
        path = write_run(output.folder, build_run(config, output.note))
        print(f"wrote {one_line(display_path(path))}")
    return 0
