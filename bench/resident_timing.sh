#!/usr/bin/env bash
# The resident path's own cost (docs/cli.md, "The resident path"): a fresh
# `msp serve` on a store, then one `msp search --timing` for each of LoCoMo's
# questions FROM..TO (each asked once: what the server has not seen), and
# the round trips the commands report ("answered by the msp server ... in N
# ms": connect, the server's search, the answer back), as p50, p90 and mean.
# Give two builds to compare them on the same questions, server by server,
# alternately (ROUNDS times each), so machine load hits both alike.
#   bash bench/resident_timing.sh DIR FROM TO ROUNDS MSP [MSP2]
# DIR holds a store (e.g. process_bench --keep's). The server listens on a
# free loopback port, anonymous; it is stopped after each build's round.
set -euo pipefail
dir=$1
from=$2
to=$3
rounds=$4
shift 4
locomo=${MSP_LOCOMO:-$(dirname "$0")/../../shared/bench-data/locomo10.json}
questions=$(mktemp)
times=$(mktemp)
server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
trap 'stop_server; rm -f "$questions" "$times"' EXIT
python3 - "$locomo" "$questions" <<'PY'
import json, sys
with open(sys.argv[2], 'w') as out:
    for conversation in json.load(open(sys.argv[1])):
        for qa in conversation['qa']:
            if isinstance(qa.get('question'), str):
                out.write(qa['question'].replace('\n', ' ') + '\n')
PY
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for msp in "$@"; do
    log=$(mktemp)
    MSP_SERVER_ALLOW_ANONYMOUS=true "$msp" serve --data-dir "$dir" --port 0 --access-log false 2>"$log" &
    server_pid=$!
    # Ready once it says where commands go; then two seconds for its warm-up
    # (well under a second of CPU at 100,000 records).
    for _ in $(seq 1 300); do
      grep -q "msp commands here use" "$log" && break
      sleep 0.1
    done
    grep -q "msp commands here use" "$log" || { cat "$log" >&2; exit 1; }
    sleep 2
    : >"$times"
    sed -n "${from},${to}p" "$questions" | while IFS= read -r q; do
      "$msp" search "$q" --data-dir "$dir" --timing 2>&1 >/dev/null |
        sed -n 's/.*answered by the msp server on .* in \([0-9.]*\) ms.*/\1/p' >>"$times"
    done
    stop_server
    rm -f "$log"
    python3 - "$times" "$msp" "$round" <<'PY'
import statistics, sys
v = sorted(float(x) for x in open(sys.argv[1]) if x.strip())
if not v:
    sys.exit(f'{sys.argv[2]}: no search was answered by the server')
print(f'round {sys.argv[3]} {sys.argv[2]}: {len(v)} searches, round trip p50 {v[len(v) // 2]:.2f} ms, '
      f'p90 {v[int(len(v) * 0.9)]:.2f} ms, mean {statistics.mean(v):.2f} ms')
PY
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
