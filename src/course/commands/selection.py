"""`course select`: Loop B, Best-of-N with pass@k and two controls, saved as a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from course.commands.options import (
    add_output_arguments,
    add_provenance_argument,
    check_output_arguments,
    make_config,
    warn_unknown_origin,
)
from course.formatting import COLUMNS, fill, one_line, paragraph
from course.paths import display_path
from course.reports.selection import build_run
from course.runs import write_run
from course.selection import SelectionConfig

LEGEND = paragraph(
    "Share of prompts solved when one of a prompt's first n samples is picked by: best-of-n "
    "(oracle) = a sample the strict scorer pays, if any (it reads the answer key); majority "
    "vote = the most common parsed answer; random pick = chance. pass@n = the estimated share "
    "where at least one of n samples passes (over every n of the pack's samples).")
"""Printed once, above the table."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "select", help="Loop B: Best-of-N, pass@k and two controls on a frozen pack",
        description="Score a frozen selection pack, compare N=1, Best-of-N, a random pick and "
                    "majority vote, and save the run folder. The policy does not change.")
    defaults = SelectionConfig()
    parser.add_argument("--pack", type=Path, default=defaults.pack, help="selection pack JSONL")
    parser.add_argument("--problems", type=Path, default=defaults.problems,
                        help="problems JSONL with the expected answers")
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="seed of the random-pick control")
    add_provenance_argument(parser, "pack's samples")
    add_output_arguments(parser, required=True)
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    check_output_arguments(args)
    config = make_config(SelectionConfig, pack=args.pack, problems=args.problems, seed=args.seed,
                         provenance=args.provenance)
    files = build_run(config, args.note)
    path = write_run(args.out, files)
    warn_unknown_origin("select", config.pack, files)
    summary = json.loads(files["summary.json"])
    print(LEGEND)
    print(f"{'n':>3}  {'best-of-n (oracle)':>18}  {'majority vote':>13}  {'random pick':>11}"
          f"  {'pass@n':>6}")
    for row in summary["by_n"]:
        print(f"{row['n']:>3}  {row['best_of_n']:>18.3f}  {row['majority_vote']:>13.3f}  "
              f"{row['random']:>11.3f}  {row['pass_at_k']:>6.3f}")
    print(f"pass@1 {summary['pass_at_1']:.3f} (the policy, unchanged)")
    fails = [one_line(problem_id) for problem_id in summary["selection_fails"]] or ["none"]
    print("\n".join(fill("selection still fails on: ", fails, COLUMNS, gap=", ")))
    print(f"saved {one_line(display_path(path))}")
    return 0
