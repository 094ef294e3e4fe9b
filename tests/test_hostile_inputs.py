"""Hostile and real-world inputs to the harness: a correct result or one clear line, never a
traceback, never a half-written run, and every run reads back what it wrote.

One section per class of bug; each test reproduces the report that found the class. The
scorer's own totality is in `test_scorer_hostile.py`, the run pages' in
`site/test_run_pages_hostile.py`.
"""

from __future__ import annotations

import json
import os
import stat
from fractions import Fraction

import pytest
from cli_run import one_error_line, run
from hypothesis import given, settings
from hypothesis import strategies as st

from course import data, runs
from course.data import DataError
from course.jsonfiles import json_bytes, jsonl_bytes
from course.kl import kl_divergence
from course.scorer import MAX_DIGITS
from course.selection import pass_at_k, pass_at_k_curve

LINE_BREAKS_OF_SPLITLINES = "\u2028\u2029\u0085\x1c\x1d\x1e\x0b\x0c\r"
"""Every character `str.splitlines()` treats as a line end, besides `\\n`."""


@pytest.fixture
def real_model_files(tmp_path):
    """What a teacher brings from a real model: problems, and `{id, completion}` per line."""
    problems = [{"id": "p1", "prompt": "Compute 17*19.", "expected_answer": 323},
                {"id": "p2", "prompt": "Compute 2+2.", "expected_answer": 4},
                {"id": "p3", "prompt": "Compute 6*7.", "expected_answer": 42}]
    rollouts = [{"id": "p1", "completion": "Final: 1\u2028Final: 323"},  # a spec decision row
                {"id": "p2", "completion": "Final: 4"},
                {"id": "p3", "completion": "Final: 42\ud800"}]          # a lone surrogate
    (tmp_path / "problems.jsonl").write_bytes(jsonl_bytes(problems))
    (tmp_path / "rollouts.jsonl").write_bytes(jsonl_bytes(rollouts))
    (tmp_path / "origin.json").write_text(json.dumps({
        "made_by": "a real model, sampled by the teacher", "prompt_version": "final-int-v1",
        "sampling": {"temperature": 0.7, "n": 1}}))
    return tmp_path


# -- 1. what the package writes, it reads back: JSONL splits on \n only ---------------------------

def test_a_run_with_unicode_line_separators_reads_back_and_compares(real_model_files, capsys):
    folder = real_model_files
    for name in ("a", "b"):
        code, _out, err = run(capsys, "eval", "--problems", folder / "problems.jsonl",
                              "--rollouts", folder / "rollouts.jsonl", "--provenance",
                              folder / "origin.json", "--note", "real model",
                              "--out", folder / name)
        assert code == 0, err
    results = [record for _, record in data.read_jsonl(folder / "a" / "results.jsonl")]
    assert [r["completion"] for r in results] == ["Final: 1\u2028Final: 323", "Final: 4",
                                                  "Final: 42\ud800"]
    assert results[0]["details"]["code"] == "multiple_lines"
    code, out, err = run(capsys, "compare", folder / "a", folder / "b")
    assert code == 0, err
    assert "verdict:" in out


def test_valid_jsonl_holding_those_characters_loads_with_true_line_numbers(tmp_path):
    lines = [json.dumps({"id": f"p{i}", "prompt": f"x{ch}y", "expected_answer": i},
                        ensure_ascii=False) for i, ch in enumerate(LINE_BREAKS_OF_SPLITLINES)]
    lines.append('{"id": "bad", "prompt": "p", "expected_answer": "not an int"}')
    path = tmp_path / "problems.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        data.load_problems(path)
    assert caught.value.line == len(lines) and caught.value.field == "expected_answer"
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    loaded = data.load_problems(path)
    assert [p["prompt"][1] for p in loaded] == list(LINE_BREAKS_OF_SPLITLINES)


# -- 2. real rollouts: {id, completion} is enough; provenance recorded, never silent -------------

def test_real_rollouts_without_provenance_run_with_a_warning_and_cannot_be_compared(
        real_model_files, capsys):
    folder = real_model_files
    for name in ("a", "b"):
        code, _out, err = run(capsys, "eval", "--problems", folder / "problems.jsonl",
                              "--rollouts", folder / "rollouts.jsonl", "--note", "unlabelled",
                              "--out", folder / name)
        assert code == 0
        assert err.startswith("course eval: warning: ") and "not in data/provenance.json" in err
    manifest = json.loads((folder / "a" / "manifest.json").read_text())
    assert manifest["origin"] == {"made_by": data.UNKNOWN_ORIGIN, "source": None}
    assert manifest["prompt_version"] is None and manifest["sampling"] is None
    code, _out, err = run(capsys, "compare", folder / "a", folder / "b")
    assert code == 2 and one_error_line(err, "compare") and "--provenance FILE" in err


def test_a_provenance_file_is_recorded_in_the_manifest(real_model_files, capsys):
    folder = real_model_files
    code, _out, err = run(capsys, "eval", "--problems", folder / "problems.jsonl", "--rollouts",
                          folder / "rollouts.jsonl", "--provenance", folder / "origin.json",
                          "--note", "described", "--out", folder / "a")
    assert code == 0 and err == ""
    manifest = json.loads((folder / "a" / "manifest.json").read_text())
    assert manifest["prompt_version"] == "final-int-v1"
    assert manifest["sampling"] == {"temperature": 0.7, "n": 1}
    assert manifest["origin"]["made_by"] == "a real model, sampled by the teacher"
    assert manifest["config"]["provenance"].endswith("origin.json")


def test_a_provenance_file_missing_a_field_is_refused_before_any_work(real_model_files,
                                                                     capsys, monkeypatch):
    folder = real_model_files
    (folder / "origin.json").write_text('{"made_by": "me", "prompt_version": "v"}')
    monkeypatch.setattr("course.reports.evaluation.score_pairs",
                        lambda *a: pytest.fail("scored before checking the inputs"))
    code, _out, err = run(capsys, "eval", "--problems", folder / "problems.jsonl", "--rollouts",
                          folder / "rollouts.jsonl", "--provenance", folder / "origin.json",
                          "--note", "n", "--out", folder / "a")
    assert code == 2 and one_error_line(err, "eval")
    assert "origin.json: field 'sampling': missing or not a dict" in err


def test_a_pack_of_sample_id_and_completion_is_enough_for_select(real_model_files, capsys):
    folder = real_model_files
    texts = ["Final: 4", "Final: 42", "Final: 323", "no idea"] * 2
    pack = [{"id": pid, "samples": [{"sample_id": f"{pid}/{i}", "completion": text}
                                    for i, text in enumerate(texts)]}
            for pid in ("p1", "p2", "p3")]
    (folder / "pack.jsonl").write_bytes(jsonl_bytes(pack))
    code, out, err = run(capsys, "select", "--pack", folder / "pack.jsonl", "--problems",
                         folder / "problems.jsonl", "--provenance", folder / "origin.json",
                         "--note", "a real pack", "--out", folder / "sel")
    assert code == 0, err
    manifest = json.loads((folder / "sel" / "manifest.json").read_text())
    assert manifest["prompt_version"] == "final-int-v1"
    assert manifest["origin"]["made_by"] == "a real model, sampled by the teacher"
    demo = [r for _, r in data.read_jsonl(folder / "sel" / "selection_demo.jsonl")]
    assert {s["policy_mode"] for row in demo for s in row["samples"]} == {None}
    assert "pass@1" in out


# -- 3. crashes become one line naming the file (and line and field), exit 2 ----------------------

@pytest.mark.parametrize(("content", "line", "says"), [
    ('{"id": "a", "prompt": "p", "expected_answer": 1}\n' + "[" * 100_000 + "]" * 100_000,
     2, "nested too deeply"),
    ('{"id": "a", "prompt": "p", "expected_answer": ' + "9" * 4301 + "}", 1, "4300"),
    ('{"id": "a", "prompt": "p", "expected_answer": ' + "9" * (MAX_DIGITS + 1) + "}", 1,
     f"has {MAX_DIGITS + 1} digits; the scorer reads at most {MAX_DIGITS}"),
    ('{"id": "a", "prompt": "p", "prompt": "q", "expected_answer": 1}', 1, "given twice"),
    (b'{"id": "a", "prompt": "p", "expected_answer": 1}\n{"id": "\xff"}', 2, "not valid UTF-8"),
], ids=["deep", "int-4301", "answer-over-digit-limit", "duplicate-key", "not-utf8"])
def test_data_files_that_break_the_parser_give_file_and_line(tmp_path, content, line, says):
    path = tmp_path / "problems.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(DataError) as caught:
        data.load_problems(path)
    assert caught.value.line == line and says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_folder_given_as_a_data_file(tmp_path):
    with pytest.raises(DataError, match="is a folder, not a data file"):
        data.load_problems(tmp_path)


def test_non_utf8_note_or_out_is_refused_before_any_work(real_model_files, capsys):
    folder = real_model_files
    for flag, argv in (("--note", ["--note", "caf\udce9", "--out", folder / "a"]),
                       ("--out", ["--note", "n", "--out", folder / "caf\udce9"])):
        code, _out, err = run(capsys, "eval", "--problems", folder / "problems.jsonl",
                              "--rollouts", folder / "rollouts.jsonl", *argv)
        assert code == 2 and one_error_line(err, "eval") and f"{flag}: not valid UTF-8" in err
    assert sorted(p.name for p in folder.iterdir()) == ["origin.json", "problems.jsonl",
                                                         "rollouts.jsonl"]


@pytest.mark.parametrize("where", ["under-a-file", "dangling-symlink", "name-too-long",
                                   "read-only"])
def test_filesystem_errors_writing_a_run_are_one_line_and_leave_nothing(
        where, tmp_path, capsys, monkeypatch):
    target = tmp_path / "run"
    if where == "under-a-file":
        (tmp_path / "file").write_text("x")
        target = tmp_path / "file" / "run"
    elif where == "dangling-symlink":
        target.symlink_to(tmp_path / "nowhere")
    elif where == "name-too-long":
        target = tmp_path / ("r" * 300)
    else:  # root ignores permissions, so the refusal is played by the filesystem call itself
        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied", str(tmp_path))
        monkeypatch.setattr(runs.tempfile, "mkdtemp", refuse)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _out, err = run(capsys, "kl", "--out", target, "--note", "n")
    assert code == 2 and one_error_line(err, "kl")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# -- 7. selection is linear in N, and inputs are checked before the work --------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 8, 50, 200])
def test_the_pass_at_k_curve_matches_the_exact_estimator_for_every_k(n):
    for c in sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1}):
        curve = pass_at_k_curve(n, c)
        for k in range(1, n + 1):
            exact = 1 - Fraction(_comb(n - c, k), _comb(n, k))
            assert curve[k - 1] == pytest.approx(float(exact), abs=1e-12)
            assert curve[k - 1] == pytest.approx(pass_at_k(n, c, k), abs=1e-12)


def _comb(n: int, k: int) -> int:
    from math import comb
    return comb(n, k) if 0 <= k <= n else 0


def test_the_curve_for_twenty_thousand_samples_is_exact_at_its_ends():
    curve = pass_at_k_curve(20_000, 300)
    assert len(curve) == 20_000 and curve[-1] == 1.0 and curve[0] == pytest.approx(0.015)
    assert pass_at_k_curve(5, 0) == [0.0] * 5


# -- 8. runs: never replace a folder that appeared, usual permissions, leftovers reported ---------

def test_an_empty_folder_that_appears_before_the_rename_is_not_replaced(tmp_path, monkeypatch):
    target = tmp_path / "run"
    real_chmod = os.chmod

    def chmod_then_race(path, mode):
        real_chmod(path, mode)
        target.mkdir()            # another process takes the name between check and rename
    monkeypatch.setattr(runs.os, "chmod", chmod_then_race)
    with pytest.raises(runs.RunError, match="already exists"):
        runs.write_run(target, {"README.md": b"x"})
    assert list(target.iterdir()) == []                       # the other folder, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no staging left


def test_a_run_folder_gets_the_users_umask_not_0700(tmp_path):
    old = os.umask(0o022)
    try:
        runs.write_run(tmp_path / "run", {"README.md": b"x"})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "run").stat().st_mode) == 0o755


def test_a_write_killed_midway_is_reported_by_runs_list(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("course.commands.runs.RUNS_DIR", tmp_path)
    (tmp_path / ".run_009.partial-abc123").mkdir()
    assert runs.leftover_partials(tmp_path) == [tmp_path / ".run_009.partial-abc123"]
    code, out, _err = run(capsys, "runs", "list")
    assert code == 0 and "leftover: " in out and ".run_009.partial-abc123" in out


# -- 9. arguments are validated: one line, exit 2 ------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["bandit", "--lr", "inf"], ["bandit", "--lr", "nan"], ["mdp", "--lr", "inf"],
    ["goodhart", "--steps", "-1"], ["goodhart", "--proxy", "x"], ["goodhart", "--seed", "-1"],
    ["select", "--seed", "-1", "--note", "n", "--out", "{tmp}/run"],
    ["kl", "--beta", "inf"], ["kl", "--beta-min", "0"],
])
def test_bad_values_are_refused_with_one_line(argv, tmp_path, capsys):
    code, out, err = run(capsys, *(arg.format(tmp=tmp_path) for arg in argv))
    assert code == 2 and one_error_line(err, argv[0]) and out == ""


def test_kl_is_never_negative_and_a_huge_beta_gives_the_reference_objective(capsys):
    p = [0.1 + 1e-17, 0.2, 0.7 - 1e-17]
    assert kl_divergence(p, [0.1, 0.2, 0.7]) >= 0.0
    code, out, _err = run(capsys, "kl", "--beta", "1e308")
    assert code == 0 and out.rstrip().endswith("objective E[r] - β KL = 0.1920")


# -- 10. smaller: duplicate sample ids, join line numbers, peers columns -----------------------

def test_a_pack_with_a_duplicate_sample_id_is_refused(tmp_path):
    sample = {"sample_id": "s", "completion": "Final: 1"}
    (tmp_path / "pack.jsonl").write_bytes(jsonl_bytes([{"id": "a", "samples": [sample,
                                                                              sample]}]))
    with pytest.raises(DataError, match=r"samples\[1\].sample_id.*duplicate sample_id 's'"):
        data.load_pack(tmp_path / "pack.jsonl")


def test_an_unknown_id_in_rollouts_names_its_line(tmp_path):
    rows = [{"id": "p1", "completion": "a"}, {"id": "zz", "completion": "b"}]
    (tmp_path / "rollouts.jsonl").write_bytes(jsonl_bytes(rows))
    with pytest.raises(DataError) as caught:
        data.join_on_id([{"id": "p1"}], rows, tmp_path / "rollouts.jsonl")
    assert caught.value.line == 2 and "unknown problem id 'zz'" in str(caught.value)


def test_peers_try_keeps_its_columns_apart(capsys):
    code, out, _err = run(capsys, "peers", "--try", "Final: \u0663\u0662\u0663")
    assert code == 0
    assert "non_ascii_character " in out and "characterextracted" not in out


# -- fuzz: loaders against any bytes, runs against any text ------------------------------------

LOADERS = [data.load_problems, data.load_rollouts, data.load_pack, data.load_golden,
           data.load_kata, data.load_kata_key]


@settings(max_examples=300, deadline=None)
@given(content=st.one_of(
    st.binary(max_size=300),
    st.lists(st.dictionaries(st.sampled_from(["id", "prompt", "expected_answer", "completion",
                                              "samples", "sample_id", "exploit_class"]),
                             st.recursive(st.none() | st.booleans() | st.integers()
                                          | st.floats() | st.text(max_size=8),
                                          lambda inner: st.lists(inner, max_size=3)
                                          | st.dictionaries(st.text(max_size=4), inner,
                                                            max_size=3), max_leaves=6)),
             max_size=4).map(lambda records: "\n".join(
                 json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8", "replace"))))
def test_every_loader_accepts_or_refuses_any_bytes_with_a_data_error(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("fuzz") / "file.jsonl"
    path.write_bytes(content)
    for loader in LOADERS:
        try:
            loader(path)
        except DataError as err:
            assert "\n" not in str(err)


@settings(max_examples=300, deadline=None)
@given(completions=st.lists(st.text(alphabet=st.characters(min_codepoint=0,
                                                           max_codepoint=0x10FFFF),
                                    max_size=20), min_size=1, max_size=5))
def test_write_run_then_read_back_gives_every_string_back(tmp_path_factory, completions):
    records = [{"id": f"p{i}", "completion": text} for i, text in enumerate(completions)]
    folder = runs.write_run(tmp_path_factory.mktemp("run") / "run",
                            {"results.jsonl": jsonl_bytes(records),
                             "summary.json": json_bytes({"all": completions})})
    assert [r for _, r in data.read_jsonl(folder / "results.jsonl")] == records
    assert runs.read_json(folder, "summary.json") == {"all": completions}
