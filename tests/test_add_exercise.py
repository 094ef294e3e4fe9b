"""docs/teacher/grading.md, "Adding an exercise with its checker", followed in a scratch copy.

The guide lists every file a new exercise touches, in order. This test adds a small one,
`mean_reward` (Milestone 0.5: the mean of a list of rewards, 0.0 for none), by editing exactly
those files in a copy of the course, then runs what the guide says to run there: the stub is
`not started`, the reference solution `passing`, the new page passes the page check, and the
tests that hold the registry, the stubs, the workspace README, the exercises page and the
Classroom workflow together pass. A file the guide forgot to name makes one of them fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COPIED = ("src", "workspace", "teacher", "scripts", "docs", "tests", "data",
          "mkdocs.yml", "pyproject.toml")
"""What the scratch copy needs: the package, the exercise files, the pages and the tests."""

NAME = "mean_reward"

STUB = '''\
    """Exercise mean_reward (Milestone 0.5): the mean reward of a list of samples' rewards.

    Input: `rewards`, a list of floats (possibly empty). Output: their mean as a float, 0.0 for
    an empty list. Check it with `course check mean_reward`.
    """


    def mean_reward(rewards: list[float]) -> float:
        # --- YOUR CODE (Milestone 0.5) ---
        raise NotImplementedError("write mean_reward")
        # --- END OF YOUR CODE ---
    '''

SOLUTION = '''\
    """Reference solution of mean_reward."""


    def mean_reward(rewards: list[float]) -> float:
        return sum(rewards) / len(rewards) if rewards else 0.0
    '''

CHECKER = '''

# mean_reward (M0.5). Reference: the mean worked out by hand.
def check_mean_reward(module: StudentModule) -> list[Case]:
    mean_reward = _function(module, "mean_reward")
    cases = []
    for name, rewards, want in (("three samples", [1.0, 0.0, 1.0], 2 / 3),
                                ("one sample", [1.0], 1.0), ("all zero", [0.0, 0.0], 0.0),
                                ("fractions", [0.25, 0.75], 0.5), ("no samples", [], 0.0)):
        got = _call(name, mean_reward, list(rewards))
        if got is _UNWRITTEN:
            cases.append(_unwritten(name))
            continue
        passed = type(got) is float and abs(got - want) < 1e-9
        cases.append(Case(name, passed, f"rewards={rewards}", _num(want), _num(got)))
    return cases


STDLIB_CHECKERS: dict'''

ENTRY = '''    Exercise("mean_reward", "M0.5", "mean_reward.py",
             "the mean reward is right, and 0.0 for no samples",
             "Divide the sum by the count; with no samples there is nothing to divide."),
)}'''

STEP = """      - name: "mean_reward (M0.5)"
        id: mean_reward
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: mean_reward
          setup-command: course --version
          command: course check mean_reward
          timeout: 1
          max-score: 10
"""


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of `old` in `path` by `new`, as a teacher's edit would."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: the guide's anchor {old!r} is not there exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def add_the_exercise(root: Path) -> None:
    """The guide's eight steps, in its order."""
    (root / "workspace" / f"{NAME}.py").write_text(textwrap.dedent(STUB))              # 1
    (root / "teacher" / "solutions" / f"{NAME}.py").write_text(textwrap.dedent(SOLUTION))  # 2
    exercises = root / "src" / "course" / "exercises.py"
    edit(exercises, "\n\nSTDLIB_CHECKERS: dict", CHECKER)                                # 3
    edit(exercises, '    "red_team": check_red_team,\n}',
         '    "red_team": check_red_team,\n    "mean_reward": check_mean_reward,\n}')
    text = exercises.read_text(encoding="utf-8")                                         # 4
    at = text.index("\n)}", text.index("EXERCISES: dict[str, Exercise]"))
    exercises.write_text(text[:at + 1] + ENTRY + text[at + 3:], encoding="utf-8")
    edit(root / "workspace" / "README.md", "| `kata_m5` | M5 | `kata_m5_labels.py` |\n",   # 5
         "| `kata_m5` | M5 | `kata_m5_labels.py` |\n| `mean_reward` | M0.5 | `mean_reward.py` |\n")
    (root / "docs" / "exercises" / f"{NAME}.md").write_text(                             # 6
        "# M0.5: mean_reward\n\nWrite `mean_reward` in `workspace/mean_reward.py`, then check it "
        "with `course check mean_reward`. Back to the [exercises](index.md).\n")
    index = root / "docs" / "exercises" / "index.md"
    row = next(line for line in index.read_text().splitlines() if line.startswith("| [kata_m5]"))
    edit(index, row + "\n", row + "\n| [mean_reward](mean_reward.md) (M0.5) | `mean_reward.py` | "
         "`course check mean_reward` | the mean of a list of rewards, 0.0 for none |\n")
    edit(root / "mkdocs.yml", '          - "M5: the harder kata": exercises/kata_m5.md\n',
         '          - "M5: the harder kata": exercises/kata_m5.md\n'
         '          - "M0.5: mean_reward": exercises/mean_reward.md\n')
    workflow = root / "scripts" / "classroom" / "classroom.yml"                          # 7
    text = workflow.read_text(encoding="utf-8")
    reporter = text.index("      - name:", text.index("autograding-grading-reporter") - 200)
    text = text[:reporter] + STEP + text[reporter:]
    last = '          KATA_M5_RESULTS: "${{steps.kata_m5.outputs.result}}"\n'
    text = text.replace(last, last + '          MEAN_REWARD_RESULTS: '
                                     '"${{steps.mean_reward.outputs.result}}"\n')
    workflow.write_text(text.replace(",kata_m5\n", ",kata_m5,mean_reward\n"), encoding="utf-8")
    edit(root / "tests" / "test_check.py", "BROKEN = [\n",                                # 8
         'BROKEN = [\n    ("mean_reward", "else 0.0", "else 1.0", "no samples", '
         '"expected: 0"),\n')


@pytest.mark.skipif(not (REPO / "teacher").is_dir(),
                    reason="needs teacher/ (the solutions), which the students' copy leaves out")
def test_adding_an_exercise_as_the_grading_page_says_is_green(tmp_path: Path) -> None:
    root = tmp_path / "course"
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, root / name)
    add_the_exercise(root)
    env = dict(os.environ, PYTHONPATH=str(root / "src"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=root, env=env, capture_output=True, text=True,
                              timeout=300, check=False)

    course = (sys.executable, "-m", "course")
    stub = run(*course, "check", NAME)
    assert stub.returncode == 1 and "status: not started" in stub.stdout, stub.stdout + stub.stderr
    solved = run(*course, "check", NAME, "--workspace", "teacher/solutions")
    assert solved.returncode == 0 and "status: passing, 5 of 5" in solved.stdout, solved.stdout
    page = run(sys.executable, "scripts/check_page.py", f"docs/exercises/{NAME}.md")
    assert page.returncode == 0, page.stdout + page.stderr
    tests = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "tests/test_check.py", "tests/test_grading.py", "-k",
                "every_exercise or lists_every_exercise or mean_reward or classroom "
                "or untouched_stub or reference_solution_passes")
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
