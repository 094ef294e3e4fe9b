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

`scorer` is a completion and an expected answer to edit and score, with the spec's near misses
a click away; `golden` runs both golden suites; `exercise` is an exercise of `course check` to
write and check in the page, for those whose check needs only the standard library
(`course.exercises.STDLIB_CHECKERS`). This hook turns each block into the box's HTML
(`box_html`): a sentence that stands without JavaScript (with the command that gives the same
verdict), and the controls, hidden until docs/assets/javascripts/try-it.js shows them.

The Python the boxes run is the repository's own, copied into the site at every build under
assets/try-it/ as a small copy of the repository (`on_files`): the package files in
`PYTHON_FILES`, the golden sets and the exercise stubs, listed in assets/try-it/files.json for
the script to write into Pyodide's file system. The kata's answer keys are never copied: the
site is public. Pyodide itself is vendored from npm by site_hooks/vendor_assets.py.
"""

from __future__ import annotations

import html
import json
import shlex
from pathlib import Path

from fences import fenced_blocks
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

import course
from course.exercises import EXERCISES, STDLIB_CHECKERS
from course.paths import DATA_DIR, REPO_ROOT

FOLDER = "assets/try-it"
PYTHON_FILES = ("__init__.py", "scorer.py", "formatting.py", "explain.py", "tryit.py",
                "exercises.py", "rubrics.py", "data.py", "jsonfiles.py", "paths.py",
                "selection.py")
"""The modules the boxes import (course.tryit and what it imports): standard library only."""
DATA_FILES = ("golden/correct.jsonl", "golden/exploits.jsonl",  # the golden suites, red_team
              "problems/dev.jsonl", "selection/pack_n8.jsonl")      # pick_best's real packs
KINDS = ("scorer", "golden", "exercise")


def site_files() -> dict[str, Path]:
    """Each file the boxes need: its path in the repository's copy under assets/try-it/ ->
    the repository's file."""
    package = Path(course.__file__).parent
    files = {f"src/course/{name}": package / name for name in PYTHON_FILES}
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


def _field(value: str) -> str:
    return html.escape(value, quote=True)


def _lines(text: str) -> str:
    """`text` escaped for a textarea, its line breaks as `&#10;`: the box stays one line of
    Markdown, which a blank line would otherwise end."""
    return _field(text).replace("\n", "&#10;")


def box_html(kind: str, fields: dict[str, str], number: int) -> str:
    """The HTML of one box; `number` makes its ids unique on the page."""
    ident = f"try-it-{number}"
    title = "the course's own <code>src/course/scorer.py</code>, run by Python in your browser"
    if kind == "exercise":
        name = fields["name"]
        file = EXERCISES[name].file
        stub = (REPO_ROOT / "workspace" / file).read_text(encoding="utf-8")
        title = (f"<code>course check {name}</code>, the same check, run by Python in your "
                 "browser; your work is kept in this browser")
        command = f"course check {name}"
        static = (f"This box checks your <code>workspace/{file}</code> in the page, and needs "
                  f"JavaScript. Without it: <code>{command}</code>.")
        controls = (
            f'<label for="{ident}-source">Your <code>workspace/{file}</code></label>'
            f'<textarea id="{ident}-source" class="try-it-source" rows="16" spellcheck="false" '
            f'autocomplete="off" data-exercise="{name}">{_lines(stub)}</textarea>'
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
        completion, expected = fields.get("completion", "Final: 323"), fields.get("expected",
                                                                                  "323")
        command = f"course score --expected {expected} {shlex.quote(completion)}"
        static = ("This box runs the course's scorer in your browser, and needs JavaScript. "
                  f"Without it, the same verdict is one command away: <code>{_field(command)}"
                  "</code>.")
        controls = (
            f'<label for="{ident}-completion">Completion</label>'
            f'<textarea id="{ident}-completion" rows="2" spellcheck="false" '
            f'autocomplete="off">{_field(completion)}</textarea>'
            f'<label for="{ident}-expected">Expected answer</label>'
            f'<input id="{ident}-expected" type="text" inputmode="numeric" '
            f'autocomplete="off" value="{_field(expected)}">'
            '<button type="button" class="md-button md-button--primary" data-action="score">'
            "Score it</button> "
            '<button type="button" class="md-button" data-action="near-misses">'
            "Load the near misses</button>")
    return (f'<div class="try-it" data-kind="{kind}" id="{ident}" '
            f'data-command="{_field(command)}">'
            f'<p class="try-it-static">{static}</p>'
            f'<div class="try-it-live" hidden><p class="try-it-title"><strong>Try it</strong>'
            f' in the page: {title} (<span class="try-it-version">the scorer\'s version shows '
            "after the first run</span>). The first press loads Python, once per visit.</p>"
            f"{controls}"
            '<p class="try-it-status" role="status" aria-live="polite"></p>'
            '<div class="try-it-result"></div></div></div>')


def expand(markdown: str, where: str) -> str:
    """`markdown` with each ```try-it block replaced by its box."""
    lines = markdown.split("\n")
    boxes = [fence for fence in fenced_blocks(lines) if fence.words()[:1] == ["try-it"]]
    for number, fence in reversed(list(enumerate(boxes, start=1))):
        body = [line.strip() for line in fence.code(lines).split("\n") if line.strip()]
        kind = body[0] if body else ""
        if kind not in KINDS:
            raise PluginError(f"{where}:{fence.open + 1}: a try-it block starts with one of "
                              f"{', '.join(KINDS)}, not {kind!r}")
        fields = dict(line.split(": ", 1) for line in body[1:] if ": " in line)
        if kind == "exercise" and fields.get("name") not in STDLIB_CHECKERS:
            raise PluginError(f"{where}:{fence.open + 1}: a try-it exercise is named with "
                              f"`name: ` and one of {', '.join(STDLIB_CHECKERS)} (the checks "
                              f"that need only the standard library), not {fields.get('name')!r}")
        lines[fence.open:fence.close + 1] = [fence.indent + box_html(kind, fields, number)]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return expand(markdown, page.file.src_uri)
