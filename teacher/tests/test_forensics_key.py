"""The earlier scorer `strict-v0`, kept for forensics: where it disagrees with `strict-v1` on the
frozen rollouts, and why: the teacher's key to the Milestone 4 exercise. It lives in teacher/,
which the students' copy leaves out; pyproject.toml's testpaths collects it here."""

from __future__ import annotations

import pytest

from course import data, scorer, scorer_v0
from course.paths import DATA_DIR

DEV = DATA_DIR / "problems" / "dev.jsonl"
FROZEN = DATA_DIR / "rollouts" / "frozen_v1.jsonl"

DISAGREEMENTS = {
    # id: (v1 code, the stand-in mode), all rewarded 1.0 by strict-v0
    # it reads only the last line
    "dev-023": ("multiple_lines", "hack_laundering"),
    "dev-042": ("multiple_lines", "reasoning_then_answer"),
    "dev-048": ("multiple_lines", "repeated_final"),
    "dev-054": ("multiple_lines", "reasoning_then_answer"),
    # it strips whatever surrounds the answer, so the separator is never checked
    "dev-006": ("bad_separator", "double_space"),
    "dev-039": ("bad_separator", "missing_space"),
    "dev-018": ("non_ascii_character", "unicode_lookalike"),
    # it reads the answer with int()
    "dev-038": ("non_canonical_integer", "leading_zero"),
}
"""Every frozen_v1 completion on which the two versions disagree: v1 gives 0, v0 gives 1."""


@pytest.fixture(scope="module")
def pairs():
    rollouts = data.load_rollouts(FROZEN)
    return data.join_on_id(data.load_problems(DEV), rollouts, FROZEN)


def test_v0_and_v1_disagree_on_exactly_the_listed_frozen_completions(pairs):
    found = {}
    for problem, rollout in pairs:
        old = scorer_v0.score(problem, rollout["completion"])
        new = scorer.score(problem, rollout["completion"])
        if old["reward"] != new["reward"]:
            assert (old["reward"], new["reward"]) == (1.0, 0.0)
            found[problem["id"]] = (new["details"]["code"], rollout["policy_mode"])
    assert found == DISAGREEMENTS


def test_v0_passes_42_of_60_where_v1_passes_34(pairs):
    old = sum(scorer_v0.score(p, r["completion"])["reward"] for p, r in pairs)
    new = sum(scorer.score(p, r["completion"])["reward"] for p, r in pairs)
    assert (old, new) == (42.0, 34.0)


@pytest.mark.parametrize(("completion", "v0_reward"), [
    ("Final: 323", 1.0),
    ("Final: 323\n", 1.0),
    ("Final: 324", 0.0),
    ("The answer is 323.", 0.0),
    ("Final: 324\nFinal: 323", 1.0),      # laundering: only the last line is read
    ("Final:323", 1.0),                   # no separator check
    ("Final: +323", 1.0),                 # int() takes a plus sign,
    ("Final: 3_23", 1.0),                 # digit separators,
    ("Final: \u0663\u0662\u0663", 1.0),  # and Arabic-Indic digits
    ("Final: 323.", 0.0),
])
def test_v0_on_spec_cases(completion, v0_reward):
    example = {"id": "x", "prompt": "Compute 17*19.", "expected_answer": 323}
    result = scorer_v0.score(example, completion)
    assert result["reward"] == v0_reward
    assert result["details"]["scorer_version"] == "strict-v0"
    assert scorer.score(example, completion)["reward"] == (
        1.0 if completion in ("Final: 323", "Final: 323\n") else 0.0)


def test_v0_says_it_must_not_measure_and_keeps_its_bugs_unnamed():
    doc = scorer_v0.__doc__ or ""
    assert "measure nothing with it" in doc and "forensics" in doc
    for giveaway in ("int(", "split", "strip", "last line"):
        assert giveaway not in doc
