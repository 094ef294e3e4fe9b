"""Where things live in the repository, and how a file is named and identified in a record.

Every module that reads or writes a course file gets its folders from here, names a file in a
message with `display_path` (repository-relative, so messages and manifests are the same on
every machine), and pins a file's content with `sha256_file`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository checkout this package was installed from (an editable install)."""
DATA_DIR = REPO_ROOT / "data"
"""Problems, frozen rollouts, selection packs, golden sets, kata, provenance."""
RUNS_DIR = REPO_ROOT / "runs"
"""The canonical run folders, each rebuilt byte for byte by `course runs verify`."""


def display_path(path: Path | str) -> str:
    """A path relative to the repository when it is inside it, for short, stable messages.

    Total: every command names its files through here, so a path that cannot be resolved (a
    symbolic-link loop such as `ln -s L L`, which `Path.resolve` reports as a RuntimeError,
    or a component it may not read) is named as it was given, made absolute without following
    links, never turned into a traceback."""
    try:
        resolved = Path(path).resolve()
    except (RuntimeError, OSError):
        resolved = Path(os.path.abspath(path))
    try:
        return resolved.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def sha256_bytes(content: bytes) -> str:
    """Hex sha256 of some bytes: the identity of a file's content."""
    return hashlib.sha256(content).hexdigest()


def sha256_file(path: Path | str) -> str:
    """Hex sha256 of a file's bytes: the identity of a dataset version in every manifest."""
    return sha256_bytes(Path(path).read_bytes())
