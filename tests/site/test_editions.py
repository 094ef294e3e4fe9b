"""The two editions of the site and the students' copy (site_hooks/editions.py,
scripts/student_copy.sh).

- The student edition leaks nothing: no teacher-only text appears in any file the session's
  strict build wrote (pages, search index, sitemap, downloads, the Try-it files). The texts are
  read from the teacher-only sources themselves (`teacher_only_texts`), so a new teacher block,
  key entry, solution or guide page is covered without editing this file.
- The teacher edition, kept lean: a second strict build of the whole site would cost CI another
  half a minute or more (measured: 23 to 32 s here, alone on 2 cores), so the real mkdocs.yml,
  hooks, overrides and the guide's nav section are built around a one-page site in both editions
  (about 9 s): the mark on every page, the guide's pages and nav section, the teacher block, and
  the page counts of the two editions.
- The students' copy: no teacher/, no key, no teacher-only text, the Classroom workflow.
- A malformed marker fails the strict build naming page and line.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sitebuild import REPO, Build, build_site, mini_repo, page_file, site_pages

from course_site import editions

SHORTEST = 50
"""Characters: a shorter fragment of teacher-only text may well be said elsewhere too."""
_NOT_PROSE = re.compile(r"`[^`\n]*`|\$[^$\n]*\$|\]\([^)\n]*\)|<!--.*?-->|->|<-|[*_\[\]|<>#{}\\]"
                        r"|^\s*(?:[-+]|\d+\.)\s")
"""What Markdown turns into something else: code spans and maths (shown differently, and often
shown elsewhere too), link targets, comments, arrows, emphasis and other markup."""
_TAG = re.compile(r"<[^>]*>")
MARK = "Teacher edition"


def fragments(markdown: str) -> list[str]:
    """The runs of plain prose in `markdown`, whitespace collapsed, long enough to be taken as
    teacher-only: a line at a time (so a reflowed paragraph still matches), fenced code left out
    (code is shared by design: imports, the course's own calls)."""
    lines = markdown.split("\n")
    for fence in editions.fenced_blocks(lines):
        lines[fence.open:fence.close + 1] = [""] * (fence.close + 1 - fence.open)
    pieces = (" ".join(piece.split()) for line in lines for piece in _NOT_PROSE.split(line))
    return [piece for piece in pieces if len(piece) >= SHORTEST]


def _key_files(root: Path) -> list[Path]:
    """The kata keys, wherever they are (data/kata/ or teacher/kata/)."""
    return sorted([*root.glob("data/kata/teacher_key_*.json"),
                   *root.glob("teacher/kata/teacher_key_*.json")])


def _code_lines(path: Path) -> set[str]:
    """The lines of a Python file, whitespace collapsed."""
    return {" ".join(line.split()) for line in path.read_text(encoding="utf-8").split("\n")}


def teacher_only_texts(root: Path = REPO) -> dict[str, str]:
    """Each text a student must never see -> where it comes from: the teacher-only parts of the
    pages and the README, the teacher's guide, teacher/*.md (the forensics key), every entry of
    the kata keys, and the lines of each reference solution that its stub has not; but not a text
    the course package says too (src/ is shipped to students by design, and the guide quotes
    its docstrings)."""
    found: dict[str, str] = {}
    readme = [root / "README.md"] if (root / "README.md").is_file() else []
    for page in [*sorted((root / "docs").rglob("*.md")), *readme]:
        where = page.relative_to(root).as_posix()
        text = page.read_text(encoding="utf-8")
        if where.startswith("docs/" + editions.GUIDE):
            found.update(dict.fromkeys(fragments(text), where))
            continue
        lines = text.split("\n")
        for part in editions.teacher_parts(text, where)[0]:
            body = lines[part.start + 1:part.stop]   # the opener's title may be said elsewhere
            found.update(dict.fromkeys(fragments("\n".join(body)),
                                       f"{where}:{part.start + 1}"))
    for notes in sorted((root / "teacher").rglob("*.md")):
        found.update(dict.fromkeys(fragments(notes.read_text(encoding="utf-8")),
                                   notes.relative_to(root).as_posix()))
    for key in _key_files(root):
        for entry_id, entry in json.loads(key.read_text(encoding="utf-8")).items():
            for value in entry.values():
                found.update(dict.fromkeys(fragments(str(value)), f"{key.name}: {entry_id}"))
    for solution in sorted((root / "teacher" / "solutions").glob("*.py")):
        stub = _code_lines(root / "workspace" / solution.name)
        found.update(dict.fromkeys((line for line in _code_lines(solution)
                                    if len(line) >= SHORTEST and line not in stub),
                                   solution.relative_to(root).as_posix()))
    package = "\n".join(" ".join(module.read_text(encoding="utf-8").split())
                        for module in sorted((root / "src").rglob("*.py")))
    return {text: source for text, source in found.items() if text not in package}


def _strings(value: object) -> Iterator[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item)


def published_text(path: Path) -> str | None:
    """What a reader can get out of a published file, as plain text with whitespace collapsed:
    markup stripped and entities decoded, JSON's strings unescaped (the search index, files.json,
    a notebook, a run's lines). None for a binary file."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    if path.suffix in (".json", ".ipynb", ".jsonl"):
        with contextlib.suppress(json.JSONDecodeError):
            values = [json.loads(line) for line in
                      (text.split("\n") if path.suffix == ".jsonl" else [text]) if line.strip()]
            text = "\n".join(s for value in values for s in _strings(value))
    return " ".join(html.unescape(_TAG.sub("", text)).split())


def leaks(tree: Path, texts: dict[str, str]) -> list[str]:
    """Each teacher-only text found in a file under `tree`, as `file: source: text`. The
    vendored front-end libraries (third-party code copied from node_modules) are not read."""
    found = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts
                       and "vendor" not in p.relative_to(tree).parts):
        text = published_text(path)
        if text:
            found += [f"{path.relative_to(tree)}: {source}: {needle!r}"
                      for needle, source in texts.items() if needle in text]
    return found


needs_teacher_sources = pytest.mark.skipif(
    not (REPO / "teacher").is_dir(),
    reason="the teacher's sources (teacher/, teacher blocks) are not in the students' copy")


@needs_teacher_sources
def test_the_teacher_only_texts_are_read_from_every_source():
    """The control for the leak tests: each kind of source gives its texts."""
    sources = set(teacher_only_texts().values())
    for kind in ("docs/oral-exam.md:", "docs/lessons/m0-orientation.md:",
                 "docs/exercises/index.md:", "docs/teacher/", "teacher/forensics_strict_v0.md",
                 "teacher/solutions/pick_best.py", "teacher_key_m0.json: kata-01"):
        assert any(source.startswith(kind) for source in sources), kind


@needs_teacher_sources
def test_the_leak_check_finds_a_teacher_line_outside_its_block(tmp_path):
    """The check can fail: a checklist line copied out of its block, into a page and into the
    search index, is found in both."""
    texts = teacher_only_texts()
    line = next(text for text, source in texts.items()
                if source.startswith("docs/lessons/m0-orientation.md:"))
    words = line.split()
    (tmp_path / "page.html").write_text(f"<li><p>{' '.join(words[:-2])} <em>{words[-2]}</em>\n"
                                        f"{words[-1]} and more</p></li>")
    (tmp_path / "search_index.json").write_text(json.dumps({"docs": [{"text": line}]}))
    assert sorted(hit.split(":")[0] for hit in leaks(tmp_path, texts)) == \
        ["page.html", "search_index.json"]


def test_the_student_edition_publishes_no_teacher_only_text(built_site: Build):
    site = built_site.site
    assert not (site / editions.GUIDE).exists()
    assert leaks(site, teacher_only_texts()) == []
    assert not [page for page in site_pages(site) if MARK in page_file(site, page).read_text()]


POINTS_AT_THE_TEACHERS = re.compile(r"teacher'?s? (?:invariant )?checklist|teacher'?s guide",
                                    re.IGNORECASE)
"""How a student page would point at what only the teacher edition has: the teacher's
checklists (each milestone's `!!! teacher` block) and the teacher's guide."""


def test_no_student_page_points_to_what_the_student_edition_lacks(built_site: Build):
    """A student reads "the exam ends with the teacher's checklist" and finds none: every page
    of the student edition is read as text (scripts and the navigation aside), and none may
    name what only the teacher edition has. Each milestone has a "Check yourself" list of its
    own instead."""
    site = built_site.site
    found = []
    for page in site_pages(site):
        text = page_file(site, page).read_text(encoding="utf-8")
        text = re.sub(r"<script.*?</script>|<nav.*?</nav>", " ", text, flags=re.S)
        prose = " ".join(html.unescape(_TAG.sub(" ", text)).split())
        found += [f"/{page}: ...{prose[max(0, m.start() - 60):m.end() + 20]}..."
                  for m in POINTS_AT_THE_TEACHERS.finditer(prose)]
    assert found == []
    milestones = [page for page in site_pages(site) if 'id="check-yourself"' in
                  page_file(site, page).read_text(encoding="utf-8")]
    assert len(milestones) == 8 and all(p.startswith("lessons/") for p in milestones), milestones


def _guide_nav() -> tuple[str, list[str]]:
    """The "Teacher's guide" section of mkdocs.yml's nav, and the names of its pages."""
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    section = config[config.index("  - Teacher's guide:\n"):]
    section = section[: re.search(r"\n(?!      )", section).end()]
    return section, re.findall(r"teacher/([\w-]+)\.md", section)


def _mini_editions(tmp_path: Path) -> dict[str, Build]:
    """A one-page site with a teacher block and the nav section of the teacher's guide (its
    pages stand-ins: the real ones link to the whole site), built in both editions with the
    real mkdocs.yml, hooks and overrides."""
    guide_nav, guide = _guide_nav()
    home = ("# Home\n\nFor everyone.\n\n!!! teacher \"For the teacher\"\n"
            "    Only the teacher edition shows this sentence, in its own colours.\n\n"
            + "".join(f"A paragraph for everyone, number {n}, long enough to scroll.\n\n"
                      for n in range(60)))
    docs = {"index.md": home} | {f"teacher/{name}.md": f"# {name}\n\nIn the teacher's guide "
                                 f"only, and nowhere else: {name}.\n" for name in guide}
    builds = {}
    for edition in editions.EDITIONS:
        root = mini_repo(tmp_path / edition, docs, nav="nav:\n  - Home: index.md\n"
                         "  - Runs: runs/index.md\n" + guide_nav)
        (root / "docs" / "assets").mkdir()                 # the site's styles: the mark
        (root / "docs" / "assets" / "stylesheets").symlink_to(REPO / "docs" / "assets" /
                                                              "stylesheets")
        builds[edition] = build_site(root / "site", extra_runs=None,
                                     config=root / "mkdocs.yml", edition=edition)
        assert builds[edition].returncode == 0, builds[edition].log
    return builds


HEADER_MARK = """() => {
  const title = document.querySelector('.md-header__title');
  const header = document.querySelector('.md-header').getBoundingClientRect();
  return {mark: getComputedStyle(title, '::after').content, scrolled: window.scrollY,
          headerShown: header.top >= 0 && header.bottom <= innerHeight,
          banner: document.querySelector('.md-banner')?.getBoundingClientRect().bottom ?? null};
}"""
"""The label the header shows after the site's name, and whether the header is in view."""


def test_the_teacher_edition_has_everything_and_marks_every_page(tmp_path, browser):
    builds = _mini_editions(tmp_path)
    teacher, student = (builds[name].site for name in ("teacher", "student"))
    guide = _guide_nav()[1]
    assert len(guide) == len(list((REPO / "docs" / "teacher").glob("*.md"))) >= 5, guide
    teacher_pages = site_pages(teacher)
    assert {f"teacher/{name}/" for name in guide if name != "index"} < set(teacher_pages)
    assert len(teacher_pages) == len(site_pages(student)) + len(guide)
    for page in teacher_pages:
        shown = page_file(teacher, page).read_text()
        assert MARK in shown and "Teacher's guide" in shown, page
    home = (teacher / "index.html").read_text("utf-8")
    assert 'class="admonition teacher"' in home and "Only the teacher edition" in home
    assert leaks(student, teacher_only_texts(tmp_path / "teacher")) == []
    assert "Teacher's guide" not in (student / "index.html").read_text()
    # scrolled down, the announcement bar is gone but the header still says "Teacher edition"
    page = browser.new_page(viewport={"width": 1280, "height": 700})
    try:
        for site, mark in ((teacher, '"Teacher edition"'), (student, "none")):
            page.goto((site / "index.html").as_uri(), wait_until="load")
            page.mouse.wheel(0, 3000)
            page.wait_for_function("window.scrollY > 1000")
            shown = page.evaluate(HEADER_MARK)
            assert shown["mark"] == mark and shown["headerShown"], shown
            assert shown["banner"] is None or shown["banner"] <= 0, shown   # scrolled away
    finally:
        page.close()


@pytest.mark.parametrize(("marker", "problem"), [
    ("!!!teacher \"T\"\n    text\n", "not `!!!teacher \"T\"`"),
    ("!!! Teacher \"T\"\n    text\n", "not `!!! Teacher \"T\"`"),
    ("??? teacher \"T\n    text\n", "not `??? teacher \"T`"),
    ("!!! teacher \"T\"\n\ntext\n", "the teacher block has no body"),
    ("!!! teacher \"T\"\n    ```python\n    x = 1\n", "a fence opened in this teacher block"),
    ("<!-- teacher-only -->\ntext\n", "is never closed"),
])
def test_a_malformed_marker_is_named_with_its_page_and_line(marker, problem):
    student, problems = editions.student_markdown(f"# Page\n\n{marker}", "lesson.md")
    assert len(problems) == 1 and problems[0].startswith("lesson.md:3: ") and problem in \
        problems[0], problems
    assert "teacher" not in student.lower() and "x = 1" not in student


def test_a_malformed_marker_fails_the_strict_build(tmp_path):
    build = build_site(tmp_path / "site", extra_runs=None, config=mini_repo(
        tmp_path, {"index.md": "# Home\n\n!!! Teacher \"T\"\n    Secret.\n"}) / "mkdocs.yml")
    assert build.returncode != 0
    assert "index.md:3: write `!!! teacher \"Title\"`" in build.log, build.log


def test_the_students_copy_says_what_to_run_first_in_a_clone_not_set_up(tmp_path):
    """In a fresh clone, before the set-up, the script says in one line which command to run
    first (it used to stop on `No module named 'course_site'`), and writes nothing."""
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    (clone / "scripts" / "student_copy.sh").write_bytes(
        (REPO / "scripts" / "student_copy.sh").read_bytes())
    ran = subprocess.run(["bash", str(clone / "scripts" / "student_copy.sh"),
                          str(tmp_path / "student")], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 2 and ran.stdout == "" and not (tmp_path / "student").exists()
    assert ran.stderr == (f"student_copy: the course is not set up in {clone} (no .venv with "
                          "course_site): run 'bash scripts/setup.sh' there first, then this "
                          "again\n")


def test_the_students_copy_has_nothing_for_teachers_only(tmp_path):
    copy = tmp_path / "student"
    subprocess.run(["bash", str(REPO / "scripts" / "student_copy.sh"), str(copy)], check=True,
                   capture_output=True, text=True, timeout=300)
    assert not (copy / "teacher").exists() and not (copy / "docs" / editions.GUIDE).exists()
    assert not list(copy.rglob("teacher_key_*"))
    assert leaks(copy, teacher_only_texts()) == []
    workflow = subprocess.run(["git", "-C", str(REPO), "show",
                               "HEAD:scripts/classroom/classroom.yml"], capture_output=True)
    if workflow.returncode == 0:
        assert (copy / ".github" / "workflows" / "classroom.yml").read_bytes() == workflow.stdout
    assert subprocess.run(["git", "-C", str(copy), "status", "--porcelain"], check=True,
                          capture_output=True, text=True).stdout == ""
    refused = subprocess.run(["bash", str(REPO / "scripts" / "student_copy.sh"), str(copy)],
                             capture_output=True, text=True)
    assert refused.returncode == 2 and len(refused.stderr.strip().split("\n")) == 1


def test_both_editions_share_one_fresh_cache_and_a_build_alone_has_none(tmp_path, monkeypatch):
    """`scripts/build_site.sh --both`: the two builds share the folder COURSE_BUILD_CACHE names
    (so each block and lab runs once); without it `mkdocs build` reads no cache. Whether the
    pages are the same bytes either way is benchmarks/bench_editions.py's check (two builds
    of the whole site)."""
    from types import SimpleNamespace

    from course_site import serve
    config = SimpleNamespace(config_file_path=str(REPO / "mkdocs.yml"))
    monkeypatch.delenv(serve.SHARED_BUILD, raising=False)
    assert serve.cache_folder(config, Path("blocks")) is None          # type: ignore[arg-type]
    monkeypatch.setenv(serve.SHARED_BUILD, str(tmp_path))
    folder = serve.cache_folder(config, Path("blocks"))                # type: ignore[arg-type]
    assert folder is not None and folder.parent == tmp_path / "blocks"


@pytest.mark.parametrize(("script", "argv", "says"), [
    ("build_site.sh", ["--both", "--site-dir", "x"], "--both takes no other option"),
    ("site.sh", ["--both", "--teacher"], "--both and --print build the teacher edition already"),
    ("site.sh", ["--teacher", "--print"], "--both and --print build the teacher edition already"),
    ("site.sh", ["--pdf"], "unknown option '--pdf' (options: --build, --teacher, --both, --print)"),
])
def test_both_is_refused_with_another_option_in_one_line(script, argv, says):
    done = subprocess.run(["bash", str(REPO / "scripts" / script), *argv], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
