"""Grading a class: `course check --json`, `course grade`, the Classroom workflow, the page's
self-check note, and the teacher's how-to for adding a kata item (docs/teacher/grading.md)."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from cli_run import one_error_line, run

from course import check, data, datagen, tryit
from course.exercises import EXERCISES
from course.grading import LONG_FIELDS, POINTS, TOTAL
from course.paths import DATA_DIR, REPO_ROOT
from course.scorer import SCORER_VERSION

PICK_BEST = "def pick_best(samples):\n    return samples[-1]\n"  # wrong on most cases


def test_check_json_has_one_record_per_exercise_and_what_judged_it(tmp_path, capsys):
    (tmp_path / "pick_best.py").write_text(PICK_BEST, encoding="utf-8")
    code, out, _ = run(capsys, "check", "pick_best", "--workspace", tmp_path, "--json")
    record = json.loads(out)
    assert code == 1 and record["scorer_version"] == SCORER_VERSION
    assert record["course_commit"] is None or len(record["course_commit"]) == 40
    [exercise] = record["exercises"]
    assert {key: exercise[key] for key in ("exercise", "milestone", "status")} == {
        "exercise": "pick_best", "milestone": "M0.5", "status": "failing"}
    assert exercise["total"] == len(exercise["cases"]) > exercise["passed"] > 0
    assert set(exercise["cases"][0]) == {"name", "pass", "want", "got"}
    code, out, _ = run(capsys, "check", "--workspace", tmp_path, "--json")
    assert [e["exercise"] for e in json.loads(out)["exercises"]] == list(EXERCISES)


def test_grade_writes_a_row_per_student_and_exercise_and_never_overwrites(tmp_path, capsys):
    submissions = tmp_path / "submissions"
    for student, source in (("s001", PICK_BEST), ("s002", "import os\nos._exit(0)\n")):
        (submissions / student).mkdir(parents=True)
        (submissions / student / "pick_best.py").write_text(source, encoding="utf-8")
    (submissions / "s003" / "workspace").mkdir(parents=True)  # a clone of the student repo
    shutil.copy(REPO_ROOT / "workspace" / "pick_best.py", submissions / "s003" / "workspace")
    (submissions / "notes.txt").write_text("not a student", encoding="utf-8")
    out = tmp_path / "grades.csv"
    code, printed, _ = run(capsys, "grade", submissions, "--out", out, "--cpu", "2")
    assert code == 0 and "graded 3 students" in printed
    assert "passed over, links and files are not graded (1): notes.txt" in printed
    with out.open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert tuple(rows[0]) == LONG_FIELDS and len(rows) == 3 * (len(EXERCISES) + 1)
    pick = {row["student"]: row for row in rows if row["exercise"] == "pick_best"}
    assert pick["s001"]["status"] == "failing" and pick["s001"]["reason"].startswith("failed: ")
    assert pick["s002"]["status"] == "error"
    assert pick["s002"]["reason"] == "the file exited while being imported"
    assert pick["s003"]["status"] == "not started"
    totals = [row for row in rows if row["exercise"] == TOTAL]
    assert [row["reason"] for row in totals] == [f"0 of {len(EXERCISES)} exercises passing"] * 3
    before = out.read_bytes()
    code, _, err = run(capsys, "grade", submissions, "--out", out)
    assert code == 2 and one_error_line(err, "grade") and "already exists" in err
    assert out.read_bytes() == before
    code, _, err = run(capsys, "grade", tmp_path / "nowhere", "--out", tmp_path / "new.csv")
    assert code == 2 and one_error_line(err, "grade") and "not a folder" in err


def test_the_classroom_workflow_has_one_step_per_exercise():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((REPO_ROOT / "scripts" / "classroom" / "classroom.yml")
                              .read_text(encoding="utf-8"))
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    graders = [s for s in steps
               if s.get("uses") == "classroom-resources/autograding-command-grader@v1"]
    assert [s["id"] for s in graders] == list(EXERCISES)
    for step in graders:
        assert step["with"]["command"] == f"course check {step['id']}"
        assert step["with"]["test-name"] == step["id"] and step["with"]["max-score"] == POINTS
    [reporter] = [s for s in steps
                  if s.get("uses") == "classroom-resources/autograding-grading-reporter@v1"]
    assert reporter["with"]["runners"].split(",") == list(EXERCISES)
    assert reporter["env"] == {f"{name.upper()}_RESULTS": f"${{{{steps.{name}.outputs.result}}}}"
                               for name in EXERCISES}


def test_the_page_says_its_check_is_a_self_check(tmp_path):
    shown = json.loads(tryit.check_exercise("pick_best", PICK_BEST, str(tmp_path)))
    assert shown["status"] == "failing" and shown["note"] == tryit.SELF_CHECK
    assert "not a grade" in shown["note"] and "course check on a machine" in shown["note"]
    assert "`" not in shown["note"]


@pytest.mark.skipif(not (REPO_ROOT / "teacher").is_dir(),
                    reason="needs teacher/ (the kata key and solution), which the students' "
                           "copy leaves out")
def test_adding_a_kata_item_as_the_grading_page_says_stays_green(tmp_path, monkeypatch):
    """docs/teacher/grading.md, "Adding a kata item and its key", in a scratch copy: the data
    folder, the key, the stub and the solution; no test and no checker is edited."""
    data_dir, keys = tmp_path / "data", tmp_path / "keys"
    shutil.copytree(DATA_DIR, data_dir)
    keys.mkdir()
    kata_file = data_dir / "kata" / "kata_m0.jsonl"
    new_id = f"kata-{len(data.load_kata(kata_file)) + 1:02d}"
    example = {"id": new_id, "prompt": f"Compute 6*7. {datagen.INSTRUCTION}",
               "expected_answer": 42, "completion": "Final: 41", "reward": 0.0,
               "code": "wrong_answer"}
    with kata_file.open("a", encoding="ascii") as file:                    # step 1
        file.write(json.dumps(example) + "\n")
    key = json.loads((check.KEY_DIR / "teacher_key_m0.json").read_text(encoding="utf-8"))
    key[new_id] = {"cause": "model_failure", "why": "6*7 is 42.", "fix": "Keep it."}
    (keys / "teacher_key_m0.json").write_text(json.dumps(key), encoding="utf-8")  # step 2
    stub = (REPO_ROOT / "workspace" / "kata_m0_labels.py").read_text(encoding="utf-8")
    stub = stub.replace('    "kata-10": None,\n', f'    "kata-10": None,\n    "{new_id}": None,\n')
    stub = stub.replace('    "kata-10": "",\n', f'    "kata-10": "",\n    "{new_id}": "",\n')
    (tmp_path / "stub").mkdir()
    (tmp_path / "stub" / "kata_m0_labels.py").write_text(stub, encoding="utf-8")  # step 3
    solution = (REPO_ROOT / "teacher" / "solutions" / "kata_m0_labels.py").read_text(
        encoding="utf-8") + f'\nLABELS["{new_id}"] = "model_failure"\nFIXES["{new_id}"] = "k"\n'
    (tmp_path / "solution").mkdir()
    (tmp_path / "solution" / "kata_m0_labels.py").write_text(solution, encoding="utf-8")  # 4
    datagen.write_data(datagen.build_data(source=data_dir), data_dir, replace=True)  # step 5
    assert datagen.check(data_dir) == []
    monkeypatch.setattr(check, "DATA_DIR", data_dir)
    monkeypatch.setattr(check, "KEY_DIR", keys)
    started = check.check("kata", tmp_path / "stub")
    assert started.status == "not started" and new_id in started.message
    report = check.check("kata", tmp_path / "solution")
    assert report.status == "passing" and report.cases[-1].name == new_id


def _class(root, students=("s001", "s002")):
    """A class folder: s001 solved pick_best, s002 did not start; other exercises missing."""
    submissions = root / "submissions"
    for student in students:
        (submissions / student).mkdir(parents=True)
    (submissions / students[0] / "pick_best.py").write_text(
        (REPO_ROOT / "teacher" / "solutions" / "pick_best.py").read_text(encoding="utf-8")
        if (REPO_ROOT / "teacher").is_dir() else PICK_BEST, encoding="utf-8")
    return submissions


def test_unsealed_check_says_so_once_and_records_it(tmp_path, capsys, monkeypatch):
    from course.commands import check as check_command

    monkeypatch.setattr(check_command, "isolation_problem", lambda: "no bubblewrap here")
    (tmp_path / "pick_best.py").write_text(PICK_BEST, encoding="utf-8")
    code, out, err = run(capsys, "check", "--workspace", tmp_path, "--json")
    assert code == 1 and json.loads(out)["sealed"] is False
    assert err.count("\n") == 1 and "without the seal here (no bubblewrap here)" in err


def test_unsealed_grading_refuses_unless_trusted_and_the_gradebook_says_so(
        tmp_path, capsys, monkeypatch):
    from course.commands import grade as grade_command

    monkeypatch.setattr(grade_command, "isolation_problem", lambda: "no bubblewrap here")
    submissions, out = _class(tmp_path), tmp_path / "grades.csv"
    code, _, err = run(capsys, "grade", submissions, "--out", out)
    assert code == 2 and one_error_line(err, "grade") and not out.exists()
    assert "cannot seal the submissions off: no bubblewrap here" in err
    assert "--trust-submissions" in err
    code, printed, _ = run(capsys, "grade", submissions, "--out", out, "--trust-submissions")
    assert code == 0 and "NOT sealed off (--trust-submissions)" in printed
    with out.open(encoding="utf-8", newline="") as file:
        assert {row["sealed"] for row in csv.DictReader(file)} == {"no"}


def test_a_gradebook_that_appears_while_grading_is_left_and_the_grades_go_beside_it(
        tmp_path, capsys, monkeypatch):
    from course.commands import grade as grade_command

    submissions, out = _class(tmp_path), tmp_path / "grades.csv"
    grade_class = grade_command.grade_class

    def grade_while_someone_writes(*args):
        graded = grade_class(*args)
        out.write_text("student,points\nme,80\n", encoding="utf-8")
        return graded

    monkeypatch.setattr(grade_command, "grade_class", grade_while_someone_writes)
    code, printed, _ = run(capsys, "grade", submissions, "--out", out)
    assert code == 0 and "grades-2.csv (" in printed and "appeared while grading" in printed
    assert out.read_text(encoding="utf-8") == "student,points\nme,80\n"
    with (tmp_path / "grades-2.csv").open(encoding="utf-8", newline="") as file:
        assert len(list(csv.DictReader(file))) == 2 * (len(EXERCISES) + 1)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_a_roster_gives_ids_a_wide_gradebook_and_lists_the_missing_and_unexpected(
        tmp_path, capsys):
    submissions = _class(tmp_path, ("ada-l", "zz-stranger"))
    roster = tmp_path / "roster.csv"
    roster.write_text("folder,student_id,name\nada-l,1001,Ada Lovelace\n"
                      "alan-t,1002,Alan Turing\n", encoding="utf-8")
    wide, out = tmp_path / "wide.csv", tmp_path / "long.csv"
    code, printed, _ = run(capsys, "grade", submissions, "--roster", roster, "--wide", wide,
                           "--out", out)
    assert code == 0
    assert "on the roster with no folder, 0 points (1): alan-t" in printed
    assert "not on the roster, graded, not in --wide (1): zz-stranger" in printed
    with wide.open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(r["student_id"], r["name"], r["submitted"]) for r in rows] == [
        ("1001", "Ada Lovelace", "yes"), ("1002", "Alan Turing", "no")]
    assert list(rows[0])[4:-2] == list(EXERCISES)
    assert rows[0]["pick_best"] == str(POINTS) and rows[0]["points"] == str(POINTS)
    assert rows[1]["points"] == "0" and rows[0]["points_available"] == str(POINTS * 8)
    with out.open(encoding="utf-8", newline="") as file:
        ids = {row["student"]: row["student_id"] for row in csv.DictReader(file)}
    assert ids == {"ada-l": "1001", "zz-stranger": ""}
    code, out_json, err = run(capsys, "grade", submissions, "--roster", roster, "--json")
    record = json.loads(out_json)
    assert code == 0 and "graded 2 students" in err and record["missing"] == ["alan-t"]
    assert [(s["folder"], s["student_id"], s["points"]) for s in record["students"]] == [
        ("ada-l", "1001", POINTS), ("zz-stranger", "", 0)]


@pytest.mark.parametrize(("text", "problem"), [
    ("folder,name\n", "roster.csv:1: field 'student_id': the header needs the columns"),
    ("folder,student_id,name\na,1,A\nb,,B\n", "roster.csv:3: field 'student_id': empty"),
    ("folder,student_id,name\na,1,A\na,2,B\n",
     "roster.csv:3: field 'folder': a is already on line 2"),
])
def test_a_roster_that_does_not_hold_is_refused_on_one_line(tmp_path, capsys, text, problem):
    submissions, roster = _class(tmp_path), tmp_path / "roster.csv"
    roster.write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "grade", submissions, "--roster", roster, "--json")
    assert code == 2 and one_error_line(err, "grade") and problem in err


def test_a_cell_never_starts_like_a_formula():
    from course.grading import FORMULA_LEADS, cell

    for lead in FORMULA_LEADS:
        shown = cell(lead + "1+1")
        assert not shown.startswith(FORMULA_LEADS) and "\r" not in shown and "\t" not in shown
    assert cell("\r=2+2") == "\\r=2+2" and cell("=2+2") == "'=2+2" and cell(7) == 7
