#!/usr/bin/env bash
# Set up, build the site strictly (every lab notebook executed), then serve it on
# http://127.0.0.1:8000 with live reload. `bash scripts/site.sh --build` builds into site/ and stops.
# Served with --dirty: saving a page rebuilds that page alone (about a second), and the labs are
# executed once, then cached; a change to mkdocs.yml, src/, data/ or runs/ rebuilds every page
# (site_hooks/serve.py). benchmarks/bench_edit_loop.py measures it.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=dev bash scripts/setup.sh
bash scripts/build_site.sh
if [ "${1:-}" != "--build" ]; then
  echo "site: serving on http://127.0.0.1:8000 (Ctrl-C to stop)"
  NO_MKDOCS_2_WARNING=1 exec .venv/bin/mkdocs serve --dirty --dev-addr 127.0.0.1:8000
fi
