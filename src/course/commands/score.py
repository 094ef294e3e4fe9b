"""`course score`: one completion through the strict verifier, or the spec's decision table."""

from __future__ import annotations

import json
from typing import Any

from course.commands.options import UsageError, spec_integer
from course.scorer import MAX_DIGITS, SPEC_DECISIONS, score


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score", help="score one completion (or print the spec table)",
        description="Score one completion against an expected answer and print the result.")
    parser.add_argument("completion", nargs="?", help="the completion text (use $'...' for \\n)")
    parser.add_argument("--expected", type=spec_integer, metavar="N",
                        help=f"the expected integer answer, written as the spec writes one "
                             f"(ASCII, no '+', no leading zeros, at most {MAX_DIGITS} digits)")
    parser.add_argument("--spec", action="store_true", help="print the spec decision table")
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    if args.spec:
        for case, completion, code, reason in SPEC_DECISIONS:
            print(f"{case:<24} {completion!r:<28.28} {code:<22} {reason}")
        return 0
    if args.completion is None or args.expected is None:
        raise UsageError("give a COMPLETION and --expected N (or --spec)")
    result = score({"expected_answer": args.expected}, args.completion)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0
