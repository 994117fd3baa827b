#!/usr/bin/env bash
# The production profile on one machine, from Debian's packages: PostgreSQL and Redis on
# loopback, two daphne workers, and a learning queue worker (reviews survive restarts).
# Data lives in HERMES_HOME (default ~/.hermes): the knowledge files as always, and the
# PostgreSQL cluster in HERMES_HOME/cluster. Ctrl-C stops everything it started.
#   ./scripts/serve-cluster.sh            # workers on 8765 and 8766 (HERMES_PORT changes the first)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
# shellcheck source=scripts/services.sh
source scripts/services.sh
ensure_packages

HOME_DIR="${HERMES_HOME:-$HOME/.hermes}"
CLUSTER="$HOME_DIR/cluster"
mkdir -p "$CLUSTER"
chmod 755 "$HOME_DIR" "$CLUSTER"  # the postgres user runs the cluster inside it
PORT="${HERMES_PORT:-8765}"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  stop_services "$CLUSTER"
}
trap cleanup EXIT INT TERM

PG_EXTRA_OPTS="$(pg_memory_opts)" start_postgres "$CLUSTER" "${HERMES_PG_PORT:-5433}"
start_redis "$CLUSTER" "${HERMES_REDIS_PORT:-6380}"
export HERMES_HOME="$HOME_DIR" HERMES_QUEUE=tasks DATABASE_URL REDIS_URL

.venv/bin/python manage.py migrate --noinput -v 0
.venv/bin/python manage.py collectstatic --noinput -v 0
for p in "$PORT" "$((PORT + 1))"; do
  # The launcher: daphne with the chat socket's frame limits and a token-free access log.
  .venv/bin/python -m hermes_site.websocket_server -b 127.0.0.1 -p "$p" hermes_site.asgi:application &
  PIDS+=($!)
done
.venv/bin/python manage.py learning_worker &
PIDS+=($!)
echo "Hermes dashboard (two workers, one database, one Redis, one learning queue worker):"
.venv/bin/python manage.py login_url --port "$PORT" --port "$((PORT + 1))"
wait
