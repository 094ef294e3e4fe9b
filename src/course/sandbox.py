"""The student's file runs in processes of its own, so that nothing in it can change a grade.

Imported into the grader's own process, the student's code could replace the checker's
comparison, print a fake report, end the grader with `os._exit(0)`, or hang it. So `course
check` runs the file elsewhere, and the checker, its reference values and its comparisons run
only in the grader's process. A check has three processes:

- the GRADER (this module's section 3): `sandboxed(path, limits, sealed)` yields a
  `RemoteModule` whose attribute reads and function calls are requests, one line of JSON each;
- the RELAY (section 2, `serve`), started by the grader, sealed off from the machine by
  `course.isolation` (as PID 1 of a namespace of its own, when `sealed`): it holds the grader's
  two pipes, passes each request on to the worker and passes back exactly one line for each,
  prefixed so that the worker cannot speak in the relay's name; and it reports how the worker
  ended (its CPU time used up, an exit, a signal), which the worker cannot fake;
- the WORKER, forked by the relay, which confines itself (`course.isolation.confine`: limits,
  no new process, no program run), loads the student's file and answers. It holds no end of
  the grader's pipes, and the relay's files in `/proc` are closed to it; its prints go to
  /dev/null.

Values cross as PLAIN DATA (`encode`, `decode`): JSON with tags for tuples, dicts, numpy arrays
and scalars, inf and nan; anything else comes back as its repr text, and nothing is ever
unpickled. A call sends the arguments and gets back the result AND the arguments' state after
the call, written back into the grader's own arguments, so a checker can still see that the
student changed θ in place.

An exception of the student's code comes back as data (its type's name, its message, the line
of their file) and is raised in the grader as `course.exercises.Raised`, which the report names
like any other (NotImplementedError stays NotImplementedError: "not written yet"). A worker
that exits, uses up its CPU time, runs past the wall-clock limit or sends something that is not
the protocol stops the check with `course.exercises.Aborted`, whose message is the report's
one-line reason. The student's file is read once, as a private copy: a link is refused.

Both sides import this module: the worker imports numpy only to decode an array it is sent,
and encodes numpy values only if the student's file imported numpy.
"""

from __future__ import annotations

import errno
import json
import math
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from course.exercises import (
    LOADING,
    Aborted,
    NotStarted,
    Raised,
    StudentError,
    load_student_file,
    student_line,
    unwritten_at_load,
)
from course.isolation import (
    SUBMISSION,
    Limits,
    bwrap_command,
    confine,
    isolation_problem,
    undumpable,
)

MAX_REPLY = 4 * 2**20
"""Bytes in one reply of the worker; a larger one stops the check."""
MAX_FILE = 2**20
"""Bytes of the student's file: a larger one is not copied, and the check is an error."""
MAX_DEPTH = 40
"""Nesting depth of a value that crosses; deeper parts come back as their repr text."""
MAX_REPR = 200
"""Characters of an unknown object's repr text."""
NUMBER_KINDS = "biuf"
"""numpy dtype kinds that cross as arrays and scalars (bool, int, unsigned, float)."""

# -- 1. plain data --------------------------------------------------------------------------------


class Opaque:
    """A value the child could not send as data: only its repr text came back."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _numpy() -> Any:
    """numpy if the code of this process imported it (the student's, or the grader's), else
    None: a value cannot be a numpy array in a process that never imported numpy."""
    return sys.modules.get("numpy")


def _repr(value: Any) -> dict[str, Any]:
    try:
        text = repr(value)
    except Exception as err:  # a student's __repr__ may raise
        text = f"<{type(value).__name__} whose repr raised {type(err).__name__}>"
    return {"$": "repr", "v": text[:MAX_REPR]}


def encode(value: Any, depth: int = 0) -> Any:
    """`value` as JSON-ready plain data. Exact types only (a subclass of list is not a list);
    non-finite floats, tuples, dicts and numpy values are tagged objects `{"$": tag, ...}`."""
    np = _numpy()
    if depth > MAX_DEPTH:
        return _repr(value)
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    if kind is list:
        return [encode(item, depth + 1) for item in value]
    if kind is tuple:
        return {"$": "tuple", "v": [encode(item, depth + 1) for item in value]}
    if kind is dict:
        return {"$": "dict", "v": [[encode(k, depth + 1), encode(v, depth + 1)]
                                   for k, v in value.items()]}
    if np is not None and kind is np.ndarray and value.dtype.kind in NUMBER_KINDS:
        return {"$": "ndarray", "dtype": value.dtype.str,
                "v": encode(value.tolist(), depth + 1)}
    if np is not None and isinstance(value, np.generic) and value.dtype.kind in NUMBER_KINDS:
        return {"$": "scalar", "dtype": value.dtype.str, "v": encode(value.item(), depth + 1)}
    return _repr(value)


def decode(data: Any) -> Any:
    """The value `encode` wrote. Raises ValueError on anything `encode` does not write."""
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is float:
        return data
    if type(data) is list:
        return [decode(item) for item in data]
    if type(data) is not dict or not isinstance(data.get("$"), str):
        raise ValueError(f"not plain data: {data!r:.60}")
    tag, inner = data["$"], data.get("v")
    if tag == "float" and inner in ("inf", "-inf", "nan"):
        return float(inner)
    if tag == "repr" and type(inner) is str:
        return Opaque(inner[:MAX_REPR])
    if tag == "tuple" and type(inner) is list:
        return tuple(decode(item) for item in inner)
    if tag == "dict" and type(inner) is list:
        pairs = [decode(pair) for pair in inner]
        if not all(type(pair) is list and len(pair) == 2 for pair in pairs):
            raise ValueError("a dict's items must be [key, value] pairs")
        return {_hashable(key): value for key, value in pairs}
    if tag in ("ndarray", "scalar"):
        import numpy as np  # the child needs it only when it is sent an array

        dtype = np.dtype(str(data.get("dtype")))
        if dtype.kind not in NUMBER_KINDS:
            raise ValueError(f"dtype {dtype} does not cross")
        array = np.array(decode(inner), dtype=dtype)
        return array if tag == "ndarray" else array[()]
    raise ValueError(f"unknown tag {tag!r:.40}")


def _hashable(key: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        raise ValueError(f"a dict key must be hashable, got {type(key).__name__}") from None
    return key


def _write_back(arg: Any, after: Any) -> None:
    """Make the grader's argument `arg` hold `after`, its state in the child after the call:
    what the student's code changed in place shows in the grader's own object."""
    np = _numpy()
    if np is not None and type(arg) is np.ndarray and type(after) is np.ndarray:
        if arg.shape == after.shape:
            arg[...] = after
    elif type(arg) is list and type(after) is list:
        arg[:] = after
    elif type(arg) is dict and type(after) is dict:
        arg.clear()
        arg.update(after)


# -- 2. the sealed side: the relay and the worker --------------------------------------------------

RELAY, WORKER = b"r", b"w"
"""The first byte of each line the grader reads: a message of the relay itself, or a reply of
the worker passed on by the relay."""


class Lines:
    """The lines arriving on a pipe, each at most MAX_REPLY bytes (without its newline)."""

    def __init__(self, fd: int):
        self.fd, self.buffer = fd, b""

    def read(self, timeout: float | None = None) -> bytes | None:
        """The next line, or None at the end of the pipe. Raises TimeoutError when no whole line
        came within `timeout` seconds (None: wait as long as it takes) and OverflowError when a
        line grows past MAX_REPLY bytes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and (left <= 0 or not select.select([self.fd], [], [], left)[0]):
                raise TimeoutError
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
            if len(self.buffer) > MAX_REPLY and b"\n" not in self.buffer[:MAX_REPLY + 1]:
                raise OverflowError
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def more(self) -> bool:
        """Whether anything has arrived beyond the lines read so far."""
        return bool(self.buffer) or bool(select.select([self.fd], [], [], 0)[0])


def _raised(error: BaseException, path: Path) -> dict[str, Any]:
    line, text = student_line(error, path)
    try:
        message = str(error)
    except Exception:  # a student's exception whose __str__ raises
        message = "(its message could not be read)"
    return {"raised": {"type": type(error).__name__, "message": message[:MAX_REPR * 5],
                       "line": line, "text": text[:MAX_REPR]}}


_MISSING: Any = object()
"""What `getattr` gives the worker for a name the student's module does not have."""


def _answer(module: Any, request: dict[str, Any], path: Path) -> dict[str, Any]:
    """The reply to one request: `get` an attribute, or `call` a function with arguments."""
    value = getattr(module, request["name"], _MISSING)
    if request["op"] == "get":
        if value is _MISSING:
            return {"missing": True}
        return {"function": True} if callable(value) else {"value": encode(value)}
    args = [decode(arg) for arg in request["args"]]
    try:
        result = value(*args)
    except BaseException as err:  # SystemExit included: the student's, reported as data
        return _raised(err, path)
    return {"result": encode(result), "args": [encode(arg) for arg in args]}


def work(path: Path, requests_fd: int, replies_fd: int, limits: Limits, relay: int) -> None:
    """The worker: confine this process, load the student's file, then answer each request on
    its own pipes until the relay (process `relay`) closes them."""
    confine(limits)
    if os.getppid() != relay:  # the relay died before this process could follow it
        return
    requests = os.fdopen(requests_fd, "r", encoding="utf-8")
    replies = os.fdopen(replies_fd, "w", encoding="utf-8")

    def reply(message: dict[str, Any]) -> None:
        replies.write(json.dumps(message, allow_nan=False) + "\n")
        replies.flush()

    try:
        module = load_student_file(path)
    except NotStarted:
        reply({"not_started": True})
        return
    except StudentError as err:
        reply(_raised(err.error, path))
        return
    reply({"loaded": True})
    for line in requests:
        reply(_answer(module, json.loads(line), path))


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _ended(status: int, cpu_used: float, limits: Limits) -> dict[str, Any]:
    """The relay's report of how the worker ended, from its wait status and CPU seconds."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGXCPU or (number == signal.SIGKILL
                                        and cpu_used >= limits.cpu_seconds):
            return {"ended": "cpu"}
        return {"ended": "signal", "signal": signal.Signals(number).name}
    return {"ended": "exit", "code": os.WEXITSTATUS(status)}


def serve(path: str, cpu_seconds: str, memory_mb: str, disk_mb: str) -> None:
    """The relay's main (the first process of a check): start the worker, then pass requests
    from stdin to it and its replies to stdout, one line for one line, until stdin closes."""
    os.closerange(3, 2**16)  # nothing inherited reaches the worker (bubblewrap's status pipe)
    undumpable()  # the worker may not open this process's pipes through /proc
    limits = Limits(int(cpu_seconds), int(memory_mb), int(disk_mb))
    to_worker, from_worker = os.pipe(), os.pipe()
    relay = os.getpid()
    worker = os.fork()
    if worker == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the grader's pipes are not the worker's
            os.dup2(null, fd)
        os.close(to_worker[1])
        os.close(from_worker[0])
        try:
            work(Path(path), to_worker[0], from_worker[1], limits, relay)
        finally:
            os._exit(0)
    os.close(to_worker[0])
    os.close(from_worker[1])
    requests, replies = Lines(0), Lines(from_worker[0])

    def tell(kind: bytes, line: bytes) -> None:
        _write(1, kind + line + b"\n")

    try:
        reply = replies.read()
        while reply is not None:
            tell(WORKER, reply)
            request = requests.read()
            if request is None:
                return  # the grader has all it asked for
            if replies.more():
                tell(RELAY, json.dumps({"aborted": "wrote outside its replies"}).encode())
                return
            _write(to_worker[1], request + b"\n")
            reply = replies.read()
        _, status, usage = os.wait4(worker, 0)
        ended = _ended(status, usage.ru_utime + usage.ru_stime, limits)
        worker = 0
        tell(RELAY, json.dumps(ended).encode())
    except OverflowError:
        tell(RELAY, json.dumps({"aborted": f"sent more than {MAX_REPLY // 2**20} MB"}).encode())
    except BrokenPipeError:
        return  # the grader is gone
    finally:
        if worker:
            with suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)
            os.waitpid(worker, 0)


CHILD = ("import sys\n"
         "sys.path.insert(0, sys.argv[1])\n"
         "from course.sandbox import serve\n"
         "serve(*sys.argv[2:])\n")
"""The relay's program: the grader's own copy of the `course` package (`python -I` ignores
PYTHONPATH and the current folder), whose `serve` starts the worker."""
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
"""The folder that holds the grader's `course` package."""

CHILD_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
             "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""The whole environment of a check's processes: one thread for numpy's linear algebra (many
checks may run at once), and none of the grader's variables (a token in the environment of a
CI job is not the student's to read). `python -I -B` ignores every PYTHON* variable, the current
folder and the user's site-packages, and writes no bytecode."""


# -- 3. the grader's side: the check's processes, the module and its functions -------------------

def private_copy(path: Path, folder: Path) -> Path:
    """A copy of the student's file in `folder` (a new folder of the grader's): read once,
    never through a link, at most MAX_FILE bytes. Raises Aborted otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        why = "is a link, not a file" if err.errno == errno.ELOOP else err.strerror
        raise Aborted(f"{path.name} {why}: keep the file itself in the folder") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Aborted(f"{path.name} is not a regular file")
        source = file.read(MAX_FILE + 1)
    if len(source) > MAX_FILE:
        raise Aborted(f"{path.name} is larger than {MAX_FILE // 2**20} MB")
    copy = folder / path.name
    copy.write_bytes(source)
    copy.chmod(0o644)
    return copy


def _relay_reason(message: Any, during: str, limits: Limits) -> str:
    """The report's reason for a message of the relay: how the worker ended, or why the relay
    stopped passing its replies on."""
    ended = message.get("ended") if isinstance(message, dict) else None
    if ended == "cpu":
        return (f"used all of its {limits.cpu_seconds} s of CPU time (the limit for one "
                f"exercise) while {during}: look for a loop that never ends")
    if ended == "exit":
        return f"the file exited while {during}"
    if ended == "signal":
        return f"the file's process was ended by {message.get('signal')} while {during}"
    aborted = message.get("aborted") if isinstance(message, dict) else None
    return f"the file's process {aborted or 'broke the protocol'} while {during}"


GONE_WAIT = 30.0
"""Seconds to wait for a killed process to end: it takes microseconds; the bound is there so that
a kernel that never says so cannot hang the grader."""


def _pidfd(pid: int) -> int | None:
    """A pidfd of process `pid`, or None if it has ended (or pidfds do not exist here)."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):  # AttributeError: not Linux
        return None


def descendants(pid: int) -> list[int]:
    """The PIDs of every process below `pid`, from Linux's `/proc` (empty elsewhere)."""
    parents: dict[int, int] = {}
    with suppress(FileNotFoundError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with suppress(OSError, ValueError, IndexError):
                    with open(f"/proc/{entry.name}/stat", "rb") as stat_file:
                        after_name = stat_file.read().rsplit(b")", 1)[1]
                    parents[int(entry.name)] = int(after_name.split()[1])
    found: list[int] = []
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found += sorted(frontier)
    return found


class Sandbox:
    """The processes of one check of one student file, with a wall-clock deadline for all that
    they do. `sealed`: the relay runs sealed off by bubblewrap (`course.isolation`)."""

    def __init__(self, path: Path, limits: Limits, sealed: bool):
        self.limits = limits
        self.folder = Path(tempfile.mkdtemp(prefix="course-check-"))
        self.status: int | None = None     # bubblewrap's status pipe
        self.namespace: int | None = None  # a pidfd of the sealed PID 1
        self.deadline = time.monotonic() + limits.wall
        try:
            copy = private_copy(path, self.folder)
            self.process = self._start(copy, sealed)
        except BaseException:
            self._remove()
            raise
        assert self.process.stdout is not None  # opened with PIPE
        self.lines = Lines(self.process.stdout.fileno())

    def _start(self, copy: Path, sealed: bool) -> subprocess.Popen[bytes]:
        limits = self.limits
        args = [str(n) for n in (limits.cpu_seconds, limits.memory_mb, limits.disk_mb)]
        program = [sys.executable, "-I", "-B", "-c", CHILD, str(PACKAGE_ROOT)]
        streams: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE,
                                   "stderr": subprocess.DEVNULL, "env": CHILD_ENV,
                                   "start_new_session": True}  # a process group of its own
        if not sealed:
            return subprocess.Popen([*program, str(copy), *args], cwd=self.folder, **streams)
        problem = isolation_problem()
        if problem is not None:
            raise Aborted(f"cannot seal the file off: {problem}")
        self.status, write = os.pipe()
        try:
            command = bwrap_command([*program, f"{SUBMISSION}/{copy.name}", *args],
                                    self.folder, PACKAGE_ROOT, limits, write)
            process = subprocess.Popen(command, pass_fds=[write], **streams)
        finally:
            os.close(write)
        self.namespace = self._first_process(process)
        return process

    def _first_process(self, bwrap: subprocess.Popen[bytes]) -> int | None:
        """A pidfd of the sealed PID 1, as bubblewrap reports it; None if it has already ended
        (then so has everything it started). The pidfd keeps naming that process even after
        its number is reused, and its parent is checked to be this bubblewrap."""
        assert self.status is not None
        try:
            first = Lines(self.status).read(self.deadline - time.monotonic())
            pid = int(json.loads(first or b"{}")["child-pid"])
        except (TimeoutError, ValueError, KeyError, TypeError):
            return None
        pidfd = _pidfd(pid)
        if pidfd is None:
            return None
        if pid not in descendants(bwrap.pid):
            os.close(pidfd)
            return None
        return pidfd

    def receive(self, during: str) -> dict[str, Any]:
        """The worker's next reply; `during` names what it was doing, for the reasons."""
        try:
            line = self.lines.read(self.deadline - time.monotonic())
        except TimeoutError:
            raise Aborted(f"did not finish within {self.limits.wall:g} s while "
                          f"{during} (the limits: {self.limits.cpu_seconds} s of CPU time, "
                          f"{self.limits.wall:g} s in all): look for a loop that "
                          "never ends, or a wait that never returns") from None
        except OverflowError:
            raise Aborted(f"the file sent more than {MAX_REPLY // 2**20} MB while "
                          f"{during}") from None
        if line is None:
            raise Aborted(f"the check's process ended while {during}")
        try:
            message = json.loads(line[1:])
        except (ValueError, RecursionError):  # RecursionError: nested deeper than json parses
            message = None
        if line[:1] == RELAY:
            raise Aborted(_relay_reason(message, during, self.limits))
        if line[:1] != WORKER or not isinstance(message, dict):
            raise Aborted(f"the file's process sent a reply that is not data while {during}")
        return message

    def ask(self, request: dict[str, Any], during: str) -> dict[str, Any]:
        stdin = self.process.stdin
        assert stdin is not None  # opened with PIPE
        try:
            stdin.write(json.dumps(request, allow_nan=False).encode("utf-8") + b"\n")
            stdin.flush()
        except BrokenPipeError:
            raise Aborted(f"the file exited before {during}") from None
        return self.receive(during)

    def pids(self) -> list[int]:
        """The PIDs of the check's processes now: the process this grader started (bubblewrap,
        or the relay unsealed) and every process below it (Linux; elsewhere the first only)."""
        return [self.process.pid, *descendants(self.process.pid)]

    def close(self) -> None:
        """End every process of the check, and return once they have all ended: each is
        killed through a pidfd (which names it even if its number is reused) and waited for
        (a pidfd is readable once its process has ended). Sealed, the kernel also ends the PID
        namespace with its PID 1; unsealed, the relay's process group is killed as well."""
        members = [fd for fd in map(_pidfd, self.pids()) if fd is not None]
        for member in [*members, self.namespace]:
            if member is not None:
                with suppress(ProcessLookupError):
                    signal.pidfd_send_signal(member, signal.SIGKILL)
        if self.namespace is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for member in members:
            select.select([member], [], [], GONE_WAIT)
            os.close(member)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with suppress(BrokenPipeError):  # the relay is gone: nothing left to flush
                    stream.close()
        self._remove()

    def _remove(self) -> None:
        for fd in (self.namespace, self.status):
            if fd is not None:
                os.close(fd)
        self.namespace = self.status = None
        shutil.rmtree(self.folder, ignore_errors=True)


def _raise_from(reply: dict[str, Any], during: str, limits: Limits) -> None:
    """Raise the student's exception a reply reports, if it reports one (a MemoryError says
    which limit it met)."""
    raised = reply.get("raised")
    if raised is None:
        return
    if not (isinstance(raised, dict) and type(raised.get("type")) is str
            and type(raised.get("message")) is str and type(raised.get("text")) is str
            and (raised.get("line") is None or type(raised.get("line")) is int)):
        raise Aborted(f"the file's process sent a malformed error while {during}")
    if raised["type"] == "NotImplementedError":
        raise NotImplementedError(raised["message"])
    message = raised["message"]
    if raised["type"] == "MemoryError":
        message = f"over the memory limit ({limits.memory_mb} MB; course check --memory MB)"
    raise Raised(raised["type"], message, raised["line"], raised["text"])


def _decoded(data: Any, during: str) -> Any:
    try:
        return decode(data)
    except (ValueError, TypeError, OverflowError, RecursionError) as err:
        raise Aborted(f"the file's process sent a value that is not data while {during}: "
                      f"{err}") from None


class RemoteFunction:
    """A function of the student's file: calling it is a request to the worker."""

    def __init__(self, sandbox: Sandbox, name: str):
        self.sandbox, self.name = sandbox, name

    def __call__(self, *args: Any) -> Any:
        during = f"{self.name}() was running"
        reply = self.sandbox.ask({"op": "call", "name": self.name,
                                  "args": [encode(arg) for arg in args]}, during)
        _raise_from(reply, during, self.sandbox.limits)
        after = _decoded(reply.get("args"), during)
        if not (isinstance(after, list) and len(after) == len(args)):
            raise Aborted(f"the file's process sent a malformed reply while {during}")
        for arg, state in zip(args, after, strict=True):
            _write_back(arg, state)
        return _decoded(reply.get("result"), during)


class RemoteModule:
    """The student's module as the checker sees it: `module.NAME` is a request to the worker,
    answered with a value (as plain data), a `RemoteFunction`, or AttributeError."""

    def __init__(self, sandbox: Sandbox):
        self._sandbox = sandbox

    def __getattr__(self, name: str) -> Any:
        during = f"reading {name}"
        reply = self._sandbox.ask({"op": "get", "name": name}, during)
        if reply.get("missing"):
            raise AttributeError(name)
        if reply.get("function"):
            return RemoteFunction(self._sandbox, name)
        return _decoded(reply.get("value"), during)


@contextmanager
def sandboxed(path: Path, limits: Limits, sealed: bool = True) -> Iterator[RemoteModule]:
    """The student's file at `path`, loaded by a worker: the `load` of `run_check`. `sealed`:
    its processes run sealed off from the machine (`course.isolation`).

    Raises what `load_student_file` raises (NotStarted, StudentError) from the worker's report,
    and Aborted when the worker exits, runs out of time or breaks the protocol. Every process
    of the check has ended when this returns, whatever happened."""
    sandbox = Sandbox(path, limits, sealed)
    try:
        during = "being imported"
        reply = sandbox.receive(during)
        if reply.get("not_started"):
            raise unwritten_at_load(path)
        try:
            _raise_from(reply, during, limits)
        except (Raised, NotImplementedError) as err:
            raise StudentError(err, LOADING) from None
        if not reply.get("loaded"):
            raise Aborted(f"the file's process sent a malformed reply while {during}")
        yield RemoteModule(sandbox)
    finally:
        sandbox.close()
