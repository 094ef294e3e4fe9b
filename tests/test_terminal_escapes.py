"""Terminal escapes from data never reach the terminal: an id, a note, a completion, a path, a
student's exception or a line of their file is printed with every character that is not
printable written as its Python escape (`course.formatting`'s escaping rule).

The hostile strings hold what a terminal acts on: an OSC sequence that sets the window title,
`ESC[2J` (clear the screen), a bare carriage return (the next characters overwrite the line),
U+202E (right-to-left override: the rest of the line is shown reversed), C1 controls (U+009B
is a one-byte CSI), DEL, the Unicode line breaks and the invisible format characters. Section
1 drives each command that printed them raw; section 2 fuzzes the rule and every printer built
on it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from cli_run import run
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from course import data
from course.cli import _one_line, main
from course.exercises import EXERCISES, Case, Report, format_progress, format_report
from course.formatting import (
    cut,
    fence_text,
    fill,
    inline_code,
    literal_within,
    one_line,
    prose_text,
    short_literal,
    terminal_text,
)
from course.jsonfiles import json_bytes, jsonl_bytes
from course.learn import LearnConfig, setup, slow_motion
from course.peers import ComparisonConfig, usable_rules
from course.reports.comparison import report_lines
from course.reports.peers import format_disagreements
from course.reports.rubrics import format_matrix
from course.rubrics import MatrixConfig
from course.token_policy import learner_for
from course.tokens import show_piece

TITLE = "\x1b]0;owned\x07"
"""OSC 0: sets the terminal window's title (BEL ends it)."""
HOSTILE = f"x{TITLE}\x1b[2J\rspoof\u202eevil\x9b31m\x7f\x85\u2028\u2066\u200b\ufeffz"
"""Every kind at once: OSC title, clear screen, bare CR, RLO, C1 CSI, DEL, NEL, LS, LRI,
zero-width space, BOM."""

UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f"
                    "\u2028\u2029\ufeff]")
"""What must never be printed: C0 controls but `\\n`, DEL and C1, the bidirectional controls
and isolates, the zero-width characters and marks, the line and paragraph separators, BOM."""


def assert_safe(*texts: str) -> None:
    for text in texts:
        found = UNSAFE.search(text)
        assert found is None, f"{found and found.group()!a} printed in {text!a}"


@pytest.fixture
def hostile_dir(tmp_path) -> Path:
    """A folder whose own name is hostile: every path under it is."""
    folder = tmp_path / f"d{HOSTILE}"
    folder.mkdir()
    return folder


@pytest.fixture
def golden(hostile_dir) -> tuple[Path, Path]:
    """Golden files whose ids and notes are hostile (the classes must be known ones)."""
    exploits = [{"id": f"e{HOSTILE}", "expected_answer": 3, "note": HOSTILE,
                 "completion": f"The answer is 3 {HOSTILE}", "exploit_class": "answer_anywhere",
                 "expected_code": "no_final_prefix"}]
    correct = [{"id": f"c{HOSTILE}", "expected_answer": 3, "completion": "Final: 3",
                "note": HOSTILE}]
    paths = hostile_dir / "exploits.jsonl", hostile_dir / "correct.jsonl"
    paths[0].write_bytes(jsonl_bytes(exploits))
    paths[1].write_bytes(jsonl_bytes(correct))
    return paths


# -- 1. each command that printed them raw ------------------------------------------------------

def test_select_escapes_the_ids_it_still_fails_on_and_its_path(hostile_dir, capsys):
    problems = [{"id": f"p{i}{HOSTILE}", "prompt": "Compute 1+2.", "expected_answer": 3}
                for i in range(2)]
    pack = [{"id": p["id"], "samples": [{"sample_id": f"s{j}{HOSTILE}",
                                          "completion": f"no idea {HOSTILE}"} for j in range(8)]}
            for p in problems]
    (hostile_dir / "problems.jsonl").write_bytes(jsonl_bytes(problems))
    (hostile_dir / "pack.jsonl").write_bytes(jsonl_bytes(pack))
    (hostile_dir / "origin.json").write_bytes(json_bytes({
        "made_by": HOSTILE, "prompt_version": HOSTILE, "sampling": {"note": HOSTILE}}))
    code, out, err = run(capsys, "select", "--pack", hostile_dir / "pack.jsonl",
                         "--problems", hostile_dir / "problems.jsonl", "--provenance",
                         hostile_dir / "origin.json", "--note", HOSTILE,
                         "--out", hostile_dir / "run")
    assert code == 0, err
    assert_safe(out, err)
    assert one_line(f"p0{HOSTILE}") in out and "\\x1b]0;owned\\x07" in out


@pytest.mark.parametrize("command", ["rubrics", "peers"])
def test_rubrics_and_peers_escape_ids_completions_and_paths(command, golden, hostile_dir,
                                                            capsys):
    exploits, correct = golden
    code, out, err = run(capsys, command, "--exploits", exploits, "--correct", correct,
                         "--note", HOSTILE, "--out", hostile_dir / "run")
    assert code == 0, err
    assert_safe(out, err)
    assert f"saved {one_line(str(hostile_dir / 'run'))}" in out
    code, out, err = run(capsys, command, "--try", HOSTILE, "--expected", "3")
    assert code == 0
    assert_safe(out, err)


def test_runs_list_escapes_kinds_notes_and_leftover_folders(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("course.commands.runs.RUNS_DIR", tmp_path)
    for name, manifest in (("run_001", {"kind": f"k{HOSTILE}", "note": HOSTILE}),
                           ("run_002", {"kind": ["a", HOSTILE], "note": {"n": HOSTILE}}),
                           ("run_003", {"kind": "eval"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_bytes(json_bytes(manifest))
    (tmp_path / f".run_009.partial-{HOSTILE}").mkdir()
    code, out, err = run(capsys, "runs", "list")
    assert code == 0
    assert_safe(out, err)
    lines = out.splitlines()
    assert lines[0].startswith("leftover: ") and one_line(f".run_009.partial-{HOSTILE}") in out
    first = next(line for line in lines if line.startswith("run_001  "))
    assert first.split() == ["run_001", one_line(f"k{HOSTILE}"), one_line(HOSTILE)]
    assert any(line.startswith("run_003  eval") for line in lines)


def test_compare_escapes_the_paths_of_its_runs(hostile_dir, capsys):
    (hostile_dir / "problems.jsonl").write_bytes(jsonl_bytes(
        [{"id": "a", "prompt": "Compute 2+2.", "expected_answer": 4}]))
    (hostile_dir / "rollouts.jsonl").write_bytes(jsonl_bytes([{"id": "a",
                                                               "completion": "Final: 4"}]))
    (hostile_dir / "origin.json").write_bytes(json_bytes({
        "made_by": "me", "prompt_version": "v1", "sampling": {"temperature": 0}}))
    for name in ("a", "b"):
        code, out, err = run(capsys, "eval", "--problems", hostile_dir / "problems.jsonl",
                             "--rollouts", hostile_dir / "rollouts.jsonl", "--provenance",
                             hostile_dir / "origin.json", "--note", HOSTILE,
                             "--out", hostile_dir / name)
        assert code == 0, err
        assert_safe(out, err)
    code, out, err = run(capsys, "compare", hostile_dir / "a", hostile_dir / "b",
                         "--out", hostile_dir / "c", "--note", HOSTILE)
    assert code == 0, err
    assert_safe(out, err, (hostile_dir / "c" / "comparison.txt").read_text(encoding="utf-8"))
    assert out.startswith(f"run A: {one_line(str(hostile_dir / 'a'))}: 1/1 pass")


def test_an_error_line_escapes_the_path_it_names(hostile_dir, capsys):
    code, out, err = run(capsys, "eval", "--problems", hostile_dir / "missing.jsonl",
                         "--rollouts", hostile_dir / "missing.jsonl", "--note", "n",
                         "--out", hostile_dir / "run")
    assert code == 2 and out == ""
    assert_safe(err)
    assert len(err.splitlines()) == 1 and "\\x1b]0;owned\\x07\\x1b[2J\\rspoof\\u202e" in err


def test_a_usage_error_escapes_the_arguments_it_did_not_recognize(capsys):
    """argparse quotes a bad value with repr, but lists unrecognized arguments as given."""
    with pytest.raises(SystemExit) as caught:
        main(["runs", "list", HOSTILE])
    out, err = capsys.readouterr()
    assert caught.value.code == 2 and out == ""
    assert_safe(err)
    assert f"unrecognized arguments: {terminal_text(HOSTILE)}" in err


def test_check_escapes_what_the_students_code_raised_and_their_folder(hostile_dir, capsys):
    line = f"raise ValueError({HOSTILE!r})"
    (hostile_dir / "pick_best.py").write_text(f"def pick_best(samples):\n    {line}\n",
                                              encoding="utf-8")
    code, out, err = run(capsys, "check", "pick_best", "--workspace", hostile_dir)
    assert code == 1
    assert_safe(out, err)
    assert f"Your code raised: ValueError: {terminal_text(HOSTILE)}" in out
    code, out, err = run(capsys, "check", "--workspace", hostile_dir)
    assert code == 1
    assert_safe(out, err)


def test_data_check_escapes_the_names_it_reports(capsys, monkeypatch):
    monkeypatch.setattr("course.commands.data.check",
                        lambda: [f"provenance.json: data/{HOSTILE} names a missing file"])
    code, out, err = run(capsys, "data", "check")
    assert code == 1
    assert_safe(out, err)


def test_the_learn_story_escapes_the_prompt_id(tmp_path):
    config = LearnConfig()
    for field in ("problems", "snapshot"):
        records = [record for _, record in data.read_jsonl(getattr(config, field))]
        path = tmp_path / f"{field}.jsonl"
        path.write_bytes(jsonl_bytes([{**r, "id": r["id"] + HOSTILE} for r in records]))
        config = dataclasses.replace(config, **{field: path})
    problems, reference, _ = setup(config)
    story = slow_motion(learner_for(reference, len(problems)), problems, config,
                        np.random.default_rng(0))
    assert_safe(story)
    assert "\\x1b]0;owned\\x07" in story


# -- 2. the rule, and every printer built on it, for any text ---------------------------------

CHARACTERS = st.one_of(st.characters(exclude_categories=()),   # surrogates too
                       st.sampled_from("\x1b\x07\r\n\t\\'\"\x7f\x85\x9b\u2028\u2029\u202e"
                                       "\u2066\u2069\u200b\u200e\u200f\ufeff\xa0"))
TEXT = st.text(alphabet=CHARACTERS, max_size=40)
PATH = st.text(alphabet=CHARACTERS.filter(lambda ch: ch != "\x00" and not 0xD800 <= ord(ch)
                                          < 0xE000), min_size=1, max_size=20)
"""A folder name a command line can give: no NUL, no lone surrogate."""


def printable_lines(text: str) -> bool:
    return all(line.isprintable() for line in text.split("\n"))


@settings(max_examples=500, deadline=None)
@given(text=TEXT)
@example(text=HOSTILE)
@example(text="\\x1b is not ESC\\")
def test_one_line_is_visible_reversible_and_leaves_printable_text_alone(text):
    shown = one_line(text)
    assert shown.isprintable()
    assert_safe(shown)
    assert ast.literal_eval('"' + shown.replace('"', '\\"') + '"') == text
    if text.isprintable() and "\\" not in text:
        assert shown == text


@settings(max_examples=500, deadline=None)
@given(text=TEXT)
@example(text=HOSTILE)
def test_terminal_text_keeps_the_lines_and_escapes_everything_else(text):
    shown = terminal_text(text)
    assert printable_lines(shown) and shown.count("\n") == text.count("\n")
    assert_safe(shown)
    assert terminal_text(shown) == shown
    if printable_lines(text):
        assert shown == text


@settings(max_examples=500, deadline=None)
@given(text=TEXT)
@example(text="\u202e\u2066\u200b\ufeff")
def test_repr_and_ascii_obey_the_same_rule(text):
    """Completions are shown as `repr` literals: Python escapes every character that is not
    printable there too (U+202E included), so a literal is as safe as `one_line`."""
    for shown in (repr(text), ascii(text), short_literal(text), literal_within(text, 30)):
        assert shown.isprintable()


@settings(max_examples=300, deadline=None)
@given(text=TEXT, width=st.integers(0, 80))
def test_every_cell_and_markdown_printer_shows_only_printable_characters(text, width):
    for shown in (cut(text, width), prose_text(text), inline_code(text), fence_text(text),
                  show_piece(text), *fill("ids: ", [one_line(text), one_line(text[::-1])], 40)):
        assert shown.isprintable()


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(TEXT, min_size=1, max_size=4), completion=TEXT)
def test_the_matrix_and_disagreement_tables_show_only_printable_lines(ids, completion):
    rubrics = MatrixConfig().rubrics
    rows = [{"set": "exploit", "exploit_class": "answer_anywhere", "id": case_id,
             "completion": completion, "rewards": dict.fromkeys(rubrics, 1.0)}
            for case_id in ids]
    assert printable_lines(format_matrix(rows, rubrics))
    rules = usable_rules(ComparisonConfig().rules)[0]
    rows = [{"id": case_id, "in_spec": False, "completion": completion,
             "rewards": dict.fromkeys(rules, 1.0)} for case_id in ids]
    assert printable_lines(format_disagreements(rows, rules))


@settings(max_examples=200, deadline=None)
@given(run_a=TEXT, run_b=TEXT)
def test_the_comparison_lines_show_only_printable_characters(run_a, run_b):
    report = {"run_a": run_a, "run_b": run_b, "n": 2, "passes_a": 1, "passes_b": 2,
              "pass_rate_a": 0.5, "pass_rate_b": 1.0, "pass_rate_a_ci95": (0.1, 0.9),
              "pass_rate_b_ci95": (0.3, 1.0), "difference": 0.5, "difference_ci95": (0.0, 1.0),
              "interval_method": "paired", "flips": {"fail_to_pass": 1, "pass_to_fail": 0},
              "verdict": "noise"}
    assert all(line.isprintable() for line in report_lines(report))


@settings(max_examples=200, deadline=None)
@given(message=TEXT, given_text=TEXT, got=TEXT, folder=PATH)
def test_check_reports_and_error_lines_show_only_printable_lines(message, given_text, got,
                                                                 folder):
    exercise = EXERCISES["pick_best"]
    path = Path(folder) / exercise.file
    reports = [Report(exercise, path, "error", message=message),
               Report(exercise, path, "failing", (Case(given_text, False, given_text,
                                                       got, got, got),))]
    for report in reports:
        assert printable_lines(format_report(report))
    assert printable_lines(format_progress(reports))
    for error in (RuntimeError(message), OSError(2, got, folder)):
        assert _one_line(error).isprintable()


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=TEXT, note=TEXT)
def test_runs_list_shows_only_printable_lines_for_any_manifest(kind, note, tmp_path_factory,
                                                               monkeypatch, capsys):
    root = tmp_path_factory.mktemp("runs")
    monkeypatch.setattr("course.commands.runs.RUNS_DIR", root)
    (root / "run_001").mkdir()
    (root / "run_001" / "manifest.json").write_text(
        json.dumps({"kind": kind, "note": note}), encoding="utf-8")
    assert main(["runs", "list"]) == 0
    out, err = capsys.readouterr()
    assert printable_lines(out) and err == ""


def test_the_unknown_origin_warning_of_eval_escapes_the_rollouts_path(capsys, hostile_dir):
    problems = hostile_dir / "problems.jsonl"
    rollouts = hostile_dir / "rollouts.jsonl"
    problems.write_text(json.dumps({"id": "p", "prompt": "2+2", "expected_answer": 4}) + "\n",
                        encoding="utf-8")
    rollouts.write_text(json.dumps({"id": "p", "completion": "Final: 4"}) + "\n",
                        encoding="utf-8")
    code, out, err = run(capsys, "eval", "--problems", problems, "--rollouts", rollouts,
                         "--out", hostile_dir / "run", "--note", "n")
    assert code == 0 and "warning:" in err
    assert_safe(out, err)
