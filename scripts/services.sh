#!/usr/bin/env bash
# PostgreSQL and Redis from Debian's packages, started by hand on loopback (these machines have
# no systemd): a throwaway PostgreSQL cluster in a folder of its own and a Redis without
# persistence. Sourced by scripts/test.sh and scripts/serve-cluster.sh:
#   ensure_packages; start_postgres DIR PORT; start_redis DIR PORT; stop_services DIR
# ensure_packages also gives the PostgreSQL the pgvector extension (search by meaning through its
# HNSW index; without it the dashboard keeps the vectors' index in each process).
# Exports DATABASE_URL and REDIS_URL for what runs afterwards. A new cluster trusts every local
# connection and gets a database `hermes`; PG_INITDB_AUTH (initdb's options) and PG_CREATE_DB=""
# change that (the README's deployment test sets it up as Debian's package does, then follows it).

# ensure_packages [EXTRA...]: PostgreSQL, Redis and any extra Debian packages (e.g. chromium).
ensure_packages() {
  local missing=() extra
  for extra in "$@"; do command -v "$extra" >/dev/null 2>&1 || missing+=("$extra"); done
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql postgresql-contrib)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  if [ ${#missing[@]} -gt 0 ]; then
    local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}" >/dev/null
  fi
  ensure_pgvector
}

# ensure_pgvector: pgvector for the newest PostgreSQL here. Debian packages it from Debian 13 on
# (postgresql-NN-pgvector); on Debian 12 it is built from Debian's own source package of it
# (a few seconds with the server's headers), fetched through a sources list of its own so the
# machine's package lists are left as they were.
ensure_pgvector() {
  local ver sudo="" work
  ver=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  [ -f "/usr/share/postgresql/$ver/extension/vector.control" ] && return 0
  [ "$(id -u)" = 0 ] || sudo="sudo"
  if DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "postgresql-$ver-pgvector" >/dev/null 2>&1; then
    return 0
  fi
  work=$(mktemp -d)
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$work/pgvector.sources"
  local apt_opts=(-o APT::Sandbox::User=root -o "Dir::Etc::sourcelist=$work/pgvector.sources" -o Dir::Etc::sourceparts=/dev/null -o "Dir::State::Lists=$work/lists")
  mkdir -p "$work/lists/partial"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "postgresql-server-dev-$ver" make gcc >/dev/null
  ( cd "$work" \
    && $sudo apt-get "${apt_opts[@]}" update -q >/dev/null \
    && $sudo apt-get "${apt_opts[@]}" source --download-only -q pgvector >/dev/null 2>&1 \
    && tar xzf pgvector_*.orig.tar.gz \
    && cd pgvector-*/ \
    && make -s PG_CONFIG="/usr/lib/postgresql/$ver/bin/pg_config" >/dev/null 2>&1 \
    && $sudo make -s install PG_CONFIG="/usr/lib/postgresql/$ver/bin/pg_config" >/dev/null ) \
    || echo "pgvector could not be built: search by meaning keeps its index in each process" >&2
  $sudo rm -rf "$work"
}

# pg_memory_opts: the server's cache sized as PostgreSQL's manual advises for a machine it serves
# (shared_buffers a quarter of the memory, capped at 1 GB; the planner told of the rest). With
# the default 128 MB, ranking a common word at a million messages reads its hits' index rows
# from the kernel page by page: 2.25x FTS5's median instead of 1.68x on this project's benchmark.
pg_memory_opts() {
  local kb mb
  kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
  mb=$(( kb / 4096 )); [ "$mb" -gt 1024 ] && mb=1024
  if [ "$mb" -ge 256 ]; then
    echo "-c shared_buffers=${mb}MB -c effective_cache_size=$(( kb / 2048 ))MB"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# PostgreSQL refuses to run as root: the cluster belongs to the `postgres` user (made by the package).
_as_pg() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi
}

start_postgres() {
  local dir="$1" port="$2" bin
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  local fresh=""
  mkdir -p "$dir/pg"
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir/pg"; fi
  if [ ! -d "$dir/pg/data" ]; then
    # Local trust on 127.0.0.1 only: the cluster is this machine's, like the dashboard itself.
    _as_pg "$bin/initdb -D '$dir/pg/data' -U postgres -E UTF8 --locale=C.UTF-8 ${PG_INITDB_AUTH:--A trust}" >/dev/null
    fresh=1
  fi
  _as_pg "$bin/pg_ctl -D '$dir/pg/data' -l '$dir/pg/log' -w -o \"-p $port -k '$dir/pg' -c listen_addresses=127.0.0.1 ${PG_EXTRA_OPTS:-}\" start" >/dev/null
  if [ -n "$fresh" ] && [ -n "${PG_CREATE_DB-hermes}" ]; then
    _as_pg "$bin/createdb -h 127.0.0.1 -p $port -U postgres ${PG_CREATE_DB-hermes}"
  fi
  export DATABASE_URL="postgres://postgres@127.0.0.1:$port/hermes"
  export HERMES_PG_BIN="$bin" HERMES_PG_DIR="$dir/pg"
}

start_redis() {
  local dir="$1" port="$2"
  mkdir -p "$dir/redis"
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --daemonize yes \
    --dir "$dir/redis" --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/log"
  export REDIS_URL="redis://127.0.0.1:$port/0"
}

stop_services() {
  local dir="$1"
  if [ -f "$dir/redis/redis.pid" ]; then kill "$(cat "$dir/redis/redis.pid")" 2>/dev/null || true; fi
  if [ -n "${HERMES_PG_BIN:-}" ] && [ -d "$dir/pg/data" ]; then
    _as_pg "$HERMES_PG_BIN/pg_ctl -D '$dir/pg/data' -m fast stop" >/dev/null 2>&1 || true
  fi
}
