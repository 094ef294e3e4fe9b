"""`course rubrics`: the red team's matrix, every golden case under every hackable rubric;
`--try TEXT` scores one completion of your own with each of them."""

from __future__ import annotations

from typing import Any

from course import data
from course.commands.options import add_case_arguments, check_output_arguments
from course.formatting import one_line, paragraph, short_number
from course.paths import display_path
from course.reports.rubrics import build_run, format_matrix
from course.rubrics import RUBRICS, MatrixConfig, score_matrix
from course.runs import write_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rubrics", help="red team: score the golden exploits with every hackable rubric",
        description="Score the golden exploit suite and the golden-correct set with the strict "
        "scorer and every weak rubric, print the matrix, and save it as a run with --out. "
        "With --try, score one completion of your own with every rubric instead.")
    add_case_arguments(parser, "rubric")
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    if args.attempt is not None:
        example = {"expected_answer": args.expected}
        print(paragraph(f"{args.attempt!r} against expected {short_number(args.expected)}"))
        for name, rubric in RUBRICS.items():
            details = rubric(example, args.attempt)
            print(f"  {name:<18}reward {details['reward']:.1f}  {details['details']['code']}")
        return 0
    check_output_arguments(args)
    config = MatrixConfig(exploits=args.exploits, correct=args.correct)
    rows = score_matrix(data.load_golden(config.exploits), data.load_golden(config.correct),
                        config.rubrics)
    print(format_matrix(rows, config.rubrics))
    if args.out is not None:
        print(f"saved {one_line(display_path(write_run(args.out, build_run(config, args.note))))}")
    return 0
