#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL server on 127.0.0.1 for tests and benchmarks, from
# Debian's packages. Usage: scripts/pg-local.sh start DIR PORT  |  scripts/pg-local.sh stop DIR
# Prints the DATABASE_URL on success. Runs the server as the `postgres` user when started as root.
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?data directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "PostgreSQL server binaries not found (apt-get install -y postgresql)" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "$cmd" in
  start)
    port=${3:?port}
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
      as_pg "$bin/initdb" -D "$dir" -U agent_reach --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >/dev/null
    as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U agent_reach -d postgres -qtAc "SELECT 1 FROM pg_database WHERE datname='agent_reach'" | grep -q 1 ||
      as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U agent_reach agent_reach
    echo "postgresql://agent_reach@127.0.0.1:$port/agent_reach"
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir" -m fast stop >/dev/null || true
    ;;
  *) echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
