"""`course eval` and `course compare`: Loop A, a measurement saved as a run, and two runs
compared only inside the Locked Room."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from course.commands.options import (
    add_output_arguments,
    add_provenance_argument,
    check_output_arguments,
    warn_unknown_origin,
)
from course.evaluation import EvalConfig, compare_runs
from course.formatting import percent
from course.paths import display_path
from course.reports.evaluation import build_run
from course.runs import write_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval", help="Loop A: score frozen rollouts and save a run folder",
        description="Score one rollout per problem with the strict verifier and write "
                    "results.jsonl, summary.json, manifest.json and README.md to --out.")
    parser.add_argument("--problems", type=Path, required=True, help="problems JSONL file")
    parser.add_argument("--rollouts", type=Path, required=True,
                        help="rollouts JSONL file: {id, completion} per line")
    add_provenance_argument(parser, "rollouts")
    add_output_arguments(parser, required=True)
    parser.set_defaults(func=_eval_main)

    parser = subparsers.add_parser(
        "compare", help="compare two eval runs under the Locked Room Rule",
        description="Compare the pass rates of two Loop A runs of the same dataset, scorer, "
                    "prompt and sampling; refuse when any of them differs.")
    parser.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline run folder")
    parser.add_argument("run_b", type=Path, metavar="RUN_B", help="the changed run folder")
    parser.set_defaults(func=_compare_main)


def _eval_main(args: Any) -> int:
    check_output_arguments(args)  # fail before the work, not after it
    config = EvalConfig(problems=args.problems, rollouts=args.rollouts, out=args.out,
                        provenance=args.provenance)
    files = build_run(config, args.note)
    path = write_run(args.out, files)
    warn_unknown_origin("eval", config.rollouts, files)
    summary = json.loads(files["summary.json"])
    lo, hi = summary["pass_rate_ci95"]
    print(f"wrote {display_path(path)}: {summary['passes']}/{summary['n']} pass, "
          f"pass rate {percent(summary['pass_rate'])} (95% CI {percent(lo)} to {percent(hi)})")
    return 0


def _compare_main(args: Any) -> int:
    report = compare_runs(args.run_a, args.run_b)
    for side in ("a", "b"):
        lo, hi = report[f"pass_rate_{side}_ci95"]
        print(f"run {side.upper()}: {report[f'run_{side}']}: {report[f'passes_{side}']}"
              f"/{report['n']} pass, {percent(report[f'pass_rate_{side}'])} "
              f"(95% CI {percent(lo)} to {percent(hi)})")
    lo, hi = report["difference_ci95"]
    print(f"change B - A: {100 * report['difference']:+.1f} points "
          f"(95% CI {100 * lo:+.1f} to {100 * hi:+.1f}; {report['interval_method']})")
    flips = report["flips"]
    print(f"flips: {flips['fail_to_pass']} fail->pass, {flips['pass_to_fail']} pass->fail, "
          f"{report['n'] - flips['fail_to_pass'] - flips['pass_to_fail']} unchanged")
    print(f"verdict: {report['verdict']} (N={report['n']})")
    return 0
