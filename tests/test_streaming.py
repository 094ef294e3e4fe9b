"""`course eval` and `course compare` stream: the same pairs, results, errors and bytes as the
in-memory path, whatever the order of the files, even when every id hashes alike; a run whose
stream fails leaves nothing behind; an input file changed during the run is refused in one
line. (Memory and time are measured, not tested: benchmarks/bench_streaming.py.)"""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import data, locked_room, runs
from course.evaluation import EvalConfig, evaluate, summarise
from course.reports import evaluation as report


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def dataset(tmp_path, n, shuffle_seed=None):
    problems = [{"id": f"p{i}", "prompt": f"{i}+0", "expected_answer": i} for i in range(n)]
    rollouts = [{"id": f"p{i}", "completion": f"Final: {i if i % 3 else i + 1}"}
                for i in range(n)]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rollouts)
    return write(tmp_path / "problems.jsonl", problems), write(tmp_path / "rollouts.jsonl",
                                                                rollouts)


@pytest.fixture(params=["hash", "collide"])
def hashing(request, monkeypatch):
    """Python's own hash, or one under which every id collides (the confirm-by-id paths)."""
    if request.param == "collide":
        monkeypatch.setattr(data, "hash", lambda value: 7, raising=False)
        monkeypatch.setattr(locked_room, "hash", lambda value: 7, raising=False)
    return request.param


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 10**6) | st.none())
def test_streamed_pairs_are_the_joined_pairs_in_any_order(tmp_path_factory, n, seed):
    folder = tmp_path_factory.mktemp("pairs")
    problems, rollouts = dataset(folder, n, seed)
    expected = data.join_on_id(data.load_problems(problems), data.load_rollouts(rollouts),
                               rollouts)
    count, pairs = data.stream_pairs(problems, rollouts)
    assert count == n and list(pairs) == expected


def test_streamed_pairs_survive_ids_that_all_hash_alike(tmp_path, hashing):
    problems, rollouts = dataset(tmp_path, 12, shuffle_seed=3)
    expected = data.join_on_id(data.load_problems(problems), data.load_rollouts(rollouts),
                               rollouts)
    assert list(data.stream_pairs(problems, rollouts)[1]) == expected


@pytest.mark.parametrize(("change", "says"), [
    (lambda p, r: (p, [*r, {"id": "stray", "completion": "x"}]),
     "rollouts.jsonl:4: field 'id': unknown problem id 'stray' (1 rows name no problem)"),
    (lambda p, r: (p, r[:2]), "rollouts.jsonl: field 'id': no row for problem 'p2' "
                              "(1 problems missing)"),
    (lambda p, r: ([*p, p[1]], r), "problems.jsonl:4: field 'id': duplicate id 'p1' "
                                   "(first on line 2)"),
    (lambda p, r: (p, [*r, r[0]]), "rollouts.jsonl:4: field 'id': duplicate id 'p0' "
                                   "(first on line 1)"),
    (lambda p, r: (p, [*r[:1], {"id": "p1"}, *r[2:]]),
     "rollouts.jsonl:2: field 'completion': missing"),
])
def test_streamed_pairs_refuse_what_the_loaders_and_the_join_refuse(tmp_path, hashing, change,
                                                                    says):
    problems = [{"id": f"p{i}", "prompt": "q", "expected_answer": i} for i in range(3)]
    rollouts = [{"id": f"p{i}", "completion": f"Final: {i}"} for i in range(3)]
    problems, rollouts = change(problems, rollouts)
    p = write(tmp_path / "problems.jsonl", problems)
    r = write(tmp_path / "rollouts.jsonl", rollouts)
    with pytest.raises(data.DataError) as streamed:
        list(data.stream_pairs(p, r)[1])
    with pytest.raises(data.DataError) as loaded:
        data.join_on_id(data.load_problems(p), data.load_rollouts(r), r)
    assert str(streamed.value).endswith(says) and str(loaded.value).endswith(says)


def test_the_streamed_run_holds_what_evaluate_and_summarise_give(tmp_path):
    problems, rollouts = dataset(tmp_path, 40, shuffle_seed=1)
    files = report.build_run(EvalConfig(problems=problems, rollouts=rollouts), "n",
                             record_git=False)
    results = evaluate(data.load_problems(problems), data.load_rollouts(rollouts), rollouts)
    lines = [json.loads(line) for line in files["results.jsonl"].decode().split("\n") if line]
    assert lines == json.loads(json.dumps(results))      # tuples read back as lists
    assert json.loads(files["summary.json"]) == json.loads(json.dumps(summarise(results)))
    assert runs.unsealed(write_folder(tmp_path / "run", files)) == []


def write_folder(folder, files):
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


def test_a_stream_that_fails_leaves_no_run_folder(tmp_path):
    def produce(sink):
        sink.write(b"half a line")
        raise data.DataError(tmp_path / "rollouts.jsonl", 9, "id", "broken")

    with pytest.raises(data.DataError):
        runs.write_streamed_run(tmp_path / "run", "results.jsonl", produce)
    assert list(tmp_path.iterdir()) == []


def test_compare_survives_ids_that_all_hash_alike(tmp_path, hashing, capsys):
    from course.cli import main
    problems, rollouts = dataset(tmp_path, 15)
    origin = tmp_path / "origin.json"
    origin.write_text(json.dumps({"made_by": "test", "prompt_version": "v",
                                  "sampling": {"temperature": 0}}), encoding="utf-8")
    for name in ("a", "b"):
        assert main(["eval", "--problems", str(problems), "--rollouts", str(rollouts),
                     "--provenance", str(origin), "--out", str(tmp_path / name),
                     "--note", "n"]) == 0
    assert locked_room.compare_runs(tmp_path / "a", tmp_path / "b")["n"] == 15
    capsys.readouterr()


def replace_with_all_correct(rollouts):
    """Another valid rollouts file, every answer right, moved over the old one."""
    fresh = rollouts.with_name("fresh.jsonl")
    problems = data.load_problems(rollouts.with_name("problems.jsonl"))
    write(fresh, [{"id": p["id"], "completion": f"Final: {p['expected_answer']}"}
                  for p in problems])
    os.replace(fresh, rollouts)


def overwrite_in_place(rollouts):
    """The same file (inode) written to: its bytes are no longer UTF-8 JSON."""
    with open(rollouts, "r+b") as stream:
        stream.write(b"\xff" * 40)


@pytest.mark.parametrize("change", [replace_with_all_correct, overwrite_in_place])
def test_a_rollouts_file_changed_during_eval_is_one_line_and_saves_nothing(tmp_path,
                                                                         monkeypatch, capsys,
                                                                         change):
    """Issue 29, item 3: the file is checked, then read again to score; a change in between
    would score unchecked content in silence (a replacement) or fail mid-way (an edit)."""
    from course.cli import main
    problems, rollouts = dataset(tmp_path, 30)
    real = report.score_pairs

    def changing(pairs, scorer):
        for k, scored in enumerate(real(pairs, scorer)):
            if k == 1:
                change(rollouts)
            yield scored

    monkeypatch.setattr(report, "score_pairs", changing)
    code = main(["eval", "--problems", str(problems), "--rollouts", str(rollouts),
                 "--note", "n", "--out", str(tmp_path / "run")])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (f"course eval: error: {rollouts}: changed while it was being evaluated "
                   "(written to or replaced), so what was checked is not what was scored; "
                   "nothing was saved: evaluate again once the file stays as it is\n")
    assert not (tmp_path / "run").exists()
