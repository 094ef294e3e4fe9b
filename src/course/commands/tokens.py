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
    parser.set_defaults(func=lambda values: _main(values.text, values.expected,
                                                  values.variants))


def _main(text: str | None, expected: int | None, variants: bool) -> int:
    if variants:
        against = 323 if expected is None else expected
        print(f"near-miss spellings, tokenized with cl100k_base, strict-scored against {against}")
        print(format_variants(inspect_variants(against)))
        return 0
    if text is None:
        raise UsageError("give a TEXT to tokenize (or --variants)")
    tokens = tokenize(text)
    print(f"{text!r}: {len(tokens)} tokens (cl100k_base)")
    print(f"{'id':>7}  piece")
    for token, piece in tokens:
        print(f"{token:>7}  {show_piece(piece)}")
    if expected is not None:
        result = score({"expected_answer": expected}, text)
        print(f"strict score against {expected}: reward {result['reward']:.1f}, "
              f"code {result['details']['code']}")
    return 0
