#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for msp's tests and benchmarks: initdb into
# a temporary directory, a server on a free loopback port (and a Unix socket
# in that directory), trust authentication for the role "msp", a database
# "msp". Nothing outside the directory is touched; stop removes it.
#
#   eval "$(scripts/pg.sh start)"   # exports MSP_TEST_PG (a libpq connection
#                                   # string) and MSP_PG_DIR (the cluster)
#   scripts/pg.sh stop "$MSP_PG_DIR"     # stops the server, removes the directory
#   scripts/pg.sh pause "$MSP_PG_DIR"    # stops the server, keeps the data
#   scripts/pg.sh resume "$MSP_PG_DIR"   # starts it again on the same port
#
# Environment: MSP_PG_BIN (default /usr/lib/postgresql/15/bin), MSP_PG_DURABLE=1
# keeps fsync on (the default turns it off: the cluster is thrown away, and
# tests run faster), MSP_TEST_TMP (where the directory is made; default /tmp).
# Run as root, the server runs as the user "postgres" (or "nobody"), since
# initdb refuses root.
set -euo pipefail

bin="${MSP_PG_BIN:-/usr/lib/postgresql/15/bin}"

die() { echo "pg.sh: $*" >&2; exit 1; }

# The user the cluster runs as: ourselves, or a non-root account under root.
pg_user() {
  if [ "$(id -u)" -ne 0 ]; then id -un; return; fi
  if getent passwd postgres >/dev/null; then echo postgres; else echo nobody; fi
}

# Runs a command as pg_user.
as_pg() {
  local user
  user="$(pg_user)"
  if [ "$(id -u)" -ne 0 ]; then "$@"; return; fi
  runuser -u "$user" -- "$@"
}

server_options() {
  local dir="$1" port="$2" opts
  opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir"
  opts+=" -c max_connections=300 -c shared_buffers=128MB"
  if [ "${MSP_PG_DURABLE:-0}" != "1" ]; then
    opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  echo "$opts"
}

# Starts the server of cluster $1 on port $2; returns non-zero if it did not come up.
start_server() {
  local dir="$1" port="$2"
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "$(server_options "$dir" "$port")" start >/dev/null 2>&1
}

cmd_start() {
  [ -x "$bin/initdb" ] || die "no PostgreSQL at $bin (install postgresql-15: scripts/deps.sh)"
  local parent="${MSP_TEST_TMP:-/tmp}"
  mkdir -p "$parent"
  local dir
  dir="$(mktemp -d "$parent/msp-pg.XXXXXX")"
  chmod 755 "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown "$(pg_user)" "$dir"; fi
  as_pg "$bin/initdb" -D "$dir/data" -U msp --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; die "initdb failed"; }
  # A free port: try random ones until the server binds one.
  local port="" try
  for try in $(seq 1 20); do
    local candidate=$((20000 + RANDOM % 40000))
    if start_server "$dir" "$candidate"; then port="$candidate"; break; fi
  done
  if [ -z "$port" ]; then
    cat "$dir/server.log" >&2 || true
    rm -rf "$dir"
    die "the server did not start on any of 20 ports"
  fi
  echo "$port" >"$dir/port"
  "$bin/psql" -h "$dir" -p "$port" -U msp -d postgres -qAt -c "CREATE DATABASE msp" >/dev/null ||
    { cmd_stop "$dir"; die "cannot create database msp"; }
  echo "export MSP_TEST_PG='host=127.0.0.1 port=$port user=msp dbname=msp'"
  echo "export MSP_PG_DIR='$dir'"
}

cmd_pause() {
  local dir="${1:?usage: pg.sh pause DIR}"
  [ -d "$dir/data" ] || die "$dir is not a cluster made by pg.sh start"
  as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

cmd_resume() {
  local dir="${1:?usage: pg.sh resume DIR}"
  [ -f "$dir/port" ] || die "$dir is not a cluster made by pg.sh start"
  start_server "$dir" "$(cat "$dir/port")" || { cat "$dir/server.log" >&2; die "cannot restart the server"; }
}

cmd_stop() {
  local dir="${1:?usage: pg.sh stop DIR}"
  [ -d "$dir" ] || return 0
  if [ -d "$dir/data" ]; then
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  case "$dir" in
    */msp-pg.*) rm -rf "$dir" ;;
    *) die "refusing to remove $dir: not a directory made by pg.sh start" ;;
  esac
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop "${2:-}" ;;
  pause) cmd_pause "${2:-}" ;;
  resume) cmd_resume "${2:-}" ;;
  *) die "usage: pg.sh start | stop DIR | pause DIR | resume DIR" ;;
esac
