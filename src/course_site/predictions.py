"""Predict, then run: every prediction box takes the student's answer before the page answers.

A lesson asks for a prediction with a question box, and answers it further down (the
convention is checked by tests/site/test_predictions.py):

    !!! question "Predict: the learning curve"
        After 300 steps, will the expected reward J reach 1?

        ```predict
        number: J after 300 steps
        key: "-> {}"
        tolerance: 0.02
        ```

    <!-- answers: the learning curve -->        (optional) what is shown openly from here on
    ...                                          answers the prediction
    ??? success "Answer: the learning curve"    the folded answer

The ```predict block is optional. Without it the box asks for one line of free text. With it
the box asks for a number or a choice, and its key is never typed: it is read from what a
Python block of the page printed when the build ran it. Its fields:

    number: <what the number is>    a number, compared with the key within `tolerance`
    choice: <what is chosen>        or one of `options`
    options: <a> | <b> | ...        for `choice`: the options; the key is the one printed
    key: "<text> {} <text>"         where the key is in the block's output: `{}` stands for it,
                                    the text around it must match the output (any run of
                                    spaces matches any run of spaces)
    key: line <n>, field <m>        or: the m-th word of the output's n-th line
    tolerance: <number >= 0>        for `number`: how far off still counts as right, in the
                                    units of the printed value
    unit: percent                   optional, for `number`: the key is in percent, so "40%"
                                    typed is 40; otherwise a typed "40%" is 0.4 (a student
                                    writes a share either way: docs/assets/javascripts/
                                    read-number.js reads "0.4", "40%", "0,4", "2/5")
    given: "<text>"                 for `number`: the words, earlier on the page (its
                                    Markdown above the ```predict block, or what a block
                                    above the box printed), from which a student can work
                                    the number out or estimate it within the tolerance;
                                    without such words the box asks for a choice instead
    block: <n>                      optional: the n-th Python block that prints something,
                                    counted from where the page is folded (default 1)

The block the key comes from must lie where the page is folded until the student answers:
after the `<!-- answers: name -->` marker (or, without one, after the box) and no later than
the end of the `Answer: name` box. A malformed box, a key the output does not hold, or a key
shown before the student can answer is a one-line build error naming the page and the line.

What the reader's browser does with the boxes (docs/assets/javascripts/predictions.js): it
shows the form, folds everything from the marker (or the box) to the answer until the student
answers or presses "Show me anyway", keeps each answer in localStorage, and the page "My
predictions" (docs/predictions.md) lists and exports them. Without JavaScript the form stays
hidden and the page is as it was: the box, the output, the folded answer.

Why not mkdocs-quiz (1.7.1): it stores answers and locks the first one before showing the key,
as this does, but its keys are typed in the page by hand and it has no numeric answer with a
tolerance; here the key must come from the page's own output, so that a change of the code
moves the key.

The key is untrusted text (a block printed it): it goes into the page only as an escaped HTML
attribute, after Markdown has rendered the page, like every output (course_site/outputs.py).
"""

from __future__ import annotations

import html
import itertools
import json
import math
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from course_site.fences import Fence, fenced_blocks
from course_site.notebooks import is_lab
from course_site.outputs import runnable_blocks

PROMPT = re.compile(r'^!!! question "Predict: (?P<name>[^"]+)"\s*$')
ANSWER = re.compile(r'^\?\?\? [\w-]+ "Answer: (?P<name>[^"]+)"\s*$')
MARKER = re.compile(r"^<!--\s*answers:\s*(?P<name>[^>]*?)\s*-->\s*$")
FIELDS = ("number", "choice", "options", "key", "tolerance", "unit", "given", "block")
NUMBER = r"[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?"
"""How a printed number looks: a sign, digits with thousands commas, a decimal part, a %."""
_LINE_FIELD = re.compile(r"^line (?P<line>\d+), field (?P<field>\d+)$")

RECORD_ENV = "COURSE_SITE_PREDICTION_RECORD"
"""Where the build writes every box it made, with its key and the block it came from."""


class BoxError(ValueError):
    """A prediction box the build cannot make: the message names the problem, not the place."""


# -- 1. reading a box --------------------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """What a ```predict block asks for: a number or a choice, and where its key is."""

    kind: str                      # "number" or "choice"
    label: str                     # what the number is, or what the options choose
    options: tuple[str, ...]       # the choices ("" for a number)
    key: str                       # the template (with one `{}`) or `line N, field M`
    tolerance: float | None        # for a number: how far off still counts as right
    block: int                     # the block-th printing block after the box (1-based)
    percent: bool = False          # for a number: the key is in percent (`unit: percent`)
    given: str = ""                # for a number: the earlier words it can be worked out from


def read_spec(body: list[str]) -> Spec:
    """A ```predict block's lines as a `Spec`; BoxError names the first problem."""
    fields: dict[str, str] = {}
    for line in body:
        if not line.strip():
            continue
        name, colon, value = line.strip().partition(":")
        if not colon or name.strip() not in FIELDS:
            raise BoxError(f"unknown line {line.strip()!r}: a field is one of "
                           f"{', '.join(FIELDS)}, written `field: value`")
        if name.strip() in fields:
            raise BoxError(f"the field {name.strip()!r} is given twice")
        fields[name.strip()] = value.strip()
    kinds = [kind for kind in ("number", "choice") if kind in fields]
    if len(kinds) != 1:
        raise BoxError("give exactly one of `number: <what>` or `choice: <what>`")
    kind = kinds[0]
    if "key" not in fields:
        raise BoxError("no `key:`: say where the printed output holds the answer")
    key = fields["key"]
    if key.startswith('"') and key.endswith('"') and len(key) >= 2:
        key = key[1:-1]
        if key.count("{}") != 1:
            raise BoxError(f'the key "{key}" must hold exactly one {{}} where the value is')
    elif not _LINE_FIELD.match(key):
        raise BoxError(f'the key {key!r} is neither "text with {{}}" nor `line N, field M`')
    options: tuple[str, ...] = ()
    if kind == "choice":
        options = tuple(option.strip() for option in fields.get("options", "").split("|"))
        if len(options) < 2 or not all(options) or len(set(options)) != len(options):
            raise BoxError("a choice needs `options:` with two or more different options, "
                           "`a | b | c`")
    elif "options" in fields:
        raise BoxError("`options:` belong to a `choice:`")
    tolerance = None
    if kind == "number":
        try:
            tolerance = float(fields.get("tolerance", ""))
        except ValueError:
            raise BoxError("a number needs `tolerance: <number >= 0>`, in the units of the "
                           f"printed value; got {fields.get('tolerance', 'none')!r}") from None
        if not (math.isfinite(tolerance) and tolerance >= 0):
            raise BoxError(f"the tolerance must be a finite number >= 0, got {tolerance}")
    elif "tolerance" in fields:
        raise BoxError("a choice has no tolerance")
    block = fields.get("block", "1")
    if not block.isdigit() or int(block) < 1:
        raise BoxError(f"`block:` is a count from 1, got {block!r}")
    if fields.get("unit", "percent") != "percent" or ("unit" in fields and kind != "number"):
        raise BoxError("`unit: percent` is the one unit, for a number whose key is in percent")
    if not (label := fields[kind]):
        raise BoxError(f"say what is asked: `{kind}: <what>`")
    given = fields.get("given", "")
    if kind == "choice" and given:
        raise BoxError("`given:` belongs to a `number:`")
    if kind == "number":
        if not (len(given) > 2 and given[0] == given[-1] == '"' and given[1:-1].strip()):
            raise BoxError('a number needs `given: "<words earlier on the page>"` from which '
                           "it can be worked out; a value nothing before the box lets a "
                           "student reach is asked as a choice")
        given = given[1:-1]
    return Spec(kind, label, options, key, tolerance, int(block), "unit" in fields, given)


def _value_pattern(spec: Spec) -> str:
    return NUMBER if spec.kind == "number" else "|".join(
        re.escape(option) for option in sorted(spec.options, key=len, reverse=True))


def find_key(spec: Spec, output: str) -> str:
    """The key as printed in `output` (a block's stdout); BoxError if it is not there."""
    value = _value_pattern(spec)
    if match := _LINE_FIELD.match(spec.key):
        lines = output.split("\n")
        number, word = int(match["line"]), int(match["field"])
        words = lines[number - 1].split() if number <= len(lines) else []
        found = words[word - 1] if word <= len(words) else None
        if found is None or not re.fullmatch(value, found):
            what = "a number" if spec.kind == "number" else f"one of {', '.join(spec.options)}"
            raise BoxError(f"the key, {spec.key}, is {found!r} in the output, not {what}")
        return found
    before, after = (_loose(part) for part in spec.key.split("{}"))
    if found_match := re.search(f"{before}({value}){after}", output):
        return found_match[1]
    raise BoxError(f'the key "{spec.key}" is not in the output of the block it points to')


def _loose(text: str) -> str:
    """A regular expression for `text` in which any run of spaces matches any run of spaces."""
    if not text.strip():
        return r"\s+" if text else ""
    return ((r"\s+" if text[0].isspace() else "") + r"\s+".join(map(re.escape, text.split()))
            + (r"\s+" if text[-1].isspace() else ""))


# -- 2. the boxes of a page --------------------------------------------------------------------

@dataclass
class Box:
    """One prediction box of a page, as the build found it."""

    name: str
    line: int                        # the box's line in the page's source (1-based)
    end: int                         # the index of the box's last line in the page's Markdown
    spec: Spec | None                # None: a free-text prediction
    blocks: list[tuple[int, int]]    # (index on the page, line) of each runnable block after it
    earlier: list[int]               # the index on the page of each runnable block before it
    above: str                       # the page's Markdown above its ```predict block
    region: tuple[int, int]          # the lines folded until the student answers (0-based)
    problems: list[str] = field(default_factory=list)
    key: str = ""
    block: int = -1                  # the index on the page of the block that printed the key


_NONCE = secrets.token_hex(8)
_PLACEHOLDER = re.compile(rf"(?:<p>)?CoursePredict{_NONCE}x(\d+)(?:</p>)?")
_boxes: dict[str, list[Box]] = {}
"""Per page (`docs/...md`), its boxes, from its Markdown until its HTML is made."""
_record: dict[str, list[dict[str, Any]]] = {}
"""Per page, each box the build made: written to $COURSE_SITE_PREDICTION_RECORD."""


def _source_line(source: str, name: str) -> int:
    """The line of the page's own file where the box `name` opens (0 if not found)."""
    for number, line in enumerate(source.split("\n"), start=1):
        if (match := PROMPT.match(line)) and match["name"] == name:
            return number
    return 0


def _box_end(lines: list[str], start: int) -> int:
    """The index of the last non-blank line of the admonition opened at `start`."""
    end = start
    for number in range(start + 1, len(lines)):
        if lines[number].strip() and not lines[number].startswith("    "):
            break
        if lines[number].strip():
            end = number
    return end


def prompts(lines: list[str], fences: list[Fence]) -> list[tuple[int, str]]:
    """(line index, name) of each prediction box of a page; one shown inside a code block (a
    teacher's example) is text, not a box."""
    inside = {n for fence in fences for n in range(fence.open, fence.close + 1)}
    return [(number, match["name"]) for number, line in enumerate(lines)
            if number not in inside and (match := PROMPT.match(line))]


def _find_box(lines: list[str], number: int, name: str, source: str,
              fences: list[Fence], blocks: list[int]) -> tuple[Box, Fence | None]:
    """The box opened at line `number`, and its ```predict block if it has one."""
    end = _box_end(lines, number)
    inside = [fence for fence in fences
              if number < fence.open <= end and fence.words()[:1] == ["predict"]]
    box = Box(name, _source_line(source, name), end, None,
              [(index, line) for index, line in enumerate(blocks) if line > end],
              [index for index, line in enumerate(blocks) if line < number],
              "\n".join(lines[:inside[0].open if inside else end + 1]), (end + 1, end))
    if len(inside) > 1:
        box.problems.append("more than one ```predict block in one box")
    if inside:
        try:
            box.spec = read_spec(lines[inside[0].open + 1:inside[0].close])
        except BoxError as err:
            box.problems.append(str(err))
    after = range(end + 1, len(lines))
    marker = next((n for n in after if (m := MARKER.match(lines[n])) and m["name"] == name),
                  None)
    answer = next((n for n in after if (m := ANSWER.match(lines[n])) and m["name"] == name),
                  None)
    if answer is None:
        box.problems.append(f'no `??? success "Answer: {name}"` box at the top level of the '
                            "page after it (the form folds the page up to that box)")
    else:
        box.region = (end + 1 if marker is None else marker, _box_end(lines, answer))
    return box, inside[0] if inside else None


def with_placeholders(markdown: str, where: str, source: str) -> str:
    """`markdown` with each prediction box's ```predict block (or, in a free-text box, a new
    last line) replaced by a placeholder for its form. The boxes are kept for `resolve`; line
    numbers in them are those of `markdown` as given."""
    lines = markdown.split("\n")
    fences = list(fenced_blocks(lines))
    blocks = [fence.open for fence, _ in runnable_blocks(lines, where)]
    found = [(number, *_find_box(lines, number, name, source, fences, blocks))
             for number, name in prompts(lines, fences)]
    if stray := [fence.open + 1 for fence in fences if fence.words()[:1] == ["predict"]
                 and not any(n < fence.open <= box.end for n, box, _ in found)]:
        raise PluginError(f"{where}:{stray[0]}: a ```predict block outside a "
                          '`!!! question "Predict: <name>"` box')
    for index, (_, box, fence) in reversed(list(enumerate(found))):
        holder = f"    CoursePredict{_NONCE}x{index}"
        if fence is not None:
            lines[fence.open:fence.close + 1] = [holder] + [""] * (fence.close - fence.open)
        else:
            lines[box.end + 1:box.end + 1] = ["", holder]
    _boxes[where] = [box for _, box, _ in found]
    return "\n".join(lines)


# -- 3. the keys, once the page's blocks have run ----------------------------------------------

def resolve(where: str, results: list[dict[str, Any]]) -> None:
    """Read each box's key from `results` (what each runnable block of the page printed, in
    order); every problem with a box fails the build, one line each."""
    problems = []
    for box in _boxes.get(where, []):
        if box.spec is not None and not box.problems:
            printing = [(index, line) for index, line in box.blocks
                        if line >= box.region[0] and results[index]["stdout"]]
            if len(printing) < box.spec.block:
                box.problems.append(
                    f"no block number {box.spec.block} that prints after the box (or after "
                    f"the answers: {box.name} comment, where the fold starts): the key is read "
                    "from a block's output, and a block shown before the fold would give the "
                    "answer away")
            else:
                index, line = printing[box.spec.block - 1]
                box.block = index
                if line > box.region[1]:
                    box.problems.append(
                        "the block whose output holds the key comes after the box "
                        f'`Answer: {box.name}`, where the fold ends: move it above, or into it')
                try:
                    box.key = find_key(box.spec, results[index]["stdout"])
                except BoxError as err:
                    box.problems.append(str(err))
            box.problems += not_given(box, [results[index]["stdout"]
                                            for index in box.earlier], "on the page above")
        problems += [f"{where}:{box.line}: prediction {box.name!r}: {problem}"
                     for problem in box.problems]
    if problems:
        raise PluginError("\n".join(problems))


def not_given(box: Box, printed: list[str], where: str) -> list[str]:
    """The problem, if any, with a number box's `given:` words: they must be in the Markdown
    above its ```predict block (`box.above`) or in what a block above it `printed`."""
    given = box.spec.given if box.spec is not None else ""
    if not given or any(re.search(_loose(given), text) for text in [box.above, *printed]):
        return []
    return [f'the words it is given, "{given}", are not {where} the box nor in what a block '
            "above it printed: a number box must be derivable from what comes before it"]


def slug(name: str) -> str:
    """The id of a box on its page: `the learning curve` -> `predict-the-learning-curve`."""
    return "predict-" + (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "box")


def form_html(box: Box, mine: str, lesson: str) -> str:
    """The box's form, hidden until predictions.js shows it (so that without JavaScript the
    box is only its question), linking to the page My predictions at `mine`; `lesson` is the
    page's title in the navigation, which the student's record names. Every value is escaped:
    the key is what a block printed."""
    def attr(value: object) -> str:
        return html.escape(str(value), quote=True)

    ident = slug(box.name)
    spec = box.spec
    data = {"name": box.name, "kind": spec.kind if spec else "text", "lesson": lesson}
    if spec is not None:
        data |= {"key": box.key, "label": spec.label}
        if spec.tolerance is not None:
            data["tolerance"] = f"{spec.tolerance:g}"
        if spec.percent:
            data["unit"] = "percent"
    attrs = " ".join(f'data-{k}="{attr(v)}"' for k, v in data.items())
    if spec is None:
        ask = (f'<label for="{ident}-answer">Before you read on, write your prediction in one '
               f'line:</label><input id="{ident}-answer" name="answer" type="text" '
               'maxlength="500" autocomplete="off">')
        submit = "Save my prediction"
    elif spec.kind == "number":
        ask = (f'<label for="{ident}-answer">Your prediction, {attr(spec.label)}:</label>'
               f'<input id="{ident}-answer" name="answer" type="text" inputmode="decimal" '
               f'autocomplete="off" aria-describedby="{ident}-result">')
        submit = "Check my prediction"
    else:
        choices = "".join(f'<label><input type="radio" name="answer" value="{attr(option)}"> '
                          f"{attr(option)}</label>" for option in spec.options)
        ask = f"<fieldset><legend>Your prediction, {attr(spec.label)}:</legend>{choices}</fieldset>"
        submit = "Check my prediction"
    return (f'<div class="course-predict-box" id="{ident}"><form class="course-predict" '
            f'{attrs} hidden>{ask}<p class="course-predict-actions">'
            f'<button type="submit" class="md-button md-button--primary">{submit}</button> '
            '<button type="button" class="md-button" data-action="skip">Show me anyway'
            '</button></p><p class="course-predict-note">What answers it stays folded until '
            f'you answer; your answers stay in this browser (see <a href="{attr(mine)}">My '
            f'predictions</a>).</p><p class="course-predict-result" id="{ident}-result" '
            'role="status" aria-live="polite"></p></form></div>')


# -- 4. the student's record: the page "My predictions" ----------------------------------------

SUMMARY_MARKER = "<!-- course: every prediction -->"
"""Where docs/predictions.md lists every box of the site (replaced after rendering)."""


def every_box(files: Files) -> list[tuple[str, str, Box]]:
    """Every prediction box of the site's pages, as (page url, page title, box), page by page
    in the order of their paths (the lessons' file names sort in the course's order); the
    title is the page's in the navigation, as the boxes' own records name it."""
    found = []
    for file in sorted(files.documentation_pages(), key=lambda f: f.src_uri):
        text = file.content_string
        if "Predict:" not in text:
            continue
        lines = text.split("\n")
        title = (file.page.title if file.page is not None and file.page.title else
                 next((line[2:].strip() for line in lines if line.startswith("# ")), file.name))
        if is_lab(file.src_uri):
            found += [(file.url, title, lab_box(lines, n, name))
                      for n, name in lab_prompts(lines)]
            continue
        fences = list(fenced_blocks(lines))
        found += [(file.url, title, _find_box(lines, n, name, text, fences, [])[0])
                  for n, name in prompts(lines, fences)]
    return found


ASKS = {"number": "a number", "choice": "a choice", "text": "a line of text"}
"""What each kind of box asks for, in the My predictions table."""


def summary_html(files: Files, here: Page) -> str:
    """Every prediction of the site as a table, one row per box, linked to it; the student's
    answers are filled in by predictions.js (without it, the table is a list of the boxes)."""
    rows = []
    for url, title, box in every_box(files):
        href = html.escape(get_relative_url(url, here.url) + "#" + slug(box.name), quote=True)
        asks = ASKS[box.spec.kind if box.spec else "text"]
        rows.append(f'<tr data-page="{html.escape(url, quote=True)}" '
                    f'data-name="{html.escape(box.name, quote=True)}"><td>{html.escape(title)}'
                    f'</td><td><a href="{href}">{html.escape(box.name)}</a></td><td>{asks}</td>'
                    '<td class="course-predict-status">not yet</td></tr>')
    panel = ('<div class="course-my-predictions-panel" hidden><ul class="course-my-predictions-'
             'totals"></ul><p><button type="button" class="md-button" data-action="json">Export '
             'as JSON</button> <button type="button" class="md-button" data-action="csv">Export '
             'as CSV</button> <button type="button" class="md-button" data-action="clear">Clear '
             'all</button></p><p class="course-my-predictions-confirm" hidden>Delete every '
             "prediction kept in this browser? It cannot be undone. "
             '<button type="button" class="md-button" data-action="yes">Yes, delete them'
             '</button> <button type="button" class="md-button" data-action="no">Keep them'
             "</button></p></div>")
    return (panel + '<table class="course-my-predictions"><thead><tr><th>Lesson</th><th>'
            "Prediction</th><th>It asks for</th><th>Yours</th></tr></thead><tbody>" +
            "".join(rows) + "</tbody></table>")


# -- 5. the labs: the same boxes in a notebook's Markdown cells -------------------------------
#
# A lab (a jupytext notebook, docs/labs/lab_*.py) is rendered by mkdocs-jupyter, not by this
# plugin's Markdown, so its box is written in its Markdown cells with plain Markdown:
#
#     # **Predict: the base at temperature 1.** <the question, one paragraph>
#     #
#     # ```predict                              (optional, as in a lesson)
#     # number: ...
#     # ```
#
#     # %%
#     <the code cells that answer it>
#
#     # %% [markdown]
#     # **Answer: the base at temperature 1.** <the answer>
#
# The code cells after the box, down to the cell that starts with its answer, are folded until
# the student answers; the key is read from what they printed when the build ran the lab.

LAB_PROMPT = re.compile(r"^# \*\*Predict: (?P<name>[^*]+?)\.\*\*")
"""A lab box's first line in the lab's source."""
_HTML_CELL = re.compile(r'<div (?:id="[^"]*" )?class="jp-Cell (?P<kind>jp-\w+Cell)')
_HTML_PROMPT = re.compile(r"<strong>Predict: (?P<name>[^<]+?)\.</strong>")
_HTML_SPEC = re.compile(
    r'<pre><code class="language-predict">(?:predict\n)?.*?</code></pre>', re.DOTALL)
_HTML_OUTPUT = re.compile(
    r'<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="text/plain"[^>]*>\s*'
    r"<pre>(?P<text>.*?)</pre>", re.DOTALL)


def lab_prompts(lines: list[str]) -> list[tuple[int, str]]:
    """(line index, name) of each prediction box of a lab's source."""
    return [(number, match["name"]) for number, line in enumerate(lines)
            if (match := LAB_PROMPT.match(line))]


def lab_box(lines: list[str], number: int, name: str) -> Box:
    """The box opened at line `number` of a lab's source, with its ```predict block read."""
    cell = []
    for line in lines[number + 1:]:
        if not line.startswith("#") or line.startswith("# %%"):
            break
        cell.append(line[2:])
    box = Box(name, number + 1, number, None, [], [], "\n".join(lines[:number + 1]), (0, 0))
    opened = next((n for n, line in enumerate(cell) if line.strip() == "```predict"), None)
    if opened is not None:
        closed = next((n for n in range(opened + 1, len(cell)) if cell[n].strip() == "```"),
                      len(cell))
        try:
            box.spec = read_spec(cell[opened + 1:closed])
        except BoxError as err:
            box.problems.append(str(err))
    return box


def _text_of(output: str) -> str:
    """What a code cell printed, from its rendered `<pre>` (tags off, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", output))


def lab_forms(content: str, where: str, source: str, mine: str, lesson: str) -> str:
    """A rendered lab with each box's form in place, its key read from what the lab's cells
    printed; every problem with a box fails the build, one line each, naming the lab's line."""
    lines = source.split("\n")
    boxes = {name: lab_box(lines, n, name) for n, name in lab_prompts(lines)}
    starts = [match.start() for match in _HTML_CELL.finditer(content)] + [len(content)]
    cells = [content[a:b] for a, b in itertools.pairwise(starts)]
    printed = [[_text_of(m["text"]) for m in _HTML_OUTPUT.finditer(cell)] for cell in cells]
    problems, made = [], []
    for index, cell in enumerate(cells):
        if not (match := _HTML_PROMPT.search(cell)) or match["name"] not in boxes:
            continue
        box = boxes.pop(match["name"])
        title = f"<strong>Answer: {html.escape(box.name, quote=False)}.</strong>"
        answer = next((n for n in range(index + 1, len(cells)) if title in cells[n]), None)
        if answer is None:
            box.problems.append(f"no Markdown cell after it that starts with **Answer: "
                                f"{box.name}.** (the form folds the lab up to that cell)")
        elif box.spec is not None:
            outputs = ["".join(out) for out in printed[index + 1:answer] if any(out)]
            if len(outputs) < box.spec.block:
                box.problems.append(f"no code cell number {box.spec.block} that prints "
                                    "between the box and its answer")
            else:
                try:
                    box.key = find_key(box.spec, outputs[box.spec.block - 1])
                except BoxError as err:
                    box.problems.append(str(err))
            box.problems += not_given(box, ["".join(out) for out in printed[:index]],
                                      "in the lab above")
        # the form takes the place of the ```predict block, or follows the question
        spec = _HTML_SPEC.search(cell) if box.spec is not None else None
        start, end = ((spec.start(), spec.end()) if spec else
                      (at := cell.index("</p>", match.end()) + len("</p>"), at))
        cells[index] = cell[:start] + form_html(box, mine, lesson) + cell[end:]
        problems += [f"{where}:{box.line}: prediction {box.name!r}: {problem}"
                     for problem in box.problems]
        made.append(box)
    problems += [f"{where}:{box.line}: prediction {box.name!r}: the rendered lab has no "
                 f"paragraph that starts **Predict: {box.name}.**" for box in boxes.values()]
    if problems:
        raise PluginError("\n".join(problems))
    _record[where] = [recorded(box) for box in made]
    return content[:starts[0]] + "".join(cells)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not page.file.src_uri.endswith(".md"):
        return markdown
    return with_placeholders(markdown, f"docs/{page.file.src_uri}", page.file.content_string)


def after_blocks_ran(page: Page, results: list[dict[str, Any]]) -> None:
    """Called once the page's blocks have run (course_site/outputs.py), with their results."""
    where = f"docs/{page.file.src_uri}"
    resolve(where, results)
    _record[where] = [recorded(box) for box in _boxes.get(where, [])]


def recorded(box: Box) -> dict[str, Any]:
    """What $COURSE_SITE_PREDICTION_RECORD keeps of a box the build made (a lab's block: -1)."""
    return {"name": box.name, "line": box.line, "key": box.key, "block": box.block,
            "kind": box.spec.kind if box.spec else "text",
            "options": list(box.spec.options) if box.spec else []}


def on_page_content(content: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    where = f"docs/{page.file.src_uri}"
    if SUMMARY_MARKER in content:
        content = content.replace(SUMMARY_MARKER, summary_html(files, page))
    mine = files.get_file_from_path("predictions.md")
    link = mine.url_relative_to(page.file) if mine else "#"
    if is_lab(page.file.src_uri):
        return lab_forms(content, where, page.file.content_string, link, page.title or "")
    boxes = _boxes.pop(where, [])
    if not boxes:
        return content

    def place(match: re.Match[str]) -> str:
        return form_html(boxes[int(match[1])], link, page.title or "")

    return _PLACEHOLDER.sub(place, content)


def on_post_build(config: MkDocsConfig) -> None:
    if target := os.environ.get(RECORD_ENV):
        Path(target).write_text(json.dumps(_record), encoding="utf-8")
