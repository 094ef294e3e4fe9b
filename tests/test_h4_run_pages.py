"""A run page says what a `null` under Provenance means, for the fields that are null there
(issue 31: a reader met `null` seeds and commits with no word on why)."""

from __future__ import annotations

import html
import json
import re

from course.paths import RUNS_DIR
from course_site import run_pages


def provenance_section(page: str) -> str:
    return page.split("## Provenance")[1].split("## Raw material")[0]


def named_nulls(page: str) -> list[str]:
    """The field names the page's note on `null` explains, in order."""
    notes = provenance_section(page).split("marks a field with no value")
    if len(notes) == 1:
        return []
    return [html.unescape(name) for name in re.findall(r"<li><code>(.*?)</code>:", notes[1])]


def test_run_001_explains_its_null_seed_and_commit():
    page = run_pages.run_page(RUNS_DIR / "run_001")
    assert named_nulls(page) == ["seed", "git_commit"]
    section = provenance_section(page)
    assert "nothing in this run is drawn at random" in section
    assert "a committed file cannot name the commit that holds it" in section


def test_every_null_of_every_canonical_run_is_explained_with_its_own_words():
    for manifest_path in sorted(RUNS_DIR.glob("run_*/manifest.json")):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        leaves = run_pages.leaves_and_tables(
            {k: manifest[k] for k in run_pages.PROVENANCE_KEYS if k in manifest},
            tables=False)[0]
        nulls = [name for name, value in leaves if value is None]
        assert set(nulls) <= set(run_pages.NULL_MEANS), manifest_path
        page = run_pages.run_page(manifest_path.parent)
        assert named_nulls(page) == nulls, manifest_path


def test_a_page_without_nulls_says_nothing_about_them():
    assert run_pages.null_notes([("seed", 0), ("git_commit", "abc")]) == []


def test_an_unknown_null_field_is_escaped_and_said_to_be_unrecorded():
    block = "\n".join(run_pages.null_notes([("config.<script>x", None)]))
    assert "<script>" not in block and "&lt;script&gt;" in block
    assert "not recorded for this kind of run." in block
