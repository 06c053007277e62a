#!/usr/bin/env bash
# Quick start 1: installs what is missing, builds msp and runs the demo: the
# Write -> Consolidate -> Retrieve -> Inject cycle of seed 000's example, on
# the embedded default (SQLite, built-in hashing embedder, no model).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# Warnings are shown, not fatal, here: a newer compiler's new warning must not
# stop a user's build (the test command builds with warnings as errors).
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DMSP_BUILD_TESTS=OFF -DMSP_BUILD_BENCH=OFF \
  -DMSP_WERROR=OFF >/dev/null
# msp, its modules (built with it; beside it in the build tree) and the lean
# capture hook msp-capture that `msp setup claude-code` registers.
cmake --build build/release --target msp msp-capture -j"$(nproc)" >/dev/null
data_dir=$(mktemp -d)
trap 'rm -rf "$data_dir"' EXIT
build/release/src/cli/msp demo --data-dir "$data_dir/demo" "$@"
