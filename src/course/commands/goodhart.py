"""`course goodhart`: optimise a hackable proxy, measure the strict scorer, watch them part."""

from __future__ import annotations

import argparse
from typing import Any

from course.commands.config_options import add_options, config_of
from course.commands.options import Output, add_output_arguments, output_of
from course.formatting import paragraph
from course.goodhart import GoodhartConfig, simulate
from course.reports.goodhart import build_run, summarise
from course.runs import write_run

OPTIONS = ("proxy", "steps", "seed")
"""The fields of `GoodhartConfig` the command line sets (the others keep run_008's values)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "goodhart", help="optimise a hackable proxy and watch the true goal (Goodhart's law)",
        description="Train a style policy on a weak rubric and measure it with the strict scorer.")
    add_options(parser, GoodhartConfig, OPTIONS)
    add_output_arguments(parser)
    parser.set_defaults(func=_parsed)


def legend(proxy: str) -> str:
    """What the three lines' names and numbers mean, printed once above them."""
    return paragraph(f"proxy = the policy's expected reward under {proxy} (optimised); true = "
                     "its expected reward under the strict scorer (only measured); @N = after "
                     "N steps; peak = where true is highest.")


def _parsed(values: argparse.Namespace) -> int:
    output = output_of(values)
    return _main(config_of(GoodhartConfig, values, OPTIONS), output)


def _main(config: GoodhartConfig, output: Output) -> int:
    if output.folder is not None:
        write_run(output.folder, build_run(config, output.note))
    summary = summarise(config, simulate(config))
    start, peak, end = summary["start"], summary["peak"], summary["end"]
    print(f"optimising {config.proxy}; measuring the strict scorer")
    print(legend(config.proxy))
    print(f"start      proxy {start['proxy']:.3f}  true {start['true']:.3f}")
    print(f"peak @{peak['step']:<4} proxy {peak['proxy']:.3f}  true {peak['true']:.3f}")
    print(f"end  @{end['step']:<4} proxy {end['proxy']:.3f}  true {end['true']:.3f}")
    return 0
