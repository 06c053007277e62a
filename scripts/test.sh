#!/usr/bin/env bash
# Quick start 2: installs what is missing, builds msp with AddressSanitizer +
# UndefinedBehaviorSanitizer (warnings as errors) and runs every test through
# ctest under both sanitizers: the libraries, the msp binary, the benchmarks
# (built, and the LoCoMo tool's tests run) and every test program.
# One build only: the whole command must stay under 20 minutes on two cores,
# and compiling is nearly all of it. An optimised build of the same sources
# (-O2, no tests) was dropped in session 4: it cost 38% of the command's CPU
# time and checked only the warnings that need the optimiser; the optimised
# build of quick start 1 (scripts/demo.sh) shows those without failing on them.
# Unity build (MSP_UNITY_BUILD, the top CMakeLists.txt): each target's sources
# compiled in batches of 8, which parses the heavy headers once a batch.
# Shared internal libraries (MSP_SHARED_LIBS) and line tables only (-g1): the
# build tree is 1.7 GB instead of 6.1 GB (UBSan's per-check data made every
# statically linked test program 80-250 MB; a CI run once ran out of disk).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=npm_pinned.sh
source scripts/npm_pinned.sh
bash scripts/deps.sh
jobs=$(nproc)
# A private PostgreSQL cluster (scripts/pg.sh) for the PostgreSQL conformance
# and multi-server tests; removed on exit, failed or not.
pg_env="$(bash scripts/pg.sh start)"
eval "$pg_env"
trap 'bash scripts/pg.sh stop "$MSP_PG_DIR"' EXIT
# The npm packages of the MCP client tests, as pinned in the lock file.
(cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.msp-installed-lock)
# The Claude Code CLI of tests/claude_code (about 380 MB unpacked, npm's cache
# keeps it for the next run): fetched while msp compiles, waited for before
# ctest. If it fails here, the test's own fixture (claude_code_npm_ci) tries
# again and fails the run with npm's message.
mkdir -p build
npm_pinned tests/claude_code >build/claude-code-npm.log 2>&1 &
claude_code_npm=$!
# The browser of tests/console (Debian's chromium, ~100 MB with its
# libraries) and its driver (npm playwright-core), the same way: fetched
# while msp compiles, waited for before ctest.
(bash scripts/deps.sh --browser && npm_pinned tests/console) >build/console-deps.log 2>&1 &
console_deps=$!

echo "== sanitizer build (ASan + UBSan) and every test =="
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DMSP_SANITIZE=ON -DMSP_UNITY_BUILD=ON -DMSP_SHARED_LIBS=ON >/dev/null
cmake --build build/asan -j"$jobs"

# The parsers of outside input under libFuzzer (fuzz/, docs/fuzzing.md): clang
# compiles only the parser sources the targets need, and each target runs a
# fixed number of inputs from its seed corpus under ASan + UBSan. The clang
# build (about 90 s of two cores) runs at low priority beside ctest, whose
# tests spend much of their time waiting on processes, sockets and fsync.
mkdir -p build
# (its own process group, stopped with the script when a test fails)
setsid nice -n 10 bash fuzz/run.sh --build-only >build/fuzz-build.log 2>&1 &
fuzz_build=$!
trap 'kill -- -"$fuzz_build" 2>/dev/null || true; bash scripts/pg.sh stop "$MSP_PG_DIR"' EXIT
wait "$console_deps" || { echo "tests/console: installing chromium or playwright-core failed (build/console-deps.log):" >&2; tail -20 build/console-deps.log >&2; }
wait "$claude_code_npm" || { echo "tests/claude_code: npm ci failed (build/claude-code-npm.log):" >&2; tail -20 build/claude-code-npm.log >&2; }
# Three tests a core: the tests mostly wait (on msp processes they start,
# sockets, fsync). Measured at d59e8a1 on the 2-core machine: ctest -j2 ran
# 885 s of wall time for 632 s of CPU (1,769 s of test time); -j6 ran 310 s.
(cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$((jobs * 3))")

echo "== fuzz targets (libFuzzer, a fixed number of runs each) =="
if ! wait "$fuzz_build"; then
  echo "fuzz: the clang build failed (build/fuzz-build.log):" >&2
  tail -40 build/fuzz-build.log >&2
  exit 1
fi
bash fuzz/run.sh --no-build
