#!/usr/bin/env bash
# Test the one page you are editing, in seconds:
#   bash scripts/test_page.sh docs/lessons/m1-reinforce.md
# First, what the strict build would refuse (scripts/check_page.py): the page left out of the
# nav; for a Markdown page also a wrong Try-it box, a link to a missing page or anchor, and a
# lesson longer than one sitting; each one line, `page:line: what is wrong (what it is about)`.
# Then a Markdown page (a lesson, a map, the rules, ...): its Python blocks, collected as the full
# test run collects them (blocks in admonitions and tabs included: tests/conftest.py), its
# predictions and the keys of its prediction boxes (tests/site/test_predictions.py) and the
# numbers its prose quotes
# (tests/site/test_prose_numbers.py), each selected by this page's exact test id.
# A lab (docs/labs/lab_*.py): run as a script, as a student runs it; the site build executes it
# as a notebook. Exit status: 0 passed, 1 failed, 2 not a page of the site.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: bash scripts/test_page.sh docs/<page>.md | docs/labs/lab_<name>.py" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
# The page as a path from the repository root, from whichever folder this is run.
if [ ! -f "$1" ] || ! folder=$(cd "$(dirname "$1")" && pwd); then
  echo "test_page: $1: no such file" >&2
  exit 2
fi
page="$folder/$(basename "$1")"
page="${page#"$repo"/}"
cd "$repo"

start_ms=$(($(date +%s%N) / 1000000))
status=0
case "$page" in
  docs/labs/lab_*.py)
    .venv/bin/python scripts/check_page.py "$page" || status=1
    # Agg: a plt.show() in the lab must not open a window and wait.
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    if ! MPLBACKEND=Agg .venv/bin/python "$page" >"$log" 2>&1; then
      tail -n 40 "$log"
      status=1
    fi
    ;;
  docs/*.md)
    .venv/bin/python scripts/check_page.py "$page" || status=1
    # -k: each test named with this page's parameter, in brackets, so that another page's
    # test never matches (stem `index` would match five pages); markdown-docs = its blocks.
    select="markdown-docs or test_predictions_come_before_their_answers[${page#docs/}]"
    select="$select or test_prose_numbers[$page]"
    select="$select or test_each_prediction_box_finds_its_key[${page#docs/}]"
    if [[ "$page" == docs/lessons/* ]]; then
      select="$select or test_every_lesson_asks_for_predictions[$(basename "$page")]"
    fi
    tested=0
    .venv/bin/pytest -q -p no:cacheprovider "$page" tests/site/test_predictions.py \
      tests/site/test_prose_numbers.py -k "$select" || tested=$?
    if [ "$tested" -eq 5 ]; then   # pytest: no test selected
      echo "test_page: $page has no Python block and no check of its own"
    elif [ "$tested" -ne 0 ]; then
      status=1
    fi
    ;;
  *)
    echo "test_page: $page is not a page of the site (docs/**/*.md or docs/labs/lab_*.py)" >&2
    exit 2
    ;;
esac
elapsed_ms=$(($(date +%s%N) / 1000000 - start_ms))
took="$((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100)) s"
if [ "$status" -ne 0 ]; then
  echo "test_page: FAILED $page ($took)" >&2
  exit 1
fi
echo "test_page: passed $page ($took)"
