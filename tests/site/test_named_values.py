"""A value the prose names for one of several things sits on that thing's line of the output.

Error 2 of the third edition: M3 part 2 named three strict rates "0.5354, 0.5365 and 0.5333"
in the order GRPO, Dr. GRPO, RLOO, while the block printed them in the order RLOO, GRPO,
Dr. GRPO: every number was printed on the page, so the prose-number check passed, and a reader
gave GRPO the wrong value. Here each `0.5365 (GRPO)` in a lesson's prose is looked up in what
the page's blocks print: the number must appear on a line that names that rule, and on no line
that names another rule only.
"""

from __future__ import annotations

import json
import re

from sitebuild import REPO, Build

RULES = {"RLOO": "rloo", "GRPO": "grpo", "Dr. GRPO": "dr_grpo"}
"""A rule as the prose names it, and as the blocks print it."""
NAMED = re.compile(r"(?P<value>\d+\.\d+) \((?P<name>RLOO|GRPO|Dr\. GRPO)\)")


def token(rule: str) -> re.Pattern[str]:
    """The rule as a whole word: `grpo` is not found in `dr_grpo` or in `grpo_matched`."""
    return re.compile(rf"(?<![\w]){rule}(?![\w])")


def named_values(markdown: str) -> list[tuple[int, str, str]]:
    """(line, value, rule as printed) for each `value (Rule)` in the prose."""
    return [(markdown.count("\n", 0, m.start()) + 1, m["value"], RULES[m["name"]])
            for m in NAMED.finditer(markdown)]


def misplaced(named: list[tuple[int, str, str]], printed: str, where: str) -> list[str]:
    """Each named value that no output line gives to its rule, one line each."""
    problems = []
    for line, value, rule in named:
        holders = [text for text in printed.splitlines() if value in text]
        if not any(token(rule).search(text) for text in holders):
            others = sorted({other for text in holders for other in RULES.values()
                             if token(other).search(text)})
            problems.append(f"{where}:{line}: {value} is named for {rule}, but the output "
                            f"gives it to {', '.join(others) or 'no rule'}")
    return problems


def test_a_value_out_of_order_is_caught():
    printed = ("strict  pass_at_1 rloo    0.4411 0.5354\n"
               "strict  pass_at_1 grpo    0.4411 0.5365\n"
               "strict  pass_at_1 dr_grpo 0.4411 0.5333\n")
    wrong = named_values("to 0.5354 (GRPO), 0.5365 (Dr. GRPO) and 0.5333 (RLOO)")
    right = named_values("to 0.5354 (RLOO), 0.5365 (GRPO) and 0.5333 (Dr. GRPO)")
    assert misplaced(right, printed, "p") == []
    assert misplaced(wrong, printed, "p") == [
        "p:1: 0.5354 is named for grpo, but the output gives it to rloo",
        "p:1: 0.5365 is named for dr_grpo, but the output gives it to grpo",
        "p:1: 0.5333 is named for rloo, but the output gives it to dr_grpo"]


PAGES = sorted(path for path in (REPO / "docs" / "lessons").glob("*.md")
               if named_values(path.read_text(encoding="utf-8")))


def test_some_lesson_names_values_for_rules():
    assert PAGES, "no lesson names a value for RLOO, GRPO or Dr. GRPO: is NAMED stale?"


def test_each_value_named_for_a_rule_is_printed_on_that_rules_line(built_site: Build):
    """What each page printed is read from the build's record of its blocks (as
    tests/site/test_copy_paste.py reads it), not run again."""
    assert built_site.record is not None, "the build wrote no record of its blocks"
    record = json.loads(built_site.record.read_text(encoding="utf-8"))
    problems = []
    for page in PAGES:
        where = page.relative_to(REPO).as_posix()
        printed = "\n".join(block["stdout"] for block in record[where])
        problems += misplaced(named_values(page.read_text(encoding="utf-8")), printed, where)
    assert problems == []
