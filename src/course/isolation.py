"""Sealing a student's file off from the machine that grades it.

`course.sandbox` runs the student's file in a process of its own, so that nothing in it can
change the checker. That protects one grade from its own file. A teacher grading a class needs
more: the file of one student must not reach the teacher's files, the other students' files,
the gradebook, the grader's process or the network. This module says how a check's processes
are sealed, in three layers, each a maintained mechanism of Linux:

1. **Namespaces, by bubblewrap** (`bwrap`, Debian's `bubblewrap`, the sandbox Flatpak uses;
   no root and no daemon: it needs unprivileged user namespaces). The check's processes get a
   file system of their own, made of read-only views of the Python installation, the
   virtualenv, the course's package and a private copy of the one file being checked, plus an
   empty scratch folder `/tmp` of at most `Limits.disk_mb`, which vanishes with them; a PID
   namespace in which the check's first process is PID 1 and no other process of the machine
   exists (so none can be seen in `/proc`, signalled or traced); no network interface but a
   loopback of their own; no capabilities; no environment but the few variables given; no
   terminal to type into (`--new-session`); no further user namespace. Everything in it dies
   with its PID 1.
2. **One process, by seccomp.** The student's code runs in a single process that may not start
   another (`fork`, `vfork`, `clone` without `CLONE_THREAD`, `clone3`), run a program
   (`execve`) or trace one (`ptrace`, `process_vm_readv`/`writev`): a small seccomp filter
   (`no_new_processes`) refuses those system calls with EPERM. Threads are allowed, and share
   the process's limits. So every per-process limit of the kernel is a limit of the whole
   submission.
3. **Limits, by setrlimit**, on that one process: address space (`Limits.memory_mb`), CPU time
   (`Limits.cpu_seconds`: a busy machine slows a check down but does not fail it), the size of
   any file it writes (`Limits.disk_mb`), open files, and no core dump.

Why these, by measurement on this course's machine (Linux 6.18, 2 cores, bubblewrap 0.8.0):

- `setrlimit(RLIMIT_NPROC)` would count processes per user namespace, but not for root (the
  kernel exempts uid 0, also when mapped into a user namespace: five forks passed a limit of
  three, as root, in bwrap), and CI runs as root. The seccomp filter holds for every user.
- Landlock (ABI 7 here) restricts the file system, TCP and signals, but not `/proc` reads of
  the same user, UDP, or the number of processes; bubblewrap's namespaces cover all of those,
  and a cgroup needs root or systemd's delegation. Docker (otter-grader, PrairieLearn) needs a
  daemon and root.
- The cost: `benchmarks/bench_grade.py` prints it per check (sealed against not sealed).

Where bubblewrap is missing or cannot make namespaces (macOS, Windows, a container without user
namespaces), `isolation_problem` says what is missing in one line; `course check` then runs a
student's own file without the seal and says so, and `course grade` refuses unless told to
trust the submissions. The seccomp filter and the limits apply wherever the kernel has them.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    """What one check of one exercise may use: loading the file and every call together."""

    cpu_seconds: int = 5
    """CPU seconds of the student's process, 1 to 600. CPU time, not wall time: a loaded
    machine slows a check down without costing the student the grade."""
    memory_mb: int = 512
    """Megabytes of address space of the student's process, which is the whole submission
    (it may start no other): numpy imports in about 25 MB."""
    disk_mb: int = 16
    """Megabytes of its scratch folder `/tmp`, and of any one file it writes."""
    wall_seconds: float | None = None
    """Wall-clock seconds of the whole check; None: 10 s plus 4 s per CPU second (30 s for the
    default 5). A file that waits (a sleep, a read that never returns) uses no CPU time, so it
    is stopped here; generous, so that a check that needs a second of CPU still finishes on a
    machine that gives it a twentieth of a core, and short enough that a class of sleeping
    files cannot hold the grading for hours."""

    @property
    def wall(self) -> float:
        """The wall-clock limit in seconds."""
        return 10.0 + 4.0 * self.cpu_seconds if self.wall_seconds is None else self.wall_seconds


DEFAULT_LIMITS = Limits()
"""5 CPU seconds, 512 MB, 16 MB of scratch: every reference solution runs in well under a
second of CPU."""
OPEN_FILES = 64
"""Open files of the student's process: numpy needs about 10."""
SCRATCH = "/tmp"
"""The student's scratch folder inside the seal, and its current folder."""
SUBMISSION = "/submission"
"""Where the private copy of the file being checked is seen inside the seal."""


# -- 1. one process: the seccomp filter ------------------------------------------------------------

EPERM, ENOSYS = 1, 38
CLONE_THREAD = 0x00010000
SYSCALLS = {
    # machine: (the kernel's AUDIT_ARCH value, refused calls by number, clone, clone3)
    "x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "execve": 59, "ptrace": 101,
                            "process_vm_readv": 310, "process_vm_writev": 311,
                            "execveat": 322}, 56, 435),
    "aarch64": (0xC00000B7, {"execve": 221, "ptrace": 117, "process_vm_readv": 270,
                             "process_vm_writev": 271, "execveat": 281}, 220, 435),
}
"""The system calls the filter refuses, by machine (numbers from the kernel's syscall tables;
aarch64 has no fork or vfork: its C library forks with clone)."""

# classic BPF opcodes (linux/filter.h) and seccomp's return values (linux/seccomp.h)
LOAD_WORD, JUMP_EQ, JUMP_GE, JUMP_SET, RETURN = 0x20, 0x15, 0x35, 0x45, 0x06
ALLOW, ERRNO, KILL = 0x7FFF0000, 0x00050000, 0x80000000
NR, ARCH, ARG0 = 0, 4, 16
"""Offsets in `struct seccomp_data`: the call's number, the machine, the low word of arg 0."""


def no_new_processes(machine: str) -> bytes:
    """The seccomp filter of layer 2 as `struct sock_filter` records, for `machine`
    (`platform.machine()`); KeyError for a machine without a table in SYSCALLS.

    Read top to bottom: a call of another ABI (32-bit, x32) kills the process; a refused call
    fails with EPERM; clone3 fails with ENOSYS (the C library then creates a thread with
    clone); clone passes only with CLONE_THREAD; every other call passes."""
    audit_arch, refused, clone, clone3 = SYSCALLS[machine]
    checks = [(JUMP_EQ, number, "deny") for number in refused.values()]
    program: list[tuple[int, int, str, str]] = [  # (opcode, k, jump if true, jump if false)
        (LOAD_WORD, ARCH, "", ""),
        (JUMP_EQ, audit_arch, "", "kill"),
        (LOAD_WORD, NR, "", ""),
        (JUMP_GE, 0x40000000, "kill", ""),  # x32 numbers on x86_64
        *[(op, k, target, "") for op, k, target in checks],
        (JUMP_EQ, clone3, "nosys", ""),
        (JUMP_EQ, clone, "", "allow"),
        (LOAD_WORD, ARG0, "", ""),  # clone's flags (little-endian: the low word)
        (JUMP_SET, CLONE_THREAD, "allow", "deny"),
    ]
    returns = {"allow": ALLOW, "deny": ERRNO | EPERM, "nosys": ERRNO | ENOSYS, "kill": KILL}
    labels = {name: len(program) + index for index, name in enumerate(returns)}
    records = b""
    for index, (op, k, if_true, if_false) in enumerate(program):
        jt = labels[if_true] - index - 1 if if_true else 0  # jumps count from the next record
        jf = labels[if_false] - index - 1 if if_false else 0
        records += struct.pack("HBBI", op, jt, jf, k)
    return records + b"".join(struct.pack("HBBI", RETURN, 0, 0, k) for k in returns.values())


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]  # struct sock_fprog


PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 4, 38, 22
SECCOMP_MODE_FILTER = 2


def _prctl(*args: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(*(ctypes.c_ulong(arg) for arg in args)) != 0:  # unsigned long, as declared
        raise OSError(ctypes.get_errno(), f"prctl{args[:2]}: {os.strerror(ctypes.get_errno())}")


def undumpable() -> None:
    """Make this process's `/proc/PID` files (its open pipes above all) unreadable to the other
    processes of its user, where the kernel has the switch (Linux)."""
    if sys.platform == "linux":
        _prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def confine(limits: Limits) -> None:
    """Put THIS process under `limits` and, on Linux, under the filter of layer 2, for good,
    and have it killed when its parent dies: called in the process that is about to run the
    student's code. Raises OSError where the kernel refuses (the seal is then not in place,
    and the check must not go on)."""
    if sys.platform == "linux":
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for which, value in ((resource.RLIMIT_AS, limits.memory_mb * 2**20),
                         (resource.RLIMIT_CPU, limits.cpu_seconds),
                         (resource.RLIMIT_FSIZE, limits.disk_mb * 2**20),
                         (resource.RLIMIT_NOFILE, OPEN_FILES),
                         (resource.RLIMIT_CORE, 0)):
        # the hard CPU limit a second after the soft one: SIGXCPU, then SIGKILL if it is caught
        hard = value + 1 if which == resource.RLIMIT_CPU else value
        resource.setrlimit(which, (value, hard))
    if sys.platform != "linux":
        return
    records = no_new_processes(platform.machine())
    program = _Program(len(records) // 8, records)
    _prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(program), 0, 0)


# -- 2. namespaces: bubblewrap's command line ------------------------------------------------------

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
"""The system's programs and libraries, seen read-only (a merged-/usr system links the others
to /usr: they are recreated as the same links)."""
BWRAP_FLAGS = ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
               "--new-session", "--cap-drop", "ALL", "--as-pid-1")
"""Every namespace (user, mount, PID, network, IPC, UTS, cgroup), no nested user namespace,
killed if the grader dies, a session of its own, no capability, and the check's first process
as PID 1 (its death ends every process of the check). Its environment is the one bubblewrap is
started with, which the caller gives whole."""


def readable_roots(package_root: Path) -> list[Path]:
    """The folders the sealed process reads, besides the system's and its submission: the
    Python installation, the virtualenv (with their libraries), and the course's package
    (`package_root / "course"`: not the repository, so no `teacher/`, no `data/`, and not the
    folder the grader was started in). Each is a real path; those inside the system's folders
    or inside another one are left out."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
             (package_root / "course").resolve()}
    system = [Path(folder) for folder in SYSTEM_FOLDERS]
    keep = sorted(root for root in roots if not any(root.is_relative_to(s) for s in system))
    return [root for root in keep if not any(root != other and root.is_relative_to(other)
                                             for other in keep)]


def bwrap_command(program: list[str], submission: Path, package_root: Path,
                  limits: Limits, status_fd: int) -> list[str]:
    """The bubblewrap command that runs `program` sealed off (layer 1): `submission` (a
    private folder) is seen read-only at SUBMISSION; bubblewrap writes the PID of the sealed
    PID 1 to `status_fd` as JSON."""
    command = ["bwrap", *BWRAP_FLAGS, "--json-status-fd", str(status_fd)]
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            command += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            command += ["--ro-bind", folder, folder]
    # the scratch folder before the folders read: one of them may lie under /tmp
    command += ["--proc", "/proc", "--dev", "/dev",
                "--size", str(limits.disk_mb * 2**20), "--tmpfs", SCRATCH]
    for root in readable_roots(package_root):
        command += ["--ro-bind", str(root), str(root)]
    command += ["--ro-bind", str(submission), SUBMISSION, "--chdir", SCRATCH, "--"]
    return command + program


@functools.cache
def isolation_problem() -> str | None:
    """None when this machine can seal a check off, else what is missing, in one line. Tried
    once per process: bubblewrap runs this Python, sealed, confining itself as a check does."""
    if sys.platform != "linux":
        return f"sealing a check needs Linux (this is {platform.system()})"
    if platform.machine() not in SYSCALLS:
        return f"no system-call table for this machine ({platform.machine()})"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian, Ubuntu: apt-get install bubblewrap)"
    package_root = Path(__file__).resolve().parents[1]
    probe = [sys.executable, "-I", "-B", "-c",
             f"import sys; sys.path.insert(0, {str(package_root)!r})\n"
             "from course.isolation import DEFAULT_LIMITS, confine\n"
             "confine(DEFAULT_LIMITS)\nprint('sealed')"]
    read, write = os.pipe()
    try:
        with tempfile.TemporaryDirectory() as empty:
            command = bwrap_command(probe, Path(empty), package_root, DEFAULT_LIMITS, write)
            done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                                  env={"PATH": "/usr/bin:/bin"}, pass_fds=[write],
                                  check=False)
    except (OSError, subprocess.SubprocessError) as err:
        return f"bubblewrap could not run: {err}"
    finally:
        os.close(read)
        os.close(write)
    if done.stdout.strip() != "sealed":
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return f"bubblewrap cannot seal a process here: {said[:200]}"
    return None
