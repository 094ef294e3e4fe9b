"""`course check` against hostile submissions: nothing in a student's file changes its own grade.

The student's file runs in processes of its own (`course.sandbox`), so a file that patches the
checker, patches math or numpy, exits, prints a fake report, loops forever, waits forever or
eats memory gets `failing` or `error`, never `passing`, and never hangs or ends the grader. One
shared workspace; a limit of 1 s of CPU time (a busy machine does not use it up), and 4 s of
wall-clock time for the one file that waits instead of computing. What a file could do to the
rest of a class is tests/test_grader_class.py's.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from course import check, sandbox
from course.cli import main
from course.isolation import Limits, isolation_problem

FAST = Limits(cpu_seconds=1, wall_seconds=120)  # the wall: a backstop a busy machine never meets
WAITS = Limits(cpu_seconds=1, wall_seconds=4)
SEALED = isolation_problem() is None

HOSTILE = {
    # name: (exercise, source, status, text the report's message must hold)
    "patches the checker": ("kl", """
        import course.check, course.exercises
        course.check._close = lambda got, want: True
        course.exercises.run_check = None
        def kl_divergence(p, q):
            return 0.0
    """, "failing", ""),
    "patches math and numpy": ("reinforce_step", """
        import math, numpy
        math.isclose = lambda *args, **kwargs: True
        numpy.allclose = lambda *args, **kwargs: True
        numpy.array_equal = lambda *args, **kwargs: True
        def reinforce_step(theta, action, reward, baseline, lr):
            return 0.0, theta
    """, "failing", ""),
    "SystemExit at import": ("pick_best", "raise SystemExit(0)\n", "error",
                             "Your file does not load: SystemExit: 0"),
    "SystemExit in a call": ("pick_best", """
        def pick_best(samples):
            raise SystemExit(0)
    """, "error", "Your code raised: SystemExit: 0"),
    "os._exit at import": ("pick_best", "import os\nos._exit(0)\n", "error",
                           "the file exited while being imported"),
    "os._exit in a call": ("pick_best", """
        import os
        def pick_best(samples):
            os._exit(0)
    """, "error", "the file exited while pick_best() was running"),
    "prints a fake report": ("pick_best", """
        import os, sys
        print("status: passing, 10 of 10 cases pass")
        def pick_best(samples):
            os.write(1, b"status: passing, 10 of 10 cases pass\\n")
            sys.__stdout__.write("status: passing\\n")
            return samples[-1]
    """, "failing", ""),
    "loops forever at import": ("pick_best", "while True:\n    pass\n", "error",
                                "used all of its 1 s of CPU time (the limit for one exercise) "
                                "while being imported"),
    "loops forever in a call": ("pick_best", """
        def pick_best(samples):
            while True:
                pass
    """, "error", "used all of its 1 s of CPU time (the limit for one exercise) while "
                  "pick_best() was running"),
    "waits forever at import": ("pick_best", "import time\ntime.sleep(10**6)\n", "error",
                                "did not finish within 4 s while being imported"),
    "catches the CPU signal": ("pick_best", """
        import signal
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        while True:
            pass
    """, "error", "used all of its 1 s of CPU time"),
    "allocates too much memory": ("kl", """
        def kl_divergence(p, q):
            return len(bytearray(2**30))  # 1 GB: over the 512 MB limit
    """, "error", "MemoryError: over the memory limit (512 MB"),
    "replies with something that is not data": ("pick_best", """
        import course.sandbox
        course.sandbox.encode = lambda value, depth=0: {"$": "pickle", "v": "gANjb3MKc3lz"}
        def pick_best(samples):
            return samples[0]
    """, "error", "not data"),
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """One folder per hostile case, all written once."""
    root = tmp_path_factory.mktemp("hostile")
    for number, (exercise, source, _, _) in enumerate(HOSTILE.values()):
        folder = root / f"case{number}"
        folder.mkdir()
        (folder / check.EXERCISES[exercise].file).write_text(textwrap.dedent(source),
                                                              encoding="utf-8")
    return root


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_submission_is_never_passing(workspace, capfd, case):
    exercise, _, status, shown = HOSTILE[case]
    folder = workspace / f"case{list(HOSTILE).index(case)}"
    report = check.check(exercise, folder, WAITS if case.startswith("waits") else FAST, SEALED)
    assert report.status == status, check.format_report(report)
    assert shown in report.message
    assert "status: passing" not in capfd.readouterr().out  # the student's prints are gone


def test_the_command_exits_1_and_prints_no_fake_report(workspace, capfd):
    fake, exits = (workspace / f"case{list(HOSTILE).index(name)}"
                   for name in ("prints a fake report", "os._exit at import"))
    assert main(["check", "pick_best", "--workspace", str(fake), "--cpu", "1"]) == 1
    assert main(["check", "pick_best", "--workspace", str(exits), "--cpu", "1"]) == 1
    out = capfd.readouterr().out
    assert "status: failing" in out and "status: error" in out
    assert "status: passing" not in out


def test_values_cross_as_plain_data():
    values = [(1, "a"), {1: [2.5, math.inf]}, {"k": (None, True)}, np.arange(3.0),
              np.float64(-math.inf), np.int32(7), {frozenset(): 1}]
    back = [sandbox.decode(sandbox.encode(value)) for value in values]
    assert back[:3] == values[:3]
    assert np.array_equal(back[3], values[3]) and back[3].dtype == np.float64
    assert back[4] == -math.inf and type(back[4]) is np.float64 and type(back[5]) is np.int32
    assert [(repr(key), value) for key, value in back[6].items()] == [("frozenset()", 1)]
    assert math.isnan(sandbox.decode(sandbox.encode(math.nan)))
    with pytest.raises(ValueError, match="unknown tag"):
        sandbox.decode({"$": "pickle", "v": ""})
