"""`course tokens`: the real cl100k_base tokens of a string, or the near-miss table."""

from __future__ import annotations

from typing import Any

from course.commands.options import UsageError, spec_integer
from course.scorer import score
from course.tokens import format_variants, inspect_variants, show_piece, tokenize


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tokens", help="show the cl100k_base tokens of a string (or the near-miss table)",
        description="Print the token ids and pieces of TEXT under cl100k_base (offline), or "
        "the table of near-miss spellings of `Final: 323` with their strict scores.")
    parser.add_argument("text", nargs="?", help="the text to tokenize (use $'...' for \\n)")
    parser.add_argument("--expected", type=spec_integer, metavar="N",
                        help="also score TEXT against this answer (an integer as the spec "
                        "writes one)")
    parser.add_argument("--variants", action="store_true",
                        help="print the near-miss table (expected answer: --expected or 323)")
    parser.set_defaults(func=_main)


def _main(args: Any) -> int:
    if args.variants:
        expected = 323 if args.expected is None else args.expected
        print(f"near-miss spellings, tokenized with cl100k_base, strict-scored against {expected}")
        print(format_variants(inspect_variants(expected)))
        return 0
    if args.text is None:
        raise UsageError("give a TEXT to tokenize (or --variants)")
    tokens = tokenize(args.text)
    print(f"{args.text!r}: {len(tokens)} tokens (cl100k_base)")
    print(f"{'id':>7}  piece")
    for token, piece in tokens:
        print(f"{token:>7}  {show_piece(piece)}")
    if args.expected is not None:
        result = score({"expected_answer": args.expected}, args.text)
        print(f"strict score against {args.expected}: reward {result['reward']:.1f}, "
              f"code {result['details']['code']}")
    return 0
