"""docs/teacher/extending.md, followed in scratch copies: the page check's messages the guide
shows are the ones it prints, its lesson example and Try-it box pass the page check, its Try-it
table is `try_it.FIELDS`, and a problem added as it says leaves `course data check` green."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sitebuild import REPO
from test_predictions import order_problems

from course import data, datagen
from course_site import fences, predictions, try_it

sys.path.insert(0, str(REPO / "scripts"))
from check_page import problems

if not (REPO / "docs" / "teacher").is_dir():
    pytest.skip("tests the teacher's guide (docs/teacher/), which the students' copy has not",
                allow_module_level=True)
GUIDE = (REPO / "docs" / "teacher" / "extending.md").read_text(encoding="utf-8")


def examples() -> list[str]:
    """The guide's examples: the bodies of its ````markdown fences, in order."""
    lines = GUIDE.split("\n")
    return [fence.code(lines) for fence in fences.fenced_blocks(lines)
            if fence.fence == "````" and fence.words()[:1] == ["markdown"]]


def check_lesson(tmp_path: Path, text: str) -> list[str]:
    """The page check of docs/lessons/m7-new.md holding `text`, listed in the nav."""
    (tmp_path / "mkdocs.yml").write_text("nav:\n  - Milestone 7: lessons/m7-new.md\n")
    page = tmp_path / "docs" / "lessons" / "m7-new.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    return problems(page, tmp_path / "docs", tmp_path / "mkdocs.yml")


def test_the_guides_messages_are_the_page_checks(tmp_path: Path):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path)
    page = tmp_path / "docs" / "lessons" / "m7-new.md"
    page.write_text("# Milestone 7: a new lesson\n\nRead [the rules](../rules.md#7-the-noise-rul)"
                    " first, and [Milestone 8](m8-next.md).\n\n```try-it\nscorer\ncompletoin: "
                    "Final: 12\n```\n\n" + "word " * 9400, encoding="utf-8")
    found = problems(page, tmp_path / "docs", tmp_path / "mkdocs.yml")
    assert len(found) == 5 and all(f"`{line}`" in GUIDE for line in found), found


def test_the_lesson_example_passes_the_page_check_and_prints_what_it_quotes(tmp_path: Path):
    lesson = examples()[0]
    assert check_lesson(tmp_path, f"# Milestone 7\n\n{lesson}") == []
    assert order_problems(lesson) == []
    lines = lesson.split("\n")
    block = next(fence for fence in fences.fenced_blocks(lines) if fence.is_python())
    ran = subprocess.run([sys.executable, "-c", block.code(lines)], cwd=tmp_path, text=True,
                         capture_output=True, env={**os.environ, "MPLBACKEND": "Agg"}, check=True)
    assert ran.stdout == ("14 of 60 answers are negative\nnegative answers: ten or more\n"
                          ) and "14 of 60:" in lesson
    predictions.with_placeholders(lesson, "docs/m7.md", lesson)     # its box, as the build reads it
    predictions.resolve("docs/m7.md", [{"stdout": ran.stdout}])
    [box] = predictions._boxes.pop("docs/m7.md")
    assert (box.spec and box.spec.kind, box.key) == ("choice", "ten or more")


def test_the_try_it_example_passes_and_the_table_is_try_its_fields(tmp_path: Path):
    assert check_lesson(tmp_path, f"# Milestone 7\n\n{examples()[1]}") == []
    rows = [line for line in GUIDE.split("\n") if line.startswith("| `")
            or line.startswith("| | | `")]
    for kind, fields in try_it.FIELDS.items():
        assert any(row.startswith(f"| `{kind}` |") for row in rows), kind
        for name, field in fields.items():
            default = "(none: required)" if field.default is None else f"`{field.default}`"
            assert any(f"| `{name}` | {field.must_be} | {default} |" in row for row in rows), name


def test_a_problem_added_as_the_guide_says_leaves_the_data_check_green(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert '-    "dev": {"product": 8,' in GUIDE and '+    "dev": {"product": 9,' in GUIDE
    assert datagen.PLANS["dev"]["product"] == 8
    folder = tmp_path / "data"
    shutil.copytree(datagen.DATA_DIR, folder)
    before = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    monkeypatch.setitem(datagen.PLANS["dev"], "product", 9)
    datagen.write_data(datagen.build_data(source=folder), folder, replace=True)  # generate
    assert datagen.check(folder) == []
    changed = {path.relative_to(folder).as_posix() for path, content in before.items()
               if path.read_bytes() != content}
    assert changed == {"README.md", "provenance.json", "problems/dev.jsonl",
                       "problems/holdout.jsonl", "rollouts/frozen_v1.jsonl",
                       "rollouts/frozen_v2.jsonl", "rollouts/holdout_v1.jsonl",
                       "rollouts/holdout_v2.jsonl", "selection/pack_n8.jsonl"}
    dev = data.load_problems(folder / "problems" / "dev.jsonl")
    assert len(dev) == 61 and dev[0]["prompt"].startswith("Compute 17*19.")
    provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["files"]["data/problems/dev.jsonl"]["records"] == 61
