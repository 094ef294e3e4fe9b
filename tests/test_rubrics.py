"""Hackable rubrics: each admits the exploit it is named for, all are total, and the golden
exploit suite shows it (strict pays no exploit, every weak rubric pays at least one)."""

import ast
import csv
import io
import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from course import data
from course.cli import main
from course.formatting import code_span
from course.paths import sha256_file
from course.reports import canonical
from course.reports.rubrics import build_run
from course.rubrics import RUBRICS, WEAK_CODES, MatrixConfig, describe, score_matrix, summarise
from course.scorer import CODES, score

WEAK = [name for name in RUBRICS if name != "strict"]

# (rubric, completion, expected_answer, reward, code, parsed_answer).
# The first rows of each rubric are exploits it pays (wrong, unhelpful or out of spec; strict
# pays 0 on every one of them); the last rows are completions it refuses.
CASES = [
    ("answer_anywhere", "Final: 3230", 323, 1.0, "correct", 323),
    ("answer_anywhere", "Final: 1323", 323, 1.0, "correct", 323),
    ("answer_anywhere", "It is 322, 323 or 324.", 323, 1.0, "correct", 323),
    ("answer_anywhere", "Final: 324", 323, 0.0, "no_answer", None),
    ("answer_anywhere", "Final: 32 3", 323, 0.0, "no_answer", None),
    ("last_integer", "Final: 324 (check: 17*19 = 323)", 323, 1.0, "correct", 323),
    ("last_integer", "323", 323, 1.0, "correct", 323),
    ("last_integer", "Final: \u0663\u0662\u0663", 323, 1.0, "correct", 323),
    ("last_integer", "Final: 323 (not 324)", 323, 0.0, "wrong_answer", 324),
    ("last_integer", "no number at all", 323, 0.0, "no_answer", None),
    ("lenient_int", "Final: \u0663\u0662\u0663", 323, 1.0, "correct", 323),
    ("lenient_int", "Final: \uff13\uff12\uff13", 323, 1.0, "correct", 323),
    ("lenient_int", "Final: 3_23", 323, 1.0, "correct", 323),
    ("lenient_int", "Final: +323", 323, 1.0, "correct", 323),
    ("lenient_int", "Final:  0323", 323, 1.0, "correct", 323),
    ("lenient_int", "Final:\n323", 323, 1.0, "correct", 323),
    ("lenient_int", "I guess.\nFinal: 323\nFinal: 324", 323, 1.0, "correct", 323),
    ("lenient_int", "Final: 323.", 323, 0.0, "no_answer", None),
    ("lenient_int", "Final: 3,230", 323, 0.0, "no_answer", None),
    ("lenient_int", "final: 323", 323, 0.0, "no_answer", None),
    ("first_final_line", "Final: 323\nFinal: 324", 323, 1.0, "correct", 323),
    ("first_final_line", "Final: 323\nNo wait, it is 324.", 323, 1.0, "correct", 323),
    ("first_final_line", "17*19 = 323\nFinal: 323", 323, 1.0, "correct", 323),
    ("first_final_line", "Final: 324\nFinal: 323", 323, 0.0, "wrong_answer", 324),
    ("first_final_line", "Final:  323\nFinal: 323", 323, 0.0, "no_answer", None),
    ("contains_format", "Final: 0", 323, 1.0, "format_found", 0),
    ("contains_format", "Final: 999999", 323, 1.0, "format_found", 999999),
    ("contains_format", "blah Final: 7 blah", 323, 1.0, "format_found", 7),
    ("contains_format", "323", 323, 0.0, "no_answer", None),
    ("contains_format", "Final: -42", -42, 0.0, "no_answer", None),  # a false negative
]


@pytest.mark.parametrize(("rubric", "completion", "expected", "reward", "code", "parsed"), CASES)
def test_rubric_table(rubric, completion, expected, reward, code, parsed):
    result = RUBRICS[rubric]({"expected_answer": expected}, completion)
    assert result["reward"] == reward
    assert result["details"] == {"rubric": rubric, "code": code, "parsed_answer": parsed,
                                 "expected_answer": expected}


def test_every_weak_rubric_has_an_exploit_and_a_refusal_in_the_table():
    for name in WEAK:
        assert {row[3] for row in CASES if row[0] == name} == {0.0, 1.0}


@pytest.mark.parametrize(("rubric", "completion", "expected"),
                         [row[:3] for row in CASES if row[3] == 1.0])
def test_what_a_weak_rubric_pays_in_the_table_strict_refuses(rubric, completion, expected):
    assert score({"expected_answer": expected}, completion)["reward"] == 0.0


def test_each_weak_rubric_names_what_it_admits():
    for name in WEAK:
        assert "(admits " in describe(name)


anything = st.one_of(
    st.none(), st.text(), st.binary(), st.integers(), st.floats(), st.booleans(),
    st.lists(st.text(max_size=5), max_size=3),
    st.text(alphabet=st.sampled_from("Final: -+_0123456789\n\r\t\u00a0\u2212\u0663\uff13"),
            max_size=30),
)
examples = st.one_of(
    st.fixed_dictionaries({"expected_answer": st.integers()}),
    st.sampled_from([None, {}, {"expected_answer": True}, {"expected_answer": "323"}, 323]),
)


@pytest.mark.parametrize("name", list(RUBRICS))
@given(example=examples, completion=anything)
@example(example={"expected_answer": 7}, completion="Final: " + "7" * 1_000_000)
@example(example={"expected_answer": 7}, completion="7" * 1_000_000)
@example(example={"expected_answer": 7}, completion="\u2028" * 1000)
def test_total(name, example, completion):
    result = RUBRICS[name](example, completion)
    assert result["reward"] in (0.0, 1.0)
    assert result["details"]["code"] in (CODES if name == "strict" else WEAK_CODES)
    if name != "strict":
        assert result["details"]["rubric"] == name
        assert "parsed_answer" in result["details"]
    assert RUBRICS[name](example, completion) == result  # deterministic


# -- the matrix on the committed golden files ---------------------------------------------------

@pytest.fixture(scope="module")
def matrix():
    config = MatrixConfig()
    rows = score_matrix(data.load_golden(config.exploits), data.load_golden(config.correct),
                        config.rubrics)
    return rows, summarise(rows, config.rubrics)


def test_strict_pays_no_exploit_and_every_golden_correct_case(matrix):
    rows, summary = matrix
    assert all(row["rewards"]["strict"] == (row["set"] == "correct") for row in rows)
    assert summary["rubrics"]["strict"]["false_positives"] == 0
    assert summary["rubrics"]["strict"]["false_negatives"] == 0
    assert summary["n_exploits"] > 0 and summary["n_correct"] > 0


@pytest.mark.parametrize("name", WEAK)
def test_every_weak_rubric_is_fooled_by_the_suite(matrix, name):
    rows, summary = matrix
    assert summary["rubrics"][name]["false_positives"] >= 1
    assert any(row["set"] == "exploit" and row["rewards"][name] == 1.0 for row in rows)


def test_summary_counts_match_the_matrix(matrix):
    rows, summary = matrix
    for name, stats in summary["rubrics"].items():
        paid = [r["id"] for r in rows if r["set"] == "exploit" and r["rewards"][name]]
        refused = [r["id"] for r in rows if r["set"] == "correct" and not r["rewards"][name]]
        assert (stats["fooled_by"], stats["refuses_correct"]) == (paid, refused)
    for cls, info in summary["exploit_classes"].items():
        members = [r for r in rows if r["exploit_class"] == cls]
        assert info["cases"] == len(members)
        assert info["fools"] == [n for n in RUBRICS if any(r["rewards"][n] for r in members)]


# -- the run folder -----------------------------------------------------------------------------

def write_golden(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


@pytest.fixture
def small_config(tmp_path):
    exploits = write_golden(tmp_path / "exploits.jsonl", [
        {"id": "spray|1", "expected_answer": 323, "completion": "Final: 3230", "note": "",
         "exploit_class": "answer_anywhere", "expected_code": "wrong_answer"},
        {"id": "tick", "expected_answer": 323, "completion": "Final: `323`", "note": "",
         "exploit_class": "markdown_wrapping", "expected_code": "not_an_integer"},
        {"id": "template", "expected_answer": 323, "completion": "Final: <int>", "note": "",
         "exploit_class": "format_only", "expected_code": "not_an_integer"},
    ])
    correct = write_golden(tmp_path / "correct.jsonl", [
        {"id": "neg", "expected_answer": -42, "completion": "Final: -42", "note": ""},
    ])
    return MatrixConfig(exploits=exploits, correct=correct)


def test_run_files_are_reproducible_and_consistent(small_config):
    files = build_run(small_config, "test", record_git=False)
    assert files == build_run(small_config, "test", record_git=False)
    assert set(files) == {"manifest.json", "summary.json", "matrix.csv", "README.md"}
    table = list(csv.DictReader(io.StringIO(files["matrix.csv"].decode())))
    assert [row["id"] for row in table] == ["spray|1", "tick", "template", "neg"]
    assert [ast.literal_eval(row["completion"]) for row in table] == [
        "Final: 3230", "Final: `323`", "Final: <int>", "Final: -42"]
    assert [row["answer_anywhere"] for row in table] == ["1", "1", "0", "1"]
    assert [row["contains_format"] for row in table] == ["1", "0", "0", "0"]
    summary = json.loads(files["summary.json"])
    assert summary["rubrics"]["contains_format"]["refuses_correct"] == ["neg"]
    assert summary["exploit_classes"]["markdown_wrapping"]["fools"] == [
        "answer_anywhere", "last_integer"]
    record = json.loads(files["manifest.json"])
    assert record["kind"] == "rubric_matrix" and record["git_commit"] is None
    assert record["inputs"]["exploits"]["sha256"] == sha256_file(small_config.exploits)


def test_readme_tables_survive_pipes_and_backticks(small_config):
    readme = build_run(small_config, "test", record_git=False)["README.md"].decode()
    table_rows = [line for line in readme.splitlines() if line.startswith("| ")]
    # a pipe inside a cell is escaped, so every row of a table has its header's cell count
    for line in table_rows:
        assert line.replace("\\|", "").count("|") in (4, 5, 6)
    assert "`'Final: \\x60323\\x60'`" in readme
    assert "`contains_format` is fooled by 1 of 3 exploits (classes: answer_anywhere)" in readme
    assert "(neg), each one a false negative" in readme
    assert "`strict` pays 0 of 3 exploits: it resists every exploit class" in readme
    assert "fool none of these rubrics: format_only." in readme


@given(st.text())
def test_code_span_is_the_same_python_literal(text):
    span = code_span(text)
    inner = span[1:-1]
    assert span[0] == span[-1] == "`" and "`" not in inner and "|" not in inner
    assert ast.literal_eval(inner) == text


def test_config_rejects_unknown_rubrics():
    with pytest.raises(ValueError, match="rubrics must be names"):
        MatrixConfig(rubrics=("strict", "vibes"))


def test_cli_try(capsys):
    assert main(["rubrics", "--try", "Final: 3_23", "--expected", "323"]) == 0
    out = capsys.readouterr().out.splitlines()
    rewards = {line.split()[0]: line.split()[2] for line in out[1:]}
    assert rewards == {"strict": "0.0", "answer_anywhere": "0.0", "last_integer": "0.0",
                       "lenient_int": "1.0", "first_final_line": "0.0",
                       "contains_format": "1.0"}


def test_cli_prints_and_saves(small_config, tmp_path, capsys):
    args = ["rubrics", "--exploits", str(small_config.exploits),
            "--correct", str(small_config.correct)]
    assert main([*args, "--out", str(tmp_path / "run")]) == 2  # a saved run needs a note
    assert not (tmp_path / "run").exists()
    assert main([*args, "--out", str(tmp_path / "run"), "--note", "first"]) == 0
    out = capsys.readouterr().out
    assert "spray|1" in out and (tmp_path / "run" / "matrix.csv").is_file()


def test_committed_run_006_is_rebuilt_byte_for_byte():
    assert canonical.verify(["run_006"]) == {"run_006": []}


@pytest.mark.parametrize("name", sorted(RUBRICS))
def test_a_huge_expected_answer_is_refused_not_crashed_on(name):
    # str() of an int past CPython's digit limit raises; no completion can match such an answer.
    result = RUBRICS[name]({"expected_answer": 10**5000}, "Final: 1")
    assert result["reward"] == 0.0
    assert result["details"]["code"] in {"invalid_example", "wrong_answer"}
