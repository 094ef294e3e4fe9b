"""Bounds on every size a user can ask for, checked before anything is allocated.

A count from the command line (steps, episodes, a batch size, a number of β values) decides
how much memory and time a lesson takes. Each config's `__post_init__` checks its counts with
`count_problem`, against an upper bound named next to the field it bounds (in its docstring,
with the reason), so that `--batch-size 100000000` or a 23-digit count is refused on one line
that names the limit, instead of failing after minutes, or asking numpy for 44.7 GiB, or
overflowing a C integer.

The bounds sit far above anything a lesson needs (its defaults are 8 to 300) and far below
what a laptop cannot hold: each is chosen so that the largest run allowed fits in about 500 MB
and a few minutes.
"""

from __future__ import annotations


def count_problem(name: str, value: int, low: int, high: int, why: str,
                  why_low: str | None = None) -> str | None:
    """None if `low <= value <= high`, else the one-line problem to report for field `name`:
    the bound it broke, the reason for that bound (`why` for the upper one, `why_low`, if
    any, for the lower one), and the value given (its digit count, when it is too long to
    print)."""
    if low <= value <= high:
        return None
    shown = str(value) if len(str(value)) <= 30 else f"a number of {len(str(abs(value)))} digits"
    if value < low:
        return f"{name}: must be >= {low}{f' ({why_low})' if why_low else ''}, got {shown}"
    return f"{name}: must be at most {high:,} ({why}), got {shown}"
