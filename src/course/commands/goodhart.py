"""`course goodhart`: optimise a hackable proxy, measure the strict scorer, watch them part."""

from __future__ import annotations

from typing import Any

from course.commands.options import add_output_arguments, check_output_arguments, make_config
from course.formatting import paragraph
from course.goodhart import GoodhartConfig, simulate
from course.reports.goodhart import build_run, summarise
from course.runs import write_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "goodhart", help="optimise a hackable proxy and watch the true goal (Goodhart's law)",
        description="Train a style policy on a weak rubric and measure it with the strict scorer.")
    parser.add_argument("--proxy", default=GoodhartConfig.proxy, help="weak rubric to optimise")
    parser.add_argument("--steps", type=int, default=GoodhartConfig.steps)
    parser.add_argument("--seed", type=int, default=GoodhartConfig.seed)
    add_output_arguments(parser)
    parser.set_defaults(func=_main)


def legend(proxy: str) -> str:
    """What the three lines' names and numbers mean, printed once above them."""
    return paragraph(f"proxy = the policy's expected reward under {proxy} (optimised); true = "
                     "its expected reward under the strict scorer (only measured); @N = after "
                     "N steps; peak = where true is highest.")


def _main(args: Any) -> int:
    check_output_arguments(args)
    config = make_config(GoodhartConfig, proxy=args.proxy, steps=args.steps, seed=args.seed)
    if args.out is not None:
        write_run(args.out, build_run(config, args.note))
    summary = summarise(config, simulate(config))
    start, peak, end = summary["start"], summary["peak"], summary["end"]
    print(f"optimising {config.proxy}; measuring the strict scorer")
    print(legend(config.proxy))
    print(f"start      proxy {start['proxy']:.3f}  true {start['true']:.3f}")
    print(f"peak @{peak['step']:<4} proxy {peak['proxy']:.3f}  true {peak['true']:.3f}")
    print(f"end  @{end['step']:<4} proxy {end['proxy']:.3f}  true {end['true']:.3f}")
    return 0
