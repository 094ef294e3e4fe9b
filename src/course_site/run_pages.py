"""One page per saved run, generated at build time from the committed run folders.

A run folder (`runs/run_001/`, ...) is the course's unit of evidence: `manifest.json` (what was
measured, with which instrument, on which inputs), `summary.json` (the numbers the lessons
quote), a `README.md` in plain words, and per-item artifacts (`*.jsonl`, `*.csv`, `*.png`,
`*.txt` logs, other `*.md` reports). This module turns each folder into a page under
`runs/<name>/` that reads like a report (`run_page`): its title says what the run measures (the
README's); then what was run and why (the one change, said once); the README's results
(headline numbers, figures, failures by cause with examples); provenance; and last the raw
material, each file folded (summary, manifest, tables, logs, a few examples per JSONL file),
never a table inside a table. It copies the artifacts next to the page so each can be
downloaded (another `.md` report becomes a page of its own), writes `runs/index.md` listing
every run by its title, and fills the `Runs` entry of `nav`. Nothing is written into docs/.

Everything shown comes from files, and some of it is untrusted: a completion is whatever the
policy produced, `<script>` included, and a problem id or a run note is whatever its author
typed. So every value is rendered by `render_value` (a table cell by `render_cell`), which
HTML-escapes all text (a scorer's `message` is prose whose `backticked` spans become inline
code, after escaping); the README (and any other `.md` report) is made inert by
`readme_markdown`: no raw HTML, no link except a plain one to a relative or http(s) address,
no attribute list, no math, and code fences that every reader of the page
(course_site/fences.py, pymdownx.superfences) opens and closes on the same lines; and no line
of a generated page can act as a `--8<--` snippet (`inert_snippets`), which pymdownx.snippets
would otherwise expand anywhere, even inside a code fence.

Set `COURSE_SITE_EXTRA_RUNS=<folder>` to add the `run_*` folders of another directory (the
site tests add a fixture run that way).

Why not render the README and then sanitise the HTML with nh3 (ammonia's binding), the usual
way: measured in benchmarks/bench_inert_readme.py, it takes as long (a few milliseconds a
page), but too late. pymdownx.snippets expands a `--8<--` line while Markdown reads the page,
and the site runs a page's Python blocks before that (course_site.outputs): a sanitiser of the
HTML sees neither the line nor the block, only the teacher's file it included or what the block
did. And a sanitiser deletes what it distrusts (a completion's `<script>`), where a run page
must show the data as it is. So the README is made inert before anything reads it.

Why not mkdocs-gen-files and mkdocs-literate-nav: MkDocs 1.6 itself generates a page from text
(`File.generated`), which is all gen-files would do here, and filling one nav entry takes ten
lines (`on_config`), where literate-nav would need a SUMMARY.md written for it. What no plugin
does is the rest: a run folder read as untrusted data and shown as inert text.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel
from pymdownx.snippets import SnippetPreprocessor

from course.formatting import prose_text
from course.jsonfiles import jsonl_lines
from course_site.fences import PYTHON, fenced_blocks

log = get_plugin_logger(__name__)

EXTRA_RUNS_ENV = "COURSE_SITE_EXTRA_RUNS"
NAV_TITLE = "Runs"          # the nav entry this module fills
SITE_FOLDER = "runs"        # pages live at runs/index.md and runs/<name>/index.md
TEXT_LIMIT = 400            # characters of one string shown before "... (N characters)"
EXAMPLES_LIMIT = 20         # records shown per JSONL file
EXAMPLES_PER_GROUP = 2      # ... at most this many per failure code, when records carry one
CSV_ROWS_LIMIT = 50         # rows shown per CSV file
LOG_LINES_LIMIT = 80        # lines shown per text log (*.txt)

# -- 1. rendering values as escaped HTML -----------------------------------------------------

_VISIBLE_ASCII = re.compile(r"[\x20-\x7e\n]*")
_BACKTICKED = re.compile(r"`([^`\n]+)`")


def esc(text: str) -> str:
    """HTML-escape `text` and keep it on one source line (newlines become `&#10;`, shown as
    line breaks by `white-space: pre-wrap`), so a raw HTML block never ends early."""
    return html.escape(text, quote=True).replace("\r", "&#13;").replace("\n", "&#10;")


WORD_LIMIT = 40
"""A string this short without whitespace (an id such as exploit-02, a code, a version) is one
word: it is never broken across lines, not even at a hyphen (class course-word)."""


def render_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """A string as escaped HTML, verbatim in a `<code>` element (it is data: a completion, an
    id, a path; a fence in it is shown as written); when it holds anything beyond printable
    ASCII (a zero-width space, NBSP, U+2212, a tab, ...), its JSON-escaped spelling underneath."""
    shown = text[:limit]
    word = 0 < len(text) <= WORD_LIMIT and not any(c.isspace() for c in text)
    parts = [f'<code class="course-text{" course-word" if word else ""}">{esc(shown)}</code>']
    if len(text) > limit:
        parts.append(f'<span class="course-more"> ... ({len(text)} characters)</span>')
    if not _VISIBLE_ASCII.fullmatch(shown):
        parts.append('<br><code class="course-escaped" title="the same text, escaped">'
                     f"{esc(json.dumps(shown, ensure_ascii=True))}</code>")
    return "".join(parts)


MESSAGE_KEYS = frozenset({"message"})
"""Fields that hold the scorer's own sentences (`details.message` of course.scorer), which mark
code with backticks: "does not start with `Final:`". They are shown as prose with inline code."""


def render_message(text: str) -> str:
    """A scorer message as escaped prose whose `backticked` spans are inline code. Anything
    unusual (too long, beyond printable ASCII) is shown as raw text by `render_text` instead."""
    if len(text) > TEXT_LIMIT or not _VISIBLE_ASCII.fullmatch(text):
        return render_text(text)
    prose = _BACKTICKED.sub(r"<code>\1</code>", esc(text))
    return f'<span class="course-message">{prose}</span>'


def render_cell(value: Any, key: str = "") -> str:
    """A value (of field `key`) in one table cell, never a table: a list or an object as one
    line of compact JSON (escaped, cut at `TEXT_LIMIT`)."""
    if isinstance(value, str):
        return render_message(value) if key in MESSAGE_KEYS else render_text(value)
    if value is None or isinstance(value, int | float | bool):
        return f"<code>{esc(json.dumps(value))}</code>"
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    more = f" ... ({len(text)} characters)" if len(text) > TEXT_LIMIT else ""
    return f'<code class="course-json">{esc(text[:TEXT_LIMIT] + more)}</code>'


def as_records(value: Any) -> list[Mapping[str, Any]] | None:
    """`value` as the rows of one table, when it is one: a list of objects, or an object of
    objects with the same fields (manifest inputs, a summary's `over_seeds`), whose keys become
    a first, unnamed column. Otherwise None."""
    if isinstance(value, list) and value and all(isinstance(row, Mapping) for row in value):
        return value
    if isinstance(value, Mapping) and value:
        rows = list(value.values())
        if all(isinstance(row, Mapping) and row for row in rows) \
                and len({tuple(row) for row in rows}) == 1 \
                and not any(isinstance(v, Mapping) for row in rows for v in row.values()):
            return [{"": key, **row} for key, row in value.items()]
    return None


def leaves_and_tables(value: Mapping[str, Any], prefix: str = "", tables: bool = True) -> tuple[
        list[tuple[str, Any]], list[tuple[str, list[Mapping[str, Any]]]]]:
    """An object taken apart without nesting: its leaves (scalars, lists, empty values), each
    named by its path (`sampling.policy`), and, with `tables`, the tables inside it
    (`as_records`), named likewise; without, every object is taken apart down to its leaves."""
    leaves: list[tuple[str, Any]] = []
    found: list[tuple[str, list[Mapping[str, Any]]]] = []
    for key, item in value.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if tables and (rows := as_records(item)) is not None:
            found.append((name, rows))
        elif isinstance(item, Mapping) and item:
            inner_leaves, inner_tables = leaves_and_tables(item, name, tables)
            leaves += inner_leaves
            found += inner_tables
        else:
            leaves.append((name, item))
    return leaves, found


def render_leaves(leaves: Sequence[tuple[str, Any]]) -> str:
    """Named values as a two-column table: the path as code, the value wrapped in its cell."""
    rows = " ".join(f'<tr><th scope="row"><code>{esc(name)}</code></th> '
                    f"<td>{render_cell(item, name.rsplit('.', 1)[-1])}</td></tr>"
                    for name, item in leaves)
    return f'<table class="course-leaves"><tbody>{rows}</tbody></table>'


def table(head: Sequence[str], rows: Iterable[Iterable[str]]) -> str:
    """A table of the column names `head` (escaped here) and `rows` of cells (HTML already)."""
    names = " ".join(f"<th>{esc(name)}</th>" for name in head)
    body = " ".join("<tr>" + " ".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
                    for row in rows)
    return f"<table><thead><tr>{names}</tr></thead><tbody>{body}</tbody></table>"


def render_records(records: Sequence[Mapping[str, Any]]) -> str:
    """A list of objects as one table: a column per key, in first-seen order."""
    columns = list(dict.fromkeys(key for record in records for key in record))
    return table(columns, ([render_cell(r[c], c) if c in r else "" for c in columns]
                           for r in records))


def render_value(value: Any) -> str:
    """Any JSON value as escaped HTML whose tables never nest: an object as the table of its
    leaves, then each table inside it (`as_records`) under its path."""
    if (rows := as_records(value)) is not None:
        return render_records(rows)
    if not isinstance(value, Mapping) or not value:
        return render_cell(value)
    leaves, tables = leaves_and_tables(value)
    parts = [render_leaves(leaves)] if leaves else []
    parts += [f'<p class="course-table-name"><code>{esc(name)}</code>: {len(rows)} '
              f"{'row' if len(rows) == 1 else 'rows'}</p>{render_records(rows)}"
              for name, rows in tables]
    return "".join(parts)


def html_block(inner: str, kind: str = "") -> str:
    """Raw HTML for a Markdown page: one block, blank lines around it, never parsed as Markdown."""
    classes = f"course-run-block {kind}".strip()
    return f'\n<div class="{classes}">{inner}</div>\n'


def fold(label: str, inner: str) -> str:
    """Raw material in a closed `<details>` (summary: `label`, escaped). The body stays out of
    the search index (Material skips `data-search-exclude`): a raw dump would match every term."""
    return (f'\n<details class="note course-raw"><summary>{esc(label)}</summary>'
            f'<div class="course-run-block" data-search-exclude>{inner}</div></details>\n')


# -- 2. the run's own README, included safely ------------------------------------------------

_CODE_SPAN = re.compile(r"(?<!\\)(?P<ticks>`+)(?P<code>.+?)(?<!`)(?P=ticks)(?!`)")
_LANG = re.compile(r"[A-Za-z0-9_+-]+")
_FENCE_LANGS = {**dict.fromkeys(PYTHON, "{.python .notest}"),
                **dict.fromkeys(["mermaid", "math"], "text")}  # fences the site runs or draws
_SAFE_LINK = re.compile(r"!?\[(?P<text>[^\[\]\\`<{$&\n]*)\]\((?P<url>[\w!#%+,./:;=?@~-]+)\)",
                        re.ASCII)
_INLINE = re.compile(f"{_CODE_SPAN.pattern}|{_SAFE_LINK.pattern}", re.ASCII)
_SCHEME = re.compile(r"^[^/?#]*:")
_SAFE_SCHEME = re.compile(r"^(?:https?://|mailto:)", re.IGNORECASE)
_TEXT_ESCAPES = str.maketrans({"\\": "\\\\", "`": "\\`", "<": "&lt;", "[": "\\[", "{": "\\{",
                               "$": "\\$"})
"""Markdown text that would not stay text: raw HTML and autolinks (`<`), links and images
(`[`), attribute lists (`{`), math (`$`, and `\\(` once the backslash is doubled), code spans."""


def _fence_info(info: str) -> str:
    """A fence's info string reduced to one language word (Python blocks become `notest`:
    a run shows commands, it is not a lesson to execute; diagram fences become `text`)."""
    match = _LANG.search(info)
    lang = match[0].lower() if match else ""
    return _FENCE_LANGS.get(lang, lang)


def _code_html(code: str) -> str:
    """A code span as an HTML `<code>` element whose characters, but for letters, digits and
    spaces, are character references: Markdown finds nothing in it, whichever backticks it
    pairs, and the reader sees the code span's text. A span that is not one word (`WORD_LIMIT`:
    a sha256, a completion with spaces) gets the class `course-wrap`: it may wrap in a cell."""
    text = code.strip()
    wrap = len(text) > WORD_LIMIT or any(ch.isspace() for ch in text)
    opening = '<code class="course-wrap">' if wrap else "<code>"
    return opening + "".join(ch if ch.isalnum() or ch == " " else f"&#{ord(ch)};"
                             for ch in text) + "</code>"


def _is_safe_url(url: str, image: bool) -> bool:
    """A relative address, or for a link an http(s) or mailto one: never `javascript:` and
    the like, and never an image from another host (the site loads nothing from the network)."""
    if image:
        return not _SCHEME.match(url) and not url.startswith("//")
    return bool(_SAFE_SCHEME.match(url)) or not _SCHEME.match(url)


def _inert_line(line: str) -> str:
    """A README line outside code fences that shows only text, code, plain links and images:
    code spans become `_code_html`, links to a safe address stay, the rest is escaped
    (`_TEXT_ESCAPES`). A link holds no backtick, so it never overlaps a code span."""
    out, last = [], 0
    for found in _INLINE.finditer(line):
        if found["code"] is not None:
            shown = _code_html(found["code"])
        elif _is_safe_url(found["url"], image=found.group().startswith("!")):
            shown = found.group()
        else:
            continue  # an unsafe link is escaped with the text around it
        out += [line[last:found.start()].translate(_TEXT_ESCAPES), shown]
        last = found.end()
    out.append(line[last:].translate(_TEXT_ESCAPES))
    return "".join(out)


def _text_lines(lines: Sequence[str]) -> list[str]:
    """README lines outside code fences, inert: a picture alone becomes a numbered `figure`, a
    line Markdown takes for blank (`str.strip`: at the top, a tab opens a code block) is left
    empty, any other line goes through `_inert_line`."""
    out: list[str] = []
    for line in lines:
        image = _SAFE_LINK.fullmatch(line.strip())
        if image and line.lstrip().startswith("!") and _is_safe_url(image["url"], True):
            out += figure(image["text"], image["url"])
        else:
            out.append(_inert_line(line) if line.strip() else "")
    return out


def readme_markdown(text: str) -> str:
    """A run's Markdown made inert: outside code fences, `_text_lines`. So that every reader
    agrees where fences are, each block that `fenced_blocks` finds opens with a canonical fence
    at the margin (the info string reduced by `_fence_info`) after a blank line and closes with
    that fence, even if left open. Lines are cut at "\\n" and "\\r", as Markdown cuts them.
    Apply `inert_snippets` to the whole page."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    start = 0
    for fence in fenced_blocks(lines):
        out += _text_lines(lines[start:fence.open])
        if out and out[-1]:  # right under a paragraph or an indented code line, a fence is not
            out.append("")   # always read as one: its body would be Markdown
        out += [fence.fence + _fence_info(fence.info), *lines[fence.open + 1:fence.close],
                fence.fence]
        start = fence.close + 1
    return "\n".join(out + _text_lines(lines[start:]))


def inert_snippets(markdown: str) -> str:
    """Markdown in which no line acts as a pymdownx.snippets marker (an inline `--8<-- "file"`,
    a block `--8<--`, a `--8<-- [start:name]` section line). Such a line gets one more `;`
    before its marker, the extension's own escape: it removes that `;` and shows the line as
    written. Snippets are expanded before anything else, inside code fences too, so this runs
    on a whole generated page, exactly once."""
    lines = markdown.split("\n")
    for number, line in enumerate(lines):
        match = SnippetPreprocessor.RE_ALL_SNIPPETS.match(line)
        if match is None and "8<-" in line:
            match = SnippetPreprocessor.RE_SNIPPET_SECTION.match(line)
        if match is not None:
            at = match.start("escape")
            lines[number] = f"{line[:at]};{line[at:]}"
    return "\n".join(lines)


def code_label(text: str) -> str:
    """A key or file name as a one-line code span for a heading."""
    return "`" + re.sub(r"[\r\n]", " ", text.replace("`", "'")) + "`"


_BLOCK_START = re.compile(r"\d*[^\w\s]")
"""How a line that opens a Markdown block starts: a fence (`~~~`), a heading, a list item
(`-`, `1.`), a quote, the caption block's own end (`///`)."""


def figure(caption: str, url: str) -> list[str]:
    """A picture that links to its file (a tap on a phone opens it full size), numbered and
    captioned by pymdownx.blocks.caption ("Figure N. caption"). `caption` and `url` must be
    inert already (the `text` and `url` of `_SAFE_LINK`). The caption has a line of its own,
    so its first mark, if any, is written as a character reference: a caption `~~~` would
    otherwise open a fence, and a later fence's body would then be read as raw HTML."""
    line = _BLOCK_START.sub(lambda m: f"{m[0][:-1]}&#{ord(m[0][-1])};", caption.strip(), 1)
    return ["", f"[![{caption}]({url})]({url})", "", "/// figure-caption", line, "///", ""]


def file_label(name: str) -> str:
    """A file name as inert link text, on one line (its address goes through `quote`): no file
    name can become markup or another kind of URL."""
    return re.sub(r"[\r\n]", " ", name).translate(_TEXT_ESCAPES).replace("]", "\\]")


# -- 3. raw artifacts, folded: JSON, JSONL examples, CSV tables, logs ----------------------

def _loads(text: str, path: Path, line: int | None = None) -> Any:
    """JSON `text` of `path` (at `line`); invalid JSON is a ValueError that says where."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        where = err.lineno if line is None else line
        raise ValueError(f"{path}:{where}: invalid JSON: {err.msg}") from None


def read_json(path: Path) -> Any:
    return _loads(path.read_text(encoding="utf-8"), path)


def read_jsonl(path: Path) -> list[Any]:
    """Each JSON value of a JSON Lines file. A line is skipped as blank only when it holds
    nothing but JSON's whitespace (space, tab, carriage return), by the course's own splitter
    (`course.jsonfiles.jsonl_lines`); a line of other whitespace (U+00A0) is an error."""
    return [_loads(line, path, number)
            for number, line in jsonl_lines(path.read_text(encoding="utf-8"))]


def _group_of(record: Mapping[str, Any]) -> Any:
    """The failure code of a record, when it has one (`code` or `details.code`)."""
    details = record.get("details")
    if isinstance(details, Mapping) and "code" in details:
        return details["code"]
    return record.get("code")


def pick_examples(records: Sequence[Mapping[str, Any]], limit: int = EXAMPLES_LIMIT,
                  per_group: int = EXAMPLES_PER_GROUP) -> list[Mapping[str, Any]]:
    """Records worth inspecting: when they carry a failure code, up to `per_group` of each code
    (codes in order of first appearance, so every cause is seen); otherwise the first ones."""
    if not any(_group_of(r) is not None for r in records):
        return list(records[:limit])
    taken: dict[Any, int] = {}
    picked = []
    for record in records:
        group = _group_of(record)
        if taken.get(group, 0) < per_group:
            taken[group] = taken.get(group, 0) + 1
            picked.append(record)
    return picked[:limit]


def file_fold(path: Path, count: str, body: str) -> str:
    """A file of the run folder, folded: `count` (what is shown of it) in the label and above
    `body`, with a link to the whole file (an HTML one: a raw HTML block reads no Markdown)."""
    link = f'<a href="{esc(quote(path.name))}">{esc(path.name)}</a>'
    return fold(f"{path.name}: {count}", f"<p>{count}. The whole file: {link}.</p>{body}")


def jsonl_section(path: Path) -> str:
    """A JSON Lines file, folded: how many records, and a few worth inspecting."""
    records = read_jsonl(path)
    objects = [r for r in records if isinstance(r, Mapping)]
    picked = pick_examples(objects)
    how = (f"up to {EXAMPLES_PER_GROUP} per failure code"
           if any(_group_of(r) is not None for r in objects) else "the first ones")
    return file_fold(path, f"{len(records)} records; {len(picked)} shown ({how})",
                     render_records(picked) if picked else "")


def csv_section(path: Path) -> str:
    """A CSV file, folded: its first `CSV_ROWS_LIMIT` rows as a table."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows:
        return fold(f"{path.name}: empty", "<p>(empty file)</p>")
    shown = [[render_text(cell) for cell in row] for row in rows[1:CSV_ROWS_LIMIT + 1]]
    return file_fold(path, f"{len(rows) - 1} rows; {len(shown)} shown", table(rows[0], shown))


def log_section(path: Path) -> str:
    """A text log, folded: its first `LOG_LINES_LIMIT` lines, as written. A line ends at "\\n"
    only (a "\\r" ending one is dropped): `str.splitlines` would also cut at U+2028, U+2029 and
    U+0085, which a JSON string written with `ensure_ascii=False` holds raw, and at the form
    feeds and separators (\\x0b, \\x0c, \\x1c-\\x1e) a log may hold."""
    lines = [line.removesuffix("\n").removesuffix("\r")
             for line in io.StringIO(path.read_text(encoding="utf-8"), newline="\n")]
    shown = lines[:LOG_LINES_LIMIT]
    count = (f"{len(lines)} lines; {'the first ' if len(shown) < len(lines) else ''}"
             f"{len(shown)} shown")
    return file_fold(path, count,
                     f'<pre class="course-log"><code>{esc(chr(10).join(shown))}</code></pre>')


# -- 4. a run folder -> a page ---------------------------------------------------------------

PUBLISHED = frozenset({".json", ".jsonl", ".csv", ".txt", ".png", ".md"})
"""The kinds of file a run page shows and publishes: data, logs, plots and reports. Anything
else in a run folder (an .html or .svg would run its scripts on the site's own origin) is
named on the page and left out."""


def regular_file(path: Path) -> bool:
    """Whether `path` is a regular file, not a link (which could point at a kata key)."""
    return path.is_file() and not path.is_symlink()


def run_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """The files of a run folder the site publishes (`regular_file`s in PUBLISHED), the rest."""
    paths = sorted(folder.iterdir())
    published = [p for p in paths if regular_file(p) and p.suffix.lower() in PUBLISHED]
    return published, [p for p in paths if p not in published]


_CANONICAL_FENCE = re.compile(r"^(`{3,}|~{3,})")
"""A fence line as `readme_markdown` writes it: at the margin, and a closing one exactly the
opening fence."""


class Report(NamedTuple):
    """A run's README cut where the run page places its parts: its `# ` title (the raw line;
    "" without one), its lead (what comes before the first `## ` section) and its sections,
    each a list of lines that starts with its heading. Lead and sections are inert Markdown
    (`readme_markdown`); a lead line that only restates the manifest's note is left out (the
    page says the one change once)."""

    title: str
    lead: list[str]
    sections: list[list[str]]

    @classmethod
    def read(cls, folder: Path, note: str = "") -> Report:
        readme = folder / "README.md"
        text = readme.read_text(encoding="utf-8") if regular_file(readme) else ""
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        title = lines[0][2:].strip() if lines[0].startswith("# ") else ""
        restated = {_inert_line(f"Note: {said}") for said in (note, prose_text(note))}
        parts: list[list[str]] = [[]]  # the lead, then each section
        fence = None
        for line in readme_markdown("\n".join(lines[1:] if title else lines)).split("\n"):
            if fence is not None:
                fence = None if line == fence else fence
            elif line.startswith("## "):
                parts.append([])
            elif match := _CANONICAL_FENCE.match(line):
                fence = match[1]
            elif len(parts) == 1 and line in restated:
                continue
            parts[-1].append(line)
        return cls(title, parts[0], parts[1:])

    def section(self, heading: str) -> list[str]:
        """The lines of the section `## heading`, its heading one level deeper ([] if none)."""
        return next((["#" + lines[0], *lines[1:]] for lines in self.sections
                     if lines[0] == f"## {heading}"), [])

    def body(self) -> list[str]:
        """Every section but those the page moves elsewhere (`MOVED_SECTIONS`)."""
        return [line for lines in self.sections if lines[0][3:] not in MOVED_SECTIONS
                for line in lines]


MOVED_SECTIONS = ("Reproduce", "Files")
"""README sections the run page moves: the command under Provenance, the list of files under
the raw material."""

PROVENANCE_KEYS = ("scorer_version", "seed", "prompt_version", "sampling", "inputs", "config",
                   "course_version", "git_commit")
"""The manifest's fields shown under Provenance; all of it is in the raw material."""

NULL_MEANS = {
    "seed": "nothing in this run is drawn at random (it scores, compares or computes "
            "exactly), so there is no seed to record.",
    "prompt_version": "how a policy was prompted to write the completions a run scores. Only "
                      "the runs that score such a file as it was written (kinds `eval`, "
                      "`selection`, `comparison`) record it, from the file's origin; this run "
                      "has no such completions, or samples its own policy with the settings "
                      "under `config`.",
    "sampling": "how those completions were sampled; recorded by the same runs as "
                "`prompt_version`, for the same reason.",
    "git_commit": "a canonical run is not tied to a commit: it is rebuilt byte for byte from "
                  "the code and the data (`course runs verify`), and a committed file cannot "
                  "name the commit that holds it. A run made by hand records its commit; "
                  "there, `null` means it was made outside a git repository.",
}
"""What a `null` under Provenance means, field by field (`null_notes`)."""

LONG_TABLE = 20
"""A table of the summary with at least this many rows (a per-step curve, a sweep) is named at
the top of the raw material, with the figure that draws it."""


def run_title(name: str, manifest: Mapping[str, Any], heading: str = "") -> str:
    """`run_011 · A hack the optimiser found: ...`: the folder name and what the run measures,
    the title of its README (else the manifest's kind). Plain characters only, as the title
    also goes into the navigation of every page, unescaped."""
    def plain(text: str) -> str:
        return re.sub(r"[^\w .:,;'()/?!+=-]", "?", re.sub(r"\s+", " ", text.replace("`", "")))

    return f"{plain(name)} · {plain(heading or str(manifest.get('kind', 'run')))}"


def folder_title(folder: Path, manifest: Mapping[str, Any]) -> str:
    """`run_title` of a run folder: its name in the navigation and on the runs index."""
    return run_title(folder.name, manifest, Report.read(folder).title)


def null_notes(leaves: Sequence[tuple[str, Any]]) -> list[str]:
    """What each `null` among the provenance `leaves` means, as an HTML block (a field's name
    comes from the manifest, so it is escaped like every value)."""
    nulls = [name for name, value in leaves if value is None]
    if not nulls:
        return []
    items = "".join(
        f"<li><code>{esc(name)}</code>: "
        + _BACKTICKED.sub(r"<code>\1</code>",
                          esc(NULL_MEANS.get(name, "not recorded for this kind of run.")))
        + "</li>" for name in nulls)
    return [html_block("<p><code>null</code> in this table marks a field with no value for "
                       f"this run:</p><ul>{items}</ul>", "course-provenance-nulls"), ""]


def run_page(folder: Path) -> str:
    """The Markdown page for one run folder, the report the module's docstring describes."""
    manifest = read_json(folder / "manifest.json")
    note = str(manifest.get("note") or "")
    report = Report.read(folder, note)
    files, left_out = run_files(folder)
    kind = str(manifest.get("kind", "run"))
    heading = _inert_line(report.title) if report.title else esc(run_title(folder.name, manifest))
    parts = [f"# {heading}", "",
             html_block(f'<p class="course-run-id"><code>{esc(folder.name)}</code> · kind '
                        f"<code>{esc(kind)}</code></p>", "course-run-header"), "",
             "## What was run and why", ""]
    if note:
        parts += [html_block(f'<p class="course-run-note"><strong>The one change</strong>: '
                             f"{esc(note)}</p>"), ""]
    results = [*report.lead, *report.body()]
    parts += [*results, ""]
    shown = "\n".join(results)
    if plots := [p for p in files if p.suffix == ".png" and f"]({p.name})" not in shown]:
        parts += ["## Figures", ""] + [line for p in plots
                                       for line in figure(file_label(p.stem), quote(p.name))]
    provenance = leaves_and_tables({k: manifest[k] for k in PROVENANCE_KEYS if k in manifest},
                                   tables=False)[0]
    parts += ["## Provenance", "",
              "What was measured, with which instrument (scorer version), on which inputs "
              "(paths and sha256), and how; every field of the manifest is in the raw "
              "material below.", "",
              html_block(render_leaves(provenance), "course-provenance"), "",
              *null_notes(provenance), *report.section("Reproduce"), ""]
    parts += raw_material(folder, files, manifest, report)
    if left_out:
        parts += ["", "Not published (links, folders, and files of other kinds than "
                  f"{', '.join(sorted(PUBLISHED))}):", ""]
        parts += [f"- {code_label(p.name)}" for p in left_out]
    return inert_snippets("\n".join(parts))


def raw_material(folder: Path, files: Sequence[Path], manifest: Mapping[str, Any],
                 report: Report) -> list[str]:
    """The raw material, each file folded; then what each file holds, and the downloads."""
    parts = ["## Raw material", "",
             "Each file of the run folder, as stored (text escaped, nothing normalised), folded: "
             "open what you need. Look at it before trusting a number.", ""]
    summary = folder / "summary.json"
    if summary in files:
        data = read_json(summary)
        figures = [p.name for p in files if p.suffix == ".png"]
        drawn = (f"it is drawn above, in {' or '.join(code_label(f) for f in figures)}"
                 if figures else "no figure of this run draws it")
        long = leaves_and_tables(data)[1] if isinstance(data, Mapping) else []
        parts += [f"The table {code_label(name)} ({len(rows)} rows) is folded in "
                  f"`summary.json`; {drawn}." for name, rows in long if len(rows) >= LONG_TABLE]
        parts += ["", fold("summary.json: every number of the run, as stored",
                           render_value(data))]
    parts.append(fold("manifest.json: the whole manifest", render_value(manifest)))
    parts += [csv_section(p) for p in files if p.suffix == ".csv"]
    parts += [log_section(p) for p in files if p.suffix == ".txt"]
    parts += [jsonl_section(p) for p in files if p.suffix == ".jsonl"]
    parts += ["", *report.section("Files"), "", "Download:", ""]
    parts += [f"- [{file_label(p.name)}]({quote(p.name)}) ({p.stat().st_size} bytes"
              f"{', shown as a page' if p.suffix == '.md' else ''})" for p in files
              if p.name != "README.md"]
    parts += ["", "[All runs](../index.md)", ""]
    return parts


def index_page(folders: Sequence[Path], directory_urls: bool) -> str:
    """The Runs page: what a run folder is, and every run by what it measures and its note."""
    lines = [
        "# Runs", "",
        "Every number the course quotes comes from a saved run: a folder under `runs/` with a "
        "manifest (scorer version, inputs with sha256, prompt version, sampling, seed, the one "
        "change versus the previous run), a machine-readable summary, the per-item artifacts "
        "and a README. These pages are generated from the committed folders when the site is "
        "built, and `course runs verify` regenerates each canonical run byte for byte.", "",
    ]
    if not folders:
        return "\n".join([*lines, "No run folder has been committed yet.", ""])
    rows = []
    for folder in folders:
        manifest = read_json(folder / "manifest.json")
        href = f"{folder.name}/" if directory_urls else f"{folder.name}/index.html"
        measures = folder_title(folder, manifest).split(" · ", 1)[1]
        note = str(manifest.get("note") or "")
        rows.append([f'<a href="{esc(href)}">{esc(folder.name)}</a>',
                     f"<strong>{esc(measures)}</strong><br>"
                     f'<span class="course-run-note">{esc(note)}</span>'])
    head = ["run", "what it measures, and the one change"]
    return inert_snippets("\n".join([*lines, html_block(table(head, rows)), ""]))


# -- 5. the build's events (called by plugin.py) ----------------------------------------

def run_folders(config: MkDocsConfig) -> list[Path]:
    """Every `run_*` folder of runs/ (and of $COURSE_SITE_EXTRA_RUNS), by name."""
    roots = [Path(config.config_file_path).resolve().parent / "runs"]
    if extra := os.environ.get(EXTRA_RUNS_ENV):
        roots.append(Path(extra).resolve())
    found: dict[str, Path] = {}
    for root in roots:
        for folder in sorted(root.glob("run_*")):
            if folder.is_symlink() or not folder.is_dir():
                continue
            if folder.name in found:
                log.warning(f"two run folders are named {folder.name}: {found[folder.name]} "
                            f"and {folder}; only the first is shown")
            elif os.path.lexists(folder / "index.md"):
                raise PluginError(f"{folder / 'index.md'}: a run folder cannot hold index.md, "
                                  "the name of its generated page; rename the file")
            elif not regular_file(folder / "manifest.json"):
                log.warning(f"{folder} has no manifest.json (a regular file, not a link): it is "
                            "not a run folder")
            else:
                found[folder.name] = folder
    return [found[name] for name in sorted(found)]


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """A broken run file (invalid JSON or UTF-8: a ValueError) stops the build with one line
    naming it, without a traceback."""
    try:
        yield
    except ValueError as err:
        raise PluginError(str(err)) from None


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill the `Runs` nav entry: the index page, then one page per run folder."""
    with _one_line_errors():
        for entry in config.nav or []:
            if isinstance(entry, dict) and NAV_TITLE in entry:
                pages: list[Any] = [f"{SITE_FOLDER}/index.md"]
                for folder in run_folders(config):
                    title = folder_title(folder, read_json(folder / "manifest.json"))
                    pages.append({title: f"{SITE_FOLDER}/{folder.name}/index.md"})
                entry[NAV_TITLE] = pages
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the Runs page, a page per run folder, and the files each publishes."""
    with _one_line_errors():
        folders = run_folders(config)
        files.append(File.generated(config, f"{SITE_FOLDER}/index.md",
                                    content=index_page(folders, config.use_directory_urls)))
        for folder in folders:
            uri = f"{SITE_FOLDER}/{folder.name}/"
            files.append(File.generated(config, uri + "index.md", content=run_page(folder)))
            for path in run_files(folder)[0]:
                if path.suffix != ".md":
                    files.append(File.generated(config, uri + path.name, abs_src_path=str(path)))
                elif path.name != "README.md":  # (the README is the top of the run page)
                    files.append(File.generated(  # another report: a page of its own
                        config, uri + path.name, inclusion=InclusionLevel.NOT_IN_NAV,
                        content=inert_snippets(readme_markdown(path.read_text(encoding="utf-8")))))
    return files
