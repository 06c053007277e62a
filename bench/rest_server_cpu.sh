#!/usr/bin/env bash
# The REST server's own CPU for one fixed workload, beside the writes a
# second: runs `rest_bench` (which starts `msp serve` itself) and attaches
# `perf stat` to the first server it starts (store.synchronous = normal:
# warm-up, /healthz, single writes, 16 concurrent writers, searches), until
# that server exits. Comparing two builds: run this for each, alternately.
#
#   bash bench/rest_server_cpu.sh MSP REST_BENCH [WRITES_PER_WRITER]
#
# Prints the server's task clock (ms) and context switches, and the 16
# writers' writes a second as rest_bench measured them.
set -euo pipefail
msp=$(readlink -f "${1:?usage: rest_server_cpu.sh MSP REST_BENCH [WRITES_PER_WRITER]}")
bench=${2:?usage: rest_server_cpu.sh MSP REST_BENCH [WRITES_PER_WRITER]}
writes=${3:-600}
out=$(mktemp) perf_out=$(mktemp)
trap 'rm -f "$out" "$perf_out"' EXIT
"$bench" --msp "$msp" --requests 300 --writes-per-writer "$writes" --records 500 >"$out" 2>&1 &
bench_pid=$!
server=""
for _ in $(seq 1 200); do
  server=$(pgrep -f "^$msp serve" | head -n 1 || true)
  [ -n "$server" ] && break
  sleep 0.05
done
[ -n "$server" ] || { echo "rest_server_cpu.sh: no msp serve started" >&2; wait "$bench_pid"; exit 1; }
perf stat -e task-clock,context-switches -x, -p "$server" -o "$perf_out" 2>/dev/null || true
wait "$bench_pid"
writers=$(awk '/concurrent writers/ {print $4; exit}' "$out")
awk -F, -v w="$writers" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '
  /task-clock/ {tc = $1} /context-switches/ {cs = $1}
  END {printf "server CPU %.0f ms, context switches %d, 16 writers %s writes/s (load %s)\n", tc, cs, w, load}' "$perf_out"
