#!/usr/bin/env bash
# Set up, build the site strictly (every lab notebook executed), then serve it on
# http://127.0.0.1:8000 with live reload. `bash scripts/site.sh --build` builds into site/ and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev bash scripts/setup.sh
bash scripts/build_site.sh
if [ "${1:-}" != "--build" ]; then
  echo "site: serving on http://127.0.0.1:8000 (Ctrl-C to stop)"
  exec .venv/bin/mkdocs serve --dev-addr 127.0.0.1:8000
fi
