#!/usr/bin/env bash
# Every face of issue 17 ("the online path") in one run, one bench after
# another so they do not load each other, each with the floor it is
# measured against in the same run and the machine's load before and after
# it: REST (rest_bench: /healthz, one write, search at 10,000 records, 16
# writers at normal and full), MCP over stdio and HTTP through the SDK
# client (mcp_bench.mjs at 10,000 records), the knowledge-graph tools
# against @modelcontextprotocol/server-memory (graph_bench.mjs), `msp
# search` as a process at 100,000 records as a user meets it and opening
# the store itself (process_bench), the same from Python on held-out
# questions (agent_caller.py), and the capture hook (capture_bench).
#
#   bash bench/online_path.sh BUILD STORE OUT
#
# BUILD is a Release build directory (its src/cli/msp, src/cli/msp-capture,
# bench/rest_bench, bench/process_bench and bench/capture_bench are used;
# `cmake --build BUILD --target msp msp-capture rest_bench process_bench
# capture_bench`); STORE a 100,000-record store made by `process_bench
# --records 100000 --data-dir STORE --keep` (made here when missing); OUT a
# directory for each bench's whole output (summary.txt: the load around each).
# Needs `npm ci` in tests/mcp (the SDK and server-memory). About 8 minutes
# on a 2-core machine once the store exists.
set -euo pipefail
build=$(readlink -f "${1:?usage: online_path.sh BUILD STORE OUT}")
store=$(readlink -m "${2:?usage: online_path.sh BUILD STORE OUT}")
out=$(readlink -m "${3:?usage: online_path.sh BUILD STORE OUT}")
here=$(cd "$(dirname "$0")" && pwd)
msp=$build/src/cli/msp
for f in "$msp" "$build/src/cli/msp-capture" "$build/bench/rest_bench" "$build/bench/process_bench" \
         "$build/bench/capture_bench"; do
  [ -x "$f" ] || { echo "online_path.sh: $f is missing (build it first)" >&2; exit 2; }
done
[ -d "$here/../tests/mcp/node_modules/@modelcontextprotocol/sdk" ] ||
  { echo "online_path.sh: run npm ci in tests/mcp first" >&2; exit 2; }
mkdir -p "$out"
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Runs one bench: its output in $out/NAME.txt, the load around it in the summary.
step() {
  local name=$1
  shift
  echo "== $name (load $(load))" | tee -a "$out/summary.txt"
  if ! "$@" >"$out/$name.txt" 2>&1; then
    echo "online_path.sh: $name failed; its output is in $out/$name.txt" >&2
    tail -n 20 "$out/$name.txt" >&2
    exit 1
  fi
  echo "   done (load $(load))" | tee -a "$out/summary.txt"
}
: >"$out/summary.txt"
echo "$("$msp" version | head -n 1), $(nproc) cores" | tee -a "$out/summary.txt"
if [ ! -f "$store/msp.db" ]; then
  step make_store "$build/bench/process_bench" --msp "$msp" --records 100000 --data-dir "$store" --keep --runs 5 --direct
fi
step rest "$build/bench/rest_bench" --msp "$msp" --requests 1000 --writes-per-writer 600
step mcp_stdio_http node "$here/mcp_bench.mjs" --msp "$msp" --kind artifact --preload 10000 --writes 300 --searches 300
step graph bash -c "cd '$here/../tests/mcp' && MSP_BIN='$msp' node ../../bench/graph_bench.mjs --reps 100"
for mode in auto direct; do
  flag=
  [ "$mode" = direct ] && flag=--direct
  step "process_$mode" "$build/bench/process_bench" --msp "$msp" --records 100000 --data-dir "$store" --keep --runs 40 $flag
  step "agent_$mode" python3 "$here/agent_caller.py" "$msp" "$store" --mode "$mode" --rounds 2
done
step capture "$build/bench/capture_bench" --msp "$msp" --capture "$build/src/cli/msp-capture" \
  --repo "$out/capture/prompts.git" --seed 1000 --runs 300 --gap-ms 50
echo "outputs in $out" | tee -a "$out/summary.txt"
