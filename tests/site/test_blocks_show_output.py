"""Every Python block a reader runs on a lesson, a map, a context page, the home page or an
exercise page shows what it computes (issue 31).

A block that prints nothing reads as a test, not as a lesson: the reader runs it and sees
nothing. The build runs every block once and records what each printed and drew
(course_site.outputs.RECORD_ENV); this test reads that record after the session's shared build,
as tests/site/test_copy_paste.py does, and checks two things:

- every runnable block (not `{.python notest}`) of those pages printed something or drew a
  figure, so the page shows an output under it;
- on the maps, the context pages, the home page and the exercise pages, no block ends in a
  bare `assert`: what such a block checked is printed, and the check itself lives in
  tests/test_page_checks.py. (A lesson may end a block with an assert that is part of its
  lesson, after printing what it checks.)
"""

from __future__ import annotations

import ast
import json
from typing import Any

from sitebuild import Build

SHOWN = ("docs/lessons/", "docs/maps/", "docs/context/", "docs/exercises/", "docs/index.md")
"""The pages whose every runnable block must show an output."""

NO_FINAL_ASSERT = ("docs/maps/", "docs/context/", "docs/exercises/", "docs/index.md")
"""The pages whose checks moved to tests/test_page_checks.py: no block there ends in an
assert."""


def final_assert(code: str) -> str | None:
    """The block's last top-level statement if it is an `assert`, as source; else None."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None              # a block that does not parse raised at build time
    if body and isinstance(body[-1], ast.Assert):
        return ast.unparse(body[-1])
    return None


def problems_in(record: dict[str, list[dict[str, Any]]]) -> list[str]:
    """What the record shows wrong on the pages above, one line per block."""
    problems = []
    for source, ran in sorted(record.items()):
        if not source.startswith(SHOWN):
            continue
        for block in ran:
            where = f"{source}:{block['line']}"
            last = final_assert(block["code"])
            if not block["stdout"].strip() and not block["figures"]:
                because = f"; its last line, `{last}`, is a check a reader never sees" \
                    if last else ""
                problems.append(f"{where}: the block shows no output{because}: print what "
                                "it computes, and move its checks to the tests")
            elif last and source.startswith(NO_FINAL_ASSERT):
                problems.append(f"{where}: the block ends in `{last}`: print what it checks, "
                                "and move the check to tests/test_page_checks.py")
    return problems


def test_every_block_on_the_reader_pages_shows_what_it_computes(built_site: Build):
    assert built_site.record is not None, "the build wrote no record of its blocks"
    record = json.loads(built_site.record.read_text(encoding="utf-8"))
    pages = [source for source in record if source.startswith(SHOWN)]
    blocks = sum(len(record[source]) for source in pages)
    print(f"\n{blocks} Python blocks on {len(pages)} lesson, map, context, home and "
          "exercise pages")
    for needed in ("docs/index.md", "docs/maps/three-loops.md", "docs/context/reward-models.md",
                   "docs/exercises/index.md", "docs/lessons/m1-reinforce.md"):
        assert needed in pages, f"{needed} ran no block: is the record complete?"
    assert blocks >= 100, blocks
    problems = problems_in(record)
    assert not problems, "\n".join(problems)


def test_a_silent_block_and_a_final_assert_are_named() -> None:
    def block(line: int, code: str, stdout: str = "", figures: int = 0) -> dict[str, Any]:
        return {"line": line, "code": code, "stdout": stdout, "figures": figures}

    record = {
        "docs/maps/m.md": [block(3, "x = 1\nassert x == 1"),          # silent, asserts
                           block(9, "x = 2\nprint(x)\nassert x", "2\n"),  # ends in an assert
                           block(15, "print(1)\nassert True\nx = 3", "1\n")],  # fine
        "docs/lessons/l.md": [block(4, "x = 1"),                      # silent
                              block(8, "print(2)\nassert 2", "2\n"),  # a lesson may end so
                              block(12, "import matplotlib", "", 1)],  # a figure is an output
        "docs/rules.md": [block(5, "x = 1")],                         # not one of the pages
    }
    assert problems_in(record) == [
        "docs/lessons/l.md:4: the block shows no output: print what it computes, and move "
        "its checks to the tests",
        "docs/maps/m.md:3: the block shows no output; its last line, `assert x == 1`, is a "
        "check a reader never sees: print what it computes, and move its checks to the tests",
        "docs/maps/m.md:9: the block ends in `assert x`: print what it checks, and move the "
        "check to tests/test_page_checks.py"]
