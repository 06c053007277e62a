#!/usr/bin/env bash
# Quick start 2: installs what is missing, then builds msp twice (a normal
# build and an ASan + UBSan build) and runs every test of each through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
# A private PostgreSQL cluster (scripts/pg.sh) for the PostgreSQL conformance
# and multi-server tests of both builds; removed on exit, failed or not.
pg_env="$(bash scripts/pg.sh start)"
eval "$pg_env"
trap 'bash scripts/pg.sh stop "$MSP_PG_DIR"' EXIT
# The npm packages of the MCP client tests, as pinned in the lock file.
(cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.msp-installed-lock)

echo "== normal build (RelWithDebInfo) =="
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/test -j"$jobs"
(cd build/test && ctest --output-on-failure -j"$jobs")

echo "== sanitizer build (ASan + UBSan) =="
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DMSP_SANITIZE=ON -DMSP_BUILD_BENCH=OFF >/dev/null
cmake --build build/asan -j"$jobs"
(cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$jobs")
