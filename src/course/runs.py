"""Saving runs: a folder per run, written whole or not at all, with a manifest that pins it.

A run folder is the unit of evidence in this course. Every loop (evaluation, selection, the
learning toys) turns its result into a dict `{file name: bytes}`; this module writes that dict
as a folder under `runs/`:

- atomically: into a hidden temporary sibling first, then one `rename`, so an interrupted run
  leaves nothing behind and a reader never sees half a folder;
- never over an existing run: measurements are not edited after the fact;
- reproducibly: JSON is written with a fixed layout, and no wall-clock time is recorded unless
  `SOURCE_DATE_EPOCH` says which time to write.

The manifest records what a later comparison needs to know: scorer version, inputs with their
sha256, prompt version, sampling settings, seed, the config, and the one change versus the
previous run. A sealed run (`sealed`: Loop A runs and their comparisons) also records the sha256
of each of its other files and of its manifest's own fields, so that an edit after the fact
shows (`unsealed`), unless whoever made it recomputed the hashes: a seal proves consistency,
not origin (`FIELDS_SEAL`).

Reading a run back is total (`open_file`, `read_json`, `read_files`): every way a folder can be
broken or tampered with (a missing file, a manifest that is not a JSON object, bytes that are
not UTF-8, a byte order mark, nesting too deep, a symbolic link, a FIFO, a stray empty folder)
is a `RunError` of one line that names the file, never a traceback; links are never followed.
"""

from __future__ import annotations

import codecs
import ctypes
import errno
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

from course import __version__, data
from course.jsonfiles import json_bytes
from course.paths import REPO_ROOT, display_path, sha256_bytes, sha256_file
from course.scorer import SCORER_VERSION

RunFiles = dict[str, bytes]
"""A run before it is written: relative file name -> exact bytes."""


class RunError(RuntimeError):
    """A run cannot be written, read or compared; the message says which and why."""


def git_commit() -> str | None:
    """The current commit of the repository, with `+dirty` if files differ; None outside git."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+dirty" if dirty.strip() else "")


def created_at() -> str | None:
    """The time to record, from `SOURCE_DATE_EPOCH` only (reproducible builds); else None."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return None
    return datetime.fromtimestamp(int(epoch), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def manifest(*, kind: str, note: str, config: Mapping[str, Any],
             inputs: Mapping[str, Path] | None = None, seed: int | None = None,
             prompt_version: str | None = None, sampling: Mapping[str, Any] | None = None,
             origin: Mapping[str, Any] | None = None, record_git: bool = True,
             scorer_version: str = SCORER_VERSION) -> dict[str, Any]:
    """Build a run manifest.

    Args:
        kind: which loop or toy made the run (`"eval"`, `"selection"`, `"bandit"`, ...).
        note: the one change versus the previous run, in a sentence. Required: a run without it
            cannot be placed in the experiment log.
        config: the full configuration that produced the run (JSON-serialisable).
        inputs: named input files; each is recorded with its repository path and sha256.
        seed: the random seed, for runs that sample.
        prompt_version: the version of the prompt template behind the completions.
        sampling: the sampling settings behind the completions (temperature, top_p, N, ...).
        origin: who made the completions, when that is not pinned by `data/provenance.json`
            (`data.manifest_origin`): recorded under `origin`; left out when None.
        record_git: record where and when the run was made: the git commit and, when
            `SOURCE_DATE_EPOCH` is set, that time. Canonical runs set this to False: a committed
            artifact cannot contain the commit that contains it, and its bytes must not depend on
            the environment, so they are pinned by content (input hashes, scorer version,
            config) instead.
        scorer_version: the instrument behind the run's numbers; `strict-v1` unless a run was
            scored with another version (`course eval --scorer`).
    """
    if not note or not note.strip():
        raise RunError("a run needs a note: the one change versus the previous run")
    record: dict[str, Any] = {
        "kind": kind,
        "note": note.strip(),
        "scorer_version": scorer_version,
        "course_version": __version__,
        "inputs": {name: {"path": display_path(path), "sha256": sha256_file(path)}
                   for name, path in (inputs or {}).items()},
        "prompt_version": prompt_version,
        "sampling": dict(sampling) if sampling is not None else None,
        "seed": seed,
        "config": dict(config),
        "git_commit": git_commit() if record_git else None,
    }
    if origin is not None:
        record["origin"] = dict(origin)
    if record_git and (when := created_at()) is not None:
        record["created"] = when
    return record


def refuse_existing(path: Path) -> None:
    """Raise `RunError` if `path` exists (a dangling symbolic link counts): a run folder is
    never overwritten."""
    if os.path.lexists(path):
        raise RunError(f"{display_path(path)} already exists: runs are never overwritten; "
                       "choose a new run folder (for example the next run_00N)")


PARTIAL = ".partial-"
"""Marks a staging folder: `.<run name>.partial-<random>` beside the run being written."""


def write_run(path: Path | str, files: Mapping[str, bytes]) -> Path:
    """Write `files` as the run folder `path`, atomically; refuse to overwrite.

    The folder appears complete or not at all: files go to a hidden staging sibling, which is
    then renamed into place by a rename that fails if anything, even an empty folder, took the
    name meanwhile (`_rename_no_replace`). If anything fails, the staging folder is removed and
    the error becomes a `RunError` naming the folder. The folder gets the usual permissions
    (the user's umask), not the private 0700 of a temporary folder. Only a `kill -9` can leave
    a staging folder behind; `leftover_partials` finds those.
    """
    return _write(Path(path), lambda staging: files)


def write_streamed_run(path: Path | str, name: str,
                       produce: Callable[[BinaryIO], Mapping[str, bytes]]) -> Path:
    """`write_run` for a run with one file too large to hold in memory (the results of a
    million examples): `produce` writes the file `name` into the open staging file as it goes,
    and returns the run's other files, which are written beside it. The same guarantees: the
    folder appears whole or not at all, whatever `produce` raises."""
    def fill(staging: Path) -> Mapping[str, bytes]:
        with open(staging / name, "wb") as sink:
            return produce(sink)
    return _write(Path(path), fill)


def _write(path: Path, fill: Callable[[Path], Mapping[str, bytes]]) -> Path:
    """Make the staging folder, let `fill` write into it and return the files left to write,
    write them, then rename the folder into place (`write_run`)."""
    refuse_existing(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{path.name[:64]}{PARTIAL}", dir=path.parent))
    except OSError as err:
        raise _cannot_write(path, err) from None
    try:
        for name, content in fill(staging).items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        os.chmod(staging, 0o777 & ~_umask())
        _rename_no_replace(staging, path)
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(err, FileExistsError) or err.errno == errno.ENOTEMPTY:
            refuse_existing(path)  # another writer got there first: say it as usual
        raise _cannot_write(path, err) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return path


def _cannot_write(path: Path, err: OSError) -> RunError:
    where = f" ({err.filename})" if err.filename not in (None, str(path)) else ""
    return RunError(f"cannot write the run folder {display_path(path)}: "
                    f"{err.strerror or err}{where}")


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


_RENAME_NOREPLACE = 1
_AT_FDCWD = -100
_renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
if _renameat2 is not None:
    _renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint)


def _rename_no_replace(source: Path, target: Path) -> None:
    """Move `source` to `target`, failing with `FileExistsError` if `target` exists.

    Plain `os.rename` silently replaces an EMPTY folder at `target`. Linux's renameat2 with
    RENAME_NOREPLACE refuses atomically; where it is missing or unsupported, the name is first
    claimed with `os.mkdir` (which fails if it exists) and the claim is then swapped.
    """
    if _renameat2 is not None:
        if _renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target),
                      _RENAME_NOREPLACE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS):
            raise OSError(code, os.strerror(code), str(target))
    os.mkdir(target)
    os.rename(source, target)


def leftover_partials(root: Path | str) -> list[Path]:
    """Staging folders under `root` left by a write that was killed before it finished."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir()
                  if p.is_dir() and p.name.startswith(".") and PARTIAL in p.name)


# -- reading a run back: totally, never through a link ----------------------------------------

def file_error(file: Path | str, line: int | None, field: str | None, problem: str) -> RunError:
    """A `RunError` laid out like a `course.data.DataError`: `FILE[:LINE]: [field 'F': ]problem`.
    `file` is a `Path` (shown with `display_path`) or a `str` already shown (`shown`)."""
    where = (file if isinstance(file, str) else display_path(file)) + (
        f":{line}" if line is not None else "")
    what = f"field '{field}': " if field else ""
    return RunError(f"{where}: {what}{problem}")


def shown(root: Path, name: str) -> str:
    """The file `name` of the run folder `root`, as a message names it: the folder through
    `display_path`, the name as it is, so that a link is named as itself, never resolved to
    where it points (nor, for a looping link, resolved at all)."""
    return f"{display_path(root)}/{name}"


def _kind(mode: int) -> str:
    """What a non-regular file is, for a message."""
    kinds = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
             (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def plain_name(name: str) -> bool:
    """Whether `name` can name a file inside a run folder: a relative posix path without
    `.`, `..`, empty parts or backslashes (the names `write_run` writes)."""
    parts = name.split("/")
    return (bool(name) and "\\" not in name and "\0" not in name
            and all(part not in ("", ".", "..") for part in parts))


_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""A run's file is opened without following a final symbolic link and without blocking on a
FIFO; `open_file` then checks that what it opened is a regular file."""


def open_file(path: Path | str, name: str) -> io.BufferedReader:
    """Open the regular file `name` (a posix path, `plain_name`) inside the run folder `path`.

    Every part of `name` is opened relative to the folder it is in, never through a symbolic
    link; the file must be a regular file (not a FIFO, which would block, nor a device). The
    run folder `path` itself may be reached through links: that is the user's choice of path.
    Raises `RunError` naming the file for every way this fails.
    """
    root = Path(path)
    file = shown(root, name)
    if not plain_name(name):
        raise file_error(file, None, None, "not a plain file name inside a run folder")
    parts = name.split("/")
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise RunError(f"{file} is missing: is {display_path(root)} a run folder?") from None
    except OSError as err:
        raise RunError(f"{display_path(root)} is not a run folder "
                       f"({err.strerror or err})") from None
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                            dir_fd=folder)
            os.close(folder)
            folder = inner
        fd = os.open(parts[-1], _OPEN_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        raise RunError(f"{file} is missing: is {display_path(root)} a run folder?") from None
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):  # what Linux says of a link here
            raise file_error(file, None, None, "is a symbolic link, or lies under one (or under "
                             "a file): a run's files are never links, so it is not followed"
                             ) from None
        raise file_error(file, None, None, f"cannot be read ({err.strerror or err})") from None
    finally:
        os.close(folder)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise file_error(file, None, None, f"is {_kind(mode)}, not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_bytes(path: Path | str, name: str) -> bytes:
    """The bytes of the regular file `name` inside the run folder `path` (`open_file`)."""
    with open_file(path, name) as stream:
        return stream.read()


def decode_json(raw: bytes, file: Path, line: int | None = None) -> Any:
    """One JSON value from the bytes of `file` (or of its line `line`), or a `RunError` naming
    the file and line: a byte order mark, bytes that are not UTF-8, and everything
    `course.data.parse_json` refuses (invalid JSON, a key given twice, nesting too deep, an
    integer of over 4,300 digits)."""
    if raw.startswith(codecs.BOM_UTF8):
        raise file_error(file, line or 1, None, "starts with a byte order mark (U+FEFF); "
                         "save it as UTF-8 without one")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        where = line if line is not None else raw.count(b"\n", 0, err.start) + 1
        of = " of the line" if line is not None else ""
        raise file_error(file, where, None, f"not valid UTF-8 ({err.reason} at byte "
                         f"{err.start}{of})") from None
    try:
        return data.parse_json(text, file, line)
    except data.DataError as err:
        raise RunError(str(err)) from None


def read_json(path: Path | str, name: str) -> dict[str, Any]:
    """The JSON object in the file `name` (for example `manifest.json`) of the run folder
    `path`; `RunError` naming the file (and line) if it is missing, not a regular file, not
    UTF-8, not JSON (`decode_json`) or not an object."""
    file = Path(path) / name
    value = decode_json(read_bytes(path, name), file)
    if not isinstance(value, dict):
        raise file_error(file, None, None, f"expected a JSON object, got {type(value).__name__}")
    return value


STRANGE_SHOWN = 5
"""Entries named in `read_files`'s error, before "and N more"."""


def read_files(path: Path | str) -> RunFiles:
    """Every file of a run folder as bytes, keyed by its posix path inside the folder.

    Total and tamper-evident: anything a run writer never makes (a symbolic link, even to
    identical bytes; a FIFO, socket or device; an empty folder) is reported, never followed
    or skipped, in one `RunError` that names each entry (a looping folder is a link, so it is
    never entered). The folder itself must not be a link either.
    """
    root = Path(path)
    if root.is_symlink():
        raise RunError(f"{display_path(root)} is a symbolic link: a run folder is never a link")
    if not root.is_dir():
        raise RunError(f"{display_path(root)} is not a run folder")
    files: RunFiles = {}
    strange: list[str] = []
    folders = [""]
    while folders:  # a stack, not recursion: a deep tree of folders is just a long loop
        prefix = folders.pop()
        try:
            with os.scandir(root / prefix) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as err:
            strange.append(f"{prefix.rstrip('/') or '.'} cannot be listed "
                           f"({err.strerror or err})")
            continue
        if not entries and prefix:
            strange.append(f"{prefix.rstrip('/')} is an empty folder")
        for entry in entries:
            name = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(name + "/")
                elif entry.is_file(follow_symlinks=False):
                    files[name] = read_bytes(root, name)
                else:
                    strange.append(f"{name} is {_kind(entry.stat(follow_symlinks=False).st_mode)}")
            except RunError as err:
                strange.append(str(err))
            except OSError as err:
                strange.append(f"{name} cannot be read ({err.strerror or err})")
    if strange:
        more = len(strange) - STRANGE_SHOWN
        raise RunError(f"{display_path(root)} holds what no run writer makes: "
                       + "; ".join(strange[:STRANGE_SHOWN])
                       + (f"; and {more} more" if more > 0 else ""))
    return dict(sorted(files.items()))


# -- the seal: each file's sha256 and the manifest's own fields --------------------------------

SEAL = "files"
"""The manifest field that seals a run's files: `{file name: sha256}` for every other file of
the run (the manifest cannot hold its own hash). Written by `sealed`, checked by `unsealed`."""

FIELDS_SEAL = "seal"
"""The manifest field that seals the manifest itself: the sha256 of every other field of the
manifest, `files` included, as `json_bytes` writes them (`fields_digest`). So an edit to the
scorer version, the sampling settings or a file's recorded sha256 shows too.

What a seal proves, and what it does not: it is an unkeyed hash kept inside the folder it
seals, so it proves that the folder is CONSISTENT (no file or field was changed without the
hashes being recomputed), not where the folder came from: whoever edits a run can recompute
every hash. What proves the rewards is re-scoring each result line with the scorer version
its manifest names (`course.locked_room.read_results`)."""


def fields_digest(record: Mapping[str, Any]) -> str:
    """The sha256 that `FIELDS_SEAL` records for the manifest `record`: of its fields but the
    seal itself, written as `json_bytes` writes a manifest."""
    return sha256_bytes(json_bytes({k: v for k, v in record.items() if k != FIELDS_SEAL}))


def sealed(record: Mapping[str, Any], files: Mapping[str, bytes],
           streamed: Mapping[str, str] | None = None) -> RunFiles:
    """`files` plus `manifest.json`: the manifest `record` with `files` (`SEAL`), the sha256
    of every file in `files` and, for a file written as a stream (`write_streamed_run`), the
    sha256 given in `streamed`, by name in sorted order; then, last, `seal` (`FIELDS_SEAL`),
    the sha256 of all the manifest's other fields."""
    if "manifest.json" in files or "manifest.json" in (streamed or {}):
        raise ValueError("`files` must not hold the manifest it is sealed by")
    digests = {**{name: sha256_bytes(content) for name, content in files.items()},
               **(streamed or {})}
    whole = {**record, SEAL: {name: digests[name] for name in sorted(digests)}}
    return dict(sorted({**files, "manifest.json": json_bytes(
        {**whole, FIELDS_SEAL: fields_digest(whole)})}.items()))


_HEX = frozenset("0123456789abcdef")


def _is_sha256(value: Any) -> TypeGuard[str]:
    """Whether `value` is a sha256 as a seal records it: 64 lowercase hex digits."""
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def unsealed(path: Path | str, manifest: Mapping[str, Any] | None = None) -> list[str]:
    """What no longer matches the seal of the run folder `path`, one line each: the manifest's
    own fields (`FIELDS_SEAL`), then each file whose bytes differ from the sha256 the manifest
    records (`SEAL`); [] when everything matches, or when the manifest seals nothing (run
    kinds that do not record file hashes). Files are hashed as streams and opened with
    `open_file` (never through a link). A seal that is not `{name: 64 hex digits}` raises
    `RunError`."""
    root = Path(path)
    manifest = read_json(root, "manifest.json") if manifest is None else manifest
    if SEAL not in manifest:
        return []
    seal, where = manifest[SEAL], root / "manifest.json"
    if not isinstance(seal, dict):
        raise file_error(where, None, SEAL, f"must be an object {{file name: sha256}}, got "
                         f"{type(seal).__name__}")
    problems = []
    recorded = manifest.get(FIELDS_SEAL)
    if not _is_sha256(recorded):
        problems.append(str(file_error(
            shown(root, "manifest.json"), None, FIELDS_SEAL, "missing or not a sha256: the "
            "manifest's own fields are not sealed (a run written before seals covered them, "
            "or an edited manifest); make the run again")))
    elif (actual := fields_digest(manifest)) != recorded:
        problems.append(str(file_error(
            shown(root, "manifest.json"), None, FIELDS_SEAL, f"the manifest's fields hash to "
            f"{actual[:12]}..., not the {recorded[:12]}... it records: a field was edited "
            "after the run was written")))
    for name, expected in seal.items():
        if not _is_sha256(expected):
            raise file_error(where, None, f"{SEAL}.{name}", "must be a sha256 (64 hex digits)")
        if name == "manifest.json" or not plain_name(name):
            raise file_error(where, None, f"{SEAL}.{name}", "not a file this run can seal")
        try:
            with open_file(root, name) as stream:
                actual = hashlib.file_digest(stream, "sha256").hexdigest()
        except RunError as err:
            problems.append(str(err))
            continue
        if actual != expected:
            problems.append(f"{shown(root, name)}: sha256 {actual[:12]}... differs "
                            f"from the {expected[:12]}... that manifest.json records: the file "
                            "changed after the run was written")
    return problems


def diff_files(expected: RunFiles, actual: RunFiles) -> list[str]:
    """Human-readable differences between two runs' files; empty when byte-identical."""
    problems = []
    for name in sorted(expected.keys() | actual.keys()):
        if name not in actual:
            problems.append(f"{name}: missing from the regenerated run")
        elif name not in expected:
            problems.append(f"{name}: regenerated but not committed")
        elif expected[name] != actual[name]:
            a, b = expected[name], actual[name]
            first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                         min(len(a), len(b)))
            problems.append(f"{name}: differs from byte {first} "
                            f"(committed {len(a)} bytes, regenerated {len(b)} bytes)")
    return problems
