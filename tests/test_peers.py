"""Peer verifiers: each reimplemented rule reads what its project reads, all are total, and the
comparison run counts false positives and false negatives relative to our spec."""

import ast
import csv
import io
import json
import types

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from course import peers
from course.cli import main
from course.peers import (
    NEAR_MISSES,
    PEER_CODES,
    PEERS,
    RULES,
    ComparisonConfig,
    harness_normalise,
    load_cases,
    score_cases,
    verdict,
)
from course.reports import canonical
from course.reports.peers import build_run, reading, summarise
from course.rubrics import RUBRICS
from course.scorer import score

HAS_MATH_VERIFY = peers._load_math_verify() is not None
needs_math_verify = pytest.mark.skipif(not HAS_MATH_VERIFY, reason="math-verify not installed")

# -- 1. each rule on hand-checked cases ----------------------------------------------------------

# (rule, completion, expected_answer, reward, code, extracted)
CASES = [
    # lm-evaluation-harness strict-match: the first `#### <number>`, then `,` `$` `.$` removed
    ("gsm8k_strict", "#### 1,234", 1234, 1.0, "correct", "1,234"),
    ("gsm8k_strict", "#### 5", 5, 1.0, "correct", "5"),
    ("gsm8k_strict", "#### 5.", 5, 1.0, "correct", "5."),       # one trailing `.` is dropped
    ("gsm8k_strict", "#### 5..", 5, 0.0, "wrong_answer", "5.."),  # ... only one
    ("gsm8k_strict", "#### 323.0", 323, 0.0, "wrong_answer", "323.0"),
    ("gsm8k_strict", "#### 3,23", 323, 1.0, "correct", "3,23"),  # every comma is dropped
    ("gsm8k_strict", "#### -29", -29, 1.0, "correct", "-29"),
    ("gsm8k_strict", "#### 29", -29, 0.0, "wrong_answer", "29"),
    ("gsm8k_strict", "#### 323\n#### 324", 323, 1.0, "correct", "323"),  # the FIRST match
    ("gsm8k_strict", "#### 324\n#### 323", 323, 0.0, "wrong_answer", "324"),
    ("gsm8k_strict", "Final: 323", 323, 0.0, "no_answer", None),
    ("gsm8k_strict", "####323", 323, 0.0, "no_answer", None),
    ("gsm8k_strict", "#### $323", 323, 0.0, "no_answer", None),  # `$` is not in its class
    # flexible-extract: the LAST run of `$0-9.,` (two or more) or a lone digit
    ("gsm8k_flexible", "The answer is $42.", 42, 1.0, "correct", "$42."),
    ("gsm8k_flexible", "Final: 323", 323, 1.0, "correct", "323"),
    ("gsm8k_flexible", "Final: 4", 4, 1.0, "correct", "4"),  # the lone-digit group
    ("gsm8k_flexible", "Final: 323 (not 324)", 323, 0.0, "wrong_answer", "324"),
    ("gsm8k_flexible", "Final: -29", -29, 1.0, "correct", "-29"),
    ("gsm8k_flexible", "Final: \u221229", -29, 0.0, "wrong_answer", "29"),
    ("gsm8k_flexible", "Final: \u2212323", 323, 1.0, "correct", "323"),
    ("gsm8k_flexible", "3,23", 323, 1.0, "correct", "3,23"),
    ("gsm8k_flexible", "It is 1,234.", 1234, 1.0, "correct", "1,234."),
    ("gsm8k_flexible", "Final: 323.0", 323, 0.0, "wrong_answer", "323.0"),
    ("gsm8k_flexible", "no digits at all", 323, 0.0, "no_answer", None),
    # math-verify: mathematics, not text
    ("math_verify_rule", "Final: 323", 323, 1.0, "correct", "323"),
    ("math_verify_rule", "\\boxed{323}", 323, 1.0, "correct", "323"),
    ("math_verify_rule", "323.0", 323, 1.0, "correct", "323.0"),
    ("math_verify_rule", "Final: 17*19", 323, 1.0, "correct", "17*19"),
    ("math_verify_rule", "Final: 324", 323, 0.0, "wrong_answer", "324"),
    ("math_verify_rule", "Final: -29", -29, 1.0, "correct", "-29"),
    ("math_verify_rule", "Final: \u2212323", 323, 0.0, "no_answer", None),
    ("math_verify_rule", "", 323, 0.0, "no_answer", None),
]


@pytest.mark.parametrize(("rule", "completion", "expected", "reward", "code", "extracted"),
                         CASES)
def test_rule_table(rule, completion, expected, reward, code, extracted):
    if rule == "math_verify_rule" and not HAS_MATH_VERIFY:
        pytest.skip("math-verify not installed")
    result = PEERS[rule]({"expected_answer": expected}, completion)
    assert result["reward"] == reward
    details = result["details"]
    assert (details["rule"], details["code"], details["extracted"]) == (rule, code, extracted)
    assert details["expected_answer"] == expected


@pytest.mark.parametrize(("text", "cleaned"), [
    ("1,234", "1234"), ("$1,234.", "1234"), ("3,23", "323"), ("5.", "5"), ("5..", "5."),
    ("323.0", "323.0"), ("-$5", "-5"), ("$", ""),
])
def test_harness_normalise(text, cleaned):
    assert harness_normalise(text) == cleaned


# (completion, reward, code, format_reward, answer_reward, extracted), expected_answer 323
R1_CASES = [
    ("<think>17*19</think><answer>323</answer>", 2.0, "correct", 1.0, 1.0, "323"),
    ("\n<think>a\nb</think>\n\n<answer> 323 </answer>\n", 2.0, "correct", 1.0, 1.0, "323"),
    ("<think>17*19</think><answer>324</answer>", 1.0, "format_only", 1.0, 0.0, "324"),
    ("<think></think><answer></answer>", 1.0, "format_only", 1.0, 0.0, ""),
    ("<answer>323</answer>", 1.0, "answer_only", 0.0, 1.0, "323"),
    ("I think: <think>x</think><answer>323</answer>", 1.0, "answer_only", 0.0, 1.0, "323"),
    ("<think>x</think><answer>324</answer><answer>323</answer>", 1.0, "answer_only", 0.0, 1.0,
     "323"),  # the LAST answer block is read; two blocks break the format
    ("<think>x</think><answer>323</answer><answer>324</answer>", 0.0, "wrong_answer", 0.0, 0.0,
     "324"),
    ("<answer>+323</answer>", 0.0, "wrong_answer", 0.0, 0.0, "+323"),  # canonical only
    ("<answer>323.0</answer>", 0.0, "wrong_answer", 0.0, 0.0, "323.0"),
    ("<think>x</think><answer>323", 0.0, "no_answer", 0.0, 0.0, None),  # never closed
    ("Final: 323", 0.0, "no_answer", 0.0, 0.0, None),
]


@pytest.mark.parametrize(("completion", "reward", "code", "fmt", "ans", "extracted"), R1_CASES)
def test_r1_zero_style_reports_both_rewards_and_their_sum(completion, reward, code, fmt, ans,
                                                          extracted):
    result = peers.r1_zero_style({"expected_answer": 323}, completion)
    details = result["details"]
    assert (result["reward"], details["code"], details["extracted"]) == (reward, code, extracted)
    assert (details["format_reward"], details["answer_reward"]) == (fmt, ans)
    assert result["reward"] == details["format_reward"] + details["answer_reward"]


def test_every_peer_names_its_origin_project():
    origins = {"gsm8k_strict": "lm-evaluation-harness", "gsm8k_flexible": "lm-evaluation-harness",
               "r1_zero_style": "DeepSeek-R1-Zero", "math_verify_rule": "math-verify"}
    assert set(origins) == set(PEERS)
    for name, project in origins.items():
        assert project in peers.describe(name)


# -- 2. totality -----------------------------------------------------------------------------------

anything = st.one_of(
    st.none(), st.text(), st.binary(), st.integers(), st.floats(), st.booleans(),
    st.text(alphabet=st.sampled_from("Final: #$-.,0123456789\n<>/thinkanswer\u2212\u0663"),
            max_size=40),
)
examples = st.one_of(
    st.fixed_dictionaries({"expected_answer": st.integers()}),
    st.sampled_from([None, {}, {"expected_answer": True}, {"expected_answer": "323"}, 323,
                     {"expected_answer": 10 ** 5000}]),  # too long for str(): refused
)


def _check_total(name, example_, completion):
    result = RULES[name](example_, completion)
    assert isinstance(result["reward"], float) and result["reward"] >= 0.0
    details = result["details"]
    assert details["rule"] == name and details["code"] in PEER_CODES and "extracted" in details
    assert (result["reward"] > 0) == (details["code"] in ("correct", "format_only",
                                                          "answer_only"))
    assert RULES[name](example_, completion) == result  # deterministic


@pytest.mark.parametrize("name", ["gsm8k_strict", "gsm8k_flexible", "r1_zero_style"])
@settings(deadline=None)
@given(example_=examples, completion=anything)
@example(example_={"expected_answer": 7}, completion="#### " + "7" * 1_000_000)
@example(example_={"expected_answer": 7}, completion="7," * 500_000)
@example(example_={"expected_answer": 7}, completion="<answer>" * 100_000)
@example(example_={"expected_answer": 7}, completion="<think>" * 50_000 + "</think>" * 50_000)
def test_regex_peers_are_total(name, example_, completion):
    _check_total(name, example_, completion)


@needs_math_verify
@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(example_=examples, completion=anything)
def test_math_verify_rule_is_total(example_, completion):
    _check_total("math_verify_rule", example_, completion)


def test_math_verify_unavailable_is_reported_not_raised(monkeypatch):
    monkeypatch.setattr(peers, "_load_math_verify", lambda: None)
    result = peers.math_verify_rule({"expected_answer": 323}, "Final: 323")
    assert (result["reward"], result["details"]["code"]) == (0.0, "unavailable")
    assert peers.math_verify_status()["available"] is False


def test_math_verify_exceptions_become_a_code(monkeypatch):
    def broken(*args, **kwargs):
        raise RecursionError("a peer's bug")

    fake = types.SimpleNamespace(parse=broken, verify=broken)
    monkeypatch.setattr(peers, "_load_math_verify", lambda: fake)
    result = peers.math_verify_rule({"expected_answer": 323}, "Final: 323")
    assert result["reward"] == 0.0
    assert (result["details"]["code"], result["details"]["error"]) == ("verifier_error",
                                                                       "RecursionError")


# -- 3. the case set -------------------------------------------------------------------------------

@pytest.mark.parametrize(("case_id", "expected", "completion", "in_spec", "note"), NEAR_MISSES)
def test_each_near_miss_tag_is_what_our_scorer_says(case_id, expected, completion, in_spec, note):
    assert (score({"expected_answer": expected}, completion)["reward"] == 1.0) is in_spec


def test_near_misses_cover_both_verdicts_and_have_unique_ids():
    assert {row[3] for row in NEAR_MISSES} == {True, False}
    assert len({row[0] for row in NEAR_MISSES}) == len(NEAR_MISSES)


@pytest.mark.parametrize(("in_spec", "reward", "mark"), [
    (False, 1.0, "FP"), (False, 2.0, "FP"), (False, 0.0, ""),
    (True, 0.0, "FN"), (True, 1.0, ""), (True, 2.0, ""),
])
def test_verdict(in_spec, reward, mark):
    assert verdict(in_spec, reward) == mark


# -- 4. the comparison on the committed data -------------------------------------------------------

@pytest.fixture(scope="module")
def compared():
    config = ComparisonConfig()
    rules, _ = peers.usable_rules(config.rules)
    rows = score_cases(load_cases(config.exploits, config.correct), rules)
    return rows, summarise(rows, rules)


def test_strict_agrees_with_every_tag(compared):
    """The tags are independent of the scorer (files and a hand-written table); strict must
    reproduce every one of them."""
    rows, summary = compared
    disagree = [row for row in rows if (row["rewards"]["strict"] == 1.0) is not row["in_spec"]]
    assert not disagree, (
        f"strict disagrees with the in_spec tag of {[row['id'] for row in disagree]}: after a "
        "deliberate spec change, move the tag in src/course/peers.py "
        "(docs/teacher/change-the-scorer.md, step 4)")
    assert summary["rules"]["strict"]["agreement_rate"] == 1.0


def test_counts_match_an_independent_recount(compared):
    rows, summary = compared
    for name, stats in summary["rules"].items():
        fp = sum(1 for row in rows if not row["in_spec"] and row["rewards"][name] > 0)
        fn = sum(1 for row in rows if row["in_spec"] and row["rewards"][name] == 0)
        assert (stats["false_positives"], stats["false_negatives"]) == (fp, fn)
        assert stats["agreement_rate"] == round((len(rows) - fp - fn) / len(rows), 4)
    assert summary["n_in_spec"] + summary["n_out_of_spec"] == summary["n_cases"] == len(rows)


def test_what_the_lab_claims(compared):
    _, summary = compared
    stats = summary["rules"]
    # neither GSM8K strict-match nor the R1 layout can read `Final: <int>`: every in-spec case
    assert stats["gsm8k_strict"]["false_negatives"] == summary["n_in_spec"]
    assert stats["r1_zero_style"]["false_negatives"] == summary["n_in_spec"]
    assert stats["gsm8k_strict"]["pays_out_of_spec"] == [
        "near-01", "near-02", "near-03", "near-04", "near-06", "near-07"]
    assert stats["r1_zero_style"]["pays_out_of_spec"] == ["near-10", "near-11", "near-12"]
    # flexible-extract finds the number inside every in-spec line, and pays much more besides
    assert stats["gsm8k_flexible"]["false_negatives"] == 0
    assert {"near-03", "near-14", "near-16"} <= set(stats["gsm8k_flexible"]["pays_out_of_spec"])
    if HAS_MATH_VERIFY:
        assert stats["math_verify_rule"]["false_negatives"] == 0
        assert {"near-08", "near-13", "near-20", "exploit-26"} <= set(
            stats["math_verify_rule"]["pays_out_of_spec"])


def test_reading_follows_the_counts():
    def stats(fp, fn):
        return {"false_positives": fp, "false_negatives": fn, "agreement_rate": 0.5,
                "pays_out_of_spec": ["o"] * fp, "refuses_in_spec": ["i"] * fn}

    summary = {"n_cases": 4, "n_in_spec": 2, "n_out_of_spec": 2, "unavailable_rules": ["mv"],
               "rules": {"a": stats(0, 0), "b": stats(2, 0), "c": stats(0, 1), "d": stats(1, 1)}}
    bullets = reading(summary)
    assert bullets[0].startswith("- `a`: agrees with our spec on all 4 cases")
    assert bullets[1].startswith("- `b`: looser than our spec: it pays 2 of 2")
    assert bullets[2].startswith("- `c`: stricter than")
    assert bullets[3].startswith("- `d`: a different spec")
    assert bullets[4] == "- `mv` was not run: math-verify is not installed here."


# -- 5. the run ------------------------------------------------------------------------------------

def test_run_files_are_consistent():
    files = build_run(ComparisonConfig(), "test", record_git=False)
    assert set(files) == {"manifest.json", "summary.json", "comparison.csv", "disagreements.md",
                          "README.md"}
    table = list(csv.DictReader(io.StringIO(files["comparison.csv"].decode())))
    summary = json.loads(files["summary.json"])
    assert len(table) == summary["n_cases"]
    assert list(table[0])[5:] == list(summary["rules"])
    by_id = {row["id"]: row for row in table}
    assert ast.literal_eval(by_id["near-16"]["completion"]) == "Final: \u2212323"
    assert by_id["near-03"]["gsm8k_strict"] == "1" and by_id["near-11"]["r1_zero_style"] == "2"
    flagged = {line.split(" | ")[0].lstrip("| ")
               for line in files["disagreements.md"].decode().splitlines()
               if line.startswith("| ") and not line.startswith("| id ")}
    assert len(flagged) == summary["n_disagreement_rows"]
    assert "exploit-28" not in flagged and "near-03" in flagged
    readme = files["README.md"].decode()
    for name in RULES:
        assert f"- `{name}`: " in readme
    assert "lm-evaluation-harness" in readme and "DeepSeek-R1-Zero" in readme
    record = json.loads(files["manifest.json"])
    assert record["kind"] == "verifier_comparison" and record["git_commit"] is None
    assert summary["math_verify"] == peers.math_verify_status()


def test_run_without_math_verify_records_it(monkeypatch):
    monkeypatch.setattr(peers, "_load_math_verify", lambda: None)
    files = build_run(ComparisonConfig(), "test", record_git=False)
    summary = json.loads(files["summary.json"])
    assert summary["unavailable_rules"] == ["math_verify_rule"]
    assert summary["math_verify"]["available"] is False
    assert "math_verify_rule" not in summary["rules"]
    assert "math_verify_rule" not in files["comparison.csv"].decode().splitlines()[0]
    assert "`math_verify_rule` was not run" in files["README.md"].decode()


def test_config_rejects_unknown_rules():
    with pytest.raises(ValueError, match="rules must be names"):
        ComparisonConfig(rules=("strict", "vibes"))
    assert list(RULES)[:len(RUBRICS)] == list(RUBRICS)  # ours first, then the peers


def test_cli_prints_the_disagreement_table_and_saves(tmp_path, capsys):
    assert main(["peers", "--out", str(tmp_path / "run")]) == 2  # a saved run needs a note
    assert not (tmp_path / "run").exists()
    assert main(["peers", "--out", str(tmp_path / "run"), "--note", "first"]) == 0
    out = capsys.readouterr().out
    assert "7 = gsm8k_strict" in out
    rules, _ = peers.usable_rules(tuple(RULES))
    line = next(line for line in out.splitlines() if line.startswith("near-03 "))
    marks = dict(zip(rules, line.split()[-len(rules):], strict=True))
    assert marks["gsm8k_strict"] == marks["gsm8k_flexible"] == "FP"  # `#### 3,23` pays
    assert marks["strict"] == marks["r1_zero_style"] == "."
    assert (tmp_path / "run" / "disagreements.md").is_file()


def test_cli_try(capsys):
    assert main(["peers", "--try", "#### 3,23", "--expected", "323"]) == 0
    out = capsys.readouterr().out.splitlines()
    rewards = {line.split()[0]: line.split()[2] for line in out[1:]}
    assert rewards["strict"] == "0"
    assert rewards["gsm8k_strict"] == rewards["gsm8k_flexible"] == "1"


def test_committed_run_007_is_rebuilt_byte_for_byte():
    assert canonical.verify(["run_007"]) == {"run_007": []}
