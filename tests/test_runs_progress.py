"""`course runs verify` shows on stderr which run it is rebuilding, as it starts: one line per
run in a log, one line redrawn in place on a terminal; its report on stdout stays as it was.

The rebuilds are stand-ins that return the committed files of the run (so each run is
byte-identical, in a moment) after looking at what stderr already shows: no assertion here
depends on how long anything takes."""

from __future__ import annotations

import io
import multiprocessing
import re
import sys
import time

import pytest

from course import progress, runs
from course.cli import main
from course.paths import RUNS_DIR
from course.reports import canonical

KINDS = {"run_001": "eval", "run_002": "selection", "run_005": "kl_tradeoff"}
"""Three fast canonical runs and the kind their committed manifests name."""


def ok_lines(names: list[str]) -> str:
    """A pattern for the report on stdout, as it was before any progress was shown."""
    return "".join(rf"{name}: ok \(byte-identical, rebuilt in \d+\.\d s\)\n" for name in names)


def watching(seen: dict[str, str], name: str, stderr: io.StringIO):
    """A rebuild of `name` that first records what `stderr` shows, then returns the committed
    files."""
    def rebuild() -> runs.RunFiles:
        seen[name] = stderr.getvalue()
        return runs.read_files(RUNS_DIR / name)
    return rebuild


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_each_run_is_named_on_stderr_before_it_is_rebuilt(monkeypatch, capsys):
    stderr, seen = io.StringIO(), {}
    for name in KINDS:
        monkeypatch.setitem(canonical.CANONICAL, name, watching(seen, name, stderr))
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main(["runs", "verify", "--jobs", "1", *KINDS]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(ok_lines(list(KINDS)), out), out          # stdout as it always was
    lines = stderr.getvalue().splitlines()
    assert lines[0] == "verify: 3 runs, 0 stale (not rebuilt), 3 to rebuild with --jobs 1"
    # the first progress line is on stderr before the first run is rebuilt
    assert seen["run_001"].splitlines()[1:] == [lines[1]]
    assert re.fullmatch(r"verify: \[> {15}\] 0/3 run_001 \(eval\) started at \d+ s", lines[1])
    for k, (name, kind) in enumerate(KINDS.items()):
        # before each run is rebuilt, its line says how many are done, and which it starts
        started = seen[name].splitlines()[-1]
        assert re.fullmatch(rf"verify: \[=*> *\] {k}/3 {name} \({kind}\) started at \d+ s",
                            started), started
        # one line per run in a log (not a terminal)
        assert [line for line in lines if name in line] == [started]
    assert re.fullmatch(r"verify: \[=+\] 3/3 done in \d+ s", lines[-1])
    assert len(lines) == 1 + len(KINDS) + 1 and "\r" not in stderr.getvalue()


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                    reason="the worker processes must inherit the stand-in rebuilds")
def test_in_processes_each_run_is_named_while_it_is_being_rebuilt(monkeypatch, capsys,
                                                                   tmp_path):
    """With --jobs 2 the runs are rebuilt in worker processes: each stand-in waits (a minute
    at most) for its run's line on stderr, and matches the committed run only if it came."""
    log = tmp_path / "stderr.txt"

    def waiting(name: str):
        def rebuild() -> runs.RunFiles:
            deadline = time.monotonic() + 60
            while f"{name} ({KINDS[name]}) started" not in log.read_text(encoding="utf-8"):
                if time.monotonic() > deadline:
                    return {}                         # every file missing: verify says so
                time.sleep(0.05)
            return runs.read_files(RUNS_DIR / name)
        return rebuild

    for name in KINDS:
        monkeypatch.setitem(canonical.CANONICAL, name, waiting(name))
    with open(log, "w", encoding="utf-8") as stderr:
        monkeypatch.setattr(sys, "stderr", stderr)
        code = main(["runs", "verify", "--jobs", "2", "run_005", "run_001", "run_002"])
    out = capsys.readouterr().out
    assert code == 0 and re.fullmatch(ok_lines(["run_005", "run_001", "run_002"]), out), out
    lines = log.read_text(encoding="utf-8").splitlines()
    for name in KINDS:
        assert len([line for line in lines if name in line]) == 1, lines
    assert lines[-1].startswith("verify: [================] 3/3 done in ")


def test_on_a_terminal_one_line_is_redrawn_in_place(monkeypatch, capsys):
    """The real rebuild of run_001 (it scores 60 results) draws no bar of its own over it."""
    stderr, seen = Terminal(), {}
    monkeypatch.setitem(canonical.CANONICAL, "run_002", watching(seen, "run_002", stderr))
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("COLUMNS", "50")
    assert main(["runs", "verify", "--jobs", "1", "run_001", "run_002"]) == 0
    assert re.fullmatch(ok_lines(["run_001", "run_002"]), capsys.readouterr().out)
    header, drawn, end = stderr.getvalue().split("\n")
    assert header == "verify: 2 runs, 0 stale (not rebuilt), 2 to rebuild with --jobs 1"
    assert end == "" and "scoring" not in drawn and not progress.muted
    shown = [line.rstrip() for line in drawn.split("\r") if line.strip()]
    # run_002's line is on the terminal when it is rebuilt, cut to the terminal's width
    assert seen["run_002"].split("\r")[-1] == "verify: [========>       ] 1/2 run_002 (select..."
    assert shown[0] == "verify: [>               ] 0/2 run_001 (eval) 0 s"   # drawn first
    assert all(len(line) <= 49 for line in shown)
    assert re.fullmatch(r"verify: \[=+\] 2/2 done in \d+ s", shown[-1])


def test_stdout_keeps_each_difference_and_no_progress(monkeypatch, capsys):
    monkeypatch.setitem(canonical.CANONICAL, "run_001", lambda: {"README.md": b"changed\n"})
    assert main(["runs", "verify", "run_001"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("run_001: README.md: differs from byte 0") and "verify" not in out
    assert "run_001 (eval) started at" in err


def test_a_run_without_a_readable_manifest_is_named_without_a_kind():
    assert canonical.committed_kind("run_001") == "eval"
    assert canonical.committed_kind("run_999") == ""


def test_a_long_run_shows_how_far_it_has_got_and_the_time_left(monkeypatch, capsys, tmp_path):
    """A stand-in rebuild whose work is three units (`progress.Tally`, as the trainings of the
    long runs count): in a log, while it runs, a line every HEARTBEAT seconds (0 here) says
    how many units are done and estimates the time left."""
    log = tmp_path / "stderr.txt"
    monkeypatch.setattr(progress.RunsStatus, "HEARTBEAT", 0.0)

    def counting() -> runs.RunFiles:
        for done in progress.Tally(3).counted(range(3)):
            deadline = time.monotonic() + 60       # the ticker writes once a second
            while f"{done}/3" not in log.read_text(encoding="utf-8") and done:
                if time.monotonic() > deadline:
                    return {}
                time.sleep(0.05)
        return runs.read_files(RUNS_DIR / "run_001")

    monkeypatch.setitem(canonical.CANONICAL, "run_001", counting)
    with open(log, "w", encoding="utf-8") as stderr:
        monkeypatch.setattr(sys, "stderr", stderr)
        assert main(["runs", "verify", "--jobs", "1", "run_001"]) == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    assert any(re.fullmatch(r"verify: \[> {15}\] 0/1 run_001 \(eval\) \d+ s, 1/3, about \d+ s "
                            r"left", line) for line in lines), lines
    assert any(re.fullmatch(r"verify: \[> {15}\] 0/1 run_001 \(eval\) \d+ s, 2/3, about \d+ s "
                            r"left", line) for line in lines), lines
    assert progress.listener is None and re.fullmatch(ok_lines(["run_001"]),
                                                      capsys.readouterr().out)


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                    reason="the worker processes must inherit the stand-in rebuilds")
def test_stale_runs_are_regenerated_side_by_side_and_a_stopped_command_resumes(
        monkeypatch, capsys, tmp_path):
    """`course runs regenerate --scorer-dependent --jobs 2`: the stale runs in two processes,
    a comparison (run_016) only once the others are written; a run that fails stops the
    command, every run written before it stays written, and the command started again
    rebuilds only what is still stale. The rebuilds are stand-ins that record what they
    write (the real runs are never touched)."""
    written = tmp_path / "written.txt"
    written.write_text("", encoding="utf-8")
    names = [*KINDS, "run_016"]

    def still_stale(name: str) -> str | None:
        done = written.read_text(encoding="utf-8").split()
        return "strict-v0" if name in names and name not in done else None

    def stand_in(name: str, force: bool = False):
        done = written.read_text(encoding="utf-8").split()
        if name == "run_016":                 # it reads the others: they are written
            assert set(KINDS) <= set(done), done
        if name == "run_005" and (tmp_path / "fail-once").exists():
            (tmp_path / "fail-once").unlink()
            raise runs.RunError("run_005: stopped on purpose")
        with open(written, "a", encoding="utf-8") as out:
            out.write(f"{name}\n")
        return RUNS_DIR / name

    monkeypatch.setattr("course.commands.runs.stale", still_stale)
    monkeypatch.setattr(canonical, "regenerate", stand_in)
    (tmp_path / "fail-once").touch()
    assert main(["runs", "regenerate", "--scorer-dependent", "--jobs", "2"]) == 2
    first = written.read_text(encoding="utf-8").split()
    assert "run_005" not in first and "run_016" not in first
    capsys.readouterr()
    assert main(["runs", "regenerate", "--scorer-dependent", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    again = written.read_text(encoding="utf-8").split()[len(first):]
    assert sorted(again) == sorted(n for n in names if n not in first) and again[-1] == "run_016"
    assert re.fullmatch("".join(rf"\[{k}/{len(again)}\] wrote runs/run_0\d\d \(\d+\.\d s\)\n"
                                for k in range(1, len(again) + 1)), out), out
    assert main(["runs", "regenerate", "--scorer-dependent"]) == 0
    assert capsys.readouterr().out.startswith("no stale run")
