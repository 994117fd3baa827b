#!/usr/bin/env bash
# Install what running needs and start the dashboard on 127.0.0.1; the last line printed is the
# link to open. Each step says what it does first (the first run installs packages for a minute
# or so) and is quiet otherwise. Arguments go to `manage.py serve` (--port N, --access-log).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
step() { printf '==> %s\n' "$*"; }
if [ ! -x .venv/bin/python ]; then
  step "Creating the virtual environment in .venv"
  "$PY" -m venv .venv
fi
# pip runs only when requirements.txt changed since the last install into this .venv (a system
# without sha256sum runs it every time).
STAMP=.venv/.requirements.sha256
if command -v sha256sum >/dev/null && sha256sum --status -c "$STAMP" 2>/dev/null; then
  step "Python packages are up to date (requirements.txt)"
else
  step "Installing the Python packages (requirements.txt; the first run takes a minute or so)"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  if command -v sha256sum >/dev/null; then sha256sum requirements.txt >"$STAMP"; fi
fi
step "Preparing the database (migrations)"
.venv/bin/python manage.py migrate --noinput -v 0
step "Collecting the static files"
.venv/bin/python manage.py collectstatic --noinput -v 0
# `serve` says where it starts, and prints the login link once the port listens.
PYTHONUNBUFFERED=1 exec .venv/bin/python manage.py serve "$@"
