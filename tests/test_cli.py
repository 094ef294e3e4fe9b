"""The `course` command: clear errors (exit 2, file:line: field), and the eval/compare/runs
commands end to end."""

import json
import os
import re
import subprocess
import sys

import pytest
from cli_run import run

from course import data
from course.cli import main
from course.jsonfiles import json_bytes, jsonl_bytes
from course.reports import canonical
from course.runs import fields_digest

PROBLEMS = [{"id": "a", "prompt": "Compute 2+2.", "expected_answer": 4},
            {"id": "b", "prompt": "Compute 3*3.", "expected_answer": 9}]
ROLLOUTS = [{"id": "a", "completion": "Final: 4", "policy_mode": "correct"},
            {"id": "b", "completion": "Final: 6", "policy_mode": "slip"}]


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "provenance", lambda path: {
        "prompt_version": "final-line-v1", "sampling": {"temperature": 0.8}})
    problems, rollouts = tmp_path / "problems.jsonl", tmp_path / "rollouts.jsonl"
    problems.write_bytes(jsonl_bytes(PROBLEMS))
    rollouts.write_bytes(jsonl_bytes(ROLLOUTS))
    return problems, rollouts


def test_python_dash_m_course_help_lists_the_commands():
    done = subprocess.run([sys.executable, "-m", "course", "--help"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0
    for command in ("eval", "compare", "runs"):
        assert command in done.stdout


def test_eval_without_a_note_fails_clearly(files, tmp_path, capsys):
    problems, rollouts = files
    with pytest.raises(SystemExit) as caught:
        main(["eval", "--problems", str(problems), "--rollouts", str(rollouts),
              "--out", str(tmp_path / "run")])
    assert caught.value.code == 2
    assert "the following arguments are required: --note" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_eval_writes_a_run_and_refuses_to_overwrite_it(files, tmp_path, capsys):
    problems, rollouts = files
    argv = ["eval", "--problems", problems, "--rollouts", rollouts, "--note", "First look.",
            "--out", tmp_path / "run"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "1/2 pass, pass rate 50.0%" in out
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["passes"] == 1
    code, _, err = run(capsys, *argv)
    assert code == 2 and "already exists: runs are never overwritten" in err


@pytest.mark.parametrize(("line", "problem"), [
    ('{"id": "b", "prompt": "Compute 3*3."}', "field 'expected_answer': missing"),
    ('{"id": "b", "prompt": "Compute 3*3.", "expected_answer": "9"}',
     "field 'expected_answer': must be int, got str '9'"),
    ('{"id": "b", "prompt": ', "invalid JSON"),
])
def test_bad_data_line_gives_exit_2_with_file_line_field(files, tmp_path, capsys, line, problem):
    problems, rollouts = files
    problems.write_text(json.dumps(PROBLEMS[0]) + "\n" + line + "\n", encoding="utf-8")
    code, _, err = run(capsys, "eval", "--problems", problems, "--rollouts", rollouts,
                       "--note", "x", "--out", tmp_path / "run")
    assert code == 2
    assert err.startswith(f"course eval: error: {problems}:2: {problem}")
    assert not (tmp_path / "run").exists()


def test_missing_data_file_gives_exit_2(files, tmp_path, capsys):
    problems, _ = files
    code, _, err = run(capsys, "eval", "--problems", problems, "--rollouts",
                       tmp_path / "nope.jsonl", "--note", "x", "--out", tmp_path / "run")
    assert code == 2 and f"{tmp_path / 'nope.jsonl'}: file not found" in err


def test_compare_prints_the_report_and_refuses_a_changed_room(files, tmp_path, capsys):
    problems, rollouts = files
    for name in ("a", "b"):
        run(capsys, "eval", "--problems", problems, "--rollouts", rollouts, "--note", name,
            "--out", tmp_path / name)
    code, out, _ = run(capsys, "compare", tmp_path / "a", tmp_path / "b")
    assert code == 0
    assert "change B - A: +0.0 points" in out
    assert "flips: 0 fail->pass, 0 pass->fail, 2 unchanged" in out
    assert "verdict: not distinguishable from noise (N=2)" in out

    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    manifest["prompt_version"] = "final-line-v2"
    manifest["seal"] = fields_digest(manifest)  # resealed, so that the room is what refuses
    (tmp_path / "b" / "manifest.json").write_bytes(json_bytes(manifest))
    code, out, err = run(capsys, "compare", tmp_path / "a", tmp_path / "b")
    assert code == 2 and out == ""
    assert 'prompt_version differs (A: "final-line-v1", B: "final-line-v2")' in err


def test_runs_verify_exits_1_and_prints_each_difference(capsys, monkeypatch):
    monkeypatch.setitem(canonical.CANONICAL, "run_001", lambda: {"README.md": b"changed\n"})
    code, out, _ = run(capsys, "runs", "verify", "run_001")
    assert code == 1
    assert "run_001: README.md: differs from byte 0" in out
    assert "run_001: summary.json: missing from the regenerated run" in out


def test_runs_verify_checks_side_by_side_and_prints_in_the_order_asked(capsys):
    code, out, _ = run(capsys, "runs", "verify", "run_005", "run_001", "run_002")
    assert code == 0
    assert [line.split(":")[0] for line in out.splitlines()] == ["run_005", "run_001", "run_002"]
    code, _, err = run(capsys, "runs", "verify", "--jobs", "0")
    assert code == 2 and "--jobs: must be >= 1" in err
    code, _, err = run(capsys, "runs", "verify", "--jobs", "9" * 23)   # OverflowError before
    assert code == 2 and err.count("\n") == 1 and "--jobs: must be at most 32" in err


def test_runs_verify_and_list_on_the_committed_runs(capsys):
    code, out, _ = run(capsys, "runs", "verify", "run_001")
    assert code == 0
    assert re.fullmatch(r"run_001: ok \(byte-identical, rebuilt in \d+\.\d s\)\n", out), out
    code, out, _ = run(capsys, "runs", "list")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("run_001  eval ") and "Baseline:" in lines[0]
    # the notes start in one column, however long the kind (verifier_comparison)
    assert len({len(line) - len(line.split(None, 2)[2]) for line in lines}) == 1


def test_runs_regenerate_refuses_an_existing_folder_without_force(capsys):
    code, _, err = run(capsys, "runs", "regenerate", "run_001")
    assert code == 2 and "runs/run_001 already exists; pass --force" in err


# -- every expected error: one line on stderr, exit 2 ---------------------------------------------

def _no_tokenizer(monkeypatch):
    from course import tokens

    def missing():
        raise tokens.TokenizerError("token inspection needs tiktoken; install it with: X")
    monkeypatch.setattr(tokens, "encoding", missing)


@pytest.mark.parametrize(("argv", "prepare", "says"), [
    (["eval", "--problems", "{tmp}/none.jsonl", "--rollouts", "{tmp}/none.jsonl",
      "--note", "n", "--out", "{tmp}/run"], None, "none.jsonl: file not found"),
    (["runs", "regenerate", "run_999"], None, "'run_999' is not a canonical run"),
    (["tokens", "Final: 323"], _no_tokenizer, "install it with"),
    (["bandit", "--lr", "-1"], None, "lr: must be a finite number > 0"),
    (["score", "Final: 323"], None, "give a COMPLETION and --expected N"),
    (["kl", "--out", "{tmp}/file/run", "--note", "n"], None, "/file"),
    (["eval", "--problems", "{tmp}/none.jsonl", "--rollouts", "{tmp}/none.jsonl",
      "--scorer", "lenient", "--note", "n", "--out", "{tmp}/run"], None,
     "--scorer: unknown scorer version 'lenient'"),
    (["compare", "runs/run_019", "runs/run_001", "--note", "n", "--out", "{tmp}/cmp"], None,
     "scorer_version differs"),
], ids=["data", "run", "tokenizer", "usage", "usage-score", "filesystem", "usage-scorer",
        "locked-room"])
def test_every_expected_error_is_one_line_on_stderr_with_exit_2(
        argv, prepare, says, tmp_path, capsys, monkeypatch):
    (tmp_path / "file").write_text("a regular file, not a folder")
    if prepare:
        prepare(monkeypatch)
    code, _out, err = run(capsys, *(arg.format(tmp=tmp_path) for arg in argv))
    assert code == 2
    assert err.startswith(f"course {argv[0]}: error: ") and says in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("argv", [["bandit", "--steps", "2"], ["mdp", "--episodes", "2"],
                                  ["tokens", "Final: ３２３"], ["score", "--spec"]])
def test_a_terminal_that_is_not_utf8_gets_escapes_not_a_traceback(argv):
    """θ, π, r̄ and − cannot be written to an ASCII terminal: each becomes a \\u escape."""
    done = subprocess.run([sys.executable, "-m", "course", *argv], capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": "ascii"}, timeout=120)
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert b"\\u" in done.stdout and max(done.stdout) < 128


def test_a_reader_that_stops_reading_is_not_an_error():
    """`course runs list | head -2` used to end with "error: [Errno 32] Broken pipe"."""
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m course runs list | head -2"],
                          capture_output=True, text=True, timeout=120)
    assert done.stderr == "" and len(done.stdout.splitlines()) == 2, done


# -- options generated from the configs (course.commands.config_options) ---------------------

def _subparser(command: str):  # type: ignore[no-untyped-def]
    import argparse

    from course.cli import build_parser
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[command]


@pytest.mark.parametrize("command", ["mdp", "kl", "goodhart", "selection", "evaluation",
                                     "bandit", "rubrics", "peers"])
def test_a_commands_options_are_its_configs_fields(command):
    import dataclasses
    import importlib

    from course.commands.config_options import config_of, field_docs, option, shown_default
    module = importlib.import_module(f"course.commands.{command}")
    config = {"mdp": "MDPConfig", "kl": "KLConfig", "goodhart": "GoodhartConfig",
              "selection": "SelectionConfig", "evaluation": "EvalConfig",
              "bandit": "BanditConfig", "rubrics": "MatrixConfig",
              "peers": "ComparisonConfig"}[command]
    config_type = getattr(module, config)
    parser = _subparser({"selection": "select", "evaluation": "eval"}.get(command, command))
    actions = {a.dest: a for a in parser._actions}
    docs = field_docs(config_type)
    defaults = {f.name: f.default for f in dataclasses.fields(config_type)}
    for name in module.OPTIONS:
        action = actions[name]
        assert action.option_strings == [option(name)]
        assert action.help.startswith(docs[name])
        if defaults[name] is dataclasses.MISSING:
            assert action.required and "(default" not in action.help
            continue
        assert action.default == defaults[name] or (command, name) == ("bandit", "steps")
        assert action.help.endswith(f" (default {shown_default(defaults[name])})")
        assert "`" not in action.help
    # with no option given, the command runs the canonical config
    if command in ("evaluation", "bandit"):
        return    # eval: no defaults for what it measures; bandit: steps are decided later
    given = parser.parse_args(["--out", "x", "--note", "n"] if command == "selection" else [])
    assert config_of(config_type, given, module.OPTIONS) == config_type()


def test_learns_options_are_the_fields_of_each_models_config():
    """`course learn` takes each model's options from its config: a field both configs have is
    one option whose help carries each docstring and default; an option left out leaves the
    field at its config's default; an option of one model only is refused for the other."""
    import dataclasses

    from course.commands import learn
    from course.commands.config_options import config_of, field_docs, option, shown_default
    parser = _subparser("learn")
    actions = {a.dest: a for a in parser._actions}
    for model, config in learn.CONFIGS.items():
        docs = field_docs(config)
        defaults = {f.name: f.default for f in dataclasses.fields(config)}
        for name in learn.OPTIONS[model]:
            action = actions[name]
            assert action.option_strings == [option(name)] and action.default is None
            assert docs[name] in action.help and "`" not in action.help
            if not isinstance(defaults[name], bool):
                assert shown_default(defaults[name]) in action.help.rsplit("(default", 1)[1]
        assert config_of(config, parser.parse_args(["--model", model]),
                         learn.OPTIONS[model]) == config()
    only = {model: set(names) - set(learn.OPTIONS[other])
            for (model, names), other in zip(learn.OPTIONS.items(), reversed(learn.OPTIONS),
                                             strict=True)}
    assert only == {"table": {"batch_size", "held_out", "redraws"},
                    "tiny-lm": {"prompts", "group", "temperature", "warmup", "max_new"}}


def test_every_help_fits_80_columns(monkeypatch):
    import argparse

    from course.cli import build_parser
    monkeypatch.setenv("COLUMNS", "80")
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in {"course": parser, **subparsers.choices}.items():
        text = command.format_help()
        assert max(len(line) for line in text.splitlines()) <= 80, (name, text)


@pytest.mark.parametrize("argv", [["mdp", "--episodes", "0"], ["mdp", "--baseline", "batch"],
                                  ["goodhart", "--proxy", "strict"]])
def test_a_value_the_config_refuses_is_one_line(argv, capsys):
    code, _out, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and argv[1][2:] in err


def _docs_by_ast(config: type) -> dict[str, str]:
    """Each field's docstring as Python's parser reads the class: the reference for the
    pattern of `field_docs` (before constants and backticks are rendered)."""
    import ast
    import inspect
    import itertools
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(config))).body[0]
    assert isinstance(body, ast.ClassDef)
    return {statement.target.id: " ".join(following.value.value.split())
            for statement, following in itertools.pairwise(body.body)
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)}


@pytest.mark.parametrize("command", ["mdp", "kl", "goodhart", "selection", "evaluation",
                                     "bandit", "rubrics", "peers"])
def test_field_docs_reads_every_docstring_python_does(command):
    import importlib
    import re

    from course.commands.config_options import field_docs
    module = importlib.import_module(f"course.commands.{command}")
    config = next(value for name, value in vars(module).items()
                  if name.endswith("Config") and isinstance(value, type))
    read = field_docs(config)
    reference = _docs_by_ast(config)
    assert set(read) == set(reference)

    def words(text: str) -> list[str]:      # a named constant becomes its value: no words
        return re.findall(r"[a-z]+", re.sub(r"`[A-Z][A-Z0-9_]*`", "", text))
    for name, text in reference.items():
        assert words(read[name]) == words(text), name
