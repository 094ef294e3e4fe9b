#!/usr/bin/env bash
# Set up everything, then run every check a teacher relies on:
#   ruff; mypy on src/ and benchmarks/; the data regenerates byte for byte; every canonical
#   run regenerates byte for byte (alongside the linters and pytest); pytest: unit, property,
#   docs code blocks (incl. README), the strict site build (once: the site tests share it,
#   tests/site/shared_site.py), the copy-paste test and the browser tests (Playwright driving
#   Debian's chromium).
# pytest runs in as many processes as the machine has cores (pytest-xdist), beside the two of
# `course runs verify`; work-stealing keeps them busy to the end. One process more than the
# cores starved the browsers: their waits poll while they wait, and the fresh-clone command
# took 355 to 370 s against 336 s with one per core (benchmarks/bench_test_command.py, on
# 2 cores). Each part is stamped with the seconds since the start; the benchmark reads them.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS=dev bash scripts/setup.sh

# numpy's BLAS on one thread in every process: the pytest workers and `course runs verify`
# already use every core, and a second BLAS thread per process only competes with them (the
# tiny transformer's tests took 2 to 3 times as long with two); the runs are byte-identical
# either way (`course runs verify` checked on one thread), and the tiny transformer's
# pre-training is reproducible byte for byte on one (scripts/pretrain_tiny_lm.py). Only
# OpenBLAS's own variable (numpy's wheels bundle OpenBLAS): `nproc` obeys OMP_NUM_THREADS, and
# with it set pytest below ran in one process instead of one per core (578 s instead of 340).
export OPENBLAS_NUM_THREADS=1

# Two Debian packages: chromium for the browser tests (never a browser downloaded by
# Playwright), and bubblewrap, which seals each student's file off when `course grade` runs it
# (course.isolation; the grading tests try a hostile class against it).
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null || missing+=(bubblewrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test: installing Debian's ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# A machine may run Python with PYTHONDONTWRITEBYTECODE set (this one's image does): then no
# process writes .pyc files, and every `course` command a test runs would compile the course's
# modules again. pip compiled the installed packages; the course's own are compiled here, once.
.venv/bin/python -m compileall -q -j 0 src tests benchmarks >/dev/null

# The runs are rebuilt while the linters and pytest run: ruff and mypy use one core, pytest
# spends much of its time waiting on the browser, so the work together finishes sooner than one
# part after the other (measured on a fresh clone on 2 cores). Its report is printed after
# pytest's; either failing fails the test command, and a lint failure stops it too.
echo "test: course runs verify (alongside the rest; its report follows pytest's)"
verify_log=$(mktemp)
# `timeout`: a backstop for a hang, five times the longest it took on a busy machine (about
# 550 s); pytest's own backstop is a time limit on every test (pyproject.toml).
(
  timeout --kill-after=30 3000 .venv/bin/course runs verify
) >"$verify_log" 2>&1 &
verify_pid=$!
trap 'kill "$verify_pid" 2>/dev/null || true; rm -f "$verify_log"' EXIT

echo "test: ruff (set up after ${SECONDS} s)"
# teacher/ is linted where it exists: the students' copy (scripts/student_copy.sh) has none.
lint=(src tests benchmarks workspace scripts)
[ -d teacher ] && lint+=(teacher)
.venv/bin/ruff check "${lint[@]}"
echo "test: mypy"
.venv/bin/mypy
echo "test: course data check"
.venv/bin/course data check
echo "test: pytest (from ${SECONDS} s)"
pytest_status=0
workers=$(nproc)
# --durations: the slowest tests, so that the next change to the budget starts from them.
.venv/bin/pytest -p no:cacheprovider --numprocesses "$workers" --dist worksteal \
  --durations=15 "$@" || pytest_status=$?
echo "test: pytest ended at ${SECONDS} s"
verify_status=0
wait "$verify_pid" || verify_status=$?
echo "test: course runs verify"
cat "$verify_log"
echo "test: done in ${SECONDS} s"
if [ "$pytest_status" -ne 0 ] || [ "$verify_status" -ne 0 ]; then
  echo "test: FAILED (pytest exit $pytest_status, course runs verify exit $verify_status)" >&2
  exit 1
fi
