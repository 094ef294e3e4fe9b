#!/usr/bin/env bash
# Set up everything, then run every check a teacher relies on:
#   ruff; mypy on src/; the data regenerates byte for byte; every canonical run regenerates byte for byte;
#   pytest: unit, property, docs code blocks (incl. README), the strict site build, the
#   copy-paste test and the browser test (Playwright driving Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS=dev bash scripts/setup.sh

# The browser for the site tests is Debian's chromium, never a browser downloaded by Playwright.
if [ ! -x /usr/bin/chromium ]; then
  echo "test: installing Debian's chromium for the browser tests"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    chromium >/dev/null
fi

echo "test: ruff"
.venv/bin/ruff check src tests benchmarks site_hooks workspace teacher
echo "test: mypy"
.venv/bin/mypy
echo "test: course data check"
.venv/bin/course data check
echo "test: course runs verify"
.venv/bin/course runs verify
echo "test: pytest"
.venv/bin/pytest -p no:cacheprovider "$@"
