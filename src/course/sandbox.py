"""The student's file runs in a separate Python process, so that nothing in it can change a grade.

Imported into the grader's own process, the student's code could replace the checker's
comparison, print a fake report, end the grader with `os._exit(0)`, or hang it. So `course
check` runs the file in a CHILD process (`serve`), under a time limit per exercise and a memory
limit, with its prints thrown away; the checker, its reference values and its comparisons run
only in the grader's process.

The checker does not change: it still receives a "module". `sandboxed(path, limits)` yields a
`RemoteModule` whose attribute reads and function calls are requests to the child, sent as one
line of JSON each on the child's stdin; each reply is one line of JSON on the child's stdout
(the student's own prints go to /dev/null, the protocol uses copies of the two pipes made
before the file runs). Values cross as PLAIN DATA (`encode`, `decode`): JSON with tags for
tuples, dicts, numpy arrays and scalars, inf and nan; anything else comes back as its repr
text, and nothing is ever unpickled. A call sends the arguments and gets back the result AND
the arguments' state after the call, written back into the grader's own arguments, so a checker
can still see that the student changed θ in place.

An exception of the student's code comes back as data (its type's name, its message, the line
of their file) and is raised in the grader as `course.exercises.Raised`, which the report names
like any other (NotImplementedError stays NotImplementedError: "not written yet"). A child that
exits, runs out of time or sends something that is not the protocol stops the check with
`course.exercises.Aborted`, whose message is the report's one-line reason.

Both sides import this module: the child imports numpy only to decode an array it is sent,
and encodes numpy values only if the student's file imported numpy.
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Limits:
    """What the child may use: wall-clock seconds for the whole exercise (loading the file and
    every call), and megabytes of address space."""

    timeout: float = 5.0
    memory_mb: int = 512


DEFAULT_LIMITS = Limits()
"""5 s and 512 MB: numpy imports in about 25 MB; every reference solution runs in well under 1 s."""
MAX_REPLY = 4 * 2**20
"""Bytes in one reply of the child; a larger one stops the check."""
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


# -- 2. the child: load the file, answer requests --------------------------------------------------

def _raised(error: BaseException, path: Path) -> dict[str, Any]:
    line, text = student_line(error, path)
    try:
        message = str(error)
    except Exception:  # a student's exception whose __str__ raises
        message = "(its message could not be read)"
    return {"raised": {"type": type(error).__name__, "message": message[:MAX_REPR * 5],
                       "line": line, "text": text[:MAX_REPR]}}


_MISSING: Any = object()
"""What `getattr` gives the child for a name the student's module does not have."""


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


def serve(path: str) -> None:
    """The child's main: load the student's file, then answer requests until stdin closes.

    The protocol uses private copies of stdin and stdout; the student's code sees /dev/null on
    both (and on stderr), so it can neither read a request nor print into a reply."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    student = Path(path)

    def reply(message: dict[str, Any]) -> None:
        replies.write(json.dumps(message, allow_nan=False) + "\n")
        replies.flush()

    try:
        module = load_student_file(student)
    except NotStarted:
        reply({"not_started": True})
        return
    except StudentError as err:
        reply(_raised(err.error, student))
        return
    reply({"loaded": True})
    for line in requests:
        reply(_answer(module, json.loads(line), student))


CHILD = ("import resource, sys\n"
         "limit = int(sys.argv[2]) * 2**20\n"
         "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
         "sys.path.insert(0, sys.argv[3])\n"
         "from course.sandbox import serve\n"
         "serve(sys.argv[1])\n")
"""The child's program: the memory limit first, so that everything after it runs under it; then
the grader's own copy of the `course` package (`python -I` ignores PYTHONPATH and the current
folder), whose `serve` loads the file."""
PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])
"""The folder that holds the grader's `course` package."""

CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
             "LANG": "C.UTF-8"}
"""The child's whole environment, with the grader's PATH: one thread for numpy's linear algebra
(many children may run at once), and none of the grader's other variables (a token in the
environment of a CI job is not the student's to read). `python -I -B` ignores every PYTHON*
variable, the current folder and the user's site-packages, and writes no bytecode."""


# -- 3. the grader's side: the child process, the module and its functions ---------------------

class Sandbox:
    """One child process running one student file, with a deadline for everything it does."""

    def __init__(self, path: Path, limits: Limits):
        self.limits = limits
        self.deadline = time.monotonic() + limits.timeout
        env = {"PATH": os.environ.get("PATH", os.defpath), **CHILD_ENV}
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", CHILD, str(path), str(limits.memory_mb),
             PACKAGE_ROOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, start_new_session=True)  # its own process group: killed as a whole
        self.buffer = b""

    def receive(self, during: str) -> dict[str, Any]:
        """The child's next reply; `during` names what it was doing, for the reasons."""
        stdout = self.process.stdout
        assert stdout is not None  # opened with PIPE
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([stdout], [], [], left)[0]:
                raise Aborted(f"timed out after {self.limits.timeout:g} s (the limit for one "
                              f"exercise) while {during}: look for a loop that never ends")
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                raise Aborted(f"the file exited while {during}")
            self.buffer += chunk
            if len(self.buffer) > MAX_REPLY:
                raise Aborted(f"the file sent more than {MAX_REPLY // 2**20} MB while {during}")
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than json parses
            reply = None
        if not isinstance(reply, dict):
            raise Aborted(f"the file's process sent a reply that is not data while {during}")
        return reply

    def ask(self, request: dict[str, Any], during: str) -> dict[str, Any]:
        stdin = self.process.stdin
        assert stdin is not None  # opened with PIPE
        try:
            stdin.write(json.dumps(request, allow_nan=False).encode("utf-8") + b"\n")
            stdin.flush()
        except BrokenPipeError:
            raise Aborted(f"the file exited before {during}") from None
        return self.receive(during)

    def close(self) -> None:
        with suppress(ProcessLookupError):  # already gone
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with suppress(BrokenPipeError):  # the child is gone: nothing left to flush
                    stream.close()


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
    """A function of the student's file: calling it is a request to the child."""

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
    """The student's module as the checker sees it: `module.NAME` is a request to the child,
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
def sandboxed(path: Path, limits: Limits = DEFAULT_LIMITS) -> Iterator[RemoteModule]:
    """The student's file at `path`, loaded in a child process: the `load` of `run_check`.

    Raises what `load_student_file` raises (NotStarted, StudentError) from the child's report,
    and Aborted when the child exits, runs out of time or breaks the protocol. The child is
    killed on the way out, whatever happened."""
    sandbox = Sandbox(path, limits)
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
