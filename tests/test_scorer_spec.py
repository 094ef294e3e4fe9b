"""The scorer's spec v1, decision by decision. Every case asserts the reward AND a details field."""

import sys

import pytest

from course.scorer import (
    CHECKS,
    CODES,
    MAX_DIGITS,
    SCORER_VERSION,
    SPEC_DECISIONS,
    parse,
    score,
)

EXAMPLE = {"id": "dev-001", "prompt": "Compute 17*19. Output exactly one line: Final: <int>",
           "expected_answer": 323}
EXPECTED_FOR_CASE = {"negative answer": -42, "zero": 0}


@pytest.mark.parametrize(("case", "completion", "code", "reason"), SPEC_DECISIONS,
                         ids=[row[0] for row in SPEC_DECISIONS])
def test_spec_decision(case, completion, code, reason):
    example = {**EXAMPLE, "expected_answer": EXPECTED_FOR_CASE.get(case, 323)}
    result = score(example, completion)
    assert result["details"]["code"] == code, reason
    assert result["reward"] == (1.0 if code == "correct" else 0.0)


def test_every_code_is_reachable_from_the_spec_table():
    codes = {row[2] for row in SPEC_DECISIONS} | {"invalid_example"}
    assert codes == set(CODES)


@pytest.mark.parametrize(
    ("completion", "reward", "code"),
    [
        ("Final: 323", 1.0, "correct"),  # the seed's good completion
        ("323", 0.0, "no_final_prefix"),  # the seed's format failure
        ("The answer is 323.", 0.0, "no_final_prefix"),  # the seed's extra-text failure
    ],
)
def test_the_running_example(completion, reward, code):
    result = score(EXAMPLE, completion)
    assert (result["reward"], result["details"]["code"]) == (reward, code)


def test_details_always_hold_the_contract_fields():
    for _case, completion, _code, _reason in SPEC_DECISIONS:
        details = score(EXAMPLE, completion)["details"]
        assert {"code", "parsed_answer", "expected_answer", "scorer_version", "checks",
                "message"} <= details.keys()
        assert details["scorer_version"] == SCORER_VERSION
        assert details["expected_answer"] == 323
        assert details["message"]


def test_checks_are_ordered_and_stop_at_the_first_failure():
    details = score(EXAMPLE, "Final:  323")["details"]
    names = [name for name, _ in details["checks"]]
    assert names == list(CHECKS[: CHECKS.index("single_space") + 1])
    assert [passed for _, passed in details["checks"]] == [True] * (len(names) - 1) + [False]


def test_correct_answer_passes_every_check_and_reports_the_parsed_int():
    details = score(EXAMPLE, "Final: 323")["details"]
    assert details["checks"] == tuple((name, True) for name in CHECKS)
    assert details["parsed_answer"] == 323


def test_wrong_answer_reports_what_was_read():
    result = score(EXAMPLE, "Final: 324")
    assert result["reward"] == 0.0
    assert result["details"]["parsed_answer"] == 324
    assert result["details"]["checks"][-1] == ("matches_expected", False)


def test_non_ascii_message_names_the_character_and_position():
    result = score(EXAMPLE, "Final: \u2212323")
    assert result["reward"] == 0.0
    assert "U+2212 at position 7" in result["details"]["message"]


@pytest.mark.parametrize(
    ("example", "what"),
    [({"prompt": "p"}, "NoneType"), ({"expected_answer": "323"}, "str"),
     ({"expected_answer": 323.0}, "float"), ({"expected_answer": True}, "bool"),
     (None, "NoneType"), ("Final: 323", "NoneType")],
)
def test_a_broken_example_is_reported_not_rewarded(example, what):
    result = score(example, "Final: 323")
    assert result["reward"] == 0.0
    assert result["details"]["code"] == "invalid_example"
    assert what in result["details"]["message"]


def test_longest_accepted_answer_works_under_the_strictest_int_limit():
    # 640 is the smallest digit limit CPython allows; the scorer must not depend on the setting.
    big = int("9" * MAX_DIGITS)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        result = score({"expected_answer": big}, "Final: " + "9" * MAX_DIGITS)
    finally:
        sys.set_int_max_str_digits(old)
    assert (result["reward"], result["details"]["parsed_answer"]) == (1.0, big)


def test_numbers_beyond_cpythons_default_limit_score_zero_without_crashing():
    result = score(EXAMPLE, "Final: " + "1" * 5000)  # int() would raise past 4300 digits
    assert result["reward"] == 0.0
    assert result["details"]["code"] == "integer_too_long"


@pytest.mark.parametrize(
    ("text", "parsed", "failed"),
    [("Final: 17", 17, "matches_expected"), ("Final: -5\n", -5, "matches_expected"),
     ("Final:17", None, "single_space"), ("Final: ", None, "single_space"),
     ("Final:", None, "single_space"), ("Final: -", None, "integer_syntax"),
     ("Final: +", None, "integer_syntax"), ("Final: 00", None, "canonical_integer")],
)
def test_parse_is_separate_from_comparison(text, parsed, failed):
    answer, check, _message = parse(text)
    assert (answer, check) == (parsed, failed)


def test_scorer_never_reads_the_prompt():
    # The scorer verifies; it does not solve. The prompt can say anything.
    lying = {**EXAMPLE, "prompt": "Compute 1+1."}
    assert score(lying, "Final: 323")["reward"] == 1.0
