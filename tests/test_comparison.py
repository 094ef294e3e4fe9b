"""`course compare --out`: a Locked Room comparison saved as a run folder, or refused with
nothing written; `course eval --scorer`; and the canonical runs 014 to 019 that use both."""

from __future__ import annotations

import json
import shutil

import pytest
from cli_run import run

from course import data, locked_room, runs
from course.jsonfiles import jsonl_bytes
from course.paths import RUNS_DIR, sha256_file
from course.reports import canonical, comparison
from course.scorer import SCORER_VERSION
from course.scorers import SCORERS

PROBLEMS = [{"id": f"p{i}", "prompt": f"Compute {i}+{i}.", "expected_answer": 2 * i}
            for i in range(10)]
SETTINGS = {"temperature": 0.8, "top_p": 1.0, "n": 1, "seed": 7}


def completions(wrong: set[int]) -> list[dict]:
    return [{"id": f"p{i}", "completion": f"Final: {2 * i + (1 if i in wrong else 0)}"}
            for i in range(10)]


@pytest.fixture
def room(tmp_path, monkeypatch):
    """Problems and three rollout files: the baseline policy, a better one (two fixes, one
    regression), and the better one sampled at another temperature."""
    origins = {
        "base.jsonl": {"policy": "policy-a", **SETTINGS},
        "better.jsonl": {"policy": "policy-b", **SETTINGS},
        "hotter.jsonl": {"policy": "policy-b", **SETTINGS, "temperature": 1.2},
    }
    monkeypatch.setattr(data, "provenance", lambda path: {
        "prompt_version": "final-int-v1", "sampling": origins[path.name]})
    (tmp_path / "problems.jsonl").write_bytes(jsonl_bytes(PROBLEMS))
    for name, wrong in (("base", {0, 1, 2}), ("better", {0, 9}), ("hotter", {0, 9})):
        (tmp_path / f"{name}.jsonl").write_bytes(jsonl_bytes(completions(wrong)))
    return tmp_path


def evaluate(capsys, folder, rollouts, *extra):
    code, _, err = run(capsys, "eval", "--problems", folder / "problems.jsonl", "--rollouts",
                       folder / f"{rollouts}.jsonl", "--note", rollouts, "--out",
                       folder / rollouts, *extra)
    assert code == 0, err
    return folder / rollouts


# -- the sampling wall: every setting but the policy ------------------------------------------

def test_the_policy_may_differ_but_no_other_sampling_setting(room, capsys):
    base, better, hotter = (evaluate(capsys, room, name) for name in ("base", "better", "hotter"))
    report = locked_room.compare_runs(base, better)
    assert (report["policy_a"], report["policy_b"]) == ("policy-a", "policy-b")
    assert report["locked_room"]["sampling"] == SETTINGS
    assert report["flipped_ids"] == {"pass_to_fail": ["p9"], "fail_to_pass": ["p1", "p2"]}
    with pytest.raises(runs.RunError, match=r"sampling differs \(A: \{.*\"temperature\": 0.8"):
        locked_room.compare_runs(base, hotter)


# -- compare --out ----------------------------------------------------------------------------

def test_compare_out_saves_what_it_prints_and_pins_both_runs(room, capsys):
    base, better = evaluate(capsys, room, "base"), evaluate(capsys, room, "better")
    code, printed, _ = run(capsys, "compare", base, better)
    assert code == 0
    out = room / "cmp"
    code, out_printed, err = run(capsys, "compare", base, better, "--note", "b versus a",
                                 "--out", out)
    assert code == 0 and out_printed == printed and "saved the comparison in" in err
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md", "comparison.json", "comparison.txt", "manifest.json"]
    assert (out / "comparison.txt").read_text(encoding="utf-8") == printed
    assert printed.splitlines()[2].startswith("change B - A: +10.0 points")

    saved = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    report = locked_room.compare_runs(base, better)
    assert saved["flips"] == report["flips"] == {"pass_to_fail": 1, "fail_to_pass": 2}
    assert saved["difference_ci95"] == [round(x, 4) for x in report["difference_ci95"]]
    assert saved["verdict"] == report["verdict"]

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["kind"] == "comparison" and manifest["note"] == "b versus a"
    assert manifest["inputs"]["run_b/results.jsonl"]["sha256"] == sha256_file(
        better / "results.jsonl")
    assert set(manifest["inputs"]) == {f"run_{s}/{f}" for s in "ab"
                                       for f in ("manifest.json", "results.jsonl")}
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert f"| scorer_version | `{SCORER_VERSION}` |" in readme
    assert "- fail -> pass: `p1`, `p2`" in readme and "- pass -> fail: `p9`" in readme
    assert "course compare " in readme and "--note 'b versus a'" in readme

    code, _, err = run(capsys, "compare", base, better, "--note", "again", "--out", out)
    assert code == 2 and "already exists" in err  # never overwritten


def test_a_refused_comparison_exits_2_on_one_line_and_writes_nothing(room, capsys):
    base = evaluate(capsys, room, "base")
    old = evaluate(capsys, room, "better", "--scorer", "strict-v0")
    code, out, err = run(capsys, "compare", base, old, "--note", "n", "--out", room / "cmp")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert f'scorer_version differs (A: "{SCORER_VERSION}", B: "strict-v0")' in err
    assert not (room / "cmp").exists()
    assert runs.leftover_partials(room) == []


def test_compare_out_needs_a_note(room, capsys):
    base = evaluate(capsys, room, "base")
    code, _, err = run(capsys, "compare", base, base, "--out", room / "cmp")
    assert code == 2 and "--out needs --note" in err and not (room / "cmp").exists()


# -- course eval --scorer ---------------------------------------------------------------------

def test_eval_scorer_is_recorded_and_an_unknown_one_is_refused(room, capsys):
    folder = evaluate(capsys, room, "base", "--scorer", "strict-v0")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["scorer_version"] == "strict-v0"
    assert "--scorer strict-v0" in (folder / "README.md").read_text(encoding="utf-8")
    code, out, err = run(capsys, "eval", "--problems", room / "problems.jsonl", "--rollouts",
                         room / "base.jsonl", "--scorer", "strict-v9", "--note", "n",
                         "--out", room / "v9")
    assert code == 2 and out == ""
    assert err == ("course eval: error: --scorer: unknown scorer version 'strict-v9'; "
                   f"known: {', '.join(SCORERS)}\n")
    assert not (room / "v9").exists()


# -- the canonical runs 014 to 019 -------------------------------------------------------------

def summary(name: str) -> dict:
    return runs.read_json(RUNS_DIR / name, "summary.json")


def quoted(name: str, file: str) -> str:
    """What to do when a committed run no longer has the numbers a table below quotes."""
    return (f"runs/{name}/{file} no longer holds the numbers this test quotes: after a "
            "deliberate change (of the scorer, say: docs/teacher/change-the-scorer.md), copy "
            "the new ones from the regenerated file into this table")


@pytest.mark.parametrize(("name", "scorer", "passes", "n", "ci"), [
    ("run_014", "strict-v1", 14, 25, [0.3707, 0.7333]),
    ("run_015", "strict-v1", 15, 25, [0.4074, 0.766]),
    ("run_017", "strict-v1", 48, 60, [0.6822, 0.8817]),
    ("run_019", "strict-v0", 42, 60, [0.5749, 0.801]),
])
def test_the_new_eval_runs_key_numbers(name, scorer, passes, n, ci):
    numbers = summary(name)
    assert (numbers["scorer_version"], numbers["passes"], numbers["n"], numbers[
        "pass_rate_ci95"]) == (scorer, passes, n, ci), quoted(name, "summary.json")
    assert runs.read_json(RUNS_DIR / name, "manifest.json")["scorer_version"] == scorer


@pytest.mark.parametrize(("name", "passes", "interval", "flips", "verdict"), [
    ("run_016", (14, 15), [-0.0655, 0.1433], {"pass_to_fail": 0, "fail_to_pass": 1},
     "not distinguishable from noise"),
    ("run_018", (34, 48), [0.1192, 0.341], {"pass_to_fail": 0, "fail_to_pass": 14},
     "large enough to investigate"),
])
def test_the_saved_comparisons_key_numbers(name, passes, interval, flips, verdict):
    report = runs.read_json(RUNS_DIR / name, "comparison.json")
    assert ((report["passes_a"], report["passes_b"]), report["difference_ci95"],
            report["flips"], report["verdict"]) == (passes, interval, flips, verdict), quoted(
        name, "comparison.json")
    assert (report["policy_a"], report["policy_b"]) == ("scripted-stand-in-v1",
                                                        "scripted-stand-in-v2")
    text = (RUNS_DIR / name / "comparison.txt").read_text(encoding="utf-8")
    assert text.splitlines() == comparison.report_lines(
        locked_room.compare_runs(RUNS_DIR / report["run_a"].removeprefix("runs/"),
                                RUNS_DIR / report["run_b"].removeprefix("runs/")))
    # the rules page shows comparison.txt whole: no line wider than a code block's 79 columns
    assert max(map(len, text.splitlines())) <= 79, quoted(name, "comparison.txt")


def test_holdout_interval_contains_zero_and_excludes_the_dev_gain():
    holdout = runs.read_json(RUNS_DIR / "run_016", "comparison.json")
    dev = runs.read_json(RUNS_DIR / "run_018", "comparison.json")
    low, high = holdout["difference_ci95"]
    assert low < 0 < high  # N=25 cannot tell v2 from v1 ...
    assert high < dev["difference"]  # ... and cannot hold the whole dev gain either
    assert dev["difference_ci95"][0] > 0


@pytest.mark.parametrize(("a", "b", "says"), [
    ("run_019", "run_001", f'scorer_version differs (A: "strict-v0", B: "{SCORER_VERSION}")'),
    ("run_014", "run_001", "dataset (problems sha256) differs"),
    ("run_016", "run_015", "is a 'comparison' run: only Loop A evaluation runs"),
])
def test_compare_refuses_the_pairs_that_are_not_in_one_room(a, b, says):
    with pytest.raises(runs.RunError) as caught:
        locked_room.compare_runs(RUNS_DIR / a, RUNS_DIR / b)
    assert says in str(caught.value)


def test_a_comparison_run_pins_the_runs_it_read():
    manifest = runs.read_json(RUNS_DIR / "run_018", "manifest.json")
    for side, name in (("a", "run_001"), ("b", "run_017")):
        entry = manifest["inputs"][f"run_{side}/results.jsonl"]
        assert entry == {"path": f"runs/{name}/results.jsonl",
                         "sha256": sha256_file(RUNS_DIR / name / "results.jsonl")}


def test_the_new_canonical_runs_are_byte_identical():
    names = [f"run_0{n}" for n in range(14, 20)]
    assert canonical.verify(names) == {name: [] for name in names}


@pytest.mark.parametrize(("moved", "n", "verdict"), [
    (3, 60, "not distinguishable from noise"),   # exactly 5 points: noise, as the design says
    (4, 60, "large enough to investigate"),      # 6.7 points: more than 5
])
def test_the_readme_states_the_noise_rule_boundary_the_verdict_uses(moved, n, verdict):
    report = {"n": n, "passes_a": 30, "passes_b": 30 + moved}
    assert locked_room.noise_verdict(30, 30 + moved, n, (-0.1, 0.1)) == verdict
    assert "a change of at most 5 points is treated as noise" in comparison._noise_rule(report)


# -- a forged run: hashes recomputed, rewards rewritten (issue 29) -------------------------------

def forge(run, edit):
    """Rewrite a run's files with `edit` and recompute every hash of its seal, as anyone can:
    the seal is an unkeyed hash inside the folder it seals."""
    files = runs.read_files(run)
    record = json.loads(files.pop("manifest.json"))
    del record[runs.SEAL], record[runs.FIELDS_SEAL]
    for name, content in runs.sealed(record, edit(files)).items():
        (run / name).write_bytes(content)


def all_pass(files):
    lines = [json.loads(line) for line in files["results.jsonl"].splitlines()]
    forged = [{**line, "reward": 1.0, "details": {**line["details"], "code": "correct"}}
              for line in lines]
    return {**files, "results.jsonl": jsonl_bytes(forged)}


def test_runs_check_passes_a_run_and_refuses_a_forged_one_on_one_line(room, capsys):
    base = evaluate(capsys, room, "base")
    assert run(capsys, "runs", "check", base) == (
        0, f"{base}: ok: seal and manifest intact, 10 result lines scored again by "
           f"{SCORER_VERSION} "
           "agree (7/10 pass)\n", "")
    forged = evaluate(capsys, room, "better")
    forge(forged, all_pass)
    assert runs.unsealed(forged) == []                       # the seal cannot tell
    says = (f"{forged / 'results.jsonl'}:1: field 'reward': records 1.0 but {SCORER_VERSION} "
            "scores this line's completion 0.0 (wrong_answer): the results were changed after they "
            "were scored")
    assert run(capsys, "runs", "check", forged) == (1, f"{forged}: not ok: {says}\n", "")
    assert run(capsys, "compare", base, forged) == (2, "", f"course compare: error: {says}\n")


def test_runs_check_refuses_a_summary_that_the_results_do_not_give(room, capsys):
    base = evaluate(capsys, room, "base")
    forge(base, lambda files: {**files, "summary.json": files["summary.json"].replace(
        b'"passes": 7', b'"passes": 10')})
    code, out, _ = run(capsys, "runs", "check", base)
    assert code == 1 and out == (f"{base}: not ok: {base / 'summary.json'}: field 'passes': "
                                 "records 10 but the results, scored again, give 7\n")


def test_runs_check_refuses_expected_answers_that_are_not_the_problems(room, capsys):
    """A forger who also rewrites a line's expected answer to fit its completion passes the
    scorer; the problems file the manifest names (here, with its sha256) does not agree."""
    base = evaluate(capsys, room, "base")

    def fitted(files):
        first, *rest = files["results.jsonl"].splitlines(keepends=True)
        line = {**json.loads(first), "expected_answer": 1, "reward": 1.0}
        line["details"] = {**line["details"], "code": "correct"}
        return {**files, "results.jsonl": jsonl_bytes([line]) + b"".join(rest)}

    forge(base, fitted)
    code, out, _ = run(capsys, "runs", "check", base)
    assert code == 1 and out == (
        f"{base}: not ok: {base / 'results.jsonl'}:1: field 'expected_answer': 'p0' expects 1, "
        f"but line 1 of {room / 'problems.jsonl'} is 'p0' expecting 0: the results were not "
        "scored against the problems the run names\n")
    (room / "problems.jsonl").write_bytes(b"")
    code, out, _ = run(capsys, "runs", "check", base)
    assert code == 1 and out == (
        f"{base}: not ok: {base / 'manifest.json'}: field 'inputs.problems': "
        f"{room / 'problems.jsonl'} is not here with the sha256 the run records, so the "
        "expected answers of its results cannot be checked; check the run where its problems "
        "file is\n")


def test_a_run_resealed_as_another_scorers_is_refused_unless_that_scorer_is_named(
        tmp_path, capsys):
    resealed = tmp_path / "resealed"
    shutil.copytree(RUNS_DIR / "run_001", resealed)
    files = runs.read_files(resealed)
    record = json.loads(files.pop("manifest.json"))
    del record[runs.SEAL], record[runs.FIELDS_SEAL]
    record["scorer_version"] = "strict-v0"
    for name, content in runs.sealed(record, files).items():
        (resealed / name).write_bytes(content)
    code, out, _ = run(capsys, "runs", "check", resealed)
    assert code == 1 and out == (
        f"{resealed}: not ok: {resealed / 'manifest.json'}: field 'scorer_version': measured "
        f"by strict-v0, not by {SCORER_VERSION}, the version it is checked against (name "
        "strict-v0 to check the run as it was measured)\n")
    _, out, _ = run(capsys, "runs", "check", resealed, "--scorer", "strict-v0")
    assert "field 'scorer_version'" not in out and "strict-v0" in out
