#!/usr/bin/env bash
# Install everything (Python packages; Debian's Chromium, PostgreSQL and Redis) and run every
# check: ruff, mypy, the import layers, then the whole test suite twice, both at once — on the
# embedded default (SQLite, in-memory channel layer, review threads) and on the scale-out profile
# (PostgreSQL and Redis, started here on loopback and stopped on exit). Browser tests run in
# their own pytest process (Playwright's sync API must not share one with the asyncio tests).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
# shellcheck source=scripts/services.sh
source scripts/services.sh
ensure_packages chromium
# Tests get their own temporary HERMES_HOME (tests/settings.py), never the user's ~/.hermes.
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy .
.venv/bin/lint-imports  # the one-way layers (.importlinter)
.venv/bin/python manage.py collectstatic --noinput -v 0

# The two profiles run at once (each pytest process has its own temporary HERMES_HOME, database
# and ports): the embedded default in the background, started before the services so it sees no
# DATABASE_URL or REDIS_URL; its output is printed when both are done.
mkdir -p artifacts
SQLITE_LOG=artifacts/test-sqlite.log
echo "== the embedded default: SQLite, in-memory channel layer, review threads (output in $SQLITE_LOG)"
(
  .venv/bin/pytest -m "not browser" "$@" && .venv/bin/pytest -m browser tests/browser "$@"
) >"$SQLITE_LOG" 2>&1 &
SQLITE_PID=$!

echo "== the scale-out profile: PostgreSQL and Redis"
SERVICES=$(mktemp -d)
chmod 755 "$SERVICES"  # the postgres user runs the cluster inside it
trap 'stop_services "$SERVICES"; rm -rf "$SERVICES"' EXIT
PG_EXTRA_OPTS="-c fsync=off" start_postgres "$SERVICES" "$(free_port)"  # a throwaway cluster
start_redis "$SERVICES" "$(free_port)"
scale_out=0
.venv/bin/pytest -m "not browser" "$@" || scale_out=$?
if [ "$scale_out" = 0 ]; then .venv/bin/pytest -m browser tests/browser "$@" || scale_out=$?; fi

embedded=0
wait "$SQLITE_PID" || embedded=$?
echo "== the embedded default (SQLite): its output"
cat "$SQLITE_LOG"
echo "== exit status: embedded default $embedded, scale-out profile $scale_out"
[ "$embedded" = 0 ] && [ "$scale_out" = 0 ]
