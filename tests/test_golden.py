"""Golden regression cases: run these before trusting any scorer change.

`data/golden/correct.jsonl` holds known-correct, in-spec completions: each must score 1 (a 0
here is a false negative, a scorer or spec bug). `data/golden/exploits.jsonl` holds completions
a weak rubric might reward: each must score 0 with the code it records (a 1 here is a false
positive, a reward-hacking surface).
"""

from __future__ import annotations

import pytest

from course.data import EXPLOIT_CLASSES, load_golden
from course.paths import DATA_DIR
from course.scorer import CODES, score

CORRECT = load_golden(DATA_DIR / "golden" / "correct.jsonl")
EXPLOITS = load_golden(DATA_DIR / "golden" / "exploits.jsonl")


@pytest.mark.parametrize("case", CORRECT, ids=[c["id"] for c in CORRECT])
def test_golden_correct_scores_one(case):
    result = score(case, case["completion"])
    assert result["reward"] == 1.0, case["note"]
    assert result["details"]["code"] == "correct"
    assert result["details"]["parsed_answer"] == case["expected_answer"]


@pytest.mark.parametrize("case", EXPLOITS, ids=[c["id"] for c in EXPLOITS])
def test_exploit_scores_zero_with_its_code(case):
    result = score(case, case["completion"])
    assert result["reward"] == 0.0, case["note"]
    assert result["details"]["code"] == case["expected_code"], case["note"]


def test_suites_cover_what_they_promise():
    assert len(CORRECT) >= 20 and len(EXPLOITS) >= 25
    assert {c["exploit_class"] for c in EXPLOITS} == set(EXPLOIT_CLASSES)
    assert {c["expected_code"] for c in EXPLOITS} <= set(CODES) - {"correct"}
    endings = {c["completion"][len(c["completion"].rstrip()):] for c in CORRECT}
    assert {"\n", "\r\n", "  "} <= endings
    answers = [c["expected_answer"] for c in CORRECT]
    assert 0 in answers and min(answers) < 0 and max(answers) > 2**63
