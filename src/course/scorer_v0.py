"""The strict scorer as it was first written: `strict-v0`. Kept on purpose; measure nothing with it.

This is an earlier version of the course's measurement instrument, kept as a piece of evidence
for the Milestone 4 forensics exercise. It was written from the same one-line spec as
`course.scorer` (one line `Final: <int>`, the integer equal to `expected_answer`), before the
spec tests of `tests/test_scorer_spec.py` existed, and it was used to score the frozen rollouts
once (`runs/run_019`). `course.scorer` (`strict-v1`) replaced it.

Do not use it to measure a policy, to train one, or to compare against a `strict-v1` run:
`course compare` refuses that pairing, because a change of scorer version is a change of
instrument. Its one legitimate use is `course eval --scorer strict-v0`, to study how an
instrument can mislead: put its run beside `runs/run_001` (the same rollouts, scored by
`strict-v1`) and explain every example on which the two disagree.

Same signature as the scorer that replaced it::

    score(example, completion) -> {"reward": 1.0 or 0.0, "details": {...}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

SCORER_VERSION: Final = "strict-v0"

PREFIX: Final = "Final:"

CODES: Final = {
    "correct": "The Final line's integer equals the expected answer.",
    "wrong_answer": "The Final line's integer differs from the expected answer.",
    "not_a_string": "The completion is not text.",
    "empty": "The completion is empty.",
    "no_final_prefix": "The answer line does not start with `Final:`.",
    "not_an_integer": "The answer after `Final:` could not be read as an integer.",
}
"""The codes this version gives, with what each meant to its author."""


def _verdict(reward: float, code: str, parsed: int | None, expected: Any) -> dict[str, Any]:
    return {"reward": reward,
            "details": {"code": code, "parsed_answer": parsed, "expected_answer": expected,
                        "scorer_version": SCORER_VERSION, "message": CODES[code]}}


def score(example: Mapping[str, Any], completion: Any) -> dict[str, Any]:
    """Score one completion: 1.0 when its Final line holds the expected integer, else 0.0."""
    expected = example["expected_answer"]
    if not isinstance(completion, str):
        return _verdict(0.0, "not_a_string", None, expected)
    text = completion.strip()  # a trailing newline is not part of the answer
    if not text:
        return _verdict(0.0, "empty", None, expected)
    line = text.split("\n")[-1]  # the answer line
    if not line.startswith(PREFIX):  # the format: `Final: <int>`
        return _verdict(0.0, "no_final_prefix", None, expected)
    answer = line[len(PREFIX):].strip()
    try:
        parsed = int(answer)
    except ValueError:
        return _verdict(0.0, "not_an_integer", None, expected)
    if parsed != expected:
        return _verdict(0.0, "wrong_answer", parsed, expected)
    return _verdict(1.0, "correct", parsed, expected)
