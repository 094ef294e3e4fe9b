"""`course grade` against a hostile student in a class: each line of the threat model holds.

The threat model is docs/teacher/grading.md's ("What a submission cannot do"). A class of
honest students and attackers is graded ONCE, by `course grade` in a process of its own (as a
teacher runs it), with a secret in its environment, a home folder of its own and a TCP server
on the machine's loopback. Each attacker is a `pick_best.py` that tries one thing and raises
what it found (so that it lands in the gradebook, where a leak would show), and never does
lasting harm if the seal fails: it opens files for writing without writing, forks at most a
bounded number of children, writes at most 64 MB, and reaches only this machine's loopback.
Honest students graded before and after the attackers must get exactly their grades.

Needs the seal (Linux with bubblewrap, which the test command installs). Elsewhere the tests
are skipped, except on CI (`CI` set), where a machine that cannot seal fails them: `course
grade` refuses there (tests/test_grading.py checks the refusal itself).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from course.exercises import EXERCISES
from course.grading import FORMULA_LEADS
from course.isolation import isolation_problem
from course.paths import REPO_ROOT
from course.sandbox import PACKAGE_ROOT

pytestmark = pytest.mark.skipif(isolation_problem() is not None and not os.environ.get("CI"),
                                reason=f"no seal here: {isolation_problem()}")

SECRET = "course-test-secret-3f9a1c"
SOLUTIONS = REPO_ROOT / "teacher" / "solutions"
STUBS = REPO_ROOT / "workspace"
KEY = REPO_ROOT / "teacher" / "kata" / "teacher_key_m0.json"

ATTACKS = {
    # student folder: the body of its pick_best(samples), which ends by raising what it found
    "a1-other-student": """
        target = CLASS / "z-honest-after" / "kl.py"
        try:
            open(target, "a").close()
            found = "opened " + str(target)
        except OSError as err:
            found = "refused: " + err.strerror
    """,
    "a2-course-source": """
        import course.scorer
        found = []
        for path in (PACKAGE / "course" / "scorer.py", Path(course.scorer.__file__)):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
                found.append("opened " + str(path))
            except OSError as err:
                found.append("refused: " + err.strerror)
    """,
    "a3-the-key": """
        try:
            found = "read " + open(REPO / "teacher" / "kata" / "teacher_key_m0.json").read()
        except OSError as err:
            found = "refused: " + err.strerror
    """,
    "a4-double-fork": """
        try:
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    import time
                    time.sleep(5)
                    with open(OUT, "a") as gradebook:
                        gradebook.write("a4,a4,pick_best,M0.5,passing,10,10,10,,yes\\n")
                os._exit(0)
            found = "forked"
        except OSError as err:
            found = "refused: " + err.strerror
    """,
    "a5-signals-the-grader": """
        import signal
        seen, sent = [int(p) for p in os.listdir("/proc") if p.isdigit()], []
        for pid in seen:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as file:
                    if b"grade" in file.read():
                        os.kill(pid, signal.SIGKILL)
                        sent.append(pid)
            except OSError:
                pass
        for pid in {1, os.getppid()}:
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                os.kill(pid, sig)
        found = f"processes seen: {seen}, grader killed: {sent}"
    """,
    "a6-environment": """
        found = []
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                found.append(open(f"/proc/{pid}/environ", "rb").read().decode())
            except OSError as err:
                found.append(pid + " refused: " + err.strerror)
        found.append(repr(dict(os.environ)))
    """,
    "a7-pth-and-bashrc": """
        import site
        found = []
        paths = [Path(p) / "zz_course_probe.pth" for p in site.getsitepackages()]
        for path in [*paths, HOME / ".bashrc"]:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND))
                found.append("opened " + str(path))
            except OSError as err:
                found.append("refused: " + err.strerror)
    """,
    "a8-network": """
        import socket
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
            found = "connected"
        except OSError as err:
            found = "refused: " + str(err)
    """,
    "a9-fork-flood": """
        found = []
        for _ in range(64):
            try:
                if os.fork() == 0:
                    os._exit(0)
                found.append("forked")
            except OSError as err:
                found.append(err.strerror)
                break
    """,
    "a10-disk-flood": """
        found = []
        for path in ("/tmp/flood", str(FLOOD)):
            try:
                with open(path, "wb") as file:
                    for _ in range(64):
                        file.write(bytes(2**20))
                found.append("wrote 64 MB to " + path)
            except OSError as err:
                found.append(path + ": " + err.strerror)
    """,
    "a11-protocol": """
        found = []
        for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    os.close(os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY))
                    found.append(f"opened /proc/{pid}/fd/{fd}")
                except OSError:
                    pass
        if found:
            raise RuntimeError(repr(found))
        for fd in range(64):
            for line in (b'r{"ended": "exit", "code": 0}\\n', b'w{"loaded": true}\\n'):
                try:
                    os.write(fd, line)
                    found.append(fd)
                except OSError:
                    pass
    """,
}
HEADER = """\
import os
from pathlib import Path
CLASS, PACKAGE, REPO = Path({klass!r}), Path({package!r}), Path({repo!r})
OUT, HOME, PORT, FLOOD = Path({out!r}), Path({home!r}), {port}, Path({flood!r})


def pick_best(samples):
"""
FOOTER = "    raise RuntimeError('found: ' + repr(found))\n"
FORMULA_FOLDERS = ("=2+2", "\r=2+2", "\t@SUM(A1)", "-1+1", "+cmd")


def _tree_digest(*roots: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for root in roots for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded once: (the process's result, the CSV rows, the JSON records, what was
    true before, the paths). The TCP server counts the connections it accepts."""
    root = tmp_path_factory.mktemp("class")
    klass, home = root / "submissions", root / "home"
    out, flood = root / "grades.csv", Path(f"/tmp/course-test-flood-{os.getpid()}")
    home.mkdir()
    (home / ".bashrc").write_text("# the teacher's\n", encoding="utf-8")
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    for name, source in (("a0-honest-before", SOLUTIONS), ("z-honest-after", SOLUTIONS),
                         ("z-stub-after", STUBS)):
        shutil.copytree(source, klass / name, ignore=shutil.ignore_patterns("*.md"))
    header = HEADER.format(klass=str(klass), package=str(PACKAGE_ROOT), repo=str(REPO_ROOT),
                           out=str(out), home=str(home), port=server.getsockname()[1],
                           flood=str(flood))
    for name, body in ATTACKS.items():
        (klass / name).mkdir(parents=True)
        (klass / name / "pick_best.py").write_text(
            header + textwrap.indent(textwrap.dedent(body), "    ") + FOOTER, encoding="utf-8")
    for name in FORMULA_FOLDERS:
        (klass / name).mkdir()
    before = _tree_digest(klass, PACKAGE_ROOT / "course", KEY.parent, home)
    env = {**os.environ, "COURSE_TEST_SECRET": SECRET, "HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "course", "grade", str(klass), "--out", str(out),
                           "--json", "--cpu", "2"], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    server.close()
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline=""))) if out.exists() else []
    records = json.loads(done.stdout) if done.returncode == 0 else {}
    yield done, rows, records, before, {"class": klass, "home": home, "out": out,
                                        "flood": flood, "accepted": accepted}
    flood.unlink(missing_ok=True)
    for site_dir in {Path(p) for p in sys.path if p.endswith("site-packages")}:
        (site_dir / "zz_course_probe.pth").unlink(missing_ok=True)


def _found(records, student: str) -> str:
    [record] = [s for s in records["students"] if s["folder"] == student]
    [pick] = [e for e in record["exercises"] if e["exercise"] == "pick_best"]
    return pick["status"] + ": " + pick["message"]


def test_the_class_is_graded_to_the_end_and_the_honest_get_their_grades(graded):
    done, rows, records, _, _ = graded
    assert done.returncode == 0, done.stderr
    assert records["sealed"] is True and {row["sealed"] for row in rows} == {"yes"}
    totals = {row["student"]: row for row in rows if row["exercise"] == "(total)"}
    assert totals["a0-honest-before"]["points"] == totals["z-honest-after"]["points"] == "80"
    assert totals["z-stub-after"]["points"] == "0"
    for attacker in set(ATTACKS) - {"a11-protocol"}:  # which may break the protocol instead
        assert _found(records, attacker).startswith("error: Your code raised: RuntimeError")


def test_it_cannot_write_another_students_files_the_course_or_the_key(graded):
    _, _, records, before, paths = graded
    for attacker in ("a1-other-student", "a2-course-source", "a7-pth-and-bashrc"):
        assert "opened" not in _found(records, attacker)
    assert _tree_digest(paths["class"], PACKAGE_ROOT / "course", KEY.parent,
                        paths["home"]) == before


def test_it_cannot_read_the_key_or_the_graders_environment(graded):
    done, _, records, _, _ = graded
    key = json.loads(KEY.read_text(encoding="utf-8"))
    assert "refused: No such file or directory" in _found(records, "a3-the-key")
    everything = done.stdout + done.stderr + graded[4]["out"].read_text(encoding="utf-8")
    assert SECRET not in everything
    assert not any(answer["why"] in everything for answer in key.values())


def test_it_starts_no_process_and_no_process_outlives_its_check(graded):
    _, _, records, _, paths = graded
    for attacker in ("a4-double-fork", "a9-fork-flood"):
        assert "Operation not permitted" in _found(records, attacker)
    # the double fork's grandchild would have written to the gradebook 5 s after it started
    assert "a4,a4" not in paths["out"].read_text(encoding="utf-8")


def test_it_sees_and_signals_no_process_outside_its_check(graded):
    done, _, records, _, _ = graded
    # it sees its relay (PID 1) and itself (PID 2) only; PID 1 of a namespace ignores them
    assert "processes seen: [1, 2], grader killed: []" in _found(records,
                                                                  "a5-signals-the-grader")
    assert done.returncode == 0


def test_it_has_no_network(graded):
    _, _, records, _, paths = graded
    assert "refused: [Errno 111] Connection refused" in _found(records, "a8-network")
    assert paths["accepted"] == []


def test_its_disk_is_a_small_private_scratch_folder(graded):
    _, _, records, _, paths = graded
    found = _found(records, "a10-disk-flood")
    assert "wrote 64 MB" not in found
    assert found.count("File too large") + found.count("No space left on device") == 2
    assert not paths["flood"].exists()


def test_it_cannot_write_into_the_protocol(graded):
    _, _, records, _, _ = graded
    # it opens no pipe of another process (the relay's are closed to it), and what it writes to
    # its own pipe to the relay is taken, at most, as its own reply: the check is an error
    found = _found(records, "a11-protocol")
    assert found.startswith("error: ") and "opened" not in found


def test_no_cell_starts_like_a_formula(graded):
    _, rows, _, _, _ = graded
    students = {row["student"] for row in rows}
    assert len(students) == 3 + len(ATTACKS) + len(FORMULA_FOLDERS)
    for row in rows:
        for value in row.values():
            assert not value.startswith(FORMULA_LEADS), row
            assert "\r" not in value and "\n" not in value
    assert {"'=2+2", "\\r=2+2", "\\t@SUM(A1)", "'-1+1", "'+cmd"} <= students


def test_every_process_of_a_check_has_ended_when_it_returns(tmp_path):
    """A worker that leaves the relay's process group and waits for ever; sealed and not."""
    from course.isolation import Limits
    from course.sandbox import Sandbox

    (tmp_path / "pick_best.py").write_text("import os, time\nos.setsid()\n"
                                           "def pick_best(samples):\n    time.sleep(10**6)\n",
                                           encoding="utf-8")
    for sealed in (True, False):
        sandbox = Sandbox(tmp_path / "pick_best.py", Limits(cpu_seconds=1), sealed)
        assert sandbox.receive("being imported") == {"loaded": True}
        pids = sandbox.pids()
        assert len(pids) >= 2  # bubblewrap or the relay, and the worker below it
        pidfds = [os.pidfd_open(pid) for pid in pids]
        sandbox.close()
        for pidfd in pidfds:  # a pidfd is readable once its process has ended
            assert select.select([pidfd], [], [], 0)[0] == [pidfd], sealed
            os.close(pidfd)


def test_exercises_of_the_class_are_all_graded(graded):
    _, rows, _, _, _ = graded
    per_student = {}
    for row in rows:
        per_student.setdefault(row["student"], []).append(row["exercise"])
    assert all(names == [*EXERCISES, "(total)"] for names in per_student.values())
