"""Prediction boxes, read and checked as the build does (course_site/predictions.py), without
building a site: the one Markdown form, its one-line errors, where a key is read from, and
that a key moves when the code that printed it changes."""

from __future__ import annotations

import json

import pytest
from mkdocs.exceptions import PluginError
from sitebuild import REPO, Build

from course_site import fences, predictions
from course_site.predictions import BoxError, Spec, find_key, read_spec


def spec(**fields: str) -> Spec:
    if "number" in fields:
        fields.setdefault("given", '"the best style pays 0.9"')
    return read_spec([f"{name}: {value}" for name, value in fields.items()])


@pytest.mark.parametrize(("lines", "problem"), [
    (["key: \"{}\"", "tolerance: 1"], "give exactly one of `number: <what>` or `choice"),
    (["number: x", "choice: y", "key: \"{}\""], "give exactly one of"),
    (["number: x", "tolerance: 1"], "no `key:`"),
    (["number: x", "key: 0.8992", "tolerance: 1"], "is neither \"text with {}\""),
    (["number: x", "key: \"J -> 0.8992\"", "tolerance: 1"], "exactly one {}"),
    (["number: x", "key: \"{} and {}\"", "tolerance: 1"], "exactly one {}"),
    (["number: x", "key: \"-> {}\""], "a number needs `tolerance: <number >= 0>`"),
    (["number: x", "key: \"-> {}\"", "tolerance: -1"], "finite number >= 0"),
    (["number: x", "key: \"-> {}\"", "tolerance: nan"], "finite number >= 0"),
    (["choice: x", "options: a", "key: line 1, field 1"], "two or more different options"),
    (["choice: x", "options: a | a", "key: line 1, field 1"], "two or more different"),
    (["choice: x", "options: a | b", "key: \"{}\"", "tolerance: 1"], "a choice has no tol"),
    (["number: x", "options: a | b", "key: \"{}\"", "tolerance: 1"], "`options:` belong"),
    (["number: x", "key: \"{}\"", "tolerance: 1", "block: 0"], "`block:` is a count from 1"),
    (["number: x", "key: \"{}\"", "tolerance: 1", "answer: 0.9"], "unknown line 'answer: 0.9'"),
    (["number: x", "number: y", "key: \"{}\"", "tolerance: 1"], "given twice"),
    (["number:", "key: \"{}\"", "tolerance: 1"], "say what is asked"),
    (["number: x", "key: \"{}\"", "tolerance: 1"], "a number needs `given: \"<words"),
    (["number: x", "key: \"{}\"", "tolerance: 1", "given: 0.9"], "a number needs `given:"),
    (["number: x", "key: \"{}\"", "tolerance: 1", "given: \" \""], "a number needs `given:"),
    (["choice: x", "options: a | b", "key: \"{}\"", "given: \"a\""], "belongs to a `number"),
])
def test_a_malformed_box_is_refused_with_its_problem(lines, problem):
    with pytest.raises(BoxError) as raised:
        read_spec(lines)
    assert problem in str(raised.value), str(raised.value)
    assert "\n" not in str(raised.value)


OUTPUT = ("300 steps: J 0.6 -> 0.8992; ceiling: the best style's 0.9\n"
          "baseline    noise  stuck\n"
          "none      0.02124  5% (10)\n"
          "code                   count\n"
          "not_an_integer            10\n")


@pytest.mark.parametrize(("fields", "key"), [
    ({"number": "J", "key": '"-> {}"', "tolerance": "0.02"}, "0.8992"),
    ({"number": "J", "key": '"J  0.6   -> {};"', "tolerance": "0.02"}, "0.8992"),  # spaces
    ({"number": "stuck", "key": "line 3, field 3", "tolerance": "3"}, "5%"),
    ({"number": "noise", "key": '"none {}"', "tolerance": "0.01"}, "0.02124"),
    ({"choice": "code", "options": "multiple_lines | not_an_integer",
      "key": '"code count {}"'}, "not_an_integer"),
    ({"choice": "code", "options": "not_an_integer | x", "key": "line 5, field 1"},
     "not_an_integer"),
])
def test_the_key_is_read_from_the_output(fields, key):
    assert find_key(spec(**fields), OUTPUT) == key


@pytest.mark.parametrize(("fields", "problem"), [
    ({"number": "J", "key": '"=> {}"', "tolerance": "1"}, "is not in the output"),
    ({"number": "J", "key": '"ceiling: the best {}"', "tolerance": "1"}, "is not in the out"),
    ({"number": "J", "key": "line 2, field 1", "tolerance": "1"}, "'baseline' in the output, "
                                                                  "not a number"),
    ({"number": "J", "key": "line 9, field 1", "tolerance": "1"}, "None in the output"),
    ({"choice": "code", "options": "a | b", "key": "line 5, field 1"}, "not one of a, b"),
    ({"choice": "code", "options": "a | b", "key": '"code count {}"'}, "is not in the output"),
])
def test_a_key_the_output_does_not_hold_is_refused(fields, problem):
    with pytest.raises(BoxError) as raised:
        find_key(spec(**fields), OUTPUT)
    assert problem in str(raised.value), str(raised.value)


PAGE = '''# A page

The best style pays 0.9 per draw.

!!! question "Predict: J"
    Where does J end?

    ```predict
    number: J after 300 steps
    key: "-> {}"
    tolerance: 0.02
    given: "best style pays 0.9"
    ```

!!! question "Predict: why"
    Why?

<!-- answers: J -->

```python
print("300 steps: J 0.6 -> 0.8992")
```

??? success "Answer: J"
    Just under 0.9.

??? success "Answer: why"
    Because.
'''


def built(page: str, stdout: list[str], where: str = "docs/p.md") -> list[predictions.Box]:
    """The page's boxes once its blocks have printed `stdout` (one string per block)."""
    predictions.with_placeholders(page, where, page)
    predictions.resolve(where, [{"stdout": out} for out in stdout])
    return predictions._boxes.pop(where)


def test_a_box_gets_its_key_and_a_free_text_box_gets_a_form():
    boxes = built(PAGE, ["300 steps: J 0.6 -> 0.8992\n"])
    assert [(b.name, b.spec and b.spec.kind, b.key, b.line) for b in boxes] == [
        ("J", "number", "0.8992", 5), ("why", None, "", 15)]
    markdown = predictions.with_placeholders(PAGE, "docs/p.md", PAGE)
    predictions._boxes.pop("docs/p.md")
    assert "```predict" not in markdown and markdown.count("CoursePredict") == 2
    form = predictions.form_html(boxes[0], "../predictions/", "M1")
    assert 'data-key="0.8992"' in form and " hidden>" in form and 'aria-live="polite"' in form
    assert '<a href="../predictions/">My predictions</a>' in form
    assert 'type="text"' in predictions.form_html(boxes[1], "#", "M1")


def test_a_key_moves_when_the_code_that_prints_it_changes():
    """The key is never typed: print another number and the box's key is that number."""
    assert built(PAGE, ["300 steps: J 0.6 -> 0.8992\n"])[0].key == "0.8992"
    assert built(PAGE, ["300 steps: J 0.6 -> 0.7311\n"])[0].key == "0.7311"


def test_a_key_printed_as_html_stays_text():
    box = built(PAGE, ["J -> 1\n"])[0]
    box.key = '"><script>alert(1)</script>'
    form = predictions.form_html(box, "#", "M1")
    assert "<script>" not in form and "&lt;script&gt;" in form


@pytest.mark.parametrize(("page", "stdout", "problem"), [
    (PAGE, ["J 0.6 -> nothing\n"], "docs/p.md:5: prediction 'J': the key \"-> {}\" is not in"),
    (PAGE, [""], "docs/p.md:5: prediction 'J': no block number 1 that prints"),
    (PAGE.replace("<!-- answers: J -->\n\n```python", "```python").replace(
        "??? success \"Answer: J\"", "<!-- answers: J -->\n\n??? success \"Answer: J\""),
     ["J 0.6 -> 0.8992\n"], "no block number 1 that prints after the box (or after"),
    (PAGE.replace("tolerance: 0.02", "tolerance: 0.02\n    block: 2").replace(
        "??? success \"Answer: why\"", '```python\nprint("J -> 1")\n```\n\n??? success '
        '"Answer: why"'), ["J 0.6\n", "J -> 1\n"], "comes after the box `Answer: J`"),
    (PAGE.replace('??? success "Answer: J"\n    Just under 0.9.\n', ""),
     ["J 0.6 -> 0.8992\n"], "docs/p.md:5: prediction 'J': no `??? success \"Answer: J\"` box"),
])
def test_a_box_the_build_cannot_make_fails_it_in_one_line_per_box(page, stdout, problem):
    with pytest.raises(PluginError) as raised:
        built(page, stdout)
    predictions._boxes.pop("docs/p.md", None)
    assert problem in str(raised.value), str(raised.value)
    assert len(str(raised.value).split("\n")) == 1


def test_a_number_box_must_be_derivable_from_what_comes_before_it():
    """`given:` names the words a student works the number out from: above the box, in the
    box's own question, or in what a block above it printed; anywhere else fails the build."""
    assert built(PAGE, ["J -> 0.8992\n"])[0].key == "0.8992"
    asked = PAGE.replace("The best style pays 0.9 per draw.\n\n", "").replace(
        "Where does J end?", "Where does J end, if the best style pays 0.9?")
    assert built(asked, ["J -> 0.8992\n"])[0].key == "0.8992"
    printed = ('```python\nprint("the best style pays 0.9")\n```\n\n'
               + PAGE.replace("The best style pays 0.9 per draw.\n\n", ""))
    assert built(printed, ["the best style pays 0.9\n", "J -> 0.8992\n"])[0].key == "0.8992"
    for later in (PAGE.replace("The best style pays 0.9 per draw.\n\n", "").replace(
            "    Just under 0.9.", "    Just under 0.9: the best style pays 0.9."),
            PAGE.replace("The best style pays 0.9 per draw.", "The best style pays 0.8.")):
        with pytest.raises(PluginError) as raised:
            built(later, ["J -> 0.8992\n"])
        predictions._boxes.pop("docs/p.md", None)
        assert 'the words it is given, "best style pays 0.9", are not on the page above' in str(
            raised.value)


def test_a_predict_block_outside_a_box_is_refused():
    page = "# P\n\n```predict\nnumber: x\n```\n"
    with pytest.raises(PluginError, match=r"docs/p.md:3: a ```predict block outside"):
        predictions.with_placeholders(page, "docs/p.md", page)


def test_every_interactive_box_has_its_key_in_its_blocks_output(built_site: Build):
    """On the built site: each number or choice box's key is in what its block printed (the
    build's record of every block), and each box of the Markdown is on the page."""
    assert built_site.predictions is not None and built_site.record is not None
    boxes = json.loads(built_site.predictions.read_text(encoding="utf-8"))
    blocks = json.loads(built_site.record.read_text(encoding="utf-8"))
    kinds: dict[str, int] = {}
    for path in sorted((REPO / "docs").rglob("*.md")):
        page, lines = path.relative_to(REPO).as_posix(), path.read_text("utf-8").split("\n")
        fenced = list(fences.fenced_blocks(lines))
        asked = predictions.prompts(lines, fenced)
        if not asked or page.startswith("docs/teacher/"):      # the student edition's pages
            continue
        found = boxes[page]
        assert [box["name"] for box in found] == [name for _, name in asked], page
        assert sum(box["kind"] != "text" for box in found) == sum(
            fence.words()[:1] == ["predict"] for fence in fenced), page
        for box in found:
            kinds[box["kind"]] = kinds.get(box["kind"], 0) + 1
            if box["kind"] == "text":
                continue
            printed = blocks[page][box["block"]]["stdout"]
            assert box["key"] and box["key"] in printed, (page, box)
            if box["kind"] == "choice":
                assert box["key"] in box["options"], (page, box)
            else:
                float(box["key"].replace(",", "").removesuffix("%"))
    assert kinds.get("number", 0) >= 7 and kinds.get("choice", 0) >= 15, kinds


LAB_SOURCE = '''# %% [markdown]
# The best style pays 0.9 per draw.
#
# **Predict: J.** Where does J end?
#
# ```predict
# number: J after 300 steps
# key: "-> {}"
# tolerance: 0.02
# given: "best style pays 0.9"
# ```

# %%
print("J 0.6 -> 0.8992")

# %% [markdown]
# **Answer: J.** Just under 0.9.
'''


def lab_html(printed: str = "J 0.6 -&gt; 0.8992\n", answer: str = "Answer: J.") -> str:
    """A lab as mkdocs-jupyter renders it (nbconvert's lab template): one div per cell."""
    return (
        '<div class="jp-Cell jp-MarkdownCell jp-Notebook-cell"><div class="jp-RenderedHTMLCommon'
        ' jp-RenderedMarkdown jp-MarkdownOutput" data-mime-type="text/markdown"><p>The best '
        'style pays 0.9 per draw.</p>\n<p><strong>Predict: J.</strong> Where does J end?</p>\n'
        '<pre><code class="language-predict">predict\nnumber: J after 300 steps\nkey: &quot;'
        '-&gt; {}&quot;\ntolerance: 0.02\n</code></pre>\n</div></div>\n'
        '<div class="jp-Cell jp-CodeCell jp-Notebook-cell"><div class="jp-OutputArea '
        'jp-Cell-outputArea"><div class="jp-RenderedText jp-OutputArea-output" '
        f'data-mime-type="text/plain">\n<pre>{printed}</pre></div></div></div>\n'
        '<div class="jp-Cell jp-MarkdownCell jp-Notebook-cell"><div><p><strong>'
        f'{answer}</strong> Just under 0.9.</p></div></div>\n')


def test_a_lab_box_is_made_from_its_cells():
    """A lab's box (course_site/predictions.py, the labs): the form takes the ```predict
    block's place, and the key comes from what the code cell after it printed."""
    made = predictions.lab_forms(lab_html(), "docs/labs/lab_x.py", LAB_SOURCE, "../p/", "Lab")
    record = predictions._record.pop("docs/labs/lab_x.py")
    assert record == [{"name": "J", "line": 4, "key": "0.8992", "block": -1, "kind": "number",
                       "options": []}]
    assert "language-predict" not in made and 'data-key="0.8992"' in made
    assert made.index('class="course-predict-box"') < made.index("jp-CodeCell")
    free = LAB_SOURCE.replace("# ```predict", "# ```text")
    made = predictions.lab_forms(lab_html().replace('<pre><code class="language-predict">',
                                                    '<pre><code class="language-text">'),
                                 "docs/labs/lab_x.py", free, "#", "Lab")
    predictions._record.pop("docs/labs/lab_x.py")
    assert 'data-kind="text"' in made
    assert made.index("Where does J end?</p>") < made.index('class="course-predict-box"')


@pytest.mark.parametrize(("html", "source", "problem"), [
    (lab_html(answer="Answer: K."), LAB_SOURCE, "docs/labs/lab_x.py:4: prediction 'J': no "
     "Markdown cell after it that starts with **Answer: J.**"),
    (lab_html(printed="J 0.6\n"), LAB_SOURCE, "the key \"-> {}\" is not in the output"),
    (lab_html(), LAB_SOURCE.replace("The best style pays 0.9 per draw.", "A style pays."),
     'the words it is given, "best style pays 0.9", are not in the lab above the box'),
    (lab_html().replace("Predict: J.", "Predict: K."), LAB_SOURCE,
     "the rendered lab has no paragraph that starts **Predict: J.**"),
])
def test_a_lab_box_the_build_cannot_make_fails_it(html, source, problem):
    with pytest.raises(PluginError) as raised:
        predictions.lab_forms(html, "docs/labs/lab_x.py", source, "#", "Lab")
    assert problem in str(raised.value), str(raised.value)
