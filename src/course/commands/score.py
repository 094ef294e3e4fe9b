"""`course score`: one completion through the strict verifier, explained in a few lines (or as
the scorer's own JSON with `--json`), or the spec's decision table."""

from __future__ import annotations

import json
import sys
from typing import Any

from course.commands.options import UsageError, spec_integer
from course.explain import ASCII_MARKS, MARKS, explain, spec_table
from course.formatting import can_encode
from course.scorer import MAX_DIGITS, score


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score", help="score one completion (or print the spec table)",
        description="Score one completion against an expected answer and explain the "
        "decision: the reward, the code and why, the checks in the order they ran and where "
        "they stopped, the answer read. --json prints the scorer's result as it is.")
    parser.add_argument("completion", nargs="?", help="the completion text (use $'...' for \\n)")
    parser.add_argument("--expected", type=spec_integer, metavar="N",
                        help=f"the expected integer answer, written as the spec writes one "
                             f"(ASCII, no '+', no leading zeros, at most {MAX_DIGITS} digits)")
    parser.add_argument("--json", action="store_true",
                        help="print score()'s result as JSON instead of the explanation")
    parser.add_argument("--spec", action="store_true", help="print the spec decision table")
    parser.set_defaults(func=lambda values: _main(values.completion, values.expected,
                                                  values.json, values.spec))


def _main(completion: str | None, expected: int | None, as_json: bool, spec: bool) -> int:
    if spec:
        if as_json:
            raise UsageError("--json is for one scored completion; --spec prints the table")
        print("\n".join(spec_table()))
        return 0
    if completion is None or expected is None:
        raise UsageError("give a COMPLETION and --expected N (or --spec)")
    result = score({"expected_answer": expected}, completion)
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    marks = MARKS if can_encode("".join(MARKS), getattr(sys.stdout, "encoding", None)) \
        else ASCII_MARKS
    print("\n".join(explain(result, completion, marks)))
    return 0
