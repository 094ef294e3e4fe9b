#!/usr/bin/env bash
# Set up, build the site strictly (every lab notebook executed), then serve it on
# http://127.0.0.1:8000 with live reload. `bash scripts/site.sh --build` builds into site/ and stops.
# Served with --dirty: saving a page rebuilds that page alone (about a second), and the labs are
# executed once, then cached; a change to mkdocs.yml, src/, data/ or runs/ rebuilds every page
# (src/course_site/serve.py). benchmarks/bench_edit_loop.py measures it.
#
# Two editions (src/course_site/editions.py): the student edition by default, without the teacher
# blocks and the teacher's guide; `--teacher` builds the teacher edition (everything, each page
# marked) into site-teacher/ and serves that: `bash scripts/site.sh --teacher [--build]`.
set -euo pipefail
cd "$(dirname "$0")/.."
serve=true
site_dir=site
for option in "$@"; do
  case "$option" in
    --build) serve=false ;;
    --teacher) export COURSE_EDITION=teacher; site_dir=site-teacher ;;
    *) echo "site: unknown option '$option' (options: --build, --teacher)" >&2; exit 2 ;;
  esac
done
EXTRAS=dev bash scripts/setup.sh
bash scripts/build_site.sh --site-dir "$site_dir"
if [ "$serve" = true ]; then
  echo "site: serving the ${COURSE_EDITION:-student} edition on http://127.0.0.1:8000 (Ctrl-C to stop)"
  NO_MKDOCS_2_WARNING=1 exec .venv/bin/mkdocs serve --dirty --dev-addr 127.0.0.1:8000
fi
