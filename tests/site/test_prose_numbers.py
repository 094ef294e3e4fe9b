"""Every number a page quotes in its prose matches a value the page computes or reads.

The convention (what counts as a number, where values come from, how a number that is not a
measurement is marked with `<!-- unmeasured: ... -->`) is explained in tests/prose_numbers.py.
One test per page, named by its path: `pytest tests/site/test_prose_numbers.py -k m05` checks
Milestone 0.5 in a few seconds. The unit tests below prove each rule on small examples, and
that hand-editing a quoted number in a real page turns its test red at the right line.
"""

from __future__ import annotations

import dataclasses
import textwrap

import numpy as np
import prose_numbers as pn
import pytest

from course_site import run_blocks


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def texts(markdown: str) -> list[str]:
    return [literal.text for literal in pn.prose_literals(markdown)]


def sources(*values: float, label: str = "the test") -> pn.Sources:
    found = pn.Sources()
    for value in values:
        found.add(value, label)
    return found


# ---------------------------------------------------------------------------------------------
# What is prose.
# ---------------------------------------------------------------------------------------------

def test_code_math_markup_and_headings_are_not_prose():
    page = md("""
        # 3. A heading with 0.42

        Prose 0.5146 and `inline 0.111` and ``two `ticks` 0.222`` and $x = 0.333$ and
        $$
        y = 0.444
        $$
        and \\(0.555\\) and [a link 0.5667](../runs/run_0.777/index.md "title 0.888") and
        <span title="0.999">0.1234</span> <!-- a comment 0.321 --> and a note[^13].

        ```python
        x = 0.6666
        ```

            an indented code block 0.7777

        1. a list item 0.75
        2. another
        14. a fourteenth item, numbered by the list
        --8<-- "runs/run_001/summary.json"
        ![alt text 0.65](https://example.org/0.91.png){ width="300" }

        [^13]: A footnote 0.05.
        """)
    assert texts(page) == ["0.5146", "0.5667", "0.1234", "0.75", "0.65", "0.05"]


def test_admonitions_and_tabs_are_prose_with_their_real_line_numbers():
    page = md("""
        !!! note "A note"
            Inside a note: 0.5146.

        === "Tab"

            Inside a tab: 0.5333.

            ```python
            assert 0.9 == 0.9
            ```
        """)
    assert [(lit.text, lit.line) for lit in pn.prose_literals(page)] == [
        ("0.5146", 2), ("0.5333", 6)]


def test_citations_to_the_bibliography_are_not_prose():
    page = "See [Williams (1992)](../references.md#williams-1992) and a pass rate of 0.5146."
    assert texts(page) == ["0.5146"]


# ---------------------------------------------------------------------------------------------
# Numeric literals.
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("prose", "expected"), [
    ("pass rate 0.5667 (34/60, 56.7%)", ["0.5667", "34", "60", "56.7%"]),
    ("1,920 samples and 80,601 policies", ["1,920", "80,601"]),
    ("falls by −0.19, rises by +12.5 points, -0.3", ["−0.19", "+12.5 points", "-0.3"]),
    ("from 44.1% to 68.4 %, about 24 percentage points, 5 pp", [
        "44.1%", "68.4 %", "24 percentage points", "5 pp"]),
    ("a range 3-5 and 0.2–0.4, and 5+6", ["3", "5", "0.2", "0.4", "5", "6"]),
    ("β = 0.05, N=8, k: 64", ["0.05", "8", "64"]),
    ("it ends at 0.95.", ["0.95"]),
])
def test_literals(prose, expected):
    assert [found.text for found in pn.literals_in(prose)] == expected


@pytest.mark.parametrize("name", [
    "run_001", "dev-018", "M4", "Q6", "cl100k", "pass@64", "v1", "2x", "1st", "Python 3.11.2",
    "step-100", "arXiv:1707.06347", "U+2212", "#12", "$40", "Milestone 0.5", "rule 11", "line 466",
    "sections 13.3 and 13.4", "sections 3.1 to 3.3", "Section 1",
])
def test_names_are_not_numbers(name):
    assert pn.literals_in(f"see {name} here") == []


def test_label_words_reach_across_links_and_lines():
    page = md("""
        Each exercise belongs to a lesson: [Milestone 0](../lessons/m0.md),
        [0.5](../lessons/m05.md), [1](../lessons/m1.md) and [13](../lessons/m13.md).
        """)
    assert texts(page) == []


def test_literal_values_and_keys():
    found = pn.literal_of("−1,920.50%")
    assert (found.value, found.decimals, found.signed, found.percent) == (-1920.5, 2, True, True)
    assert found.key == "-1920.50%"
    assert pn.literal_of("+12.5 points").key == "12.5"


@pytest.mark.parametrize(("prose", "exempt"), [
    ("8", True), ("12", True), ("-3", True), ("13", False), ("0.5", False), ("5%", False),
    ("1.0", False), ("2024", False),
])
def test_small_integers_are_exempt(prose, exempt):
    assert pn.literal_of(prose).auto_exempt is exempt


# ---------------------------------------------------------------------------------------------
# Matching.
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("prose", "values", "expected"), [
    ("0.5146", [0.51456], True),
    ("0.5146", [0.5147], False),
    ("0.6146", [0.5146], False),
    ("0.12", [0.125], True),            # half-way: either rounding convention
    ("0.13", [0.125], True),
    ("0.50", [0.5], True),
    ("24", [24.3], False),              # an integer must be exact ...
    ("24", [24.0], True),
    ("24 points", [0.243], True),       # ... unless it is a percentage
    ("56.7%", [0.5667], True),
    ("56.7%", [56.67], True),
    ("53%", [0.5333], True),
    ("0.19", [-0.19], True),            # "falls by 0.19"
    ("−0.19", [-0.19], True),
    ("−0.19", [0.19], False),           # a written sign must agree
    ("+0.24", [0.2375], True),
    ("1,920", [1920], True),
    ("1,920", [1921], False),
])
def test_matching(prose, values, expected):
    assert pn.matches(pn.literal_of(prose), sources(*values)) is expected


def test_nearest_values_are_named_with_their_sources():
    found = pn.Sources()
    found.add(0.5146, "runs/run_002/summary.json $['pass_at_1']")
    found.add(0.5333, "the output of the block at line 277, output line:2")
    found.add(0.61, "an assert at line 3")
    # a slip of one digit first (what the teacher probably meant), then the closest values
    assert pn.nearest(pn.literal_of("0.6146"), found) == [
        "0.5146 from runs/run_002/summary.json $['pass_at_1'] (one keystroke away)",
        "0.61 from an assert at line 3",
        "0.5333 from the output of the block at line 277, output line:2"]
    assert pn.nearest(pn.literal_of("80%"), found, k=1) == ["0.61 from an assert at line 3"]


def test_slips_are_only_suggested_for_precise_literals():
    found = sources(0.02, 5, 0)
    assert pn.nearest(pn.literal_of("0.62"), found, k=1) == ["0.02 from the test"]
    assert pn.nearest(pn.literal_of("400"), found, k=1) == ["5 from the test"]


@pytest.mark.parametrize(("typed", "meant"), [
    ("0.6146", "0.5146"), ("0.5416", "0.5146"), ("1,902", "1,920")])
def test_one_keystroke_away(typed, meant):
    assert meant in set(pn.one_keystroke_away(typed))


# ---------------------------------------------------------------------------------------------
# Exemption markers.
# ---------------------------------------------------------------------------------------------

MARKED = md("""
    Williams wrote it in 1992; the file has 400 lines. <!-- unmeasured: 1992 400; a year, a size -->
    The pass rate is 0.5146.

    Again 1992, in a paragraph of its own.

    - a list item with 2,024 <!-- unmeasured: 2,024 -->
    - another with 2024
    """)


def test_a_marker_exempts_its_numbers_in_its_own_block_only():
    result = pn.check("docs/x.md", MARKED, sources(0.5146))
    # the block is the contiguous non-blank lines: a tight list is one block
    assert (result.checked, result.matched, result.marked) == (2, 1, 4)
    assert [(miss.literal.line, miss.literal.text) for miss in result.unmatched] == [
        (4, "1992")]
    assert result.errors == []


def test_a_marker_naming_an_absent_number_is_a_stale_exemption():
    page = md("""
        The pass rate is 0.5146. <!-- unmeasured: 0.5147 1992 -->
        """)
    result = pn.check("docs/x.md", page, sources(0.5146))
    assert result.unmatched == [] and result.checked == 1
    assert len(result.errors) == 2
    assert result.errors[0].startswith('1: stale exemption: "0.5147" is not a number in the prose')


def test_a_marker_must_list_numbers():
    page = "A year, 1992. <!-- unmeasured: the year -->\n"
    result = pn.check("docs/x.md", page, sources())
    assert len(result.unmatched) == 1
    assert result.errors and "must list numbers" in result.errors[0]


def test_a_marker_inside_code_is_not_a_marker():
    page = md("""
        ```markdown
        A template: 1992 <!-- unmeasured: 1992 -->
        ```
        """)
    assert pn.markers(page) == ([], [])


# ---------------------------------------------------------------------------------------------
# The failure message.
# ---------------------------------------------------------------------------------------------

def test_the_failure_names_page_line_number_and_the_closest_value():
    page = "Intro.\n\nThe pass rate is 0.6146 on run_002.\n"
    run = pn.Sources()
    run.add(0.5146, "runs/run_002/summary.json $['pass_at_1']")
    result = pn.check("docs/lessons/m05-selection.md", page, sources(0.95),
                      {"run_002": run})
    # the section shows nothing, so the closest value comes from the run it cites
    assert result.failures() == [
        'docs/lessons/m05-selection.md:3: "0.6146" matches nothing computed; closest in its '
        "section: 0.5146 (runs/run_002/summary.json $['pass_at_1']; one digit off)"]


def test_the_closest_value_prefers_the_smallest_slip_then_the_nearest_value():
    found = pn.Sources()
    for value, label in ((0.527, "far slip"), (0.729, "near slip"), (0.7271, "not a slip")):
        found.add(value, label)
    # 0.527 and 0.729 are both one digit from 0.727: the smaller change wins
    assert pn.closest(pn.literal_of("0.727"), found) == (0.729, "near slip", True)
    # two significant digits: no slip is suggested (a short slip matches by chance)
    assert pn.closest(pn.literal_of("0.53"), found) == (0.527, "far slip", False)
    assert pn.closest(pn.literal_of("0.5"), pn.Sources()) is None


def test_the_closest_value_comes_from_the_section_before_the_page():
    page = md("""
        # Title

        ## One

        Here the page quotes 0.8598.

        ```python
        print(0.8498, 0.9283)
        ```

        ## Two

        ```python
        print(0.8597)
        secret = 0.8599
        ```
        """)
    found = pn.collect_sources(page, pn.REPO / "docs" / "lessons" / "closest.md")
    (failure,) = pn.check("closest.md", page, found, shown=True).failures()
    # 0.8597 and 0.8599 are nearer, but printed in another section or never printed
    assert failure == ('closest.md:5: "0.8598" matches nothing computed; closest in its '
                       "section: 0.8498 (shown at line 7; one digit off)")


def test_a_run_counts_for_its_own_section_and_the_introduction():
    page = md("""
        # Title, introducing run_001

        ## One

        Read from run_002: 0.2222, and from the introduction's run: 0.1111.

        ```python
        # run_003 named in code is not a citation
        ```

        ## Two

        Not here: 0.2222 and 0.3333.
        """)
    assert [part.runs for part in pn.sections(page)] == [("run_001",), ("run_002",), ()]
    runs = {name: sources(value, label=name) for name, value in
            [("run_001", 0.1111), ("run_002", 0.2222), ("run_003", 0.3333)]}
    result = pn.check("docs/x.md", page, sources(), runs)
    assert [(miss.literal.text, miss.runs) for miss in result.unmatched] == [
        ("0.2222", ("run_001",)), ("0.3333", ("run_001",))]


# ---------------------------------------------------------------------------------------------
# Sources.
# ---------------------------------------------------------------------------------------------

def test_numbers_in_text_skip_names_and_read_percentages_and_exponents():
    values = {value for value, _ in pn.numbers_in_text(
        "dev-053 pass@1 run_009 0.5146 1e-05 56.7% 1,920 -0.19")}
    assert values == {0.5146, 1e-05, 56.7, 0.567, 1920, 1, 920, -0.19, 0.19}


@dataclasses.dataclass
class Point:
    x: float
    y: dict


def test_the_leaves_of_a_value_go_through_containers_and_respect_the_caps():
    """course_site.run_blocks.leaves: what the build records of a block's namespace."""
    data = {"a": [1.5, (2.5, {3.5})], "p": Point(4.5, {"q": np.float64(5.5)}), "s": "got 6.5",
            "small": np.array([7.5, 8.5]), "big": np.ones(run_blocks.MAX_ARRAY + 1) * 9.5,
            "flag": True, "function": print, "module": np}
    found = list(run_blocks.leaves(data, "data", [1000]))
    assert [leaf for _, leaf in found if not isinstance(leaf, str) or leaf == "got 6.5"] == [
        1.5, 2.5, 3.5, 4.5, 5.5, "got 6.5", 7.5, 8.5]
    assert ("data['p'].y['q']", 5.5) in found
    assert len(list(run_blocks.leaves(list(range(100, 200)), "xs", [10]))) == 10


def test_asserted_literals_are_the_operands_of_equality():
    code = md("""
        assert round(x, 3) == 0.243 and y == (60, 34)
        assert abs(gap) < 0.02
        assert z != 7.5
        assert w == -22
        """)
    assert [value for value, _ in pn.asserted_literals(code)] == [0.243, 60, 34, -22]


def test_numbers_written_in_the_code_are_settings_the_page_uses():
    code = 'hostile = "Final: 3" + "2" * 100_000\nx = -0.5 + 2.5e-3\n'
    assert sorted(pn.written_literals(code)) == [(-0.5, 2), (0.0025, 2), (0.5, 2), (100000, 1)]


def test_a_page_computes_with_its_blocks_and_snippets(tmp_path):
    snippet = tmp_path / "log.txt"
    snippet.write_text("line one 0.111\nline two 0.222\nline three 0.333\n")
    page = md(f"""
        Numbers from blocks and a snippet.

        ```python
        total = 40
        print("printed", 4242 / 10000)
        ```

        ```{{.python continuation}}
        total += 2.5
        assert total == 42.5
        ```

        ```{{.python notest}}
        never = 0.7777
        ```

        ```python
        assert "total" not in globals()
        reached = 0.8888
        raise RuntimeError("stops here")
        after = 0.9999
        ```

        ```text
        --8<-- "{snippet}:2:2"
        ```
        """)
    found = pn.collect_sources(page, tmp_path / "page.md")
    for value in (40, 0.4242, 42.5, 0.8888, 0.222):
        assert found.any_in(value, value), value
    for value in (0.7777, 0.9999, 0.111, 0.333):
        assert not found.any_in(value, value), value
    assert found.label(42.5) == "the block at line 8: total"
    assert found.label(0.4242) == "the output of the block at line 3, output line:1"
    assert found.notes == ["the block at line 17 raised RuntimeError: stops here"]


def test_a_run_is_read_whole():
    found = pn.run_sources("run_001")
    assert found.any_in(0.5667, 0.5667) and found.any_in(34, 34)
    assert found.label(0.5667).startswith("runs/run_001/")
    assert pn.run_sources("run_999").notes == ["runs/run_999 does not exist"]


# ---------------------------------------------------------------------------------------------
# A hand-edited number in a real page fails at its line.
# ---------------------------------------------------------------------------------------------

M05 = "docs/lessons/m05-selection.md"


# ---------------------------------------------------------------------------------------------
# On a lesson, a measured number is shown near it, unambiguously.
# ---------------------------------------------------------------------------------------------

NEAR_PAGE = md("""
    # A lesson

    The goal quotes 0.8123, printed in the last section.

    ## Run it

    ```python
    value = 0.3141
    print(f"pi / 10 is about {value}")
    print("the baseline", 0.190, "and the next step", 0.191)
    ```

    !!! question "Predict: pi"
        Is it 0.3141?

    ??? success "Answer: pi"
        Yes, 0.3141. The baseline is 0.190.

    The value 0.3141 is left in the namespace, and 0.5 is never printed.

    ## Later

    Here 0.3141 is only computed, in another section. The block prints 0.812 and 0.8123.

    ```python
    print(0.8123)
    ```
    """)


def near_failures(page: str) -> list[str]:
    found = pn.collect_sources(page, pn.REPO / "docs" / "lessons" / "near.md")
    return pn.check("near.md", page, found, shown=True).failures()


def test_a_number_in_a_box_is_shown_near_it_and_unambiguous():
    lines = NEAR_PAGE.split("\n")
    answer = lines.index("    Yes, 0.3141. The baseline is 0.190.") + 1
    later = next(i for i, line in enumerate(lines) if line.startswith("Here 0.3141")) + 1
    never = answer + 2
    assert near_failures(NEAR_PAGE) == [
        f'near.md:{never}: "0.5" matches nothing computed; closest in its section: 0.3141 '
        "(shown at line 7)",
        f'near.md:{answer}: "0.190" is ambiguous where it is shown (lines 5-20): 0.191 is '
        "shown there too (shown at line 7, its line:2), so a slip of one in its last digit "
        "would still pass; quote more digits",
        f'near.md:{later}: "0.3141" is not shown near it: no block output or included file in '
        "lines 21-28 holds it; print it there, or quote it where a block prints it",
    ]


def test_a_hand_edit_in_a_prediction_or_answer_box_fails():
    for before, after in (("Is it 0.3141?", "Is it 0.3142?"),
                          ("Yes, 0.3141.", "Yes, 0.3140.")):
        failures = near_failures(NEAR_PAGE.replace(before, after))
        edited = after.split()[-1].rstrip("?.")
        assert any(f'"{edited}" matches nothing computed' in f for f in failures), failures


def test_one_unit_away_moves_the_last_written_digit():
    assert [lit.value for lit in pn.one_unit_away(pn.literal_of("0.192"))] == [0.191, 0.193]
    assert [lit.value for lit in pn.one_unit_away(pn.literal_of("60"))] == [59, 61]
    assert [(lit.value, lit.percent) for lit in pn.one_unit_away(pn.literal_of("5%"))] == [
        (4, True), (6, True)]


def test_lessons_and_the_rules_are_checked_for_numbers_shown_near_them():
    assert "docs/lessons/m1-reinforce.md".startswith(pn.SHOWN_PAGES)
    assert "docs/rules.md".startswith(pn.SHOWN_PAGES)
    assert not "docs/maps/three-loops.md".startswith(pn.SHOWN_PAGES)


@pytest.mark.parametrize(("page", "box_line", "quoted", "slip"), [
    ("docs/lessons/m1-reinforce.md", "is suppressed (0.315 → 0.287)", "0.287", "0.286"),
    ("docs/lessons/m3-llm-as-policy.md", "The reference earns 0.1920 in expectation", "0.1920",
     "0.1921"),
])
def test_a_hand_edit_in_a_real_box_fails_at_its_line(page, box_line, quoted, slip,
                                                     the_build_record):
    """The issue's two cases: an answer box (M1) and a prediction box (M3)."""
    text = (pn.REPO / page).read_text(encoding="utf-8")
    lines = text.split("\n")
    (index,) = [i for i, line in enumerate(lines) if box_line in line]
    assert lines[index].startswith("    "), "the number is no longer inside a box"
    assert pn.check_page(page).failures() == []
    lines[index] = lines[index].replace(quoted, slip, 1)
    failures = pn.check_page(page, "\n".join(lines)).failures()
    assert any(f.startswith(f"{page}:{index + 1}: \"{slip}\"") for f in failures), failures


def test_editing_a_quoted_number_in_a_real_page_fails_at_its_line(the_build_record):
    text = (pn.REPO / M05).read_text(encoding="utf-8")
    quoted = [lit for lit in pn.prose_literals(text) if lit.text == "0.5146"]
    assert quoted, "Milestone 0.5 no longer quotes pass@1 = 0.5146 in its prose"
    before = pn.check_page(M05)
    assert all(miss.literal.line != quoted[0].line for miss in before.unmatched)

    lines = text.split("\n")
    line = quoted[0].line
    lines[line - 1] = lines[line - 1].replace("0.5146", "0.6146", 1)
    after = pn.check_page(M05, "\n".join(lines))

    new = [failure for failure in after.failures() if failure not in before.failures()]
    assert len(new) == 1, new
    assert new[0].startswith(f'{M05}:{line}: "0.6146" matches nothing computed; closest in '
                             "its section: 0.5146 (shown at line "), new[0]
    assert new[0].endswith("; one digit off)") and "\n" not in new[0], new[0]


def test_the_issue_case_in_m1_gives_one_short_line(the_build_record):
    """Issue 22, item 13: one number changed in M1's prose gave 385 characters whose first two
    suggestions were wrong; the line names the file, the line, the number and the value the
    section prints."""
    page = "docs/lessons/m1-reinforce.md"
    text = (pn.REPO / page).read_text(encoding="utf-8")
    lines = text.split("\n")
    (index,) = [i for i, line in enumerate(lines) if "(0.8498 against 0.8021" in line]
    lines[index] = lines[index].replace("0.8498", "0.8598", 1)
    (failure,) = pn.check_page(page, "\n".join(lines)).failures()
    assert failure.startswith(f'{page}:{index + 1}: "0.8598" matches nothing computed; '
                              "closest in its section: 0.8498 (shown at line "), failure
    assert len(failure) < 160, failure


# ---------------------------------------------------------------------------------------------
# Every page.
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("page", pn.pages())
def test_prose_numbers(page, the_build_record):
    result = pn.check_page(page)
    failures = result.failures()
    if failures and result.notes:
        failures.append("note: " + "; ".join(result.notes))
    assert not failures, "\n".join(failures)


def test_the_stale_listing_names_a_moved_number_and_its_new_value():
    """`python tests/prose_numbers.py --stale`: after a regeneration, one line per number that
    moved, with the value the page computes now (docs/teacher/change-the-scorer.md, step 8)."""
    page = "docs/lessons/m0-orientation.md"
    text = (pn.REPO / page).read_text(encoding="utf-8")
    assert "with probability 0.52," in text and pn.stale_lines(page) == []
    line = text[:text.index("with probability 0.52,")].count("\n") + 1
    found, = pn.stale_lines(page, text.replace("with probability 0.52,", "with probability 0.53,"))
    assert found.startswith(f'{page}:{line}: "0.53" is stale; closest in its section: 0.52 ('), \
        found
