"""The scorer registry: every version of the strict scorer that ever measured a run, frozen.

A run records the scorer version that measured it (`scorer_version` in its manifest and in
each result's details). To read such a run back honestly, `course compare` and
`course runs check` score every line again with THAT version, so each version that ever
measured a run stays here, unchanged, for as long as a run names it:

- `strict-v1` (`course.scorer`): the course's instrument, `SCORER_VERSION`;
- `strict-v0` (`course.scorer_v0`): the first version, kept for the forensics exercise.

Changing the spec is a new version (docs/teacher/change-the-scorer.md): copy
`course/scorer.py` to `course/scorer_v1.py` unchanged, add one line for it below, then change
`course/scorer.py` and bump its `SCORER_VERSION`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from course import scorer, scorer_v0

Score = Callable[[Mapping[str, Any], Any], Mapping[str, Any]]
"""`score(example, completion) -> {"reward": 0.0 or 1.0, "details": {"code", ...}}`."""


@dataclass(frozen=True)
class Scorer:
    """A measurement instrument Loop A can score with."""

    version: str
    """Recorded in every result, summary and manifest: a new version is a new instrument."""
    score: Score
    """How it scores one completion."""
    codes: Mapping[str, str]
    """What each `details["code"]` it gives means."""


CURRENT = scorer.SCORER_VERSION
"""The version that measures: `course eval`'s default and every canonical run's but one."""

SCORERS: dict[str, Scorer] = {entry.version: entry for entry in (
    Scorer(scorer.SCORER_VERSION, scorer.score, scorer.CODES),
    Scorer(scorer_v0.SCORER_VERSION, scorer_v0.score, scorer_v0.CODES),
)}
"""Scorer version -> instrument, the current one first; the others are kept to re-score the
runs they measured, never to measure anew."""


def unknown(version: Any) -> str:
    """Why `version` cannot be used to score, for a one-line error."""
    return f"unknown scorer version {str(version)!r:.60}; known: {', '.join(SCORERS)}"
