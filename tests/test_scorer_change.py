"""The scorer-change procedure (docs/teacher/change-the-scorer.md), followed in a scratch copy
of the package, the data and five canonical runs: the worked example "accept a trailing
period" as spec `strict-v2`. Nothing in the repository is changed; about five seconds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from course.paths import DATA_DIR, REPO_ROOT, RUNS_DIR

SUBSET = ("run_001", "run_014", "run_015", "run_016", "run_019")
"""Three Loop A runs of the current scorer, the comparison that reads two of them, and the
forensics run pinned to strict-v0: every case of the procedure, in seconds."""

EDITS = {  # file -> (text in it, what replaces it): steps 1 to 3 of the procedure
    "scorers.py": [
        ("from course import scorer, scorer_v0\n",
         "from course import scorer, scorer_v0, scorer_v1\n"),
        ("    Scorer(scorer_v0.SCORER_VERSION,",
         "    Scorer(scorer_v1.SCORER_VERSION, scorer_v1.score, scorer_v1.CODES),\n"
         "    Scorer(scorer_v0.SCORER_VERSION,"),
    ],
    "scorer.py": [
        ('SCORER_VERSION: Final = "strict-v1"', 'SCORER_VERSION: Final = "strict-v2"'),
        ("    line = text.strip(ASCII_WHITESPACE)\n",
         "    line = text.strip(ASCII_WHITESPACE)\n"
         '    if line.endswith("."):  # spec v2: a full stop after the answer is not part of it\n'
         "        line = line[:-1]\n"),
    ],
}


@pytest.fixture
def scratch(tmp_path):
    """A copy of src/course, data/ and the `SUBSET` of runs/, and a function that runs
    `course ARGS...` on it: (exit status, stdout)."""
    shutil.copytree(REPO_ROOT / "src" / "course", tmp_path / "src" / "course",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(DATA_DIR, tmp_path / "data")
    for name in SUBSET:
        shutil.copytree(RUNS_DIR / name, tmp_path / "runs" / name)
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}

    def course(*args: str) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-m", "course", *args], cwd=tmp_path,
                              env=environment, capture_output=True, text=True, check=False)
        return done.returncode, done.stdout

    return tmp_path, course


def test_the_scorer_change_procedure_on_a_subset_of_runs(scratch):
    root, course = scratch
    package = root / "src" / "course"
    shutil.copy(package / "scorer.py", package / "scorer_v1.py")        # 1. freeze strict-v1
    for name, edits in EDITS.items():                                  # 2. register, 3. change
        text = (package / name).read_text(encoding="utf-8")
        for old, new in edits:
            assert old in text, (f"the worked example no longer applies to course/{name}: "
                                 "update docs/teacher/change-the-scorer.md and this test")
            text = text.replace(old, new, 1)
        (package / name).write_text(text, encoding="utf-8")
    shutil.copytree(root / "runs" / "run_001", root / "strict_v1_run")

    code, out = course("runs", "verify", *SUBSET)                     # 5. what went stale
    assert code == 1
    assert out.splitlines()[-1] == (
        "stale: run_001, run_014, run_015, run_016 (measured by another scorer version than "
        "the one they are built with now, strict-v2); regenerate them with "
        "`course runs regenerate --scorer-dependent`, then review and commit the diff")
    assert "run_019: ok (byte-identical" in out                      # pinned to strict-v0

    code, out = course("runs", "regenerate", "--scorer-dependent")     # 6. regenerate them
    assert code == 0
    written = [line.split()[2] for line in out.splitlines()]          # side by side, then
    assert sorted(written[:3]) == [f"runs/{n}" for n in SUBSET[:3]]    # the comparison that
    assert written[3:] == [f"runs/{SUBSET[3]}"]                        # reads two of them
    code, out = course("runs", "verify", *SUBSET)                     # 7. all rebuilt
    assert code == 0 and out.count(": ok (byte-identical") == len(SUBSET), out

    assert course("runs", "check", "runs/run_001") == (0, (         # a trailing period passes
        "runs/run_001: ok: seal and manifest intact, 60 result lines scored again by "
        "strict-v2 agree (35/60 pass)\n"))
    assert course("runs", "check", "strict_v1_run") == (1, (        # the old instrument's run
        "strict_v1_run: not ok: strict_v1_run/manifest.json: field 'scorer_version': measured "
        "by strict-v1, not by strict-v2, the version it is checked against (name strict-v1 to "
        "check the run as it was measured)\n"))
    assert course("runs", "check", "strict_v1_run", "--scorer", "strict-v1")[1].endswith(
        "60 result lines scored again by strict-v1 agree (34/60 pass)\n")  # the frozen copy
    code, _ = course("compare", "strict_v1_run", "runs/run_001")      # two instruments
    assert code == 2
