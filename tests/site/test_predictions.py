"""Predict before you look: every prediction prompt comes before anything on the page that
answers it, and written answers stay folded until the student opens them.

The convention a writer follows (Milestone 1 of the course design: "before each step the
student writes 1-2 lines predicting"):

    !!! question "Predict: step 3"          an open box: the question, nothing that answers it
        Which probabilities go up?

    <!-- answers: step 3 -->                 right before output shown openly that answers it
    ```text                                  (a log, a table, a figure); optional
    ...
    ```

    ??? success "Answer: step 3"             folded (`???`, never `???+`), after the prompt
        ...

The name after "Predict:" ties the three together. This file checks the order in the Markdown
source and, on the built site, that each answer is a closed <details> and each prompt is open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import prose_numbers as pn
import pytest
from mkdocs.exceptions import PluginError
from sitebuild import REPO, Build

from course_site import fences, predictions

DOCS = REPO / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "reference" not in p.parts)
LESSONS = sorted((DOCS / "lessons").glob("*.md"))

_ADMONITION = re.compile(
    r'^\s*(?P<kind>!!!|\?\?\?\+?)\s+(?P<type>[\w-]+)(?:\s+"(?P<title>[^"]*)")?')
_MARKER = re.compile(r"<!--\s*answers:\s*(?P<name>[^>]*?)\s*-->")
_OLD_STYLE = re.compile(r"^#+\s+Predict\b", re.IGNORECASE)


@dataclass(frozen=True)
class Item:
    """One piece of the convention found on a line of a page."""

    line: int
    kind: str   # "prompt", "answer" or "marker"
    name: str
    problem: str = ""


def _items(text: str) -> list[Item]:
    items = []
    fence = ""          # the open fence's characters while inside a code block
    for number, line in enumerate(text.split("\n"), start=1):
        opening = re.match(r"\s*(`{3,}|~{3,})", line)
        if opening and (not fence or opening[1].startswith(fence)):
            fence = "" if fence else opening[1]
            continue
        if fence:
            continue
        for marker in _MARKER.finditer(line):
            items.append(Item(number, "marker", marker["name"]))
        match = _ADMONITION.match(line)
        title = (match["title"] or "") if match else ""
        if match and title.startswith("Predict"):
            name = title.partition(":")[2].strip()
            problem = ("" if match["kind"] == "!!!" and match["type"] == "question" and name
                       else f'a prediction is written `!!! question "Predict: <name>"`, '
                            f"got {line.strip()!r}")
            items.append(Item(number, "prompt", name, problem))
        elif match and title.startswith("Answer"):
            name = title.partition(":")[2].strip()
            problem = ("" if match["kind"] == "???" and name
                       else f'an answer is folded, `??? <type> "Answer: <name>"`, '
                            f"got {line.strip()!r}")
            items.append(Item(number, "answer", name, problem))
        elif _OLD_STYLE.match(line):
            items.append(Item(number, "prompt", "", "a heading named Predict: put each "
                              "prediction in its own `!!! question \"Predict: <name>\"` box "
                              "before the output that answers it"))
    return items


def order_problems(text: str) -> list[str]:
    """Everything wrong with a page's predictions, as `line: problem`."""
    items = _items(text)
    problems = [f"{item.line}: {item.problem}" for item in items if item.problem]
    prompts: dict[str, int] = {}
    for item in items:
        if item.kind == "prompt" and item.name:
            if item.name in prompts:
                problems.append(f"{item.line}: prediction {item.name!r} is already asked on "
                                f"line {prompts[item.name]}")
            prompts.setdefault(item.name, item.line)
        elif item.kind in ("answer", "marker") and item.name not in prompts:
            problems.append(f"{item.line}: {item.kind} for {item.name!r} comes before any "
                            f"`Predict: {item.name}` prompt (or there is none)")
    answered = {item.name for item in items if item.kind in ("answer", "marker")}
    problems += [f"{line}: prediction {name!r} is never answered" for name, line in
                 prompts.items() if name not in answered]
    return problems


@pytest.mark.parametrize(("text", "expected"), [
    ('!!! question "Predict: a"\n    Q?\n\n<!-- answers: a -->\nlog\n\n'
     '??? success "Answer: a"\n    A.\n', []),
    ('<!-- answers: a -->\nlog\n\n!!! question "Predict: a"\n    Q?\n\n'
     '??? success "Answer: a"\n    A.\n', ["1: marker for 'a' comes before"]),
    ('??? success "Answer: a"\n    A.\n\n!!! question "Predict: a"\n    Q?\n',
     ["1: answer for 'a' comes before"]),
    ('!!! question "Predict: a"\n    Q?\n\n???+ success "Answer: a"\n    A.\n',
     ["4: an answer is folded"]),
    ('??? question "Predict"\n    Q?\n', ["1: a prediction is written"]),
    ("## Predict before you run\n", ["1: a heading named Predict"]),
    ("```markdown\n## Predict before you run\n```\n", []),
    ('!!! question "Predict: a"\n    Q?\n', ["1: prediction 'a' is never answered"]),
])
def test_the_order_check_catches_each_mistake(text, expected):
    problems = order_problems(text)
    assert len(problems) == len(expected), problems
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start), problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_predictions_come_before_their_answers(page: Path):
    problems = order_problems(page.read_text(encoding="utf-8"))
    where = page.relative_to(REPO).as_posix()
    assert not problems, "\n".join(f"{where}:{problem}" for problem in problems)


BOXED = [page for page in PAGES if "```predict" in page.read_text(encoding="utf-8")]


@pytest.mark.parametrize("page", BOXED, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_each_prediction_box_finds_its_key(page: Path, the_build_record):
    """What the build does with the page's ```predict blocks (course_site/predictions.py), on
    what its blocks print (the build's record in the test command; run here alone, which is
    how scripts/test_page.sh shows a key that is not found without building the site)."""
    markdown = page.read_text(encoding="utf-8")
    where = page.relative_to(REPO).as_posix()
    predictions.with_placeholders(markdown, where, markdown)
    try:
        predictions.resolve(where, [result for _, _, result in pn.block_results(markdown, page)])
    except PluginError as err:
        pytest.fail(str(err))
    finally:
        predictions._boxes.pop(where, None)


def questions_asked(lines: list[str], start: int) -> tuple[str, int]:
    """The kind of the box opened at line `start` (number, choice or text) and how many
    questions its prose asks (its question marks, outside its ```predict block and comments)."""
    end = predictions._box_end(lines, start)
    kind, inside, prose = "text", False, []
    for line in lines[start + 1:end + 1]:
        if line.strip().startswith("```"):
            inside = not inside
        elif inside:
            kind = next((k for k in ("number", "choice") if line.strip().startswith(k + ":")),
                        kind)
        else:
            prose.append(line)
    return kind, re.sub(r"<!--.*?-->", "", "\n".join(prose), flags=re.S).count("?")


@pytest.mark.parametrize("page", BOXED, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_a_number_or_choice_box_asks_one_question(page: Path):
    """A box that records one answer asks one question: a second question goes in a box of
    its own (a free-text box records a line that may answer several)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    fenced = list(fences.fenced_blocks(lines))
    asking = {name: questions_asked(lines, n) for n, name in predictions.prompts(lines, fenced)}
    assert {name: asked for name, (kind, asked) in asking.items()
            if kind != "text" and asked != 1} == {}


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.name)
def test_every_lesson_asks_for_predictions(page: Path):
    prompts = [i for i in _items(page.read_text(encoding="utf-8")) if i.kind == "prompt"]
    assert len(prompts) >= 2, f"{page.name} asks for {len(prompts)} predictions"


def test_rendered_answers_are_folded_and_prompts_open(built_site: Build):
    """The Markdown check above trusts the source; this one reads what the student sees."""
    for page in LESSONS:
        html = (built_site.site / "lessons" / page.stem / "index.html").read_text("utf-8")
        answers = re.findall(r"<details class=\"[^\"]*\"(?P<open> open)?>\s*<summary>"
                             r"Answer:", html)
        prompts = re.findall(r'<div class="admonition question">\s*<p class="admonition-title">'
                             r"Predict:", html)
        source = page.read_text(encoding="utf-8")
        assert len(prompts) == source.count('!!! question "Predict:'), page.name
        assert len(answers) == len(re.findall(r'^\s*\?\?\? \w+ "Answer:', source, re.M)), \
            page.name
        assert not any(answers), f"{page.name}: an answer is rendered open"
