#!/usr/bin/env bash
# Install everything (Python packages, Debian's Chromium for the browser tests) and run every
# check: ruff, mypy, the test suite, then the browser tests in their own pytest process
# (Playwright's sync API must not share a process with the asyncio tests).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium >/dev/null
fi
# Tests get their own temporary HERMES_HOME (tests/settings.py), never the user's ~/.hermes.
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy .
.venv/bin/lint-imports  # the one-way layers (.importlinter)
.venv/bin/python manage.py collectstatic --noinput -v 0
.venv/bin/pytest -m "not browser" "$@"
.venv/bin/pytest -m browser tests/browser "$@"
