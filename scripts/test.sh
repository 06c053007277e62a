#!/usr/bin/env bash
# Quick start 2: installs what is missing, builds msp twice and runs every
# test through ctest:
#  1. an optimised build (-O2, warnings as errors) of the libraries, the msp
#     binary and the benchmarks, so that code and warnings are checked the
#     way they ship;
#  2. an AddressSanitizer + UndefinedBehaviorSanitizer build of everything,
#     tests included, and every test run under both sanitizers.
# The tests run once, under the sanitizers: running them a second time in the
# optimised build doubled the compile time for little (the whole command must
# stay under 20 minutes on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
# A private PostgreSQL cluster (scripts/pg.sh) for the PostgreSQL conformance
# and multi-server tests; removed on exit, failed or not.
pg_env="$(bash scripts/pg.sh start)"
eval "$pg_env"
trap 'bash scripts/pg.sh stop "$MSP_PG_DIR"' EXIT
# The npm packages of the MCP client tests, as pinned in the lock file.
(cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.msp-installed-lock)

echo "== optimised build (RelWithDebInfo, line tables only) =="
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DMSP_BUILD_TESTS=OFF >/dev/null
cmake --build build/test -j"$jobs"

echo "== sanitizer build (ASan + UBSan) and every test =="
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DMSP_SANITIZE=ON >/dev/null
cmake --build build/asan -j"$jobs"
(cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$jobs")
