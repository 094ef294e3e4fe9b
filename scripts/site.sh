#!/usr/bin/env bash
# Set up, then serve the site on http://127.0.0.1:8000 with live reload, after one strict build
# (every lab notebook and every block executed once: `mkdocs serve --strict` stops at the first
# warning before it serves anything). `bash scripts/site.sh --build` builds into site/ and stops.
# Served with --dirty: saving a page rebuilds that page alone (about a second), and the labs are
# executed once, then cached; a change to mkdocs.yml, src/, data/ or runs/ rebuilds every page
# (src/course_site/serve.py). benchmarks/bench_edit_loop.py measures it.
#
# Two editions (src/course_site/editions.py): the student edition by default, without the teacher
# blocks and the teacher's guide; `--teacher` builds the teacher edition (everything, each page
# marked) into site-teacher/ and serves that: `bash scripts/site.sh --teacher [--build]`.
# `--both` builds both editions, site/ and site-teacher/, in one command that runs each block
# and each lab once (scripts/build_site.sh --both says how).
# `--print` builds both editions, then prints two PDFs into print/ with Debian's Chromium: the
# course (the student edition) and the teacher's handouts (src/course_site/print_edition.py
# says what each holds).
set -euo pipefail
cd "$(dirname "$0")/.."
serve=true
both=false
print=false
site_dir=site
for option in "$@"; do
  case "$option" in
    --build) serve=false ;;
    --teacher) export COURSE_EDITION=teacher; site_dir=site-teacher ;;
    --both) both=true; serve=false ;;
    --print) print=true; both=true; serve=false ;;
    *) echo "site: unknown option '$option' (options: --build, --teacher, --both, --print)" >&2
       exit 2 ;;
  esac
done
if [ "$both" = true ] && [ "${COURSE_EDITION:-}" = teacher ]; then
  echo "site: --both and --print build the teacher edition already; leave out --teacher" >&2
  exit 2
fi
EXTRAS=dev bash scripts/setup.sh
if [ "$print" = true ]; then
  bash scripts/build_site.sh --both
  .venv/bin/python -m course_site.print_edition book site print/course.pdf
  exec .venv/bin/python -m course_site.print_edition handouts site-teacher \
    print/teacher-handouts.pdf
fi
if [ "$both" = true ]; then
  exec bash scripts/build_site.sh --both
fi
if [ "$serve" = false ]; then
  exec bash scripts/build_site.sh --site-dir "$site_dir"
fi
echo "site: a strict build of the ${COURSE_EDITION:-student} edition, then it is served on" \
     "http://127.0.0.1:8000 (Ctrl-C to stop)"
NO_MKDOCS_2_WARNING=1 exec .venv/bin/mkdocs serve --strict --dirty --dev-addr 127.0.0.1:8000
