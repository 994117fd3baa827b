#!/usr/bin/env bash
# Install everything and start the dashboard on 127.0.0.1 (prints its URL).
# Each step says what it does first: the first run installs packages for a minute or so.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
step() { printf '==> %s\n' "$*"; }
# Shows the lines that say what is happening; a failing command still fails the script (pipefail).
only() { grep --line-buffered -E "$1" || true; }
if [ ! -x .venv/bin/python ]; then
  step "Creating the virtual environment in .venv"
  "$PY" -m venv .venv
fi
step "Installing the Python packages (requirements.txt; the first run takes a minute or so)"
# pip's own progress: one line per package it collects or installs, nothing for what is already there.
.venv/bin/pip install --disable-pip-version-check --progress-bar off -r requirements.txt \
  | only '^(Collecting|Installing|Successfully)'
step "Preparing the database (migrations)"
PYTHONUNBUFFERED=1 .venv/bin/python manage.py migrate --noinput -v 1 | only '^  Applying'
step "Collecting the static files"
.venv/bin/python manage.py collectstatic --noinput -v 0
step "Starting the dashboard"
exec .venv/bin/python manage.py serve "$@"
