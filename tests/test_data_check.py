"""`course data check` on a changed data folder: which file and line differ, and advice that
never runs the generator over a hand edit (the generator owns its files; a problem is added in
its tables). The committed data's own check is tests/test_data.py's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_run import run

from course import datagen

ADDED = '{"id": "dev-061", "prompt": "Compute 2*3.", "expected_answer": 6}\n'


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of data/, the one `course data check` reads."""
    copy = tmp_path / "data"
    shutil.copytree(datagen.DATA_DIR, copy)
    monkeypatch.setattr("course.commands.data.DATA_DIR", copy)
    monkeypatch.setattr("course.commands.data.check", lambda: datagen.check(copy))
    return copy


def test_a_problem_added_by_hand_is_shown_and_moved_into_the_generator(data: Path, capsys):
    with (data / "problems" / "dev.jsonl").open("a") as stream:
        stream.write(ADDED)
    code, out, _ = run(capsys, "data", "check")
    assert code == 1
    assert f"{data}/problems/dev.jsonl:61: the file has '{ADDED.strip()}', the generator " \
           "writes nothing\n" in out
    assert "a line added or changed by hand is lost" in out and "SHAPES" in out \
        and "PLANS" in out, out


def test_a_hand_written_file_changed_is_described_again_by_the_generator(data: Path, capsys):
    golden = data / "golden" / "correct.jsonl"
    golden.write_bytes(b"".join(golden.read_bytes().splitlines(keepends=True)[:-1]))
    code, out, _ = run(capsys, "data", "check")
    assert code == 1 and ".jsonl:" not in out
    assert out.endswith("No generated file differs: `course data generate` rewrites "
                        "provenance.json and README.md (and a missing file) and leaves the "
                        "hand-written files (golden/correct.jsonl, golden/exploits.jsonl, "
                        "kata/kata_m0.jsonl, kata/kata_m5.jsonl) as they are; review the diff.\n")
