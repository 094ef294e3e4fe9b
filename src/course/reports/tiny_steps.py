"""The step table of the tiny transformer's RL runs: what `course learn --model tiny-lm`
prints, what each run of `runs/run_021` saves, and reading it back.

One row per step, measured on the step's fresh samples before its update (`LOG_LEGEND` says
what each column is); `read_log` reads a saved table back into numbers, at its 3 decimals.
"""

from __future__ import annotations

from collections.abc import Sequence

from course.formatting import fixed, paragraph
from course.tiny_learn import StepLog

LOG_LEGEND = paragraph(
    "Columns, on each step's fresh samples of train prompts, before its update: reward = mean "
    "reward paid by the scorer trained on; pass@1 = share the strict scorer pays; held-out = "
    "the same share on fresh samples of held-out prompts, never learned from; KL = mean "
    "log(π/π_ref) per completion, in nats; entropy = mean entropy per written token, in nats; "
    "length = mean tokens per completion, the end token included; exploit = share of "
    "exploits (several numbers, the answer among them).")
"""Printed once, above the step table (`LOG_HEADER`), in the terminal and in each saved log."""

LOG_HEADER = (f"{'step':>5}  {'reward':>6}  {'pass@1':>6}  {'held-out':>8}  {'KL':>7}  "
              f"{'entropy':>7}  {'length':>6}  {'exploit':>7}")

LOG_FIELDS = ("step", "reward", "pass_at_1", "held_out_pass_at_1", "kl", "entropy", "length",
              "exploit_share")
"""The `StepLog` fields of the table's columns, in order (its gradient norm is not shown)."""


def log_line(entry: StepLog) -> str:
    """One step as a row of the step table: 3 decimals, 2 for the length."""
    return (f"{entry.step:>5}  {fixed(entry.reward):>6}  {fixed(entry.pass_at_1):>6}  "
            f"{fixed(entry.held_out_pass_at_1):>8}  {fixed(entry.kl):>7}  "
            f"{fixed(entry.entropy):>7}  {fixed(entry.length, digits=2):>6}  "
            f"{fixed(entry.exploit_share):>7}")


def log_table(entries: Sequence[StepLog]) -> str:
    """The step table: `LOG_LEGEND` once, the headings, one `log_line` per entry."""
    return "\n".join([LOG_LEGEND, LOG_HEADER, *map(log_line, entries)])


def log_bytes(entries: Sequence[StepLog]) -> bytes:
    """A saved step log: `log_table` of every step, as `course learn --model tiny-lm
    --log-every 1` prints it."""
    return (log_table(entries) + "\n").encode("utf-8")


def read_log(raw: bytes) -> list[dict[str, float]]:
    """The rows of a saved step log (`log_bytes`) as `LOG_FIELDS` -> value, read back from
    the text (so at its 3 decimals). `ValueError` if it is not such a log."""
    lines = raw.decode("utf-8").splitlines()
    if LOG_HEADER not in lines:
        raise ValueError("no step table in it (its heading line is missing)")
    rows = lines[lines.index(LOG_HEADER) + 1:]
    parsed = [dict(zip(LOG_FIELDS, map(float, row.split()), strict=True)) for row in rows]
    if [row["step"] for row in parsed] != list(range(1, len(parsed) + 1)):
        raise ValueError("its steps are not 1, 2, 3, ... in order")
    return parsed
