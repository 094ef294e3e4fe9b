"""`course score` explains its decision in a few lines a student can read; `--json` is the
scorer's own result for machines, byte for byte as it always was (issue 13, item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from course.cli import main
from course.explain import ASCII_MARKS, SPEC_LEGEND, explain, spec_table
from course.formatting import can_encode, fill, literal_within, short_literal, short_number
from course.scorer import CHECKS, CODES, SPEC_DECISIONS, score

MAX_LINES = 8
WIDTH = 79


def explained(capsys, completion: str, expected: str = "323") -> list[str]:
    assert main(["score", "--expected", expected, completion]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.endswith("\n")
    return out[:-1].split("\n")


def flat(lines: list[str]) -> str:
    """The output as one string with every run of whitespace one space: a check list wrapped
    at any column reads the same."""
    return " ".join(" ".join(lines).split())


def test_a_correct_answer_says_reward_code_every_check_and_the_answer(capsys):
    lines = explained(capsys, "Final: 323")
    assert lines[0] == "reward 1.0  code correct  (scorer strict-v1)"
    assert " ".join(lines).count("\u2713") == len(CHECKS)  # every check ran and passed
    assert "\u2717" not in "".join(lines) and "stopped here" not in "".join(lines)
    assert "completion: 'Final: 323'" in lines
    assert lines[-1] == "parsed answer: 323   expected: 323"
    assert len(lines) <= MAX_LINES


def test_a_format_failure_shows_the_reason_and_where_the_checks_stopped(capsys):
    lines = explained(capsys, "Final:  323")
    text = flat(lines)
    assert lines[0] == "reward 0.0  code bad_separator  (scorer strict-v1)"
    assert lines[1] == f"why: {CODES['bad_separator']}"   # the reason second, not last
    assert "final_prefix \u2713 single_space \u2717 <- stopped here, 4 later checks not run" \
        in text
    assert "integer_syntax" not in text                   # a check that never ran is not shown
    assert lines[-1] == "parsed answer: none   expected: 323"
    assert len(lines) <= MAX_LINES


def test_a_lookalike_is_named_and_escaped_never_echoed(capsys):
    lines = explained(capsys, "Final: \u2212323")
    text = "\n".join(lines)
    assert "code non_ascii_character" in lines[0]
    assert "why: non-ASCII character U+2212 at position 7 of the trimmed completion" in text
    assert "ascii_only \u2717 <- stopped here, 6 later checks not run" in flat(lines)
    assert r"completion: 'Final: \u2212323'  (U+2212 is MINUS SIGN)" in lines
    assert "\u2212" not in text                           # the lookalike itself is never printed
    assert len(lines) <= MAX_LINES


def test_a_multi_line_completion_is_one_visible_line_of_output(capsys):
    completion = "17*19 = 323\n" * 40 + "Final: 323"
    lines = explained(capsys, completion)
    assert lines[0] == "reward 0.0  code multiple_lines  (scorer strict-v1)"
    assert "single_line \u2717" in "\n".join(lines)
    completion_line = next(line for line in lines if line.startswith("completion: "))
    assert completion_line == r"completion: '17*19 = 323\n17*19 = 323\n1'... (490 chars)"
    assert len(lines) <= MAX_LINES


@pytest.mark.parametrize("completion", [c for _, c, _, _ in SPEC_DECISIONS if type(c) is str])
def test_every_spec_decision_is_explained_in_at_most_eight_short_lines(completion, capsys):
    lines = explained(capsys, completion)
    code = score({"expected_answer": 323}, completion)["details"]["code"]
    assert lines[0].startswith(f"reward {1.0 if code == 'correct' else 0.0}  code {code}  ")
    assert len(lines) <= MAX_LINES and max(map(len, lines)) <= WIDTH
    assert "\n".join(lines).replace("\u2713", "").replace("\u2717", "").isascii()


@pytest.mark.parametrize(("completion", "expected"), [
    ("Final: 323", "323"), ("Final:  323", "323"), ("Final: \u2212323", "323"),
    ("17*19 = 323\nFinal: 323", "323"), ("Final: 324", "-7"),
])
def test_json_prints_exactly_what_it_printed_before(completion, expected, capsys):
    assert main(["score", "--json", "--expected", expected, completion]) == 0
    result = score({"expected_answer": int(expected)}, completion)
    assert capsys.readouterr().out == json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def test_spec_prints_every_decision_whole_within_80_columns_and_refuses_json(capsys):
    assert main(["score", "--spec"]) == 0
    assert capsys.readouterr().out == "\n".join([
        SPEC_LEGEND, f"{'case':<24} {'completion':<30} code",
        *(line for case, completion, code, reason in SPEC_DECISIONS for line in [
            f"{case:<24} {literal_within(completion, 30):<30} {code}",
            *textwrap.wrap(reason, 80, initial_indent="    ", subsequent_indent="    ",
                           break_long_words=False, break_on_hyphens=False)])]) + "\n"
    assert all(len(line) <= 80 for line in spec_table())
    assert main(["score", "--spec", "--json"]) == 2
    assert "--json is for one scored completion" in capsys.readouterr().err


def test_a_terminal_that_cannot_show_check_marks_gets_ascii_words():
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run([sys.executable, "-m", "course", "score", "--expected", "323",
                           "Final: \uff13\uff12\uff13"], capture_output=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("ascii")                     # raises if a byte is not ASCII
    assert f"ascii_only {ASCII_MARKS[1]}" in out and f"single_line {ASCII_MARKS[0]}" in out
    assert "(U+FF13 is FULLWIDTH DIGIT THREE)" in out


def test_explain_is_total_for_results_the_command_cannot_produce():
    broken = explain(score({"expected_answer": "323"}, "Final: 323"), "Final: 323")
    assert broken[0].startswith("reward 0.0  code invalid_example")
    assert "checks: none ran: the example itself is unusable" in broken
    assert broken[-1] == "parsed answer: none   expected: '323'"


# -- the lesson-independent helpers in course.formatting ---------------------------------------

def test_fill_wraps_items_under_the_first_and_never_splits_one():
    assert fill("x: ", ["aa", "bb", "cc"], width=10) == ["x: aa  bb", "   cc"]
    assert fill("x: ", ["a" * 20, "b"], width=10) == ["x: " + "a" * 20, "   b"]
    assert fill("x: ", []) == ["x: "]


def test_short_literal_and_short_number_cut_long_values_and_say_how_long():
    assert short_literal("Final:\xa0323") == r"'Final:\xa0323'"
    assert short_literal("9" * 50, limit=10) == "'99999'... (50 chars)"
    assert short_number(-(10**50), limit=10) == "-10000... (51 digits)"
    assert short_number(-323) == "-323"


def test_can_encode_asks_the_encoding_itself():
    assert can_encode("\u2713", "utf-8") and can_encode("\u2713", None)
    assert not can_encode("\u2713", "ascii") and not can_encode("\u2713", "latin-1")
    assert not can_encode("\u2713", "no-such-codec")
