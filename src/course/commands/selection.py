"""`course select`: Loop B, Best-of-N with pass@k and two controls, saved as a run."""

from __future__ import annotations

import argparse
import json
from typing import Any

from course.commands.config_options import add_options, config_of
from course.commands.options import (
    Output,
    add_output_arguments,
    add_provenance_argument,
    output_of,
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


OPTIONS = ("pack", "problems", "seed")
"""The fields of `SelectionConfig` the command line sets (and `--provenance`, with its own
help); the N values compared keep run_002's."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "select", help="Loop B: Best-of-N, pass@k and two controls on a frozen pack",
        description="Score a frozen selection pack, compare N=1, Best-of-N, a random pick and "
                    "majority vote, and save the run folder. The policy does not change.")
    add_options(parser, SelectionConfig, OPTIONS)
    add_provenance_argument(parser, "pack's samples")
    add_output_arguments(parser, required=True)
    parser.set_defaults(func=_parsed)


def _parsed(values: argparse.Namespace) -> int:
    output = output_of(values)
    return _main(config_of(SelectionConfig, values, OPTIONS, provenance=values.provenance),
                 output)


def _main(config: SelectionConfig, output: Output) -> int:
    assert output.folder is not None            # --out is required
    files = build_run(config, output.note)
    path = write_run(output.folder, files)
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
