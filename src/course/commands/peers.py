"""`course peers`: our verifier beside other projects' answer-checking rules, on the same
completions; `--try TEXT` scores one completion of your own with every rule."""

from __future__ import annotations

from typing import Any

from course.commands.config_options import add_options, case_handler
from course.commands.options import Output, add_case_arguments
from course.formatting import one_line, paragraph, short_number, wrap
from course.paths import display_path
from course.peers import ComparisonConfig, load_cases, score_cases, try_completion, usable_rules
from course.reports.peers import build_run, format_disagreements, reward_text
from course.runs import write_run

OPTIONS = ("exploits", "correct")
"""The fields of `ComparisonConfig` the command line sets."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "peers", help="compare our verifier with other projects' answer-checking rules",
        description="Score the golden exploits, the golden-correct set and the near misses "
        "with our strict scorer, the hackable rubrics and four peer rules (lm-evaluation-"
        "harness GSM8K strict and flexible, DeepSeek-R1-Zero style, math-verify); print where "
        "they disagree with our spec, and save the run with --out. With --try, score one "
        "completion of your own with every rule instead.")
    add_options(parser, ComparisonConfig, OPTIONS)
    add_case_arguments(parser, "rule")
    parser.set_defaults(func=case_handler(ComparisonConfig, OPTIONS, _try, _main))


def _try(attempt: str, expected: int) -> int:
    """`--try TEXT`: one completion of your own under every rule."""
    print(paragraph(f"{attempt!r} against expected {short_number(expected)}"))
    results = try_completion(attempt, expected)
    rule_width = max(len(found["rule"]) for found in results) + 2
    code_width = max(len(found["code"]) for found in results) + 2  # columns never touch
    for found in results:
        row = (f"  {found['rule']:<{rule_width}}reward {reward_text(found['reward']):<3} "
               f"{found['code']:<{code_width}}")
        print("\n".join(wrap(f"extracted {found['extracted']!r}", indent=row)))
    return 0


def _main(config: ComparisonConfig, output: Output) -> int:
    rules, unavailable = usable_rules(config.rules)
    rows = score_cases(load_cases(config.exploits, config.correct), rules)
    print(format_disagreements(rows, rules))
    for name in unavailable:
        print(f"({name} skipped: math-verify is not installed)")
    if output.folder is not None:
        saved = write_run(output.folder, build_run(config, output.note))
        print(f"saved {one_line(display_path(saved))}")
    return 0
