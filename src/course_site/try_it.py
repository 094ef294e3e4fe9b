"""Try-it boxes: the course's own scorer, run in the reader's browser by Pyodide.

A teacher writes a box as a fenced block whose first line names its kind::

    ```try-it
    scorer
    completion: Final: 0323
    expected: 323
    ```

    ```try-it
    golden
    ```

    ```try-it
    exercise
    name: spec_tests
    ```

Each line after the kind is `field: value`; `FIELDS` lists each kind's fields, what a value
must be and its default. The parsing is strict (`read_box`): an unknown field (the closest known
one is suggested), a value of the wrong kind, a line without its colon, a field given twice or a
required one left out is an error naming the page, the line and the field, which fails the
build; `problems` finds them without a build (scripts/check_page.py, run by
scripts/test_page.sh).

`scorer` is a completion and an expected answer to edit and score, with the spec's near misses
a click away; `golden` runs both golden suites; `exercise` is an exercise of `course check` to
write and check in the page, for those whose check needs only the standard library
(`course.exercises.STDLIB_CHECKERS`). This module turns each block into the box's HTML
(`box_html`): a sentence that stands without JavaScript (with the command that gives the same
verdict), and the controls, hidden until docs/assets/javascripts/try-it.js shows them.

The Python the boxes run is the repository's own, copied into the site at every build under
assets/try-it/ as a small copy of the repository (`on_files`): course.tryit and the modules it
imports (`import_closure`, read from the sources), the golden sets and the exercise stubs,
listed in assets/try-it/files.json for the script to write into Pyodide's file system. The
kata's answer keys are never copied: the site is public. Pyodide itself is vendored from npm
by course_site/vendor_assets.py.

Why not a library: markdown-exec's `pyodide` fence loads Pyodide from a CDN, and no package
turns a fence into a scorer box with the course's own Python.
"""

from __future__ import annotations

import ast
import difflib
import html
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

import course
from course.exercises import EXERCISES, STDLIB_CHECKERS
from course.paths import DATA_DIR, REPO_ROOT
from course.scorer import read_integer
from course_site.fences import Fence, fenced_blocks

FOLDER = "assets/try-it"
TRY_IT_MODULE = "tryit"
"""The module of the course the boxes call (course.tryit); what it imports is shipped too."""
DATA_FILES = ("golden/correct.jsonl", "golden/exploits.jsonl",  # the golden suites, red_team
              "problems/dev.jsonl", "selection/pack_n8.jsonl")      # pick_best's real packs


@dataclass(frozen=True)
class Field:
    """One field of a box: what its value must be (said in errors and in the teacher's guide),
    its value when the box leaves it out (None: the box must give it), and its check."""

    must_be: str
    default: str | None
    accepts: Callable[[str], bool]


FIELDS: dict[str, dict[str, Field]] = {
    "scorer": {
        "completion": Field("any text on one line", "Final: 323", lambda value: True),
        "expected": Field("an integer as the spec writes one (ASCII digits, an optional -, no + "
                          "and no leading zeros)", "323",
                          lambda value: read_integer(value) is not None)},
    "golden": {},
    "exercise": {
        "name": Field(f"one of {', '.join(STDLIB_CHECKERS)} (the checks that need only the "
                      "standard library)", None, STDLIB_CHECKERS.__contains__)},
}
"""Each kind of box, by its first line -> its fields, by name."""
_FIELD_LINE = re.compile(r"(?P<name>[A-Za-z_][\w-]*)[ \t]*:(?P<value>.*)")


class BoxError(PluginError):
    """A wrong box, in one line: `page:line: what is wrong`; it fails the build."""


def import_closure(package: Path, start: str) -> list[str]:
    """The modules of the course `start` imports, directly or not, itself and the package's
    `__init__` included, as file names: read from the sources (`import` statements), nothing
    run. The site's Pyodide has no numpy (its wheel is on a CDN only: the package docstring),
    so these modules must import the standard library only."""
    found, todo = {"__init__"}, [start]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        for node in ast.walk(ast.parse((package / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "course":
                todo += [alias.name for alias in node.names]      # from course import data
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course."):
                todo.append((node.module or "").removeprefix("course.").split(".")[0])
    return sorted(f"{name}.py" for name in found)


def site_files() -> dict[str, Path]:
    """Each file the boxes need: its path in the copy under assets/try-it/ -> the file."""
    package = Path(course.__file__).parent
    files = {f"src/course/{name}": package / name
             for name in import_closure(package, TRY_IT_MODULE)}
    files.update({f"data/{name}": DATA_DIR / name for name in DATA_FILES})
    files.update({f"workspace/{EXERCISES[name].file}": REPO_ROOT / "workspace" /
                  EXERCISES[name].file for name in STDLIB_CHECKERS})
    return files


def on_files(files: Files, config: MkDocsConfig) -> Files:
    wanted = site_files()
    for uri, path in wanted.items():
        files.append(File.generated(config, f"{FOLDER}/{uri}", abs_src_path=str(path)))
    files.append(File.generated(config, f"{FOLDER}/files.json", content=json.dumps(list(wanted))))
    return files


def box_html(kind: str, fields: dict[str, str], number: int) -> str:
    """The HTML of one box; `number` makes its ids unique on the page."""
    ident = f"try-it-{number}"
    title = "the course's own <code>src/course/scorer.py</code>, run by Python in your browser"
    if kind == "exercise":
        name = fields["name"]
        file = EXERCISES[name].file
        stub = (REPO_ROOT / "workspace" / file).read_text(encoding="utf-8")
        stub = html.escape(stub).replace("\n", "&#10;")  # the box stays one line of Markdown
        title = (f"<code>course check {name}</code>, the same check, run by Python in your "
                 "browser; your work is kept in this browser")
        command = f"course check {name}"
        static = (f"This box checks your <code>workspace/{file}</code> in the page, and needs "
                  f"JavaScript. Without it: <code>{command}</code>.")
        controls = (
            f'<label for="{ident}-source">Your <code>workspace/{file}</code></label>'
            f'<textarea id="{ident}-source" class="try-it-source" rows="16" spellcheck="false" '
            f'autocomplete="off" data-exercise="{name}">{stub}</textarea>'
            '<button type="button" class="md-button md-button--primary" data-action="check">'
            "Check it</button> "
            '<button type="button" class="md-button" data-action="reset">'
            "Start again from the stub</button>")
    elif kind == "golden":
        command = "pytest tests/test_golden.py"
        static = ("This box runs both golden suites against the course's scorer in your "
                  f"browser, and needs JavaScript. Without it: <code>{command}</code>.")
        controls = ('<button type="button" class="md-button" data-action="golden">'
                    "Run the golden suites</button>")
    else:
        completion, expected = fields["completion"], fields["expected"]
        command = f"course score --expected {expected} {shlex.quote(completion)}"
        static = ("This box runs the course's scorer in your browser, and needs JavaScript. "
                  "Without it, the same verdict is one command away: "
                  f"<code>{html.escape(command)}</code>.")
        controls = (
            f'<label for="{ident}-completion">Completion</label>'
            f'<textarea id="{ident}-completion" rows="2" spellcheck="false" '
            f'autocomplete="off">{html.escape(completion)}</textarea>'
            f'<label for="{ident}-expected">Expected answer</label>'
            f'<input id="{ident}-expected" type="text" inputmode="numeric" '
            f'autocomplete="off" value="{html.escape(expected)}">'
            '<button type="button" class="md-button md-button--primary" data-action="score">'
            "Score it</button> "
            '<button type="button" class="md-button" data-action="near-misses">'
            "Load the near misses</button>")
    return (f'<div class="try-it" data-kind="{kind}" id="{ident}" '
            f'data-command="{html.escape(command)}">'
            f'<p class="try-it-static">{static}</p>'
            f'<div class="try-it-live" hidden><p class="try-it-title"><strong>Try it</strong>'
            f' in the page: {title} (<span class="try-it-version">the scorer\'s version shows '
            "after the first run</span>). The first press loads Python, once per visit.</p>"
            f"{controls}"
            '<p class="try-it-status" role="status" aria-live="polite"></p>'
            '<div class="try-it-result"></div></div></div>')


def _closest(word: str, known: list[str]) -> str:
    """` (did you mean 'x'?)` for the known word closest to `word`, if one is close."""
    close = difflib.get_close_matches(word, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def read_box(fence: Fence, lines: list[str], where: str) -> tuple[str, dict[str, str]]:
    """The kind of the box in `fence` and its fields, each left out filled with its default;
    a `BoxError` naming the page (`where`), the line and the field if the box is wrong."""
    body = [(fence.open + 2 + offset, line.strip())
            for offset, line in enumerate(fence.code(lines).split("\n")) if line.strip()]
    (number, kind), *rest = body or [(fence.open + 1, "")]
    if kind not in FIELDS:
        raise BoxError(f"{where}:{number}: a try-it box starts with its kind, one of "
                       f"{', '.join(FIELDS)}, not {kind!r}{_closest(kind, list(FIELDS))}")
    known = FIELDS[kind]
    fields_are = f"its fields are {', '.join(known)}" if known else "it has no fields"

    def wrong(number: int, what: str) -> BoxError:
        return BoxError(f"{where}:{number}: try-it {kind} box: {what}")

    given: dict[str, tuple[int, str]] = {}
    for number, line in rest:
        match = _FIELD_LINE.fullmatch(line)
        if match is None:
            first = line.split(maxsplit=1)[0]
            raise wrong(number, f"{line!r} is not `field: value`, a colon is missing"
                                f"{_closest(first, list(known))}; {fields_are}")
        name, value = match["name"], match["value"].strip()
        if name not in known:
            raise wrong(number, f"unknown field {name!r}{_closest(name, list(known))}; "
                                f"{fields_are}")
        if name in given:
            raise wrong(number, f"field {name!r} is given twice (first on line "
                                f"{given[name][0]})")
        if not known[name].accepts(value):
            raise wrong(number, f"field {name!r} must be {known[name].must_be}, not {value!r}")
        given[name] = number, value
    fields = {}
    for name, field in known.items():
        value = given[name][1] if name in given else field.default
        if value is None:
            raise wrong(fence.open + 1, f"field {name!r} is missing: write `{name}: ` and "
                                        f"{field.must_be}")
        fields[name] = value
    return kind, fields


def _boxes(lines: list[str]) -> list[Fence]:
    """The ```try-it blocks of a page."""
    return [fence for fence in fenced_blocks(lines) if fence.words()[:1] == ["try-it"]]


def problems(markdown: str, where: str) -> list[str]:
    """Every wrong box of the page `markdown` (named `where`), as the build would name it."""
    lines = markdown.split("\n")
    found = []
    for fence in _boxes(lines):
        try:
            read_box(fence, lines, where)
        except BoxError as error:
            found.append(str(error))
    return found


def expand(markdown: str, where: str) -> str:
    """`markdown` with each ```try-it block replaced by its box; a wrong box fails the build."""
    lines = markdown.split("\n")
    for number, fence in reversed(list(enumerate(_boxes(lines), start=1))):
        kind, fields = read_box(fence, lines, where)
        lines[fence.open:fence.close + 1] = [fence.indent + box_html(kind, fields, number)]
    return "\n".join(lines)
