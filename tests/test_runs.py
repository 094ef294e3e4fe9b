"""Run folders: written whole or not at all, never overwritten, and canonical runs rebuilt
byte for byte."""

import os
import shutil
from pathlib import Path

import pytest

from course import runs
from course.reports import canonical

TOY = {"README.md": b"# toy\n", "summary.json": b'{"n": 1}\n', "plots/curve.png": b"\x89PNG"}


@pytest.fixture
def toy_registry(monkeypatch):
    """A registry with one tiny canonical run, so these tests need no data files."""
    monkeypatch.setattr(canonical, "CANONICAL", {"toy": lambda: dict(TOY)})


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# -- write_run ----------------------------------------------------------------------------------

def test_write_run_writes_every_file_including_subfolders(tmp_path):
    runs.write_run(tmp_path / "run_a", TOY)
    assert runs.read_files(tmp_path / "run_a") == TOY


def test_write_run_refuses_to_overwrite_and_leaves_the_old_run_intact(tmp_path):
    runs.write_run(tmp_path / "run_a", TOY)
    with pytest.raises(runs.RunError, match="already exists: runs are never overwritten"):
        runs.write_run(tmp_path / "run_a", {"README.md": b"new"})
    assert runs.read_files(tmp_path / "run_a") == TOY
    assert leftovers(tmp_path) == ["run_a"]


@pytest.mark.parametrize("interruption", [OSError("disk full"), KeyboardInterrupt()])
def test_write_run_interrupted_mid_write_leaves_nothing_behind(tmp_path, monkeypatch,
                                                                interruption):
    calls = []
    real_write = Path.write_bytes

    def failing_write(self, content):
        calls.append(self.name)
        if len(calls) == 2:  # the first file is already on disk when the second one fails
            raise interruption
        return real_write(self, content)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    # A filesystem error becomes a RunError that names the folder; Ctrl-C stays itself.
    expected = runs.RunError if isinstance(interruption, OSError) else type(interruption)
    with pytest.raises(expected):
        runs.write_run(tmp_path / "run_a", TOY)
    assert len(calls) == 2
    assert leftovers(tmp_path) == []


# -- canonical runs: verify and regenerate --------------------------------------------------------

def test_regenerate_writes_the_registered_files_and_refuses_without_force(tmp_path,
                                                                          toy_registry):
    canonical.regenerate("toy", root=tmp_path)
    assert runs.read_files(tmp_path / "toy") == TOY
    with pytest.raises(runs.RunError, match="already exists; pass --force"):
        canonical.regenerate("toy", root=tmp_path)


def test_regenerate_with_force_replaces_the_folder_and_cleans_up(tmp_path, toy_registry):
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "stale.txt").write_bytes(b"from an older version")
    canonical.regenerate("toy", root=tmp_path, force=True)
    assert runs.read_files(tmp_path / "toy") == TOY  # the stale file is gone
    assert leftovers(tmp_path) == ["toy"]  # no scratch folder left


def test_regenerate_keeps_the_old_run_when_the_swap_fails(tmp_path, toy_registry, monkeypatch):
    canonical.regenerate("toy", root=tmp_path)
    old = runs.read_files(tmp_path / "toy")
    real_rename = os.rename

    def rename(source, target):
        if Path(target) == tmp_path / "toy" and Path(source).name != "previous":
            # moving the new folder into place fails; moving the old one back still works
            raise OSError("simulated crash during the swap")
        return real_rename(source, target)

    monkeypatch.setattr(canonical.os, "rename", rename)
    monkeypatch.setitem(canonical.CANONICAL, "toy", lambda: {"README.md": b"# changed\n"})
    with pytest.raises(OSError, match="simulated crash"):
        canonical.regenerate("toy", root=tmp_path, force=True)
    monkeypatch.undo()
    assert runs.read_files(tmp_path / "toy") == old
    assert leftovers(tmp_path) == ["toy"]


def test_verify_detects_a_one_byte_change_in_a_copied_run(tmp_path, toy_registry):
    canonical.regenerate("toy", root=tmp_path)
    assert canonical.verify(root=tmp_path) == {"toy": []}
    summary = tmp_path / "toy" / "summary.json"
    content = bytearray(summary.read_bytes())
    content[7] ^= 1  # '1' -> '0'
    summary.write_bytes(bytes(content))
    assert canonical.verify(root=tmp_path) == {
        "toy": ["summary.json: differs from byte 7 (committed 9 bytes, regenerated 9 bytes)"]}


def test_verify_reports_missing_and_extra_files_and_missing_folders(tmp_path, toy_registry):
    assert canonical.verify(root=tmp_path)["toy"][0].endswith(
        "is missing (create it with `course runs regenerate toy`)")
    canonical.regenerate("toy", root=tmp_path)
    (tmp_path / "toy" / "README.md").unlink()
    (tmp_path / "toy" / "notes.txt").write_bytes(b"hand-edited")
    assert canonical.verify(root=tmp_path)["toy"] == [
        "README.md: regenerated but not committed",
        "notes.txt: missing from the regenerated run"]


def test_unknown_run_names_are_refused(toy_registry):
    with pytest.raises(runs.RunError, match="'run_999' is not a canonical run; known: toy"):
        canonical.verify(["run_999"])


# -- the real canonical run_001 -------------------------------------------------------------------

def test_run_001_regenerates_byte_identically_twice(tmp_path):
    canonical.regenerate("run_001", root=tmp_path)
    first = runs.read_files(tmp_path / "run_001")
    canonical.regenerate("run_001", root=tmp_path, force=True)
    assert runs.read_files(tmp_path / "run_001") == first
    assert sorted(first) == ["README.md", "manifest.json", "results.jsonl", "summary.json"]


def test_committed_run_001_matches_the_code_and_data():
    assert canonical.verify(["run_001"]) == {"run_001": []}


def test_a_one_byte_change_in_a_copy_of_run_001_is_detected(tmp_path):
    canonical.regenerate("run_001", root=tmp_path / "fresh")
    shutil.copytree(tmp_path / "fresh" / "run_001", tmp_path / "copy" / "run_001")
    results = tmp_path / "copy" / "run_001" / "results.jsonl"
    content = bytearray(results.read_bytes())
    content[-2] ^= 0x20  # flip one bit near the end: '}' -> ']'
    results.write_bytes(bytes(content))
    difference, seal = canonical.verify(["run_001"], root=tmp_path / "copy")["run_001"]
    assert difference.startswith(f"results.jsonl: differs from byte {len(content) - 2} ")
    written = (tmp_path / "fresh" / "run_001" / "results.jsonl").read_bytes()
    assert seal.endswith(f"results.jsonl: sha256 {runs.sha256_bytes(bytes(content))[:12]}... "
                         f"differs from the {runs.sha256_bytes(written)[:12]}... that "
                         "manifest.json records: the file changed after the run was written")


def test_source_date_epoch_dates_ad_hoc_runs_but_never_canonical_ones(monkeypatch):
    from course import runs as runs_module

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    dated = runs_module.manifest(kind="eval", note="n", config={}, record_git=True)
    assert dated["created"] == "2023-11-14T22:13:20Z"
    pinned = runs_module.manifest(kind="eval", note="n", config={}, record_git=False)
    assert "created" not in pinned and pinned["git_commit"] is None


# -- a change of scorer: stale runs -------------------------------------------------------------

def test_a_run_measured_by_another_scorer_version_is_stale_not_rebuilt(tmp_path, monkeypatch):
    """After a change of scorer, a committed run that names the old version is reported as
    stale, with the command that regenerates it, and never rebuilt (`PINNED` runs excepted)."""
    from course.jsonfiles import json_bytes
    from course.scorer import SCORER_VERSION

    def built(version):
        return {**TOY, "manifest.json": json_bytes({"kind": "toy", "scorer_version": version})}

    def refuse():
        raise AssertionError("a stale run is not rebuilt")

    monkeypatch.setattr(canonical, "CANONICAL", {"old": refuse, "pinned": lambda: built("v0")})
    monkeypatch.setattr(canonical, "PINNED", {"pinned": "v0"})
    runs.write_run(tmp_path / "old", built("strict-v0"))
    runs.write_run(tmp_path / "pinned", built("v0"))
    assert [canonical.stale(name, tmp_path) for name in ("old", "pinned")] == ["strict-v0", None]
    assert canonical.verify(root=tmp_path) == {
        "old": [f"stale: measured by strict-v0, built with {SCORER_VERSION} now; "
                "`course runs regenerate --scorer-dependent` rewrites it"],
        "pinned": []}
