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

`scorer` is a completion and an expected answer to edit and score, with the spec's near misses
a click away; `golden` runs both golden suites. This hook turns each block into the box's HTML
(`box_html`): a sentence that stands without JavaScript (with the command that gives the same
verdict), and the controls, hidden until docs/assets/javascripts/try-it.js shows them.

The Python the boxes run is the repository's own, copied into the site at every build under
assets/try-it/ (`on_files`): the package files in `PYTHON_FILES` and the golden sets, listed
in assets/try-it/files.json for the script to write into Pyodide's file system. Pyodide itself
is vendored from npm by site_hooks/vendor_assets.py.
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
from course.paths import DATA_DIR

FOLDER = "assets/try-it"
PYTHON_FILES = ("__init__.py", "scorer.py", "formatting.py", "explain.py", "tryit.py")
"""The modules the boxes import (course.tryit and what it imports): standard library only."""
DATA_FILES = ("golden/correct.jsonl", "golden/exploits.jsonl")
KINDS = ("scorer", "golden")


def site_files() -> dict[str, Path]:
    """Each file the boxes need: its path under assets/try-it/ -> the repository file."""
    package = Path(course.__file__).parent
    files = {f"course/{name}": package / name for name in PYTHON_FILES}
    files.update({f"data/{name}": DATA_DIR / name for name in DATA_FILES})
    return files


def on_files(files: Files, config: MkDocsConfig) -> Files:
    wanted = site_files()
    for uri, path in wanted.items():
        files.append(File.generated(config, f"{FOLDER}/{uri}", abs_src_path=str(path)))
    files.append(File.generated(config, f"{FOLDER}/files.json", content=json.dumps(list(wanted))))
    return files


def _field(value: str) -> str:
    return html.escape(value, quote=True)


def box_html(kind: str, fields: dict[str, str], number: int) -> str:
    """The HTML of one box; `number` makes its ids unique on the page."""
    ident = f"try-it-{number}"
    if kind == "golden":
        static = ("This box runs both golden suites against the course's scorer in your "
                  "browser, and needs JavaScript. Without it: <code>pytest tests/test_golden.py"
                  "</code>.")
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
    return (f'<div class="try-it" data-kind="{kind}" id="{ident}">'
            f'<p class="try-it-static">{static}</p>'
            f'<div class="try-it-live" hidden><p class="try-it-title"><strong>Try it</strong>'
            " in the page: the course's own <code>src/course/scorer.py</code>, run by Python in "
            'your browser (<span class="try-it-version">the version shows after the first '
            "run</span>). The first press loads Python, once per visit.</p>"
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
        lines[fence.open:fence.close + 1] = [fence.indent + box_html(kind, fields, number)]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return expand(markdown, page.file.src_uri)
