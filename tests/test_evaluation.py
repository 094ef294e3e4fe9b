"""Loop A: evaluate, summarise, the Wilson interval, and the run folder (comparisons of two
runs: tests/test_locked_room.py)."""

import io
import json

import numpy as np
import pytest

from course import data, evaluation, progress
from course.data import DataError
from course.jsonfiles import json_bytes, jsonl_bytes
from course.paths import RUNS_DIR, sha256_bytes, sha256_file
from course.reports import evaluation as eval_report

Z = 1.96

# A hand-made table: each row is (id, expected_answer, completion, the code we expect).
TABLE = [
    ("p1", 323, "Final: 323", "correct"),
    ("p2", 42, "Final: 42", "correct"),
    ("p3", 7, "Final: 7\n", "correct"),
    ("p4", 323, "17*19 = 323\nFinal: 323", "multiple_lines"),
    ("p5", 323, "Final: 324", "wrong_answer"),
    ("p6", 5, "Final: 5\nFinal: 6", "multiple_lines"),
    ("p7", 9, "The answer is 9.", "no_final_prefix"),
    ("p8", 9, "Final:\u00a09", "non_ascii_character"),
    ("p9", 11, "Final: 10", "wrong_answer"),
]
PROBLEMS = [{"id": i, "prompt": f"Problem {i}. Output exactly one line: Final: <int>",
             "expected_answer": answer} for i, answer, _, _ in TABLE]
ROLLOUTS = [{"id": i, "completion": completion, "policy_mode": "scripted"}
            for i, _, completion, _ in reversed(TABLE)]  # another order: the join must fix it
PROVENANCE = {"prompt_version": "final-line-v1", "sampling": {"temperature": 0.8, "n": 1}}


def write_jsonl(path, records):
    path.write_bytes(jsonl_bytes(records))
    return path


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    """The table as data files, with a fixed provenance for its rollouts."""
    monkeypatch.setattr(data, "provenance", lambda path: PROVENANCE)
    return (write_jsonl(tmp_path / "problems.jsonl", PROBLEMS),
            write_jsonl(tmp_path / "rollouts.jsonl", ROLLOUTS))


# -- evaluate and summarise -------------------------------------------------------------------

def test_evaluate_scores_every_example_in_problem_order_with_raw_completion():
    results = evaluation.evaluate(PROBLEMS, ROLLOUTS)
    assert [r["id"] for r in results] == [row[0] for row in TABLE]
    assert [r["details"]["code"] for r in results] == [row[3] for row in TABLE]
    assert [r["reward"] for r in results] == [1.0 if row[3] == "correct" else 0.0 for row in TABLE]
    assert results[2]["completion"] == "Final: 7\n"  # raw, not trimmed
    assert results[7]["details"]["message"].startswith("non-ASCII character U+00A0")
    assert set(results[0]) == {"id", "prompt", "expected_answer", "completion", "policy_mode",
                               "reward", "details"}


def test_evaluate_refuses_rollouts_that_do_not_match_the_problems():
    with pytest.raises(DataError, match=r"rollouts.jsonl: field 'id': no row for problem 'p9'"):
        evaluation.evaluate(PROBLEMS, ROLLOUTS[1:], "rollouts.jsonl")


def test_summarise_counts_codes_and_orders_ties_by_the_scorer_code_order():
    summary = evaluation.summarise(evaluation.evaluate(PROBLEMS, ROLLOUTS))
    assert (summary["n"], summary["passes"]) == (9, 3)
    assert summary["pass_rate"] == summary["mean_reward"] == round(3 / 9, 4)
    assert summary["pass_rate_ci95"] == [round(x, 4) for x in evaluation.wilson_interval(3, 9)]
    assert summary["failure_modes"] == [
        {"code": "wrong_answer", "count": 2, "share": round(2 / 9, 4)},
        {"code": "multiple_lines", "count": 2, "share": round(2 / 9, 4)},
        {"code": "non_ascii_character", "count": 1, "share": round(1 / 9, 4)},
        {"code": "no_final_prefix", "count": 1, "share": round(1 / 9, 4)},
    ]
    assert summary["pass_rate"] + sum(row["share"] for row in summary["failure_modes"]) == \
        pytest.approx(1, abs=1e-3)


def test_inspection_sample_covers_every_failure_cause_before_repeating_one():
    inspection = evaluation.summarise(evaluation.evaluate(PROBLEMS, ROLLOUTS))["inspection"]
    assert [row["id"] for row in inspection["passing"]] == ["p1", "p2", "p3"]
    # round robin over the codes (wrong, lines, non-ASCII, prefix), then wrong_answer again
    assert [row["id"] for row in inspection["failing"]] == ["p5", "p4", "p8", "p7", "p9"]
    assert inspection["failing"][0] == {
        "id": "p5", "code": "wrong_answer", "expected_answer": 323, "completion": "Final: 324",
        "message": "Well-formed answer, but the integer differs from expected_answer."}


def test_inspection_sample_stops_at_five_per_side():
    many = [{"id": f"q{i}", "prompt": "p", "expected_answer": i} for i in range(12)]
    outs = [{"id": f"q{i}", "completion": f"Final: {i if i % 2 else i + 1}", "policy_mode": "m"}
            for i in range(12)]
    inspection = evaluation.summarise(evaluation.evaluate(many, outs))["inspection"]
    assert [row["id"] for row in inspection["passing"]] == ["q1", "q3", "q5", "q7", "q9"]
    assert [row["id"] for row in inspection["failing"]] == ["q0", "q2", "q4", "q6", "q8"]


# -- the Wilson interval ----------------------------------------------------------------------

def wilson_by_quadratic(k, n, z=Z):
    """Independent reference: the bounds are the roots p of (k/n - p)^2 = z^2 p (1 - p) / n,
    i.e. (1 + z^2/n) p^2 - (2k/n + z^2/n) p + (k/n)^2 = 0."""
    roots = np.roots([1 + z * z / n, -(2 * k / n + z * z / n), (k / n) ** 2])
    return tuple(sorted(float(np.real(r)) for r in roots))


@pytest.mark.parametrize(("k", "n"), [(1, 2), (3, 9), (31, 60), (50, 100), (81, 263),
                                      (999, 1000), (1, 1000)])
def test_wilson_matches_the_roots_of_its_defining_quadratic(k, n):
    assert evaluation.wilson_interval(k, n) == pytest.approx(wilson_by_quadratic(k, n), abs=1e-9)


def test_wilson_edge_cases_zero_and_all_successes():
    # k = 0: lower bound 0, upper bound z^2 / (n + z^2); k = n mirrors it.
    assert evaluation.wilson_interval(0, 10) == pytest.approx((0.0, Z * Z / (10 + Z * Z)))
    assert evaluation.wilson_interval(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)  # textbook value
    assert evaluation.wilson_interval(10, 10) == pytest.approx((10 / (10 + Z * Z), 1.0))
    assert evaluation.wilson_interval(1, 1) == pytest.approx((1 / (1 + Z * Z), 1.0))


def test_wilson_is_narrower_with_more_data_and_contains_the_estimate():
    small, large = evaluation.wilson_interval(5, 10), evaluation.wilson_interval(500, 1000)
    assert small[0] < large[0] <= 0.5 <= large[1] < small[1]


@pytest.mark.parametrize(("k", "n", "match"), [(0, 0, "at least one example"),
                                               (3, -1, "at least one example"),
                                               (4, 3, "between 0 and n=3"),
                                               (-1, 3, "between 0 and n=3")])
def test_wilson_rejects_impossible_counts(k, n, match):
    with pytest.raises(ValueError, match=match):
        evaluation.wilson_interval(k, n)


# -- the run folder -----------------------------------------------------------------------------

def test_build_run_writes_results_summary_manifest_and_readme(inputs, tmp_path):
    problems, rollouts = inputs
    config = evaluation.EvalConfig(problems=problems, rollouts=rollouts, out=tmp_path / "run_x")
    files = eval_report.build_run(config, "Hand-made table.", record_git=False)
    assert sorted(files) == ["README.md", "manifest.json", "results.jsonl", "summary.json"]
    results = [json.loads(line) for line in files["results.jsonl"].decode().splitlines()]
    assert results[7]["completion"] == "Final:\u00a09"  # raw, in the file too
    assert results[7]["details"]["checks"][-1] == ["ascii_only", False]
    assert json.loads(files["summary.json"]) == evaluation.summarise(results)
    manifest = json.loads(files["manifest.json"])
    assert manifest["kind"] == "eval" and manifest["seed"] is None
    assert manifest["prompt_version"] == "final-line-v1"
    assert manifest["sampling"] == {"temperature": 0.8, "n": 1}
    assert manifest["inputs"]["problems"]["sha256"] == sha256_file(problems)
    assert manifest["inputs"]["rollouts"]["sha256"] == sha256_file(rollouts)
    assert manifest["git_commit"] is None
    again = eval_report.build_run(config, "Hand-made table.", record_git=False)
    assert again == files  # deterministic, byte for byte


def test_readme_shows_numbers_failure_table_escaped_examples_and_the_command(inputs, tmp_path):
    problems, rollouts = inputs
    config = evaluation.EvalConfig(problems=problems, rollouts=rollouts, out=tmp_path / "run_x")
    files = eval_report.build_run(config, "Hand-made table.", record_git=False)
    readme = files["README.md"].decode()
    assert "Pass rate 33.3% (95% Wilson interval" in readme
    assert "| `wrong_answer` | 2 | 22.2% |" in readme
    assert r'"Final:\u00a09"' in readme and r'"17*19 = 323\nFinal: 323"' in readme
    assert f"--note 'Hand-made table.' --out {tmp_path / 'run_x'}" in readme


def failing_lines(readme):
    """The lines of the README's block of failing examples."""
    block = readme.split("## Failing examples (one per cause first)\n\n```text\n")[1]
    return block.split("```")[0].splitlines()


def test_the_readme_shows_one_failing_example_of_every_cause(inputs, tmp_path, monkeypatch):
    """With more causes than the summary's sample has rows (run_001: 7 causes, 5 rows), the
    README goes on after the sample, the first example of each cause left out, most frequent
    first; summary.json keeps its sample as it is."""
    monkeypatch.setattr(eval_report, "Tally", lambda: evaluation.Tally(per_side=2))
    problems, rollouts = inputs
    config = evaluation.EvalConfig(problems=problems, rollouts=rollouts, out=tmp_path / "run_x")
    files = eval_report.build_run(config, "Hand-made table.", record_git=False)
    summary = json.loads(files["summary.json"])
    assert [row["id"] for row in summary["inspection"]["failing"]] == ["p5", "p4"]
    lines = failing_lines(files["README.md"].decode())
    assert [line.split()[:2] for line in lines] == [
        ["p5", "wrong_answer"], ["p4", "multiple_lines"], ["p8", "non_ascii_character"],
        ["p7", "no_final_prefix"]]
    assert "No example shown" not in files["README.md"].decode()


def test_the_readme_names_the_causes_it_has_no_example_of(inputs, tmp_path):
    """A README made from a summary alone (no `more`) says plainly which causes it leaves out."""
    problems, rollouts = inputs
    config = evaluation.EvalConfig(problems=problems, rollouts=rollouts, out=tmp_path / "run_x")
    summary = evaluation.summarise(evaluation.evaluate(PROBLEMS, ROLLOUTS))
    summary["inspection"]["failing"] = summary["inspection"]["failing"][:2]
    readme = eval_report.render_readme(config, "Hand-made table.", summary)
    assert ("No example shown of 2 of the 4 causes: `non_ascii_character`, `no_final_prefix`; "
            "`results.jsonl` has every example, with its code.") in readme


def test_run_001s_readme_shows_an_example_of_each_of_its_causes():
    readme = (RUNS_DIR / "run_001" / "README.md").read_text(encoding="utf-8")
    summary = json.loads((RUNS_DIR / "run_001" / "summary.json").read_text(encoding="utf-8"))
    codes = [line.split()[1] for line in failing_lines(readme)]
    assert codes == [row["code"] for row in summary["failure_modes"]]


def test_the_manifest_seals_the_other_files_of_the_run(inputs, tmp_path):
    problems, rollouts = inputs
    config = evaluation.EvalConfig(problems=problems, rollouts=rollouts, out=tmp_path / "run_x")
    files = eval_report.build_run(config, "Hand-made table.", record_git=False)
    seal = json.loads(files["manifest.json"])["files"]
    assert seal == {name: sha256_bytes(files[name])
                    for name in ("README.md", "results.jsonl", "summary.json")}


def test_the_reproduce_command_keeps_the_provenance_file(inputs, tmp_path):
    """Without `--provenance`, the command in the README measures a run that `course compare`
    refuses against this one (its prompt version and sampling would be unknown)."""
    problems, rollouts = inputs
    described = tmp_path / "my model.json"
    described.write_bytes(json_bytes({"made_by": "me", "prompt_version": "p1",
                                      "sampling": {"temperature": 0.7}}))
    config = evaluation.EvalConfig(problems=problems, rollouts=rollouts, out=tmp_path / "r",
                                   provenance=described)
    command = eval_report.reproduce_command(config, "mine")
    assert f"--provenance '{described}' " in command
    assert command in eval_report.build_run(config, "mine")["README.md"].decode()
    plain = eval_report.reproduce_command(evaluation.EvalConfig(problems=problems,
                                                                rollouts=rollouts), "mine")
    assert "--provenance" not in plain


def test_long_completions_are_truncated_in_the_readme_only():
    assert eval_report._escaped("Final: " + "9" * 1000).endswith("... (1007 characters)")
    assert eval_report._escaped("Final: 3") == '"Final: 3"'


# -- the progress bar ---------------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_draws_on_a_terminal_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    stream = Terminal()
    assert list(progress.bar(range(250), 250, "scoring", stream)) == list(range(250))
    drawn = stream.getvalue()
    assert drawn.count("\r") == 101 and drawn.endswith("100% (250/250)\n")
    assert "[" + "#" * progress.WIDTH + "]" in drawn


def test_progress_bar_is_silent_in_ci_and_in_pipes(monkeypatch):
    items = [1, 2, 3]
    monkeypatch.setenv("CI", "1")
    assert progress.bar(items, 3, "x", Terminal()) is items
    monkeypatch.delenv("CI")
    assert progress.bar(items, 3, "x", io.StringIO()) is items


def test_a_claim_over_seeds_is_a_count_with_its_wilson_interval():
    from course.evaluation import in_how_many_seeds, wilson_interval
    assert in_how_many_seeds([True] * 9 + [False]) == "9 of 10 seeds (95% interval 0.60 to 0.98)"
    lo, _ = wilson_interval(5, 5)
    assert in_how_many_seeds([1, 1, 1, 1, 1]) == f"5 of 5 seeds (95% interval {lo:.2f} to 1.00)"
    assert lo < 0.6                       # five of five is far from "always"
    assert in_how_many_seeds([0, 0]).startswith("0 of 2 seeds (95% interval 0.00 to ")
