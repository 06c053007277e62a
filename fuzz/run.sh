#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/CMakeLists.txt) with clang into
# build/fuzz and runs each one over its seed corpus (fuzz/corpus/NAME) for a
# bounded number of inputs under AddressSanitizer and UBSan: the test
# command's check that no parser of outside input crashes, leaks or reads
# out of bounds on what libFuzzer makes of the seeds. A fixed seed and run
# count make a run repeatable. What it finds stays in build/fuzz/crashes.
#   fuzz/run.sh                 every target, 2000 runs each, pdf 200
#                               (poppler takes ~50 ms an input) (scripts/test.sh)
#   fuzz/run.sh -runs=100000    more, every target
#   fuzz/run.sh -runs=4000 adr  one target
#   fuzz/run.sh --build-only    builds every target, runs none
#   fuzz/run.sh --no-build      runs what --build-only built (scripts/test.sh
#                               builds while ctest runs, then runs)
# To fuzz for long (hours, new inputs kept in a corpus of your own):
# docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=
build=1
run=1
case ${1:-} in
  --build-only) build=1 run=0; shift ;;
  --no-build) build=0 run=1; shift ;;
esac
if [[ $# -gt 0 && $1 == -runs=* ]]; then runs=$1; shift; fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(json_import toml_config jsonrpc rest_body hook_payload adr html markdown docx pdf safetensors wordpiece)
fi
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [[ -z $cxx ]]; then
  echo "fuzz/run.sh: clang++ (Debian clang-14, libclang-rt-14-dev) is needed for libFuzzer" >&2
  exit 1
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [[ $build == 1 ]]; then
  CXX=$cxx cmake -S fuzz -B build/fuzz "${launcher[@]}" >/dev/null
  cmake --build build/fuzz -j"$(nproc)" --target "${targets[@]/%/_fuzz}"
fi
if [[ $run == 0 ]]; then exit 0; fi
mkdir -p build/fuzz/crashes
failed=()
for t in "${targets[@]}"; do
  # The seeds are read, never written: new inputs go to a scratch corpus.
  scratch=$(mktemp -d)
  target_runs=${runs:-$([[ $t == pdf ]] && echo -runs=200 || echo -runs=2000)}
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build/fuzz/${t}_fuzz" "$target_runs" -seed=1 -max_len=65536 -rss_limit_mb=2048 -timeout=25 \
      -artifact_prefix=build/fuzz/crashes/"$t"- "$scratch" "fuzz/corpus/$t" >"build/fuzz/$t.log" 2>&1; then
    echo "fuzz $t: ok ($(grep -o 'Done [0-9]* runs' "build/fuzz/$t.log" || echo "done"))"
  else
    echo "fuzz $t: FAILED (build/fuzz/$t.log):" >&2
    tail -40 "build/fuzz/$t.log" >&2
    failed+=("$t")
  fi
  rm -rf "$scratch"
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: failed: ${failed[*]} (inputs in build/fuzz/crashes)" >&2
  exit 1
fi
