"""The teacher's edit loop: `mkdocs serve --dirty` fast, and still correct.

`scripts/site.sh` serves the site with `mkdocs serve --dirty`, so saving a lesson rebuilds that
page alone and the browser reloads about a second later (benchmarks/bench_edit_loop.py). Three
things make that both fast and safe, and only under `mkdocs serve`; `mkdocs build` (the strict
build, CI) is left exactly as it is, except that it can never read a cache:

- executed labs are cached (mkdocs-jupyter's cache), keyed by each lab's bytes and by every
  byte of src/, data/ and runs/, which a lab reads (`on_config`, `on_post_build`);
- a change outside docs/ (mkdocs.yml, the code, the data, a run) rebuilds every page, since any
  page may depend on it (`on_pre_build`);
- pages generated from text (the run pages) are rebuilt only when their text changes
  (`on_files`), or mkdocs would rebuild them, and list them in the search index again, at
  every save.

The package is imported once per mkdocs process: after editing src/course_site/, restart.

Why a module: `mkdocs serve --dirty` rebuilds only changed pages but knows nothing of what a page
reads outside docs/ (the code, the data, the runs) nor of mkdocs-jupyter's cache.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File, Files
from mkdocs.utils import clean_directory

log = get_plugin_logger(__name__)


LAB_INPUTS = ("src", "data", "runs")
"""What a lab (or a page's Python block, course_site/outputs.py) reads besides its own source:
the course package, its data, the saved runs."""
SITE_INPUTS = ("mkdocs.yml", *LAB_INPUTS)
"""What the pages are built from outside docs/ (the nav, snippets, run pages, the API page)."""
LAB_CACHE = Path(".cache") / "mkdocs-jupyter"
"""Executed labs under `mkdocs serve`, in one folder per state of LAB_INPUTS."""
PAGE_CACHE = Path(".cache") / "generated-pages"
"""The text of each generated page (a run page) at the last `serve --dirty` build."""


_session = SimpleNamespace(serving=False, dirty=False, site_inputs="")
"""What this mkdocs process was started for (`mkdocs serve`? `serve --dirty`?), and the digest of
SITE_INPUTS at its previous build ("" before the first): the module lives as long as the
process."""


def tree_digest(root: Path, names: Iterable[str]) -> str:
    """SHA-256 over every file under `root/<name>` (a file or a folder): its path and bytes."""
    digest = hashlib.sha256()
    for name in names:
        top = root / name
        for path in [top] if top.is_file() else sorted(top.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                data = path.read_bytes()
                digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
                digest.update(data)
    return digest.hexdigest()


def without_dirty_warning(record: logging.LogRecord) -> bool:
    """A logging filter: mkdocs warns on every `--dirty` build that the navigation may be
    inaccurate. `on_pre_build` rebuilds every page when the nav (or anything outside docs/)
    changes, so the warning is dropped, and `on_startup` says once what a save rebuilds."""
    return not record.getMessage().startswith("A 'dirty' build is being performed")


def on_startup(command: str, dirty: bool) -> None:
    _session.serving = command == "serve"
    _session.dirty = _session.serving and dirty
    if _session.dirty:
        logging.getLogger("mkdocs.commands.build").addFilter(without_dirty_warning)
        log.info("serve --dirty: saving a page rebuilds that page; a change to mkdocs.yml, src/, "
                 "data/ or runs/ rebuilds every page")


SHARED_BUILD = "COURSE_BUILD_CACHE"
"""The environment variable naming a fresh folder that the builds of one command share:
`scripts/site.sh --both` makes it, builds the student edition (which writes there what each
block printed and each executed lab), then the teacher edition (which reads them: the same
code on the same inputs prints the same), and deletes it. A build alone never has one."""


def cache_folder(config: MkDocsConfig, cache: Path) -> Path | None:
    """Under `mkdocs serve`, the folder of the cache `cache` (under the repository) for today's
    state of LAB_INPUTS, its folders for other states deleted (what they hold can never be shown
    again); under the builds of one command, the same folder in the one they share
    (SHARED_BUILD); None under `mkdocs build` alone, which never reads a cache."""
    shared = os.environ.get(SHARED_BUILD)
    if not (_session.serving or shared):
        return None
    root = Path(config.config_file_path).parent
    folder = Path(shared or root) / cache / tree_digest(root, LAB_INPUTS)[:16]
    for stale in folder.parent.glob("*"):
        if stale.is_dir() and stale != folder:
            shutil.rmtree(stale)
    return folder


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """`mkdocs build` executes every lab, always: a lab must run against today's code, and a
    cache keyed on the notebook's bytes would miss a change to src/. So under `mkdocs serve` (and
    the builds of one command) the cache folder's name is the digest of LAB_INPUTS: a change to
    the code re-runs the labs."""
    plugin = config.plugins["mkdocs-jupyter"]
    folder = cache_folder(config, LAB_CACHE)
    plugin.config["cache"] = folder is not None     # whatever mkdocs.yml says
    if folder is not None:
        plugin.config["cache_dir"] = str(folder)
    return config


def on_pre_build(config: MkDocsConfig) -> None:
    """Under `serve --dirty` a page is rebuilt only when its own file changed. After a change
    outside docs/ (the nav, the code, the data, a run) any page may be stale, so that build
    starts from an empty site folder, as a full build does."""
    if not _session.dirty:
        return
    inputs = tree_digest(Path(config.config_file_path).parent, SITE_INPUTS)
    if _session.site_inputs and inputs != _session.site_inputs:
        log.info("mkdocs.yml, src/, data/ or runs/ changed: rebuilding every page")
        clean_directory(config.site_dir)
    _session.site_inputs = inputs


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Under `serve --dirty`, mkdocs rebuilds every page generated from text (the run pages) at
    each save, having no file date to compare: about a second, and Material's search index then
    lists them once more. So each is read from a copy of its text under PAGE_CACHE, rewritten
    only when the text changed: an unchanged page keeps an old date, and is not rebuilt."""
    if not _session.dirty:
        return files
    root = Path(config.config_file_path).parent
    for file in [f for f in files if f.abs_src_path is None and f.is_documentation_page()]:
        copy = root / PAGE_CACHE / file.src_uri
        if not copy.is_file() or copy.read_bytes() != file.content_bytes:
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(file.content_bytes)
        files.remove(file)
        files.append(File.generated(config, file.src_uri, abs_src_path=str(copy),
                                    inclusion=file.inclusion))
    return files


def on_post_build(config: MkDocsConfig) -> None:
    """mkdocs-jupyter ends a build by deleting the cached labs that the build did not render.
    A `--dirty` build renders no lab but a saved one, so under `serve --dirty` that clean-up is
    skipped and the cache keeps every lab for the next session (`on_config` deletes the folders
    of other states of LAB_INPUTS)."""
    if _session.dirty:
        config.plugins["mkdocs-jupyter"].config["cache"] = False
