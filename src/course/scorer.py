"""The measurement instrument: a strict, deterministic verifier for `Final: <int>` answers.

Everything in the course goes through one signature::

    score(example, completion) -> {"reward": float, "details": dict}

`example` is one dataset record (`prompt`, `expected_answer`, optional `id`); `completion` is the
text the policy produced. The scorer never solves the problem: it parses the completion and
compares the parsed integer with `expected_answer`.

Spec v1 (`SCORER_VERSION`), read top to bottom as the checks run:

1. The completion is a `str`.                       else `not_a_string`
2. Surrounding ASCII whitespace is trimmed; something is left.   else `empty`
3. What is left is one line (no line break of any kind).         else `multiple_lines`
4. Every character is ASCII.                                     else `non_ascii_character`
5. The line starts with `Final:` (case-sensitive).               else `no_final_prefix`
6. Exactly one ASCII space separates `Final:` from the answer.   else `bad_separator`
7. The answer is an optional sign and ASCII digits, nothing else. else `not_an_integer`
8. The integer is written canonically: no `+`, no leading zeros, no `-0`.
                                                                 else `non_canonical_integer`
9. It has at most `MAX_DIGITS` digits.                           else `integer_too_long`
10. It equals `expected_answer`.                                 else `wrong_answer`

Reward is 1.0 exactly when every check passes (code `correct`), otherwise 0.0. There is no partial
credit. The reason for each decision is recorded in `SPEC_DECISIONS` and tested case by case in
`tests/test_scorer_spec.py`.

The contract: deterministic (no randomness, clocks or I/O), total (any `example` and any
`completion` get a result, never an exception), explainable (`details` names the code and the
ordered checks), fast (one precompiled regex on the happy path; linear time on any input),
versioned.

Total includes hostile values. A `str` subclass is scored by its characters, never by its
methods: it is copied to an exact `str` first, so an overridden `strip` can neither crash the
scorer nor buy a reward. An example that cannot be read (not a mapping, a mapping whose methods
raise, no `int` answer, an answer longer than any in-spec answer can be) is `invalid_example`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypedDict

SCORER_VERSION: Final = "strict-v1"
"""Bumped whenever any decision below changes: a new version is a new measurement instrument."""

MAX_DIGITS: Final = 640
"""Longest accepted integer, in digits. 640 is the smallest value CPython allows for its
`int()` digit limit (`sys.set_int_max_str_digits`), so conversion can never raise, whatever the
interpreter's setting. No answer in this course is anywhere near that long."""

_ANSWER_LIMIT: Final = 10**MAX_DIGITS
"""Every in-spec answer `n` has `abs(n) < _ANSWER_LIMIT` (at most MAX_DIGITS digits). An example
whose `expected_answer` is outside that range can never be matched, so it is `invalid_example`."""

PREFIX: Final = "Final:"
ASCII_WHITESPACE: Final = " \t\n\r\f\v"

LINE_BREAKS: Final = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""The characters `str.splitlines()` treats as a line boundary. Any of them makes two lines."""
# An optional sign and ASCII digits; `++` is possessive, so a failed match never backtracks.
_INTEGER = re.compile(r"[+-]?[0-9]++")
_NON_ASCII = re.compile("[^\x00-\x7f]")
# Checks 7 to 9 in one pattern, written once: `0`, or an optional `-` and ASCII digits without a
# leading zero, at most MAX_DIGITS of them. ([0-9] is ASCII only, unlike \d.)
_SPEC_INTEGER: Final = rf"0|-?[1-9][0-9]{{0,{MAX_DIGITS - 1}}}"
# The whole happy path in one regex: `Final: ` then a spec integer, nothing else.
_CANONICAL_LINE = re.compile(rf"Final: ({_SPEC_INTEGER})")
_CANONICAL_INTEGER = re.compile(_SPEC_INTEGER)

CHECKS: Final = (
    "is_string",
    "non_empty",
    "single_line",
    "ascii_only",
    "final_prefix",
    "single_space",
    "integer_syntax",
    "canonical_integer",
    "digit_limit",
    "matches_expected",
)
"""The checks, in the order they run. `details["checks"]` lists them up to the first failure."""

CODES: Final = {
    "correct": "Every check passed: one line `Final: <int>` whose integer equals the answer.",
    "wrong_answer": "Well-formed answer, but the integer differs from expected_answer.",
    "not_a_string": "The completion is not a str (None, bytes, a number, ...).",
    "empty": "Nothing is left after trimming surrounding whitespace.",
    "multiple_lines": "The trimmed completion contains a line break: only one line is allowed.",
    "non_ascii_character": "A non-ASCII character (lookalike minus, NBSP, zero-width space, "
    "non-ASCII digit, ...) appears in the line.",
    "no_final_prefix": "The line does not start with `Final:` (case-sensitive).",
    "bad_separator": "`Final:` must be followed by exactly one ASCII space, then the answer.",
    "not_an_integer": "The answer is not an optional sign followed by ASCII digits only "
    "(trailing text, punctuation, `_`, `,`, `.`, ...).",
    "non_canonical_integer": "The integer is not written canonically "
    "(a `+` sign, leading zeros, `-0`).",
    "integer_too_long": f"The integer has more than {MAX_DIGITS} digits.",
    "invalid_example": "The example has no usable `expected_answer` (missing, not an int, over "
    f"{MAX_DIGITS} digits, or unreadable): a dataset bug, not a model one.",
}
"""The closed set of `details["code"]` values, with what each one means."""

# Which check fails produces which code (the two extra codes, `correct` and `invalid_example`,
# are outcomes rather than failed checks).
_CODE_OF_CHECK: Final = {
    "is_string": "not_a_string",
    "non_empty": "empty",
    "single_line": "multiple_lines",
    "ascii_only": "non_ascii_character",
    "final_prefix": "no_final_prefix",
    "single_space": "bad_separator",
    "integer_syntax": "not_an_integer",
    "canonical_integer": "non_canonical_integer",
    "digit_limit": "integer_too_long",
    "matches_expected": "wrong_answer",
}

SPEC_DECISIONS: Final = (
    # (case, completion, expected code, reason)
    ("canonical answer", "Final: 323", "correct", "The one in-spec spelling."),
    ("trailing newline", "Final: 323\n", "correct",
     "Generators often end with a newline; it is surrounding whitespace, trimmed."),
    ("CRLF line ending", "Final: 323\r\n", "correct",
     "A Windows line ending is still surrounding whitespace."),
    ("surrounding spaces", "  Final: 323  ", "correct", "Trimming is the one normalisation."),
    ("negative answer", "Final: -42", "correct", "An ASCII hyphen-minus is part of an integer."),
    ("zero", "Final: 0", "correct", "Zero is written `0`."),
    ("leading zeros", "Final: 0323", "non_canonical_integer",
     "One spelling per number keeps string and number equality the same thing."),
    ("plus sign", "Final: +323", "non_canonical_integer", "Canonical integers carry no `+`."),
    ("negative zero", "Final: -0", "non_canonical_integer", "Zero has one spelling: `0`."),
    ("Unicode minus", "Final: \u2212323", "non_ascii_character",
     "U+2212 looks like `-` but is another character; the spec's alphabet is ASCII."),
    ("non-breaking space", "Final:\u00a0323", "non_ascii_character",
     "NBSP looks like a space; accepting lookalikes widens the spec silently."),
    ("zero-width space", "Final: 3\u200b23", "non_ascii_character",
     "Invisible characters are a classic way to smuggle text past a reader."),
    ("Arabic-Indic digits", "Final: \u0663\u0662\u0663", "non_ascii_character",
     "`int()` and `\\d` accept them; the spec says ASCII digits."),
    ("fullwidth digits", "Final: \uff13\uff12\uff13", "non_ascii_character",
     "`int()` accepts them too; same reason."),
    ("double space", "Final:  323", "bad_separator", "The format has exactly one space."),
    ("no space", "Final:323", "bad_separator", "The format has exactly one space."),
    ("tab separator", "Final:\t323", "bad_separator", "A tab is not the specified space."),
    ("underscore digits", "Final: 3_23", "not_an_integer",
     "`int()` accepts `3_23`; the spec does not accept digit separators."),
    ("thousands comma", "Final: 3,230", "not_an_integer", "No digit grouping in the spec."),
    ("trailing period", "Final: 323.", "not_an_integer", "No trailing punctuation."),
    ("trailing text", "Final: 323 apples", "not_an_integer", "No units or words after the answer."),
    ("lowercase prefix", "final: 323", "no_final_prefix", "The prefix is case-sensitive."),
    ("bare number", "323", "no_final_prefix", "Format failure: the prefix is required."),
    ("sentence", "The answer is 323.", "no_final_prefix", "Extra text instead of the format."),
    ("markdown bold", "**Final: 323**", "no_final_prefix",
     "Markdown around the line is not the line."),
    ("inline code", "`Final: 323`", "no_final_prefix", "Backticks are not part of the format."),
    ("reasoning then answer", "17*19 = 323\nFinal: 323", "multiple_lines",
     "Exactly one line: no visible reasoning in this task."),
    ("repeated Final lines", "Final: 323\nFinal: 324", "multiple_lines",
     "Answer laundering: several answers hedge the bet."),
    ("newline after prefix", "Final:\n323", "multiple_lines", "The answer must be on the line."),
    ("Unicode line separator", "Final: 1\u2028Final: 323", "multiple_lines",
     "U+2028 splits lines for `str.splitlines()`, so it counts as a break."),
    ("too many digits", "Final: " + "9" * (MAX_DIGITS + 1), "integer_too_long",
     "Beyond CPython's smallest `int()` digit limit; no answer is that long."),
    ("empty", "", "empty", "Nothing to parse."),
    ("whitespace only", " \n\t ", "empty", "Nothing is left after trimming."),
    ("None", None, "not_a_string", "Totality: a missing completion scores 0, it does not crash."),
    ("bytes", b"Final: 323", "not_a_string", "Bytes must be decoded upstream, on purpose."),
    ("an int", 323, "not_a_string", "The policy emits text, not numbers."),
    ("wrong number", "Final: 324", "wrong_answer", "Well-formed, but not the answer."),
)
"""The spec as a table of decisions, each with its reason. The tests run every row against an
example whose `expected_answer` is 323, except two rows whose completion names another answer:
`negative answer` (-42) and `zero` (0)."""


class Details(TypedDict, total=False):
    """What `score` explains about itself. The first five keys are always present."""

    code: str  # one of CODES
    parsed_answer: int | None  # the integer read from the completion, if it got that far
    expected_answer: Any  # copied from the example
    scorer_version: str  # SCORER_VERSION
    checks: tuple[tuple[str, bool], ...]  # ordered (check, passed) up to the first failure
    message: str  # a human sentence: CODES[code], sometimes with a position


class ScoreResult(TypedDict):
    reward: float
    details: Details


# Precomputed check trails for the two outcomes of a well-formed line (immutable, so shared).
_ALL_PASSED = tuple((name, True) for name in CHECKS)
_WRONG = (*_ALL_PASSED[:-1], ("matches_expected", False))


def _result(reward: float, code: str, parsed: int | None, expected: Any,
            checks: tuple[tuple[str, bool], ...], message: str | None = None) -> ScoreResult:
    return {
        "reward": reward,
        "details": {
            "code": code,
            "parsed_answer": parsed,
            "expected_answer": expected,
            "scorer_version": SCORER_VERSION,
            "checks": checks,
            "message": message or CODES[code],
        },
    }


def _failed_at(check: str) -> tuple[tuple[str, bool], ...]:
    """The check trail when `check` is the first one to fail."""
    index = CHECKS.index(check)
    return (*_ALL_PASSED[:index], (check, False))


def _type_name(value: Any) -> str:
    """The name of `value`'s class, read through `type` itself: a metaclass that overrides
    `__name__` (even one that raises) cannot change what a message says, or crash it."""
    name: str = type.__dict__["__name__"].__get__(type(value))
    return name


def _invalid_example(expected: Any, message: str) -> ScoreResult:
    """The example is broken: a dataset bug, reported as such, never a model failure."""
    return _result(0.0, "invalid_example", None, expected, (), message)


def read_integer(text: str) -> int | None:
    """The integer `text` spells if it passes checks 7 to 9 on its own (ASCII digits, an
    optional `-`, canonical, at most `MAX_DIGITS` digits), else None. No trimming, no prefix.

    The same rule as the answer in a completion, for integers that come from elsewhere: e.g.
    `course score --expected` accepts exactly the integers a completion could be rewarded for.
    """
    if type(text) is not str:
        text = str.__str__(text)  # a str subclass: read its characters, not its methods
    return int(text) if _CANONICAL_INTEGER.fullmatch(text) else None


def parse(text: str) -> tuple[int | None, str, str | None]:
    """Parse a completion string under spec v1, without looking at any expected answer.

    Returns `(parsed_answer, failed_check, message)`; `failed_check` is `"matches_expected"`
    (the only check left) when the text is a well-formed answer. Runs in time linear in
    `len(text)`; never raises for any `str`. A `str` subclass is read as the exact `str` with
    the same characters: its own methods (`strip`, `startswith`, `__eq__`, ...) are never called.
    """
    if type(text) is not str:
        text = str.__str__(text)  # totality: an exact copy of the characters, whatever the class
    line = text.strip(ASCII_WHITESPACE)
    fast = _CANONICAL_LINE.fullmatch(line)
    if fast:  # the happy path: one regex, no further checks needed
        return int(fast.group(1)), "matches_expected", None
    if not line:
        return None, "non_empty", None
    if any(ch in line for ch in LINE_BREAKS):  # one fast C scan per character, linear time
        return None, "single_line", None
    if not line.isascii():
        found = _NON_ASCII.search(line)
        assert found is not None  # isascii() is False, so there is a non-ASCII character
        position = found.start()
        return None, "ascii_only", (
            f"non-ASCII character U+{ord(line[position]):04X} at position {position} "
            "of the trimmed completion"
        )
    if not line.startswith(PREFIX):
        return None, "final_prefix", None
    rest = line[len(PREFIX):]
    if not rest.startswith(" ") or rest[1:2] in ("", " ", "\t"):
        return None, "single_space", None
    answer = rest[1:]
    if not _INTEGER.fullmatch(answer):
        return None, "integer_syntax", None
    digits = answer.lstrip("+-")  # exactly one sign at most, by the regex above
    if answer[0] == "+" or (digits[0] == "0" and (len(digits) > 1 or answer[0] == "-")):
        return None, "canonical_integer", None
    # Only the digit limit can still fail: the fast regex accepts every other canonical form.
    return None, "digit_limit", None


def score(example: Mapping[str, Any], completion: Any) -> ScoreResult:
    """Score one completion against one example under spec v1.

    Args:
        example: a mapping with `expected_answer` (an `int`, not a `bool`, of at most
            `MAX_DIGITS` digits), plus `prompt` and optionally `id`, which the scorer does not
            read. Anything else, including a mapping that raises when read, is `invalid_example`.
        completion: the policy's output. Any value is accepted; only a `str` can earn reward,
            and a `str` subclass is scored by its characters alone.

    Returns:
        `{"reward": 1.0 or 0.0, "details": {...}}`; `details["code"]` is one of `CODES` and is
        `"correct"` exactly when the reward is 1.0. Never raises (short of `KeyboardInterrupt`
        and its kin, which are not errors of the input).
    """
    try:  # totality: the example is data, and reading data may fail in any way at all
        expected = example.get("expected_answer") if isinstance(example, Mapping) else None
    except Exception as err:
        return _invalid_example(None, f"reading expected_answer raised {_type_name(err)}")
    if type(expected) is not int:  # exactly int: bool and every other int subclass are refused
        return _invalid_example(
            expected, f"expected_answer must be an int, got {_type_name(expected)}")
    if abs(expected) >= _ANSWER_LIMIT:  # no in-spec answer can ever equal it
        return _invalid_example(
            expected, f"expected_answer has more than {MAX_DIGITS} digits, the most an answer "
            "may have: no completion could match it")
    # Check 1, by the class itself (`issubclass` on the real type cannot be fooled; `isinstance`
    # asks the object for its `__class__`, which a hostile object can fake or make raise).
    if type(completion) is not str and not issubclass(type(completion), str):
        return _result(0.0, "not_a_string", None, expected, _failed_at("is_string"),
                       f"completion must be a str, got {_type_name(completion)}")
    parsed, failed, message = parse(completion)  # parse reads a str subclass as an exact str
    if parsed is None:
        return _result(0.0, _CODE_OF_CHECK[failed], None, expected, _failed_at(failed), message)
    if parsed == expected:
        return _result(1.0, "correct", parsed, expected, _ALL_PASSED)
    return _result(0.0, "wrong_answer", parsed, expected, _WRONG)
