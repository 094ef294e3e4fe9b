#!/usr/bin/env bash
# Install everything the course needs, idempotently:
#   .venv/         Python 3.11+ virtual environment with the `course` package (editable) and the
#                  extras named by $EXTRAS (default: dev = site + tests + tokenizer + math-verify),
#                  pinned by constraints.txt;
#   node_modules/  the site's front-end assets (Mermaid, MathJax) at the versions pinned in
#                  package-lock.json, so the site never needs a CDN.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${EXTRAS:-dev}"
python="${PYTHON:-python3}"

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$python" --version)"
  "$python" -m venv .venv
fi
stamp=".venv/.installed-$extras"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  echo "setup: installing the course package with extras [$extras]"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check \
    -c constraints.txt -e ".[$extras]"
  touch "$stamp"
fi

if [ -f package-lock.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: installing front-end assets with npm ci"
    npm ci --no-audit --no-fund --loglevel=error
  fi
fi
