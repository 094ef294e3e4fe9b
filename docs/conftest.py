"""pytest runs every Python block of the docs (pytest-markdown-docs): here, each one runs in an
empty temporary folder, as the site build runs it (site_hooks/outputs.py) and as a reader's
pasted block would, so a block that writes a file (`my_first_try/pick_best.py`) leaves nothing
in the repository. The site leaves this file out (`exclude_docs` in mkdocs.yml)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _in_a_scratch_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
