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
previous run.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from course import __version__
from course.paths import REPO_ROOT, display_path, sha256_file
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
    path = Path(path)
    refuse_existing(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{path.name[:64]}{PARTIAL}", dir=path.parent))
    except OSError as err:
        raise _cannot_write(path, err) from None
    try:
        for name, content in files.items():
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


def read_files(path: Path | str) -> RunFiles:
    """Every file of a run folder as bytes, keyed by its posix path inside the folder."""
    root = Path(path)
    if not root.is_dir():
        raise RunError(f"{display_path(root)} is not a run folder")
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def read_json(path: Path | str, name: str) -> dict[str, Any]:
    """Read `name` (for example `manifest.json`) from the run folder `path`."""
    file = Path(path) / name
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{display_path(file)} is missing: is {display_path(Path(path))} "
                       "a run folder?") from None
    except json.JSONDecodeError as err:
        raise RunError(f"{display_path(file)}:{err.lineno}: invalid JSON: {err.msg}") from None


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
