"""The road beyond MkDocs stays open: ProperDocs, the MkDocs 1.x fork (docs/teacher/generator.md),
builds the site as MkDocs does.

A small site with a page of each kind the course makes (a lesson whose Python block shows its
output, a Try-it box, a teacher block, a lab executed at build, the run pages of the fixture
runs) is built strictly by MkDocs and by ProperDocs from the same mkdocs.yml, hooks and
overrides, in the student edition. Every page ProperDocs writes is the page MkDocs writes, but
for the `generator` meta tag that names it. ProperDocs then builds the teacher edition of the
lesson alone (the edition changes what the plugin keeps of a page, not how a lab or a run page
is made): it shows the teacher block and marks the page; the student edition does neither.
The MkDocs build is also the control of tests/site/test_build.py's miniature repositories with
one mistake each: the same set-up without a mistake passes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sitebuild import FIXTURE_RUNS, MINIMAL_NAV, Build, build_site, mini_repo, site_pages

PROPERDOCS = Path(sys.executable).with_name("properdocs")
TEACHER_ONLY = "Only the teacher edition shows this sentence."
DOCS = {
    "index.md": ("# A lesson\n\n[The runs](runs/index.md) and [the lab](labs/lab_mini.py).\n\n"
                 "```python\nprint(sum(range(5)))\n```\n\n"
                 "```try-it\nscorer\ncompletion: Final: 0323\nexpected: 323\n```\n\n"
                 f"!!! teacher \"For the teacher\"\n    {TEACHER_ONLY}\n"),
    "labs/lab_mini.py": "# %% [markdown]\n# # A lab\n\n# %%\nprint(6 * 7)\n",
}
NAV = MINIMAL_NAV + "  - Lab: labs/lab_mini.py\n"
GENERATOR = re.compile(rb'<meta name="generator" content="[^"]*">')


def built(root: Path, name: str, edition: str, generator: Path,
          extra_runs: Path | None = FIXTURE_RUNS) -> Build:
    build = build_site(root / name, extra_runs=extra_runs, config=root / "mkdocs.yml",
                       edition=edition, generator=generator)
    assert build.returncode == 0, f"{generator.name} ({edition}):\n{build.log[-3000:]}"
    return build


def test_properdocs_builds_every_kind_of_page_as_mkdocs_does(tmp_path):
    root = mini_repo(tmp_path / "repo", DOCS, nav=NAV)
    mkdocs = built(root, "mkdocs", "student", Path(sys.executable).with_name("mkdocs")).site
    student = built(root, "properdocs", "student", PROPERDOCS).site
    alone = DOCS["index.md"].replace(" and [the lab](labs/lab_mini.py)", "")
    lesson = mini_repo(tmp_path / "lesson", {"index.md": alone})
    teacher = built(lesson, "properdocs-teacher", "teacher", PROPERDOCS, extra_runs=None).site
    pages = site_pages(mkdocs)
    assert {"", "labs/lab_mini/", "runs/run_fixture/"} <= set(pages)
    assert site_pages(student) == pages
    home = (mkdocs / "index.html").read_text(encoding="utf-8")
    assert "try-it" in home and "10" in home and "42" in (
        mkdocs / "labs" / "lab_mini" / "index.html").read_text(encoding="utf-8")
    differing = [
        str(path.relative_to(mkdocs)) for path in sorted(mkdocs.rglob("*"))
        if path.is_file() and path.suffix in {".html", ".json", ".py", ".png", ".txt"}
        and GENERATOR.sub(b"", path.read_bytes())
        != GENERATOR.sub(b"", (student / path.relative_to(mkdocs)).read_bytes())]
    assert differing == [], differing
    assert TEACHER_ONLY not in home and "Teacher edition" not in home
    shown = (teacher / "index.html").read_text(encoding="utf-8")
    assert TEACHER_ONLY in shown and "Teacher edition" in shown
