"""The Locked Room (`course.locked_room`): two saved runs read back totally, checked for
tampering, compared only inside the room; and the run readers of `course.runs` under hostile
folders (`[]` manifests, bad result lines, links, FIFOs, stray folders, random bytes)."""

from __future__ import annotations

import inspect
import json
import math
import os
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import evaluation, locked_room, runs
from course.cli import main
from course.commands import runs as runs_command
from course.jsonfiles import json_bytes, jsonl_bytes
from course.reports import canonical
from course.scorers import SCORERS


def run_cli(capsys, *argv):
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the paired interval and the noise rule ---------------------------------------------------

def test_paired_interval_covers_the_true_difference_about_95_percent_of_the_time():
    """Simulation as the independent reference: two correlated runs on the same 60 examples."""
    rng = np.random.default_rng(0)
    n, trials, hits = 60, 2000, 0
    # joint outcome probabilities for (A pass, B pass): both, only A, only B, neither
    probs = np.array([0.45, 0.05, 0.15, 0.35])
    true_difference = probs[2] - probs[1]
    for counts in rng.multinomial(n, probs, size=trials):
        lo, hi = locked_room.paired_difference_interval(*map(int, counts))
        hits += lo <= true_difference <= hi
    assert 0.93 <= hits / trials <= 0.975


@pytest.mark.parametrize("table", [(30, 2, 8, 20), (0, 0, 5, 5), (10, 0, 0, 0), (3, 7, 1, 9)])
def test_paired_interval_contains_the_estimate_and_swapping_runs_mirrors_it(table):
    both, only_a, only_b, neither = table
    n = sum(table)
    lo, hi = locked_room.paired_difference_interval(both, only_a, only_b, neither)
    assert -1 <= lo <= (only_b - only_a) / n <= hi <= 1
    mirrored = locked_room.paired_difference_interval(both, only_b, only_a, neither)
    assert mirrored == pytest.approx((-hi, -lo))


def test_paired_interval_is_narrower_than_ignoring_the_pairing():
    """With strongly correlated runs, the paired interval beats Newcombe's unpaired one."""
    both, only_a, only_b, neither = 40, 1, 8, 51
    n = 100
    l_a, u_a = evaluation.wilson_interval(both + only_a, n)
    l_b, u_b = evaluation.wilson_interval(both + only_b, n)
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    unpaired = (p_b - p_a - math.hypot(p_b - l_b, u_a - p_a),
                p_b - p_a + math.hypot(u_b - p_b, p_a - l_a))
    lo, hi = locked_room.paired_difference_interval(both, only_a, only_b, neither)
    assert hi - lo < unpaired[1] - unpaired[0]
    assert lo > 0 > unpaired[0]  # pairing is what makes this change detectable


@pytest.mark.parametrize(("passes_a", "passes_b", "n", "interval", "verdict"), [
    (30, 32, 50, (-0.02, 0.1), "not distinguishable from noise"),  # 4 points on 50
    (30, 33, 50, (-0.02, 0.14), "large enough to investigate"),     # 6 points on 50
    (30, 28, 50, (-0.1, 0.02), "not distinguishable from noise"),  # -4 points
    (30, 27, 50, (-0.14, 0.02), "large enough to investigate"),    # -6 points
    (20, 22, 40, (-0.02, 0.12), "not distinguishable from noise"),  # exactly 5 points
    (20, 18, 40, (-0.12, 0.02), "not distinguishable from noise"),  # exactly -5 points
    (30, 33, 60, (-0.02, 0.12), "not distinguishable from noise"),  # 3 of 60: exactly 5 points
    (30, 34, 60, (-0.01, 0.14), "large enough to investigate"),     # 4 of 60: 6.7 points
    (30, 33, 59, (-0.02, 0.12), "large enough to investigate"),     # 3 of 59: 5.08 points
    (20, 23, 40, (-0.01, 0.16), "large enough to investigate"),     # 7.5 points
    (20, 21, 99, (-0.02, 0.04), "not distinguishable from noise"),
    (50, 53, 100, (-0.01, 0.07), "not distinguishable from noise"),  # N >= 100: interval
    (50, 53, 100, (0.01, 0.05), "large enough to investigate"),
])
def test_noise_verdict_on_both_sides_of_the_threshold(passes_a, passes_b, n, interval, verdict):
    assert locked_room.noise_verdict(passes_a, passes_b, n, interval) == verdict


# -- comparing runs in the locked room ----------------------------------------------------------

ROOM = {"kind": "eval", "scorer_version": "strict-v1", "prompt_version": "final-line-v1",
        "sampling": {"temperature": 0.8, "n": 1},
        "inputs": {"problems": {"path": "data/problems/dev.jsonl", "sha256": "aa" * 32}}}


def result(i, ok=True, **changes):
    """The result line of example p<i> (expected answer i), as `course eval` writes it: a
    completion that passes or fails, with the reward and code strict-v1 gives it."""
    return {"id": f"p{i}", "expected_answer": i, "completion": f"Final: {i if ok else i + 1}",
            "reward": 1.0 if ok else 0.0, "details": {"code": "correct" if ok else "wrong_answer"},
            **changes}


def lines(*records):
    return jsonl_bytes(list(records))


def make_run(folder, passed=(), *, results=None, **changes):
    """A minimal sealed eval run folder: a manifest and one result per example (p0, p1, ...),
    or the raw bytes `results` as its results.jsonl."""
    folder.mkdir()
    if results is None:
        results = lines(*(result(i, ok) for i, ok in enumerate(passed)))
    for name, content in runs.sealed({**ROOM, **changes}, {"results.jsonl": results}).items():
        (folder / name).write_bytes(content)
    return folder


@pytest.mark.parametrize(("field", "change", "shown"), [
    ("dataset (problems sha256)",
     {"inputs": {"problems": {"path": "data/problems/dev.jsonl", "sha256": "bb" * 32}}},
     '"' + "bb" * 32 + '"'),
    ("scorer_version", {"scorer_version": "strict-v0"}, '"strict-v0"'),
    ("prompt_version", {"prompt_version": "final-line-v2"}, '"final-line-v2"'),
    ("sampling", {"sampling": {"temperature": 1.0, "n": 1}}, '{"n": 1, "temperature": 1.0}'),
])
def test_compare_refuses_each_locked_room_difference(tmp_path, field, change, shown):
    a = make_run(tmp_path / "a", [True, False])
    b = make_run(tmp_path / "b", [True, True], **change)
    with pytest.raises(runs.RunError) as caught:
        locked_room.compare_runs(a, b)
    message = str(caught.value)
    assert f"{field} differs" in message and shown in message
    assert message.count("differs") == 1  # only the field that changed is blamed


def test_compare_names_every_differing_field_with_both_values(tmp_path):
    a = make_run(tmp_path / "a", [True])
    b = make_run(tmp_path / "b", [True], scorer_version="strict-v0", sampling=None)
    with pytest.raises(runs.RunError) as caught:
        locked_room.compare_runs(a, b)
    message = str(caught.value)
    assert 'scorer_version differs (A: "strict-v1", B: "strict-v0")' in message
    assert 'sampling differs (A: {"n": 1, "temperature": 0.8}, B: null)' in message


def test_compare_refuses_runs_that_are_not_eval_runs(tmp_path):
    a = make_run(tmp_path / "a", [True])
    b = make_run(tmp_path / "b", [True], kind="bandit")
    with pytest.raises(runs.RunError, match="is a 'bandit' run: only Loop A evaluation runs"):
        locked_room.compare_runs(a, b)


def test_compare_in_the_same_room_counts_flips_and_gives_a_verdict(tmp_path):
    # 20 examples: 10 pass in both, 1 pass->fail, 3 fail->pass, 6 fail in both
    a_passed = [True] * 10 + [True] + [False] * 3 + [False] * 6
    b_passed = [True] * 10 + [False] + [True] * 3 + [False] * 6
    report = locked_room.compare_runs(make_run(tmp_path / "a", a_passed),
                                      make_run(tmp_path / "b", b_passed))
    assert (report["n"], report["passes_a"], report["passes_b"]) == (20, 11, 13)
    assert report["flips"] == {"pass_to_fail": 1, "fail_to_pass": 3}
    assert report["difference"] == pytest.approx(0.10)
    assert report["difference_ci95"] == pytest.approx(
        locked_room.paired_difference_interval(10, 1, 3, 6))
    assert report["pass_rate_b_ci95"] == pytest.approx(evaluation.wilson_interval(13, 20))
    assert report["verdict"] == "large enough to investigate"  # 10 points on 20 examples


def test_compare_identical_runs_is_noise(tmp_path):
    passed = [True, False] * 10
    report = locked_room.compare_runs(make_run(tmp_path / "a", passed),
                                      make_run(tmp_path / "b", passed))
    assert report["difference"] == 0 and report["flips"] == {"pass_to_fail": 0, "fail_to_pass": 0}
    assert report["verdict"] == "not distinguishable from noise"




# -- a manifest the room can read, or one line that says why not -------------------------------

def refusal(capsys, tmp_path, a, b=None):
    """`course compare A B`: exit status 2, nothing on stdout, one line on stderr (returned)."""
    code, out, err = run_cli(capsys, "compare", a, b or a)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith("course compare: error: ")
    with pytest.raises(runs.RunError):
        locked_room.compare_runs(a, b or a)
    return err


BAD_MANIFESTS = [
    (b"[]\n", "manifest.json: expected a JSON object, got list"),
    (b"\xff\xfe{}", "manifest.json:1: not valid UTF-8 (invalid start byte at byte 0)"),
    (b"\xef\xbb\xbf" + json_bytes(ROOM), "manifest.json:1: starts with a byte order mark"),
    (b"[" * 100_000 + b"]" * 100_000, "manifest.json: invalid JSON: nested too deeply"),
    (b'{"kind": ' + b"7" * 4301 + b"}", "manifest.json: invalid JSON: Exceeds the limit"),
    (b'{"kind": "eval", "kind": "eval"}', "manifest.json: field 'kind': given twice"),
    (b"", "manifest.json:1: invalid JSON: Expecting value"),
    (json_bytes({**ROOM, "kind": 1}), "field 'kind': must be a string, got int"),
    (json_bytes({"kind": "eval"}), "field 'inputs': missing (expected an object)"),
    (json_bytes({**ROOM, "inputs": []}), "field 'inputs': must be an object, got list"),
    (json_bytes({**ROOM, "inputs": {"problems": "x"}}), "field 'inputs.problems.sha256'"),
    (json_bytes({**ROOM, "scorer_version": None}), "field 'scorer_version': must be a string"),
    (json_bytes({**ROOM, "scorer_version": "strict-v9"}), "field 'scorer_version': unknown "
     f"scorer version 'strict-v9'; known: {', '.join(SCORERS)}, so its results cannot be "
     "scored again"),
    (json_bytes({**ROOM, "prompt_version": 2}), "field 'prompt_version': must be a string or"),
    (json_bytes({**ROOM, "sampling": [1]}), "field 'sampling': must be an object or null"),
    (json_bytes(ROOM), "field 'files': missing (expected an object {file name: sha256})"),
    (json_bytes({**ROOM, "files": {}}), "field 'files': does not seal results.jsonl"),
    (json_bytes({**ROOM, "files": {"results.jsonl": "00"}}), "field 'files.results.jsonl': "
     "must be a sha256"),
    (json_bytes({**ROOM, "files": {"results.jsonl": "0" * 64, "../x": "0" * 64}}),
     "field 'files.../x': not a file this run can seal"),
]


@pytest.mark.parametrize(("content", "says"), BAD_MANIFESTS)
def test_a_malformed_manifest_is_one_line_naming_the_file_and_field(tmp_path, capsys, content,
                                                                     says):
    run = make_run(tmp_path / "run", [True])
    (run / "manifest.json").write_bytes(content)
    err = refusal(capsys, tmp_path, run)
    assert f"{tmp_path / 'run'}/" in err and says in err


# -- each result line against its schema --------------------------------------------------------

GOOD = lines(result(0))
BAD_LINES = [
    (GOOD + b'{"reward":1}\n', 2, "field 'id': missing, empty or not a string"),
    (GOOD + b'{"id":"","reward":1}\n', 2, "field 'id': missing, empty or not a string"),
    (GOOD + b'{"id":7,"reward":1}\n', 2, "field 'id': missing, empty or not a string"),
    (GOOD + b'{"id":"p1"}\n', 2, "field 'reward': missing"),
    (GOOD + b'{"id":"p1","reward":"1.0"}\n', 2, "field 'reward': must be the number 0 or 1, "
     "got str '1.0'"),
    (GOOD + b'{"id":"p1","reward":true}\n', 2, "field 'reward': must be the number 0 or 1, "
     "got bool True"),
    (GOOD + b'{"id":"p1","reward":0.5}\n', 2, "got float 0.5"),
    (GOOD + b'{"id":"p1","reward":NaN}\n', 2, "NaN is not a number JSON allows"),
    (GOOD + b'{"id":"p1","reward":null}\n', 2, "got NoneType None"),
    (GOOD + b'{"id":"p1","reward":' + b"9" * 4300 + b"}\n", 2, "a number with 4300 digits"),
    (GOOD + GOOD, 2, "field 'id': duplicate id 'p0' (first on line 1)"),
    (GOOD + b'{"id":"p1","reward":\xff}\n', 2, "not valid UTF-8"),
    (b"\xef\xbb\xbf" + GOOD, 1, "starts with a byte order mark"),
    (GOOD + b"[" * 100_000 + b"\n", 2, "invalid JSON: nested too deeply"),
    (GOOD + b'{"id":"p1","reward":' + b"1" * 4301 + b"}\n", 2, "Exceeds the limit"),
    (GOOD + b"[]\n", 2, "expected a JSON object, got list"),
    (GOOD + b"1\n", 2, "expected a JSON object, got int"),
    (GOOD + b"\xc2\xa0\n", 2, "invalid JSON"),  # NBSP is not JSON whitespace: not skipped
    (GOOD + b'{"id":"p1","reward":1,"id":"p2"}\n', 2, "field 'id': given twice"),
    (GOOD + b'{"id":"p1","reward":1}\n', 2, "field 'completion': missing: a result line keeps "
     "what was scored"),
    (GOOD + lines({**result(1), "details": {}}), 2, "field 'details.code': missing"),
    (GOOD + lines(result(1, False, reward=1)), 2, "field 'reward': records 1 but strict-v1 "
     "scores this line's completion 0.0 (wrong_answer): the results were changed after"),
    (GOOD + lines(result(1, details={"code": "empty"})), 2, "field 'details.code': records "
     "'empty' but strict-v1 scores this line's completion 'correct' (correct)"),
]


@pytest.mark.parametrize(("results", "line", "says"), BAD_LINES)
def test_a_bad_result_line_is_one_line_naming_file_line_and_field(tmp_path, capsys, results,
                                                                   line, says):
    run = make_run(tmp_path / "run", results=results)  # sealed as it is: the schema refuses it
    err = refusal(capsys, tmp_path, run)
    assert f"{tmp_path / 'run' / 'results.jsonl'}:{line}: " in err and says in err


def test_results_with_no_line_are_refused_not_a_division_by_zero(tmp_path, capsys):
    run = make_run(tmp_path / "run", results=b"\n \n")
    assert "results.jsonl: no results" in refusal(capsys, tmp_path, run)


def test_results_are_read_one_line_at_a_time():
    """A generator: the first outcome arrives before the file is read to its end (so a later
    change can stream the comparison), and the refusal of a bad line comes when it is read."""
    assert inspect.isgeneratorfunction(locked_room.read_results)


def test_the_first_bad_line_is_refused_after_the_good_ones_are_yielded(tmp_path):
    run = make_run(tmp_path / "run", results=GOOD + b"[]\n")
    outcomes = locked_room.read_results(run, "strict-v1")
    assert next(outcomes) == (1, "p0", 0, True)
    with pytest.raises(runs.RunError, match=r"results.jsonl:2: expected a JSON object"):
        next(outcomes)


# -- tamper evidence: the seal, links, FIFOs ----------------------------------------------------

def test_compare_refuses_a_results_file_edited_after_the_run_was_written(tmp_path, capsys):
    a = make_run(tmp_path / "a", [True, False])
    b = make_run(tmp_path / "b", [True, False])
    (b / "results.jsonl").write_bytes(b'{"id":"p0","reward":1.0}\n{"id":"p1","reward":1.0}\n')
    err = refusal(capsys, tmp_path, a, b)
    assert f"{b / 'results.jsonl'}: sha256 " in err and "that manifest.json records" in err


def test_a_forged_run_whose_hashes_were_recomputed_is_refused_by_scoring_again(tmp_path,
                                                                               capsys):
    """Issue 29: every reward rewritten to 1 and every hash recomputed (a forger can: the seal
    is unkeyed). The seal holds; the scorer does not agree."""
    a = make_run(tmp_path / "a", [True, False, False])
    forged = lines(*(result(i, ok, reward=1.0, details={"code": "correct"})
                     for i, ok in enumerate([True, False, False])))
    b = make_run(tmp_path / "b", results=forged)
    assert runs.unsealed(b) == []
    err = refusal(capsys, tmp_path, a, b)
    assert err == (f"course compare: error: {b / 'results.jsonl'}:2: field 'reward': records "
                   "1.0 but strict-v1 scores this line's completion 0.0 (wrong_answer): the "
                   "results were changed after they were scored\n")


def test_a_manifest_field_edited_after_the_run_is_refused_by_its_seal(tmp_path, capsys):
    a = make_run(tmp_path / "a", [True, False])
    b = make_run(tmp_path / "b", [True, True])
    manifest = json.loads((b / "manifest.json").read_bytes())
    (b / "manifest.json").write_bytes(json_bytes({**manifest, "sampling": {"temperature": 0}}))
    err = refusal(capsys, tmp_path, a, b)
    assert f"{b / 'manifest.json'}: field 'seal': the manifest's fields hash to " in err
    assert "a field was edited after the run was written" in err


def test_compare_refuses_a_sealed_file_that_went_missing(tmp_path, capsys):
    run = make_run(tmp_path / "run", [True])
    (run / "results.jsonl").unlink()
    assert "results.jsonl is missing" in refusal(capsys, tmp_path, run)


@pytest.mark.parametrize("name", ["results.jsonl", "manifest.json"])
def test_a_file_swapped_for_a_link_to_identical_bytes_is_refused(tmp_path, capsys, name):
    run = make_run(tmp_path / "run", [True, False])
    shutil.copy(run / name, tmp_path / "elsewhere")
    (run / name).unlink()
    (run / name).symlink_to(tmp_path / "elsewhere")
    err = refusal(capsys, tmp_path, run)
    assert f"{run / name}: is a symbolic link" in err


@pytest.mark.parametrize("target", ["results.jsonl", "."])
def test_a_looping_link_is_named_as_itself_never_resolved(tmp_path, capsys, target):
    """A link to itself (or to its own folder) is refused by its own name: resolving it for
    the message would loop."""
    run = make_run(tmp_path / "run", [True])
    (run / "results.jsonl").unlink()
    (run / "results.jsonl").symlink_to(target)
    assert f"{run}/results.jsonl: is a symbolic link" in refusal(capsys, tmp_path, run)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    run = make_run(tmp_path / "run", [True])
    (run / "results.jsonl").unlink()
    os.mkfifo(run / "results.jsonl")
    assert f"{run / 'results.jsonl'}: is a FIFO, not a regular file" in refusal(
        capsys, tmp_path, run)


def test_a_sealed_run_records_the_sha256_of_every_other_file():
    files = runs.sealed({"kind": "eval"}, {"b.txt": b"b", "a/x.json": b"{}"})
    assert sorted(files) == ["a/x.json", "b.txt", "manifest.json"]
    seal = json.loads(files["manifest.json"])["files"]
    assert seal == {"a/x.json": runs.sha256_bytes(b"{}"), "b.txt": runs.sha256_bytes(b"b")}
    with pytest.raises(ValueError, match="must not hold the manifest"):
        runs.sealed({}, {"manifest.json": b""})


def test_unsealed_lists_every_mismatch_and_ignores_runs_without_a_seal(tmp_path):
    folder = runs.write_run(tmp_path / "r", runs.sealed({}, {"a": b"1", "b": b"2", "c": b"3"}))
    assert runs.unsealed(folder) == []
    (folder / "a").write_bytes(b"one")
    (folder / "c").unlink()
    problems = runs.unsealed(folder)
    assert len(problems) == 2 and "a: sha256" in problems[0] and "c is missing" in problems[1]
    plain = runs.write_run(tmp_path / "plain", {"manifest.json": b"{}\n"})
    assert runs.unsealed(plain) == []


# -- read_json and read_files: total ------------------------------------------------------------

@pytest.mark.parametrize(("content", "says"), [
    (b"[]", "expected a JSON object, got list"),
    (b"\x80", "not valid UTF-8"),
    (b"\xef\xbb\xbf{}", "byte order mark"),
    (b"[" * 50_000, "nested too deeply"),
    (b"[" + b"1" * 4301 + b"]", "Exceeds the limit"),
    (b"{} {}", "invalid JSON: Extra data"),
])
def test_read_json_refuses_what_is_not_one_json_object_with_a_run_error(tmp_path, content,
                                                                         says):
    (tmp_path / "summary.json").write_bytes(content)
    with pytest.raises(runs.RunError, match=says):
        runs.read_json(tmp_path, "summary.json")


def test_read_json_refuses_a_folder_a_link_and_a_fifo(tmp_path):
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    (tmp_path / "folder.json").mkdir()
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "sub").symlink_to(tmp_path)
    for name, says in (("link.json", "is a symbolic link"), ("folder.json", "is a folder"),
                       ("fifo.json", "is a FIFO"), ("sub/real.json", "lies under one"),
                       ("../real.json", "not a plain file name")):
        with pytest.raises(runs.RunError, match=says):
            runs.read_json(tmp_path, name)
    assert runs.read_json(tmp_path, "real.json") == {}


def hostile_folder(tmp_path):
    """A run folder with every entry a run writer never makes, beside two honest files."""
    run = runs.write_run(tmp_path / "run", {"README.md": b"# r\n", "a/b.txt": b"b"})
    shutil.copy(run / "README.md", tmp_path / "copy.md")
    (run / "README.md").unlink()
    (run / "README.md").symlink_to(tmp_path / "copy.md")  # identical bytes, through a link
    os.mkfifo(run / "fifo")
    (run / "empty").mkdir()
    (run / "loop").symlink_to(run)                          # a looping folder
    (run / "self").symlink_to(run / "self")                 # a link to itself
    return run


def test_read_files_reports_links_fifos_and_empty_folders_and_follows_none(tmp_path):
    run = hostile_folder(tmp_path)
    with pytest.raises(runs.RunError) as caught:
        runs.read_files(run)
    message = str(caught.value)
    assert "\n" not in message
    for says in ("README.md is a symbolic link", "empty is an empty folder",
                 "fifo is a FIFO", "loop is a symbolic link", "self is a symbolic link"):
        assert says in message
    (tmp_path / "alias").symlink_to(tmp_path / "copy.md")
    with pytest.raises(runs.RunError, match="is a symbolic link: a run folder is never a link"):
        runs.read_files(tmp_path / "alias")


TOY = {"README.md": b"# toy\n", "summary.json": b'{"n": 1}\n'}


@pytest.fixture
def toy_registry(monkeypatch):
    """One tiny sealed canonical run, so these tests need no data files."""
    monkeypatch.setattr(canonical, "CANONICAL", {"toy": lambda: runs.sealed({}, TOY)})


@pytest.mark.parametrize("tamper", ["link", "fifo", "empty folder", "loop", "manifest"])
def test_verify_reports_what_a_byte_comparison_would_let_pass(tmp_path, toy_registry, tamper):
    canonical.regenerate("toy", root=tmp_path)
    run = tmp_path / "toy"
    assert canonical.verify(root=tmp_path) == {"toy": []}
    if tamper == "link":
        shutil.copy(run / "summary.json", tmp_path / "same.json")
        (run / "summary.json").unlink()
        (run / "summary.json").symlink_to(tmp_path / "same.json")
    elif tamper == "fifo":
        os.mkfifo(run / "pipe")
    elif tamper == "empty folder":
        (run / "extra").mkdir()
    elif tamper == "loop":
        (run / "loop").symlink_to(run)
    else:
        (run / "manifest.json").write_bytes(b"[]")
    [difference] = canonical.verify(root=tmp_path)["toy"]
    assert difference.startswith(f"{run}") and "\n" not in difference


def test_verify_reports_a_sealed_file_whose_hash_no_longer_matches(tmp_path, monkeypatch):
    """The seal speaks even when the rebuilt bytes changed the same way (a tampered
    committed run read by a builder that repeats it)."""
    files = runs.sealed({}, TOY)
    tampered = {**files, "README.md": b"# edited\n"}
    monkeypatch.setattr(canonical, "CANONICAL", {"toy": lambda: tampered})
    runs.write_run(tmp_path / "toy", tampered)
    [difference] = canonical.verify(root=tmp_path)["toy"]
    assert "README.md: sha256" in difference and "that manifest.json records" in difference


def test_verify_reports_a_comparison_whose_runs_cannot_be_read(tmp_path, monkeypatch):
    def broken():
        raise runs.RunError("runs/run_001/manifest.json: expected a JSON object, got list")
    monkeypatch.setattr(canonical, "CANONICAL", {"toy": broken})
    assert canonical.verify(root=tmp_path) == {"toy": [
        "runs/run_001/manifest.json: expected a JSON object, got list"]}


def test_runs_list_survives_a_tampered_neighbour(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runs_command, "RUNS_DIR", tmp_path)
    monkeypatch.setattr(runs_command, "CANONICAL", {"run_a": None, "run_b": None, "run_c": None})
    runs.write_run(tmp_path / "run_a", {"manifest.json": json_bytes({"kind": "eval",
                                                                     "note": "fine"})})
    runs.write_run(tmp_path / "run_b", {"manifest.json": b"[]"})
    code, out, err = run_cli(capsys, "runs", "list")
    assert code == 1 and err == ""
    assert out.splitlines() == [
        "run_a  eval  fine",
        f"run_b  (unreadable: {tmp_path / 'run_b' / 'manifest.json'}: expected a JSON object, "
        "got list)",
        "run_c  (missing: course runs regenerate run_c)"]


# -- fuzz: any bytes in a run's files give a comparison or a RunError ---------------------------

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats()
                           | st.text(max_size=6),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                           max_leaves=8)
result_lines = st.one_of(
    st.binary(max_size=200),
    st.lists(st.fixed_dictionaries({}, optional={
        "id": st.sampled_from(["p0", "p1", ""]) | json_values,
        "reward": st.sampled_from([0, 1, 0.0, 1.0, "1", True]) | json_values,
        "completion": st.sampled_from(["Final: 0", "Final: 1"]) | json_values,
        "expected_answer": st.sampled_from([0, 1]) | json_values,
        "details": st.sampled_from([{"code": "correct"}, {"code": "wrong_answer"}]) | json_values,
    }) | json_values, max_size=4).map(lambda records: "\n".join(
        json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8", "replace")))


def dumped(value: object) -> bytes:
    """`value` as json.dumps writes it: NaN and infinity as the non-JSON tokens it allows."""
    return json.dumps(value).encode()


manifests = st.one_of(
    st.binary(max_size=200),
    json_values.map(dumped),
    st.fixed_dictionaries({key: st.sampled_from([value]) | json_values
                           for key, value in ROOM.items()}).map(dumped))


@settings(max_examples=300, deadline=None)
@given(results=result_lines)
def test_any_results_bytes_give_a_comparison_or_a_run_error(tmp_path_factory, results):
    folder = tmp_path_factory.mktemp("fuzz")
    a, b = make_run(folder / "a", results=results), make_run(folder / "b", results=results)
    try:
        report = locked_room.compare_runs(a, b)
    except runs.RunError as err:
        assert "\n" not in str(err)
    else:
        assert report["difference"] == 0


@settings(max_examples=300, deadline=None)
@given(manifest=manifests)
def test_any_manifest_bytes_give_a_comparison_or_a_run_error(tmp_path_factory, manifest):
    folder = tmp_path_factory.mktemp("fuzz")
    a = make_run(folder / "a", [True, False])
    (a / "manifest.json").write_bytes(manifest)
    for read in (lambda: locked_room.compare_runs(a, a), lambda: runs.read_json(a, "manifest.json"),
                 lambda: runs.read_files(a), lambda: runs.unsealed(a)):
        try:
            read()
        except runs.RunError as err:
            assert "\n" not in str(err)


entries = st.lists(st.tuples(st.lists(st.sampled_from(["a", "b", "manifest.json"]), min_size=1,
                                      max_size=3).map("/".join),
                             st.sampled_from(["file", "folder", "link", "loop", "fifo"]),
                             st.binary(max_size=20)), max_size=6)


@settings(max_examples=200, deadline=None)
@given(tree=entries)
def test_any_folder_tree_gives_its_files_or_one_run_error(tmp_path_factory, tree):
    """Files, empty folders, links (to a file or looping to the folder) and FIFOs anywhere:
    `read_files` returns regular files only when nothing else is there, and never hangs."""
    root = tmp_path_factory.mktemp("tree") / "run"
    root.mkdir()
    for name, kind, content in tree:
        path = root / name
        if os.path.lexists(path):  # never write into a FIFO made a moment ago
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                path.write_bytes(content)
            elif kind == "folder":
                path.mkdir()
            elif kind == "link":
                path.symlink_to(root / "a")
            elif kind == "loop":
                path.symlink_to(root)
            else:
                os.mkfifo(path)
        except OSError:  # the name is taken, or lies under a file or a link
            continue
    for read in (lambda: runs.read_files(root), lambda: runs.unsealed(root),
                 lambda: runs.read_json(root, "manifest.json")):
        try:
            read()
        except runs.RunError as err:
            assert "\n" not in str(err)


@pytest.mark.parametrize(("a", "b", "says"), [
    (lines(result(0), result(1, False)), lines(result(1, False), result(0)),
     "result 1 is 'p0' in A and 'p1' in B"),
    (lines(result(0), result(1, False)), lines(result(0)),
     "result 2 is 'p1' in A and nothing in B"),
])
def test_two_runs_are_walked_side_by_side_and_must_list_the_same_ids(tmp_path, capsys, a, b,
                                                                      says):
    # eval runs list their results in the problems file's order; the walls checked that both
    # read the same file, so a result whose partner has another id is refused where it stands
    err = refusal(capsys, tmp_path, make_run(tmp_path / "a", results=a),
                  make_run(tmp_path / "b", results=b))
    assert "score different example ids" in err and says in err


def test_a_duplicate_id_is_found_after_the_file_is_read_from_hashes_alone(tmp_path):
    run = make_run(tmp_path / "run", results=lines(*map(result, range(50)), result(7, False)))
    with pytest.raises(runs.RunError, match=r"results.jsonl:51: field 'id': duplicate id 'p7' "
                                            r"\(first on line 8\)"):
        list(locked_room.read_results(run, "strict-v1"))
