"""Hostile command lines, by class (issue 21): one clear line and exit code 2, never a
traceback, and nothing computed or written before the refusal.

1. paths that cannot be resolved (a symbolic-link loop) are named, not a traceback;
2. every size a user can ask for is bounded, with a message that names the limit, before
   anything is allocated; input files are regular files of bounded size, checked before reading;
3. an `--out` that could not be written is refused before the work starts;
4. `course data generate --out DIR` never overwrites a file;
5. non-finite numbers are refused before anything is written;
6. blank JSONL lines and byte order marks follow one rule everywhere.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_run import one_error_line, run
from hypothesis import given, settings
from hypothesis import strategies as st

from course import bandit, data, goodhart, kl, learn, mdp, paths
from course.jsonfiles import (
    NonFiniteNumber,
    ascii_jsonl_bytes,
    json_bytes,
    jsonl_bytes,
    jsonl_lines,
    non_finite_field,
)

HUGE = "1" + "0" * 22
"""A 23-digit count: it overflowed a C long in `learn` and numpy's dimension in `bandit`."""


@pytest.fixture
def no_work(monkeypatch):
    """Make every lesson's training or building fail loudly: a refusal must come first."""
    def refuse(*args, **kwargs):
        raise AssertionError("the work started before the refusal")
    for target in ("course.commands.learn.trained_run", "course.commands.learn.train",
                   "course.commands.bandit.train", "course.commands.mdp.train",
                   "course.commands.kl.sweep", "course.commands.goodhart.simulate",
                   "course.commands.goodhart.build_run", "course.commands.selection.build_run",
                   "course.commands.evaluation.write_results"):
        monkeypatch.setattr(target, refuse)


# -- 1. paths that cannot be resolved ------------------------------------------------------------

def test_display_path_names_a_symlink_loop_instead_of_raising(tmp_path):
    loop = tmp_path / "L"
    loop.symlink_to("L")
    assert paths.display_path(loop) == str(loop)
    assert paths.display_path(loop / "x") == str(loop / "x")


@pytest.mark.parametrize("argv", [
    ["kl", "--out", "{loop}", "--note", "n"],
    ["kl", "--out", "{loop}/run", "--note", "n"],
    ["learn", "--out", "{loop}", "--note", "n"],
    ["bandit", "--out", "{loop}", "--note", "n"],
    ["mdp", "--out", "{loop}/run", "--note", "n"],
    ["select", "--pack", "{loop}", "--out", "{tmp}/run", "--note", "n"],
    ["eval", "--problems", "{loop}", "--rollouts", "{loop}", "--out", "{tmp}/run",
     "--note", "n"],
    ["compare", "{loop}", "{loop}"],
    ["rubrics", "--exploits", "{loop}"],
    ["data", "generate", "--out", "{loop}"],
])
def test_a_symlink_loop_anywhere_is_one_line(argv, tmp_path, capsys):
    loop = tmp_path / "L"
    loop.symlink_to("L")
    code, _out, err = run(capsys, *(a.format(loop=loop, tmp=tmp_path) for a in argv))
    assert code == 2 and one_error_line(err, argv[0]), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["L"]


# -- 2. sizes are bounded before any allocation ---------------------------------------------------

@pytest.mark.parametrize(("argv", "says"), [
    (["learn", "--batch-size", "100000000"], "batch_size: must be at most 1,024"),
    (["learn", "--batch-size", HUGE], "batch_size: must be at most 1,024"),
    (["learn", "--steps", HUGE], "steps: must be at most 10,000"),
    (["bandit", "--batch-size", HUGE], "batch_size: must be at most 1,000"),
    (["bandit", "--steps", "3001"], "steps: must be at most 3,000"),
    (["mdp", "--episodes", HUGE], "episodes: must be at most 100,000"),
    (["goodhart", "--steps", "10001"], "steps: must be at most 10,000"),
    (["kl", "--num-betas", HUGE], "num_betas: must be at most 10,000"),
    (["learn", "--batch-size", "1"], "batch_size: must be >= 2 (leave-one-out baseline)"),
])
def test_every_count_has_an_upper_bound_named_in_the_message(argv, says, capsys, no_work):
    code, out, err = run(capsys, *argv)
    assert code == 2 and one_error_line(err, argv[0]) and out == ""
    assert says in err


COUNTS = [(bandit.BanditConfig, "steps", 1, bandit.MAX_STEPS),
          (bandit.BanditConfig, "batch_size", 1, bandit.MAX_BATCH_SIZE),
          (learn.LearnConfig, "steps", 1, learn.MAX_STEPS),
          (learn.LearnConfig, "batch_size", 2, learn.MAX_BATCH_SIZE),
          (mdp.MDPConfig, "episodes", 1, mdp.MAX_EPISODES),
          (goodhart.GoodhartConfig, "steps", 1, goodhart.MAX_STEPS),
          (kl.KLConfig, "num_betas", 2, kl.MAX_BETAS)]
"""Every count a command line sets, with its allowed range."""


@settings(max_examples=300, deadline=None)
@given(count=st.sampled_from(COUNTS), value=st.one_of(
    st.integers(), st.integers(min_value=-10**30, max_value=10**30),
    st.sampled_from([-1, 0, 1, 2, 1000, 1001, 1024, 1025, 3000, 3001, 10_000, 10_001,
                     100_000, 100_001, 10**22, 10**4000])))
def test_a_config_accepts_a_count_exactly_in_its_range(count, value):
    factory, field, low, high = count
    if low <= value <= high:
        assert getattr(factory(**{field: value}), field) == value
    else:
        with pytest.raises(ValueError) as refused:
            factory(**{field: value})
        message = str(refused.value)
        assert "\n" not in message and len(message) < 300 and message.startswith(f"{field}: ")
        assert (f"at most {high:,}" if value > high else f">= {low}") in message


def test_a_count_too_long_to_print_is_shown_by_its_digits(capsys, no_work):
    code, _out, err = run(capsys, "kl", "--num-betas", "9" * 200)
    assert code == 2 and "a number of 200 digits" in err and "9" * 50 not in err


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder"])
def test_an_input_that_is_not_a_regular_file_is_refused_before_reading(special, tmp_path,
                                                                         capsys):
    import os
    path = tmp_path / special if special != "/dev/zero" else special
    if special == "fifo":
        os.mkfifo(path)
    elif special == "folder":
        os.mkdir(path)
    code, _out, err = run(capsys, "eval", "--problems", path, "--rollouts", path,
                          "--out", tmp_path / "run", "--note", "n")
    assert code == 2 and one_error_line(err, "eval")
    assert "not a regular file" in err or "is a folder" in err
    assert not (tmp_path / "run").exists()


def test_a_data_file_over_the_size_limit_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "problems.jsonl"
    path.write_bytes(jsonl_bytes([{"id": "p", "prompt": "x" * 100, "expected_answer": 1}]))
    monkeypatch.setattr(data, "MAX_FILE_BYTES", 50)
    with pytest.raises(data.DataError, match="larger than the 50-byte limit"):
        data.load_problems(path)


# -- 3. an unwritable --out is refused before the work --------------------------------------------

@pytest.mark.parametrize("where", ["under-a-file", "under-a-loop", "name-too-long",
                                   "deep-under-a-file"])
@pytest.mark.parametrize("command", [["learn", "--steps", "1"], ["bandit"], ["mdp"], ["kl"],
                                     ["goodhart"]])
def test_an_out_that_cannot_be_written_is_refused_before_training(command, where, tmp_path,
                                                                  capsys, no_work):
    (tmp_path / "file").write_text("x")
    (tmp_path / "L").symlink_to("L")
    target = {"under-a-file": tmp_path / "file" / "run",
              "under-a-loop": tmp_path / "L" / "run",
              "name-too-long": tmp_path / ("r" * 300),
              "deep-under-a-file": tmp_path / "file" / "a" / "b" / "run"}[where]
    code, out, err = run(capsys, *command, "--out", target, "--note", "n")
    assert code == 2 and one_error_line(err, command[0]) and out == ""
    assert "cannot write the run folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["L", "file"]


def test_an_out_in_a_folder_that_refuses_new_folders_is_refused_before_training(
        tmp_path, capsys, no_work, monkeypatch):
    # root ignores permissions, so the refusal is played by the folder creation itself
    from course.commands import options

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(options.tempfile, "mkdtemp", refuse)
    code, _out, err = run(capsys, "learn", "--out", tmp_path / "run", "--note", "n")
    assert code == 2 and "cannot make a folder in" in err and "Permission denied" in err


def test_an_out_whose_parents_do_not_exist_yet_is_still_accepted(tmp_path, capsys):
    code, _out, err = run(capsys, "kl", "--out", tmp_path / "a" / "b" / "run", "--note", "n")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["run"]


# -- 4. data generate never overwrites a file -----------------------------------------------------

def test_data_generate_refuses_to_overwrite_any_file_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "README.md").write_text("a clone's own README\n")
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems" / "dev.jsonl").symlink_to(tmp_path / "nowhere")
    code, out, err = run(capsys, "data", "generate", "--out", tmp_path)
    assert code == 2 and one_error_line(err, "data") and out == ""
    assert "README.md: already exists, and is not what the generator writes (and 1 more)" in err
    assert (tmp_path / "README.md").read_text() == "a clone's own README\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["README.md", "dev.jsonl",
                                                            "problems"]


def test_data_generate_into_a_new_folder_then_again_changes_nothing(tmp_path, capsys):
    code, out, _err = run(capsys, "data", "generate", "--out", tmp_path / "d")
    assert code == 0 and "0 file(s)" not in out
    before = {p: p.read_bytes() for p in (tmp_path / "d").rglob("*") if p.is_file()}
    code, out, _err = run(capsys, "data", "generate", "--out", tmp_path / "d")
    assert code == 0 and out.strip() == "0 file(s) written, the rest unchanged"
    code, _out, err = run(capsys, "data", "generate", "--out", tmp_path / "d", "--seed", "7")
    assert code == 2 and "never overwrites anything" in err
    assert {p: p.read_bytes() for p in (tmp_path / "d").rglob("*") if p.is_file()} == before


def test_data_generate_refuses_a_file_where_a_folder_goes(tmp_path, capsys):
    (tmp_path / "golden").write_text("mine\n")
    code, _out, err = run(capsys, "data", "generate", "--out", tmp_path)
    assert code == 2 and one_error_line(err, "data") and "golden: already exists" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]


@pytest.mark.parametrize("seed", ["-5", "-1"])
def test_data_generate_refuses_a_negative_seed(seed, tmp_path, capsys):
    code, out, err = run(capsys, "data", "generate", "--out", tmp_path / "d", "--seed", seed)
    assert out == ""
    assert code == 2 and one_error_line(err, "data") and "--seed: must be >= 0" in err
    assert not (tmp_path / "d").exists()


# -- 5. non-finite numbers are refused before anything is written --------------------------------

@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")
def test_a_diverging_run_saves_nothing_and_says_which_field(tmp_path, capsys):
    code, out, err = run(capsys, "learn", "--lr", "1e308", "--beta", "1e308", "--steps", "5",
                         "--out", tmp_path / "r", "--note", "n")
    said = [line for line in err.splitlines() if line.startswith("course learn:")]
    # first the warning that lr 1e308 is far outside the measured stable region, then the error
    assert said[0].startswith("course learn: warning: lr 1e+308 is above 10")
    errors = said[1:]
    assert code == 2 and len(errors) == 1 and "JSON has no NaN or infinity" in errors[0]
    assert "field '" in errors[0] and out == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("writer", [json_bytes, lambda obj: jsonl_bytes([{"ok": 1}, obj]),
                                    lambda obj: ascii_jsonl_bytes([obj])])
def test_every_json_writer_refuses_a_non_finite_number_naming_its_field(writer, bad):
    with pytest.raises(NonFiniteNumber, match=r"field '(\[\d\])?\.?sampling\.t\[1\]'"):
        writer({"sampling": {"t": [0.5, bad]}})


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8))
def test_json_bytes_writes_exactly_the_finite_values(value):
    found = non_finite_field(value)
    if found is None:
        assert json_bytes(value) == (json.dumps(value, indent=2, ensure_ascii=False)
                                     + "\n").encode("utf-8", "backslashreplace")
    else:
        with pytest.raises(NonFiniteNumber) as refused:
            json_bytes(value)
        assert refused.value.field == found[0]


@pytest.mark.parametrize(("number", "field"), [("NaN", "sampling.temperature"),
                                               ("Infinity", "sampling.temperature"),
                                               ("-Infinity", "sampling.temperature"),
                                               ("1e999", "sampling.temperature")])
def test_a_provenance_file_with_a_non_finite_number_is_refused_at_load(number, field,
                                                                        tmp_path, capsys):
    origin = tmp_path / "origin.json"
    origin.write_text('{"made_by": "m", "prompt_version": "v", '
                      f'"sampling": {{"temperature": {number}}}}}')
    with pytest.raises(data.DataError, match=f"field '{field}': {number} is not a number"):
        data.origin(tmp_path / "rollouts.jsonl", origin)
    problems = tmp_path / "problems.jsonl"
    problems.write_bytes(jsonl_bytes([{"id": "p", "prompt": "x", "expected_answer": 1}]))
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_bytes(jsonl_bytes([{"id": "p", "completion": "Final: 1"}]))
    code, _out, err = run(capsys, "eval", "--problems", problems, "--rollouts", rollouts,
                          "--provenance", origin, "--out", tmp_path / "run", "--note", "n")
    assert code == 2 and one_error_line(err, "eval") and "origin.json" in err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("reward", ["NaN", "Infinity", "1e400"])
def test_a_kata_reward_must_be_a_finite_number(reward, tmp_path):
    path = tmp_path / "kata.jsonl"
    path.write_text('{"id": "k", "prompt": "p", "expected_answer": 1, "completion": "c", '
                    f'"reward": {reward}, "code": "ok"}}\n')
    with pytest.raises(data.DataError, match=r"kata.jsonl:1: field 'reward': .* not a number"):
        data.load_kata(path)


# -- 6. one rule for blank JSONL lines; a BOM is named ----------------------------------------

@pytest.mark.parametrize("blank", ["", " ", "\t", " \t ", "\r"])
def test_a_line_of_json_whitespace_is_blank(blank, tmp_path):
    path = tmp_path / "problems.jsonl"
    record = json.dumps({"id": "p", "prompt": "x", "expected_answer": 1})
    path.write_text(f"{blank}\n{record}\n{blank}\n", encoding="utf-8")
    assert [r["id"] for r in data.load_problems(path)] == ["p"]


@pytest.mark.parametrize("other", ["\u00a0", "\u3000", "\u2028", "\x0c", "\x0b", "\x85",
                                   "\u200b"])
def test_a_line_of_other_whitespace_is_an_error_naming_its_line(other, tmp_path):
    path = tmp_path / "problems.jsonl"
    record = json.dumps({"id": "p", "prompt": "x", "expected_answer": 1})
    path.write_text(f"{record}\n{other}\n", encoding="utf-8")
    assert jsonl_lines(path.read_text(encoding="utf-8")) == [(1, record), (2, other)]
    with pytest.raises(data.DataError, match=r"problems\.jsonl:2: invalid JSON"):
        data.load_problems(path)


@pytest.mark.parametrize(("name", "loader"), [("problems.jsonl", data.load_problems),
                                              ("key.json", data.load_kata_key)])
def test_a_byte_order_mark_is_named(name, loader, tmp_path):
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + jsonl_bytes([{"id": "p", "prompt": "x",
                                                      "expected_answer": 1}]))
    with pytest.raises(data.DataError, match=f"{name}:1: invalid JSON: starts with a UTF-8 "
                                             r"byte order mark \(BOM\)"):
        loader(path)
