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

# npm fetches the front-end assets while pip installs the Python packages.
npm_pid=""
if [ -f package-lock.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: installing front-end assets with npm ci (alongside pip)"
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
  echo "setup: installing the course package with extras [$extras]"
  # pip prints a line per package as it downloads it (with a bar on a terminal), then installs
  # them all at once without printing: said up front, so that the pause does not look like a hang.
  if [ ! -f "$stamp" ]; then
    echo "setup: the first install downloads up to $(grep -c '==' constraints.txt) packages" \
         "pinned by constraints.txt (roughly 150 MB) and takes a few minutes; after the download" \
         "lines, 'Installing collected packages' can take a minute or two with no new line"
  fi
  # pip compiles every module it installs: that is a third of the install's time, but a Python
  # run with PYTHONDONTWRITEBYTECODE (set on some machines and CI images) never writes its own
  # .pyc files, and would compile numpy and matplotlib again in every process.
  .venv/bin/python -m pip install --disable-pip-version-check --progress-bar on \
    -c constraints.txt -e ".[$extras]"
  touch "$stamp"
fi

if [ -n "$npm_pid" ]; then
  wait "$npm_pid" || { echo "setup: npm ci failed (see above)" >&2; exit 1; }
fi
