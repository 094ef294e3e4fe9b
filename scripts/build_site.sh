#!/usr/bin/env bash
# Build the course site into site/, strictly: any warning (broken link or anchor, a page missing
# from nav, a lab cell that raises, a docstring mkdocstrings cannot read) fails the build.
# Front-end assets (Mermaid, MathJax, Pyodide) come from node_modules/, installed here with
# `npm ci` when missing or older than package-lock.json. Expects .venv/ (scripts/setup.sh makes
# it).
# Extra arguments go to `mkdocs build` (for example: --site-dir /tmp/site). The edition is
# COURSE_EDITION's: the student edition unless it says `teacher` (src/course_site/editions.py).
#
# `--both` (alone) builds both editions, the student's into site/ and the teacher's into
# site-teacher/, running each block and each lab once: the student edition's build keeps what
# they printed and executed in a fresh folder the two builds share (COURSE_BUILD_CACHE,
# src/course_site/serve.py), the teacher edition's build reads it (the same code on the same
# inputs prints the same; a block only the teacher edition has runs there), and the folder is
# deleted at the end. About 1.2 times one edition's time instead of 2
# (benchmarks/bench_editions.py, which also checks that every page is what a build of its
# edition alone makes).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --both ]; then
  if [ $# -gt 1 ]; then
    echo "build_site: --both takes no other option (it builds into site/ and site-teacher/)" >&2
    exit 2
  fi
  shared=$(mktemp -d "${TMPDIR:-/tmp}/course-build-XXXXXX")
  trap 'rm -rf "$shared"' EXIT
  start_s=$SECONDS
  COURSE_BUILD_CACHE=$shared COURSE_EDITION=student bash "$0" --site-dir site
  COURSE_BUILD_CACHE=$shared COURSE_EDITION=teacher bash "$0" --site-dir site-teacher
  echo "build_site: both editions (site/, site-teacher/) in $((SECONDS - start_s)) s"
  exit 0
fi

if [ ! -x .venv/bin/mkdocs ]; then
  echo "build_site: .venv/bin/mkdocs is missing: run 'bash scripts/setup.sh' first" >&2
  exit 2
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "build_site: installing front-end assets with npm ci (pinned by package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error
fi

start_ms=$(($(date +%s%N) / 1000000))
# NO_MKDOCS_2_WARNING=1 hides Material's start-up notice about its future, a dozen lines on every
# build; it is said once here instead, and in the README ("The site generator's future").
echo "build_site: Material for MkDocs reaches end of life on 5 May 2027 (its notice is hidden;" \
     "README.md, 'The site generator's future', says what that means for the course)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --clean "$@"
elapsed_ms=$(($(date +%s%N) / 1000000 - start_ms))
echo "build_site: strict build (${COURSE_EDITION:-student} edition) finished in $((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100)) s"
