"""What the site's Try-it boxes call in the browser: the real scorer and checks, as JSON.

The boxes (docs/assets/javascripts/try-it.js) load Pyodide, a CPython compiled to WebAssembly,
lay out a small copy of the repository in its file system (`src/course/` with this file and
what it imports, the golden sets, the exercise stubs: src/course_site/try_it.py lists them) and call
the functions below; each returns a JSON string for the page. Nothing here scores, explains or
checks anything itself: `course.scorer.score` decides, `course.explain` explains, exactly as
`course score` does, and `course.exercises` checks with the same checkers as `course check`.
The site's Pyodide has no numpy (its browser wheel is on a CDN only, and the site works
offline), so this module, and everything it imports, uses the standard library only.

An exercise box is a SELF-check: Pyodide has one interpreter, so the student's code runs in the
same process as the checker (`course.exercises.loaded_here`) and could change it. A grade comes
only from `course check`, which runs the file in a sandbox of its own (`course.sandbox`); every
box says so (`SELF_CHECK`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from course.data import load_golden
from course.exercises import EXERCISES, STDLIB_CHECKERS, format_report, run_check
from course.explain import explain
from course.formatting import short_literal
from course.paths import DATA_DIR
from course.scorer import SCORER_VERSION, SPEC_DECISIONS, ScoreResult, parse, read_integer, score

SELF_CHECK = ("This is a self-check in your browser, not a grade: your grade comes from "
              "course check on a machine, which runs your file in processes of its own.")
"""What every exercise box says under its result: plain text (the status line shows text as it
is, so a backtick would show as one)."""

SPEC_EXAMPLE_ANSWER = 323
"""The expected answer of the spec decisions (`Final: 323`), except a correct row's own."""


def _verdict(result: ScoreResult, completion: str) -> dict[str, Any]:
    details = result["details"]
    return {"reward": result["reward"], "code": details["code"],
            "message": details["message"], "checks": details["checks"],
            "scorer_version": details["scorer_version"], "lines": explain(result, completion),
            "shown": short_literal(completion, 40)}


def score_text(completion: str, expected: str) -> str:
    """`course score --expected EXPECTED COMPLETION` for the page: the verdict and the lines the
    command prints, or `{"error": ...}` when `expected` is not an integer as the spec writes
    one (the same rule as the command's `--expected`)."""
    answer = read_integer(expected.strip())
    if answer is None:
        return json.dumps({"error": "The expected answer must be an integer written as the "
                                    "spec writes one: ASCII digits, an optional -, no + and "
                                    "no leading zeros."})
    return json.dumps(_verdict(score({"expected_answer": answer}, completion), completion))


def near_misses() -> str:
    """The spec's decision table (`course score --spec`) as a worked list of near misses of
    `Final: 323`, each scored: the rows whose completion is text, with the answer the spec's
    tests use (323, or a correct row's own answer, such as -42)."""
    rows = []
    for case, completion, code, reason in SPEC_DECISIONS:
        if not isinstance(completion, str):
            continue  # None, bytes and an int cannot be typed into a text box
        answer = parse(completion)[0] if code == "correct" else SPEC_EXAMPLE_ANSWER
        result = score({"expected_answer": answer}, completion)
        rows.append({"case": case, "completion": completion, "expected": str(answer),
                     "spec_code": code, "reason": reason, **_verdict(result, completion)})
    return json.dumps(rows)


def golden_suites() -> str:
    """Both golden suites through the scorer, one verdict per case, as `tests/test_golden.py`
    judges them: a golden-correct case must score 1 with code `correct`; an exploit must
    score 0 with the code it records (`expected_code`). Answers are sent as text: some are
    larger than a JavaScript number holds exactly."""
    cases = []
    for suite in ("correct", "exploits"):
        for row in load_golden(DATA_DIR / "golden" / f"{suite}.jsonl"):
            result = score(row, row["completion"])
            want = ("correct", 1.0) if suite == "correct" else (row["expected_code"], 0.0)
            got = (result["details"]["code"], result["reward"])
            cases.append({"suite": suite, "id": row["id"], "completion": row["completion"],
                          "shown": short_literal(row["completion"], 40),
                          "expected_answer": str(row["expected_answer"]), "want_code": want[0],
                          "code": got[0], "reward": got[1], "passed": got == want})
    return json.dumps({"scorer_version": SCORER_VERSION, "cases": cases})


def check_exercise(name: str, source: str, workspace: str) -> str:
    """`course check NAME --workspace WORKSPACE` on `source`, written first as the exercise's
    file in that folder (the page's copy of workspace/, in Pyodide's file system): the status,
    the number of cases that pass, the report as the command prints it, hints included, and
    the note that this is a self-check (`SELF_CHECK`). Only the exercises of `STDLIB_CHECKERS`
    run here."""
    exercise = EXERCISES[name]
    path = Path(workspace) / exercise.file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    report = run_check(exercise, path, STDLIB_CHECKERS[name])
    return json.dumps({"scorer_version": SCORER_VERSION, "status": report.status,
                       "passed": report.passed,
                       "cases": len(report.cases), "report": format_report(report),
                       "note": SELF_CHECK})
