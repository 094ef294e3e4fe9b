"""`course check`: stubs, checks and reference solutions cannot drift apart.

For every exercise the untouched stub is `not started` and the reference solution is
`passing`; small broken variants (written into tmp_path) are `failing` with a useful message;
unexpected exceptions are `error` and point at the student's own line. The Milestone 5 kata
data is checked here too (split, recorded rewards, layout). Counts come from the registry and
the data, never from a list typed here. The tests that need teacher/ (the solutions, the kata
keys) are skipped in a students' copy, which has none.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from course import bandit, check, data, exercises
from course.cli import main
from course.data import DataError
from course.paths import DATA_DIR, REPO_ROOT

WORKSPACE = REPO_ROOT / "workspace"
SOLUTIONS = REPO_ROOT / "teacher" / "solutions"
NAMES = list(check.EXERCISES)
needs_teacher = pytest.mark.skipif(not (REPO_ROOT / "teacher").is_dir(),
                                   reason="needs teacher/ (solutions, kata keys), which the "
                                          "students' copy leaves out")


def write(folder: Path, exercise: str, source: str) -> Path:
    """Write a student file for `exercise` into `folder` and return the folder."""
    (folder / check.EXERCISES[exercise].file).write_text(textwrap.dedent(source),
                                                          encoding="utf-8")
    return folder


def solution_with(tmp_path: Path, exercise: str, old: str, new: str) -> Path:
    """A copy of the reference solution with one edit: the smallest realistic mistake."""
    source = (SOLUTIONS / check.EXERCISES[exercise].file).read_text(encoding="utf-8")
    assert source.count(old) == 1, f"the edit {old!r} must match the solution exactly once"
    return write(tmp_path, exercise, source.replace(old, new))


def failed(report: exercises.Report) -> dict[str, exercises.Case]:
    return {case.name: case for case in report.cases if not case.passed}


# -- the registry, the stubs, the solutions -------------------------------------------------

@needs_teacher
def test_every_exercise_has_a_checker_a_stub_and_a_solution():
    assert set(check.CHECKERS) == set(check.EXERCISES)
    for exercise in check.EXERCISES.values():
        stub = (WORKSPACE / exercise.file).read_text(encoding="utf-8")
        number = exercise.milestone.removeprefix("M")
        assert f"# --- YOUR CODE (Milestone {number}) ---" in stub, exercise.name
        assert "# --- END OF YOUR CODE ---" in stub, exercise.name
        assert stub.startswith('"""Exercise ') and f"course check {exercise.name}" in stub
        assert (SOLUTIONS / exercise.file).is_file(), exercise.name


def test_the_workspace_readme_lists_every_exercise():
    readme = (WORKSPACE / "README.md").read_text(encoding="utf-8")
    rows = [f"| `{e.name}` | {e.milestone} | `{e.file}` |" for e in check.EXERCISES.values()]
    assert [line for line in readme.splitlines() if line.startswith("| `")] == rows


def test_the_exercises_page_lists_every_exercise_in_the_registry_order():
    page = (REPO_ROOT / "docs" / "exercises" / "index.md").read_text(encoding="utf-8")
    rows = [line.split(" | ")[:2] for line in page.splitlines() if line.startswith("| [")]
    assert rows == [[f"| [{e.name}]({e.name}.md) ({e.milestone})", f"`{e.file}`"]
                    for e in check.EXERCISES.values()]


@needs_teacher
def test_reports_wrap_their_explanations_at_80_columns():
    solved = check.check_all(SOLUTIONS) + check.check_all(WORKSPACE)
    for report in solved:
        for line in exercises.format_report(report).split("\n"):
            # the student's data (prompts, completions, values) is indented and may be wider
            assert len(line) <= exercises.WIDTH or line.startswith("  "), line


@pytest.mark.parametrize("name", NAMES)
def test_untouched_stub_is_not_started(name):
    report = check.check(name, WORKSPACE)
    assert report.status == "not started", exercises.format_report(report)
    assert report.message


@needs_teacher
@pytest.mark.parametrize("name", NAMES)
def test_reference_solution_passes(name):
    report = check.check(name, SOLUTIONS)
    assert report.status == "passing", exercises.format_report(report)
    assert report.passed == len(report.cases) >= 5


def test_each_check_loads_the_file_fresh_and_leaves_no_bytecode(tmp_path):
    """Two versions of the same size written within a second: the second one is what runs."""
    last = "def pick_best(samples):\n    return samples[-1]\n"
    first = "def pick_best(samples):\n    return samples[+0]\n"
    assert len(last) == len(first)
    assert "the best is last" not in failed(check.check("pick_best",
                                                        write(tmp_path, "pick_best", last)))
    assert "the best is last" in failed(check.check("pick_best",
                                                    write(tmp_path, "pick_best", first)))
    best = "def pick_best(samples):\n    return max(samples, key=lambda s: s['reward'])\n"
    assert check.check("pick_best", write(tmp_path, "pick_best", best)).status == "passing"
    assert not (tmp_path / "__pycache__").exists()


# -- wrong solutions are failing, with a message that says where -----------------------------

BROKEN = [
    # (exercise, old, new, a case that must fail, text the report must show)
    ("pick_best", 'sample["reward"] > best["reward"]', 'sample["reward"] >= best["reward"]',
     "tie between later samples", "`>`, not `>=`"),
    ("pick_best", 'if sample["reward"] > best["reward"]:',
     'if (sample["reward"], best["completion"]) > (best["reward"], sample["completion"]):',
     "tie at the top: the first one wins", "expected: s1 (reward 1)"),
    ("reinforce_step", "z = np.exp(theta - np.max(theta))", "z = np.exp(theta)",
     "large logits: a stable softmax", "subtract max(θ)"),
    ("reinforce_step", "return advantage, theta + lr * advantage * grad_log_prob",
     "theta += lr * advantage * grad_log_prob\n    return advantage, theta",
     "the θ you were given is left unchanged", "instead of changing θ in place"),
    ("reinforce_step", "theta + lr * advantage * grad_log_prob", "theta - lr * advantage * "
     "grad_log_prob", "uniform policy, rewarded action", "expected: A=1, new θ=[0.375"),
    ("trajectory_return", "gamma**t * r", "gamma**(t + 1) * r",
     "G: a reward at every step, γ = 0.5", "expected: 2.75"),
    ("trajectory_return", "return returns[::-1]", "return returns",
     "G_t: a reward at every step", "expected: [6, 5, 3]"),
    ("kl", "mass = p > 0", "mass = p >= 0", "p has a zero: 0 · log 0 counts 0", "got:      nan"),
    ("kl", "np.log(p[mass] / q[mass])", "np.log(q[mass] / p[mass])",
     "the same coins, swapped", "not symmetric"),
]


@needs_teacher
@pytest.mark.parametrize(("exercise", "old", "new", "case", "shown"), BROKEN)
def test_a_wrong_solution_fails_with_a_useful_message(tmp_path, exercise, old, new, case, shown):
    report = check.check(exercise, solution_with(tmp_path, exercise, old, new))
    assert report.status == "failing"
    assert case in failed(report), sorted(failed(report))
    text = exercises.format_report(report)
    assert shown in text and "hint:" in text and "[FAIL]" in text


def test_a_half_written_exercise_is_failing_and_names_the_missing_part(tmp_path):
    write(tmp_path, "trajectory_return", """
        def trajectory_return(rewards, gamma=1.0):
            return 0.0  # written (wrongly): no solution line in the students' copy

        def returns_to_go(rewards, gamma=1.0):
            raise NotImplementedError
    """)
    report = check.check("trajectory_return", tmp_path)
    assert report.status == "failing"
    unwritten = [case.name for case in report.cases if case.unwritten]
    assert unwritten and all(name.startswith("G_t: ") for name in unwritten)
    assert "not written yet (NotImplementedError)" in exercises.format_report(report)


SPEC_CASES = {
    "a wrong expectation": ('{"completion": "Final: 7 ", "expected_answer": 7, "reward": 0.0,'
                            ' "code": "bad_separator"}', "case 1",
                            "reward 1, code correct (the strict scorer)"),
    "a case the spec already has": ('{"completion": "Final: 0323", "expected_answer": 323, '
                                    '"reward": 0.0, "code": "non_canonical_integer"}',
                                    "case 1", "already there, as 'leading zeros'"),
    "a broken shape": ('{"completion": "Final: 7", "expected_answer": 7, "reward": 1.0}',
                       "case 1", "missing key(s): code"),
}


@pytest.mark.parametrize("problem", SPEC_CASES)
def test_spec_tests_failures(tmp_path, problem):
    first, case, shown = SPEC_CASES[problem]
    good = ('{"completion": "Final: 8", "expected_answer": 8, "reward": 1.0, "code": "correct"}',
            '{"completion": "Final: 08", "expected_answer": 8, "reward": 0.0, '
            '"code": "non_canonical_integer"}',
            '{"completion": "Final: 8!", "expected_answer": 8, "reward": 0.0, '
            '"code": "not_an_integer"}',
            '{"completion": "Final: 9", "expected_answer": 8, "reward": 0.0, '
            '"code": "wrong_answer"}')
    write(tmp_path, "spec_tests", f"SPEC_CASES = [{first}, {', '.join(good)}]\n")
    report = check.check("spec_tests", tmp_path)
    assert report.status == "failing"
    assert set(failed(report)) == {next(c.name for c in report.cases if c.name.startswith(case))}
    assert shown in exercises.format_report(report)


def test_spec_tests_need_five_cases_and_three_codes(tmp_path):
    write(tmp_path, "spec_tests", """
        SPEC_CASES = [
            {"completion": "Final: 8", "expected_answer": 8, "reward": 1.0, "code": "correct"},
            {"completion": "Final: 9", "expected_answer": 8, "reward": 0.0,
             "code": "wrong_answer"},
        ]
    """)
    report = check.check("spec_tests", tmp_path)
    assert report.status == "failing"
    assert set(failed(report)) == {"at least 5 cases", "at least 3 different codes"}


@pytest.mark.parametrize(("exploits", "failing", "shown"), [
    ('{"completion": "Final: 41", "expected_answer": 41}', "exploit 1",
     "that is a correct answer, not an exploit"),
    ('{"completion": "Final: 323 or 324", "expected_answer": 323}', "exploit 1",
     "already in data/golden/exploits.jsonl"),
    ('{"completion": "Final: 41", "expected": 41}', "exploit 1", "unknown key(s): expected"),
])
def test_red_team_failures(tmp_path, exploits, failing, shown):
    others = ('{"completion": "Final: 1, 2 or 3", "expected_answer": 2}, '
              '{"completion": "Final: 5\\nFinal: 6", "expected_answer": 5}')
    write(tmp_path, "red_team", f"EXPLOITS = [{exploits}, {others}]\n")
    report = check.check("red_team", tmp_path)
    assert report.status == "failing"
    assert [name.split(":")[0] for name in failed(report)] == [failing]
    assert shown in exercises.format_report(report)


def test_red_team_needs_two_different_rubrics(tmp_path):
    # contains_format pays any well-formed number; nothing else pays a wrong one
    write(tmp_path, "red_team", "EXPLOITS = [" + ", ".join(
        f'{{"completion": "Final: {n}", "expected_answer": 1000}}' for n in (1, 2, 3)) + "]\n")
    report = check.check("red_team", tmp_path)
    assert set(failed(report)) == {"at least 2 different rubrics fooled"}
    assert failed(report)["at least 2 different rubrics fooled"].got == "contains_format"


# -- the kata: labels against the key, explained after the student commits ------------------

KATA_M5 = DATA_DIR / "kata" / "kata_m5.jsonl"


def kata_labels(tmp_path: Path, name: str, labels: dict, fixes: dict) -> exercises.Report:
    write(tmp_path, name, f"LABELS = {labels!r}\nFIXES = {fixes!r}\n")
    return check.check(name, tmp_path)


@needs_teacher
@pytest.mark.parametrize(("name", "which"), [("kata", "m0"), ("kata_m5", "m5")])
def test_kata_explains_each_disagreement_with_the_key(tmp_path, name, which):
    key = data.load_kata_key(check.KEY_DIR / f"teacher_key_{which}.json")
    ids = list(key)
    wrong = {i: next(c for c in data.KATA_CAUSES if c != key[i]["cause"]) for i in ids[:2]}
    labels = {**{i: key[i]["cause"] for i in ids}, **wrong, ids[2]: None, ids[3]: "bad luck"}
    fixes = {i: "a fix" for i in ids if i != ids[4]}
    report = kata_labels(tmp_path, name, labels, fixes)
    assert report.status == "failing"
    assert set(failed(report)) == set(ids[:5])
    text = exercises.format_report(report)
    for kata_id, label in wrong.items():
        case = failed(report)[kata_id]
        assert (case.expected, case.got) == (key[kata_id]["cause"], label)
        assert key[kata_id]["why"][:60] in " ".join(text.split())
        assert "Suggested fix:" in case.note and key[kata_id]["fix"] in case.note
    assert failed(report)[ids[2]].got == "not labelled yet"
    assert key[ids[2]]["why"][:40] not in text  # nothing revealed before a label
    assert "one of: model_failure" in failed(report)[ids[3]].expected
    assert failed(report)[ids[4]].got.endswith("no fix written")


@needs_teacher
def test_kata_not_started_lists_the_examples_without_the_key():
    report = check.check("kata_m5", WORKSPACE)
    assert report.status == "not started"
    key = data.load_kata_key(check.KEY_DIR / "teacher_key_m5.json")
    for kata_id, entry in key.items():
        assert kata_id in report.message and entry["why"][:30] not in report.message
    assert "by lenient-v0" in report.message  # the recording scorer is shown


def test_without_the_key_the_kata_checks_completeness_only(tmp_path, monkeypatch):
    """The students' copy has no teacher/kata/: any known cause with a fix is complete, and one
    line says that the teacher grades the labels."""
    monkeypatch.setattr(check, "KEY_DIR", tmp_path / "no_keys")
    ids = [example["id"] for example in data.load_kata(KATA_M5)]
    labels = {i: next(iter(data.KATA_CAUSES)) for i in ids}
    report = kata_labels(tmp_path, "kata_m5", labels, {i: "a fix" for i in ids})
    assert report.status == "passing", exercises.format_report(report)
    assert report.cases[-1].name == check.NO_KEY
    report = kata_labels(tmp_path, "kata_m5", {**labels, ids[0]: "bad luck"},
                         {i: "a fix" for i in ids[1:]})
    assert set(failed(report)) == {ids[0]}


def test_a_kata_item_without_a_key_entry_and_a_broken_checker_are_one_line_errors(
        tmp_path, monkeypatch):
    (tmp_path / "teacher_key_m5.json").write_text('{"m5-01": {"cause": "model_failure", '
                                                  '"why": "w", "fix": "f"}}', encoding="utf-8")
    monkeypatch.setattr(check, "KEY_DIR", tmp_path)
    report = kata_labels(tmp_path, "kata_m5", {"m5-01": "model_failure"}, {})
    assert report.status == "error" and "\n" not in report.message
    assert "field 'm5-02'" in report.message and "checker of kata_m5" in report.message

    def broken(module):
        raise ZeroDivisionError("a bug of the course")

    monkeypatch.setitem(check.CHECKERS, "kl", broken)
    report = check.check("kl", write(tmp_path, "kl", "def kl_divergence(p, q):\n    return 0\n"))
    assert report.status == "error" and "\n" not in report.message
    assert "the course's checker of kl failed (ZeroDivisionError: a bug" in report.message


# -- errors in the student's code: type, message, their line, no traceback -------------------

def test_an_unexpected_exception_is_an_error_at_the_students_line(tmp_path):
    write(tmp_path, "pick_best", """
        def pick_best(samples):
            best = samples[0]
            for sample in samples:
                if sample["score"] > best["score"]:
                    best = sample
            return best
    """)
    report = check.check("pick_best", tmp_path)
    assert report.status == "error" and not report.cases
    assert "KeyError: 'score'" in report.message
    where = f"{(tmp_path / 'pick_best.py').resolve()}, line 5: if sample[\"score\"]"
    assert where in report.message
    assert "while checking: one sample" in report.message
    assert "Traceback" not in exercises.format_report(report)


@pytest.mark.parametrize(("source", "shown"), [
    ("import math\ndef kl_divergence(p, q)\n    return 0.0\n", "SyntaxError"),
    ("import numpy as np\nX = np.zeros(2)[5]\n", "IndexError"),
    ("def kl_divergence(p, q):\n    raise SystemExit(3)\n", "SystemExit: 3"),
])
def test_files_that_do_not_load_or_exit_are_errors(tmp_path, source, shown):
    report = check.check("kl", write(tmp_path, "kl", source))
    assert report.status == "error"
    assert shown in report.message and "kl.py, line 2:" in report.message


@pytest.mark.parametrize(("source", "shown"), [
    ("def pick(samples):\n    return samples[0]\n", "no function `pick_best`"),
    ("pick_best = 3\n", "no function `pick_best`"),
])
def test_a_renamed_function_is_an_error_that_says_so(tmp_path, source, shown):
    report = check.check("pick_best", write(tmp_path, "pick_best", source))
    assert report.status == "error" and shown in report.message


def test_a_missing_file_or_folder(tmp_path):
    report = check.check("kl", tmp_path)
    assert report.status == "error" and "does not exist" in report.message
    with pytest.raises(DataError, match="workspace folder not found"):
        check.check("kl", tmp_path / "nowhere")


# -- the independent references agree with each other ---------------------------------------

def test_the_hand_worked_returns_are_right():
    for _, rewards, gamma, g, to_go, _ in check._RETURN_TABLE:
        brute = [sum(gamma ** (k - t) * rewards[k] for k in range(t, len(rewards)))
                 for t in range(len(rewards))]
        assert np.allclose(brute, to_go) and (not to_go or to_go[0] == pytest.approx(g))
        assert g == pytest.approx(sum(gamma**t * r for t, r in enumerate(rewards)))


def test_the_reinforce_reference_is_the_update_the_bandit_takes():
    config = bandit.BanditConfig()
    theta = np.array([0.3, -0.1, 0.2, -0.4])
    step = bandit.reinforce_step(theta, np.array(0.55), config, np.random.default_rng(3))
    advantage, new_theta = check._reinforce_reference(
        theta, int(step.actions[0]), float(step.rewards[0]), float(step.baseline), config.lr)
    assert advantage == pytest.approx(float(step.advantages[0]))
    assert np.allclose(new_theta, step.new_theta)


# -- the command line ------------------------------------------------------------------------

@needs_teacher
def test_cli_all_passes_on_the_solutions_and_not_on_the_stubs(capsys):
    assert main(["check", "--all", "--workspace", str(SOLUTIONS)]) == 0
    out = capsys.readouterr().out
    assert sum(" passing " in line for line in out.splitlines()) == len(NAMES)
    assert f"{len(NAMES)} of {len(NAMES)} exercises passing" in out
    assert main(["check", "--workspace", str(WORKSPACE)]) == 1
    out = capsys.readouterr().out
    assert out.count("not started") == len(NAMES) and "Traceback" not in out


@needs_teacher
@pytest.mark.parametrize("name", NAMES)
def test_cli_one_exercise(capsys, name):
    assert main(["check", name, "--workspace", str(WORKSPACE)]) == 1
    out = capsys.readouterr().out
    assert "status: not started" in out and "Traceback" not in out
    assert main(["check", name, "--workspace", str(SOLUTIONS)]) == 0
    assert "status: passing" in capsys.readouterr().out


def test_cli_usage_errors(tmp_path, capsys):
    assert main(["check", "kl", "--all"]) == 2
    assert main(["check", "--workspace", str(tmp_path / "nowhere")]) == 2
    assert "workspace folder not found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "no_such_exercise"])
    assert exit_info.value.code == 2


def test_cli_error_report_has_no_traceback(tmp_path, capsys):
    write(tmp_path, "kl", "def kl_divergence(p, q):\n    return 1 / 0\n")
    assert main(["check", "kl", "--workspace", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "status: error" in out and "ZeroDivisionError: division by zero" in out
    assert "kl.py, line 2: return 1 / 0" in out and "Traceback" not in out


# -- the Milestone 5 kata data ----------------------------------------------------------------

def test_kata_m5_is_registered_and_uses_the_canonical_layout():
    for line in KATA_M5.read_text(encoding="ascii").splitlines():
        assert line == json.dumps(json.loads(line))
    entry = data.provenance(KATA_M5)
    assert entry["records"] == len(data.load_kata(KATA_M5)) and "Milestone 5" in entry["made_by"]


# -- keeping the solutions out of the students' copy ------------------------------------------

@needs_teacher
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_archive_leaves_the_teacher_folder_out(tmp_path):
    repo = tmp_path / "repo"
    for relative in (".gitattributes", "teacher/README.md", "teacher/solutions/kl.py",
                     "workspace/kl.py"):
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / relative, repo / relative)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "copy"], check=True)
    listing = subprocess.run([*git, "archive", "HEAD"], check=True, capture_output=True).stdout
    names = subprocess.run(["tar", "-t"], input=listing, check=True,
                           capture_output=True).stdout.decode().split()
    assert "workspace/kl.py" in names
    assert not [name for name in names if name.startswith("teacher")]
