#!/usr/bin/env bash
# Install everything the course needs, idempotently:
#   .venv/         Python 3.11+ virtual environment with the `course` package (editable) and the
#                  extras named by $EXTRAS (default: dev = site + tests + tokenizer + math-verify),
#                  pinned by constraints.txt;
#   node_modules/  the site's front-end assets (Mermaid, MathJax, Pyodide) at the versions pinned in
#                  package-lock.json, so the site never needs a CDN.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${EXTRAS:-dev}"
python="${PYTHON:-python3}"

# npm fetches the front-end assets while the Python packages are installed.
npm_pid=""
if [ -f package-lock.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: installing front-end assets with npm ci (alongside the Python packages)"
    npm ci --no-audit --no-fund --loglevel=error &
    npm_pid=$!
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$python" --version)"
  "$python" -m venv .venv
fi
stamp=".venv/.installed-$extras"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  echo "setup: installing the course package with extras [$extras]," \
       "$(grep -c '==' constraints.txt) packages pinned by constraints.txt"
  # uv (from PyPI, pinned in constraints.txt) downloads, installs and compiles the packages in
  # parallel: about 9 s on a fresh 2-core machine, where pip took 33 s. pip is the fallback
  # where no uv wheel exists for the machine (then the install takes a few minutes). The
  # modules are compiled as they are installed: a machine that sets PYTHONDONTWRITEBYTECODE
  # (this one's image does) would otherwise compile numpy and matplotlib in every process.
  if .venv/bin/python -m pip install -q --disable-pip-version-check \
       "$(grep '^uv==' constraints.txt)" 2>/dev/null; then
    .venv/bin/uv pip install --quiet --python .venv/bin/python --compile-bytecode \
      -c constraints.txt -e ".[$extras]"
  else
    echo "setup: no uv for this machine; pip installs instead (a few minutes, a line per package)"
    .venv/bin/python -m pip install --disable-pip-version-check --progress-bar on \
      -c constraints.txt -e ".[$extras]"
  fi
  touch "$stamp"
fi

if [ -n "$npm_pid" ]; then
  wait "$npm_pid" || { echo "setup: npm ci failed (see above)" >&2; exit 1; }
fi
