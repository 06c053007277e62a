#!/usr/bin/env bash
# library_install BUILD_DIR SOURCE_DIR CXX: msp as a library user installs
# and uses it. Fails (exit 1, saying which step) if the installed headers,
# libmsp, the CMake package or the pkg-config file do not let a program
# build, or if the program and the installed msp do not share one store.
set -euo pipefail
build=$1 source=$2 cxx=$3
work=$(mktemp -d "${MSP_TEST_TMP:-${TMPDIR:-/tmp}}/library_install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "library_install: $*" >&2; exit 1; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
for f in include/msp/memory.h include/msp/version.h lib/libmsp.so lib/cmake/msp/mspConfig.cmake \
         lib/pkgconfig/msp.pc bin/msp; do
  [[ -e $prefix/$f ]] || fail "the install has no $f"
done
# Only the public headers: nothing of src/ is needed to build against them.
[[ ! -e $prefix/include/util ]] || fail "internal headers installed"

# 1. CMake: find_package(msp) from the installed tree.
cmake -S "$source/examples" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "examples/ did not configure against the installed package"; }
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "examples/ did not build against the installed package"; }
remember=$work/cmake-build/remember

data=$work/data
"$remember" "$data" write "Ann prefers green tea over coffee" "The staging server runs on port 8443" \
  >"$work/ids" || fail "remember write failed"
[[ $(wc -l <"$work/ids") -eq 2 ]] || fail "remember write printed $(wc -l <"$work/ids") ids, not 2"
tea_id=$(head -1 "$work/ids")
"$remember" "$data" search "what tea does ann like" >"$work/hits" 2>"$work/search.err" \
  || { cat "$work/search.err"; fail "remember search failed"; }
first=$(head -1 "$work/hits" | cut -f2)
[[ $first == "$tea_id" ]] || { cat "$work/hits"; fail "the tea fact ($tea_id) is not the first hit"; }
grep -q "libmsp $(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/msp.pc")" "$work/search.err" \
  || { cat "$work/search.err"; fail "LibraryVersion() does not match the package version"; }

# Bad input: a store path that is a file is refused with a message, not a crash.
: >"$work/not-a-dir"
if "$remember" "$work/not-a-dir" search tea >/dev/null 2>"$work/bad.err"; then fail "a file as data dir was accepted"; fi
[[ -s $work/bad.err ]] || fail "no message for a file as data dir"

# 2. The installed msp reads what the library wrote: one store, many faces.
"$prefix/bin/msp" --data-dir "$data" get "$tea_id" >"$work/get.out" 2>&1 \
  || { cat "$work/get.out"; fail "the installed msp cannot read the library's store"; }
grep -q "green tea" "$work/get.out" || { cat "$work/get.out"; fail "msp get does not show the fact"; }

# 3. pkg-config, with the compiler alone.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs msp) || fail "pkg-config does not know msp"
# shellcheck disable=SC2086
"$cxx" "$source/examples/remember.cc" -o "$work/remember-pc" $flags 2>"$work/pc.log" \
  || { cat "$work/pc.log"; fail "remember.cc does not build with pkg-config's flags"; }
"$work/remember-pc" "$data" search "staging port" >"$work/hits2" 2>/dev/null || fail "the pkg-config build failed to search"
grep -q "8443" <(head -1 "$work/hits2") || { cat "$work/hits2"; fail "the pkg-config build did not find the port fact first"; }
echo "library_install: ok ($(du -sh "$prefix" | cut -f1) installed)"
