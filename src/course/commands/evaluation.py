"""`course eval` and `course compare`: Loop A, a measurement saved as a run, and two runs
compared only inside the Locked Room."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

from course.commands.config_options import add_options, config_of
from course.commands.options import (
    Output,
    add_output_arguments,
    add_provenance_argument,
    output_of,
    warn_unknown_origin,
)
from course.evaluation import EvalConfig
from course.formatting import one_line, percent
from course.locked_room import CompareConfig, compare_runs
from course.paths import display_path
from course.reports import comparison
from course.reports.evaluation import RESULTS, write_results
from course.runs import RunFiles, write_run, write_streamed_run

OPTIONS = ("problems", "rollouts", "scorer")
"""The fields of `EvalConfig` the command line sets (with `--provenance` and `--out`)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval", help="Loop A: score frozen rollouts and save a run folder",
        description="Score one rollout per problem with the strict verifier and write "
                    "results.jsonl, summary.json, manifest.json and README.md to --out.")
    add_options(parser, EvalConfig, OPTIONS)
    add_provenance_argument(parser, "rollouts")
    add_output_arguments(parser, required=True)
    parser.set_defaults(func=_eval_parsed)

    parser = subparsers.add_parser(
        "compare", help="compare two eval runs under the Locked Room Rule",
        description="Compare the pass rates of two Loop A runs of the same dataset, scorer, "
                    "prompt and sampling; refuse when any of them differs.")
    parser.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline run folder")
    parser.add_argument("run_b", type=Path, metavar="RUN_B", help="the changed run folder")
    add_output_arguments(parser)
    parser.set_defaults(func=lambda values: _compare_main(values.run_a, values.run_b,
                                                          output_of(values)))


def _eval_parsed(values: argparse.Namespace) -> int:
    config = config_of(EvalConfig, values, OPTIONS, out=values.out,
                       provenance=values.provenance)
    return _eval_main(config, output_of(values))  # refused before the work, not after it


def _eval_main(config: EvalConfig, output: Output) -> int:
    assert output.folder is not None            # --out is required
    files: RunFiles = {}             # the run's files but its results, which are streamed

    def produce(sink: BinaryIO) -> RunFiles:
        files.update(write_results(config, output.note, sink))  # read below: summary, manifest
        return files

    path = write_streamed_run(output.folder, RESULTS, produce)
    warn_unknown_origin("eval", config.rollouts, files)
    summary = json.loads(files["summary.json"])
    lo, hi = summary["pass_rate_ci95"]
    print(f"wrote {one_line(display_path(path))}: {summary['passes']}/{summary['n']} pass, "
          f"pass rate {percent(summary['pass_rate'])} (95% CI {percent(lo)} to {percent(hi)})")
    return 0


def _compare_main(run_a: Path, run_b: Path, output: Output) -> int:
    """Print the comparison; with `--out`, also save it as a run folder whose
    `comparison.txt` holds exactly the printed lines (so the saved-to line goes to stderr)."""
    config = CompareConfig(run_a=run_a, run_b=run_b, out=output.folder)
    if output.folder is None:
        sys.stdout.write(comparison.report_text(compare_runs(config.run_a, config.run_b)))
        return 0
    files = comparison.build_run(config, output.note)  # a refused comparison raises here
    path = write_run(output.folder, files)
    # the saved bytes themselves (each run's path as `one_line` shows it, as in the file)
    sys.stdout.write(files["comparison.txt"].decode("utf-8"))
    print(f"saved the comparison in {one_line(display_path(path))}", file=sys.stderr)
    return 0
