"""In the harness, "seed" means a random seed and nothing else.

Docstrings are rendered in the API reference next to `seed` parameters, so a phrase such as
"the seed's rule of thumb" (meaning the course design) reads as if a random number had rules.
Name the course's measurement rules (docs/rules.md) or the course design instead.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "course"
DESIGN_AS_SEED = re.compile(r"\bthe seed's\b|\bthe seed (?:says|asks|design)\b", re.IGNORECASE)


def test_the_phrase_is_caught():
    assert DESIGN_AS_SEED.search("(the seed's rule of thumb)")
    assert not DESIGN_AS_SEED.search("the seed is a parameter; seed 2024")


def test_no_module_calls_the_course_design_the_seed():
    found = [f"{path.relative_to(SRC.parents[1])}:{number}: {line.strip()}"
             for path in sorted(SRC.rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1)
             if DESIGN_AS_SEED.search(line)]
    assert not found, "\n".join(found)
