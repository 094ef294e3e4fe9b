"""`course rubrics`: the red team's matrix, every golden case under every hackable rubric;
`--try TEXT` scores one completion of your own with each of them."""

from __future__ import annotations

from typing import Any

from course import data
from course.commands.config_options import add_options, case_handler
from course.commands.options import Output, add_case_arguments
from course.formatting import one_line, paragraph, short_number
from course.paths import display_path
from course.reports.rubrics import build_run, format_matrix
from course.rubrics import RUBRICS, MatrixConfig, score_matrix
from course.runs import write_run

OPTIONS = ("exploits", "correct")
"""The fields of `MatrixConfig` the command line sets."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rubrics", help="red team: score the golden exploits with every hackable rubric",
        description="Score the golden exploit suite and the golden-correct set with the strict "
        "scorer and every weak rubric, print the matrix, and save it as a run with --out. "
        "With --try, score one completion of your own with every rubric instead.")
    add_options(parser, MatrixConfig, OPTIONS)
    add_case_arguments(parser, "rubric")
    parser.set_defaults(func=case_handler(MatrixConfig, OPTIONS, _try, _main))


def _try(attempt: str, expected: int) -> int:
    """`--try TEXT`: one completion of your own under every rubric."""
    example = {"expected_answer": expected}
    print(paragraph(f"{attempt!r} against expected {short_number(expected)}"))
    for name, rubric in RUBRICS.items():
        details = rubric(example, attempt)
        print(f"  {name:<18}reward {details['reward']:.1f}  {details['details']['code']}")
    return 0


def _main(config: MatrixConfig, output: Output) -> int:
    rows = score_matrix(data.load_golden(config.exploits), data.load_golden(config.correct),
                        config.rubrics)
    print(format_matrix(rows, config.rubrics))
    if output.folder is not None:
        saved = write_run(output.folder, build_run(config, output.note))
        print(f"saved {one_line(display_path(saved))}")
    return 0
