"""Serve the site's browser libraries ourselves: Mermaid, MathJax and Pyodide from node_modules/.

The site must work with no network at all, so nothing may come from a CDN. `package.json` pins
exact versions, `package-lock.json` pins every byte, and `npm ci` puts them in node_modules/.
This module checks that what is installed is what is pinned, then adds the needed files to the
build as if they lived under docs/assets/vendor/ (so `mkdocs serve` serves them too):

- Mermaid: the one-file UMD bundle `dist/mermaid.min.js`, which defines the global `mermaid`.
  Material only fetches Mermaid from its CDN when that global is missing, and it looks on
  DOMContentLoaded, after every `extra_javascript` script has run.
- MathJax 3: the whole `es5/` folder (the `tex-chtml.js` entry point plus the fonts and
  extensions it loads by relative path, so the fonts load locally).
- Pyodide: CPython for the browser, only its five runtime files (the loader `pyodide.mjs`, the
  interpreter `pyodide.asm.mjs` and `pyodide.asm.wasm`, the standard library
  `python_stdlib.zip`, and `pyodide-lock.json`, which it reads at start). No package of its
  own (numpy and the like come from a CDN, so never here). The Try-it boxes
  (course_site/try_it.py) load it when a reader first presses a button, never with the page.

Why not Material's `privacy` plugin: it downloads external assets at build time, from the
network; here the assets come from npm's lockfile, offline.
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

# npm package -> (its folder served as assets/vendor/<package>, the files of that folder
# needed: None for all of them)
VENDORED = {
    "mermaid": ("dist", ("mermaid.min.js",)),
    "mathjax": ("es5", None),
    "pyodide": ("", ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                     "pyodide-lock.json")),
}


def check_installed(config: MkDocsConfig) -> dict[str, Path]:
    """Each vendored package's folder in node_modules/, after checking its version is the
    pinned one. Raises PluginError with the fix (`npm ci`) when missing or stale."""
    root = Path(config.config_file_path).resolve().parent
    pinned = json.loads((root / "package.json").read_text(encoding="utf-8"))["dependencies"]
    folders = {}
    for package, (subdir, _) in VENDORED.items():
        installed = root / "node_modules" / package / "package.json"
        if not installed.is_file():
            raise PluginError(f"node_modules/{package} is missing: run `npm ci` in {root} "
                              "(or `bash scripts/build_site.sh`, which does it for you)")
        version = json.loads(installed.read_text(encoding="utf-8"))["version"]
        if version != pinned[package]:
            raise PluginError(f"node_modules/{package} is {version} but package.json pins "
                              f"{pinned[package]}: run `npm ci` in {root}")
        folders[package] = root / "node_modules" / package / subdir
    return folders


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for package, folder in check_installed(config).items():
        wanted = VENDORED[package][1]
        paths = ([folder / name for name in wanted] if wanted is not None
                 else sorted(p for p in folder.rglob("*") if p.is_file()))
        for path in paths:
            src_uri = f"assets/vendor/{package}/{path.relative_to(folder).as_posix()}"
            files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    return files
