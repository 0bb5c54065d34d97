#!/bin/bash
# test_out_of_tree.sh — install rvfit to a temporary prefix; everything
# lands under the prefix and the installed rvfit, with RVFIT_PLUGIN_PATH
# unset, finds exactly its own plugins (each once, nothing from the build
# tree), also after the prefix is moved.  Then build two plugins against
# the installed package only: the SDSS plugin's own directory with CMake
# (find_package(rvfit), rvfit_add_plugin, whose install goes to the
# installed rvfit's plugin directory) and the docs/examples/ascii plugin
# with a bare compiler line from pkg-config (rvfit-sdk.pc); `rvfit plugins`
# must list both as loaded, both must link the SDK alone (librvfit_sdk,
# not the engine), and the reader-only ascii plugin cannot write mocks.
# Both ways compile as the in-tree build does (ISO C11 + POSIX.1-2008): the
# SDSS sources, which use strnlen, also build warning-free from the
# pkg-config line, and rvfit-sdk.pc brings CFITSIO along.
set -euo pipefail
# (grep -q reads here-strings, not pipes: under pipefail a writer killed by
# SIGPIPE when grep -q stops early would fail the check at random)
: "${RVFIT_BIN:?}" "${RVFIT_SOURCE_DIR:?}" "${RVFIT_TEST_TMP:?}"
build=$(dirname "$RVFIT_BIN")
tmp=$RVFIT_TEST_TMP/out_of_tree
rm -rf "$tmp" && mkdir -p "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
for f in include/rvfit/instrument.h lib/librvfit.so lib/librvfit_sdk.so \
         lib/librvfit_tools.so lib/pkgconfig/rvfit.pc lib/pkgconfig/rvfit-sdk.pc \
         lib/cmake/rvfit/rvfitConfig.cmake lib/cmake/rvfit/rvfitTargets.cmake; do
  [ -e "$tmp/prefix/$f" ] || fail "not installed: $f"
done
# Nothing installed outside the prefix (no absolute destinations).
outside=$(grep -E '^-- (Installing|Up-to-date): ' "$tmp/install.log" |
          grep -vF -- ": $tmp/prefix/" || true)
[ -z "$outside" ] || fail "installed outside the prefix: $outside"
for p in rvfit_backend_cpu.so rvfit_instrument_desi.so rvfit_instrument_sdss.so; do
  [ -e "$tmp/prefix/lib/rvfit/plugins/$p" ] || fail "plugin not installed: $p"
done

# check_listing PREFIX: the installed CLI of PREFIX, RVFIT_PLUGIN_PATH
# unset, searches only PREFIX/lib/rvfit/plugins and lists every plugin
# installed there exactly once, and nothing else.
check_listing() {
  local prefix=$1 out dirs listed want
  out=$(cd "$tmp" && env -u RVFIT_PLUGIN_PATH "$prefix/bin/rvfit" plugins 2>&1) ||
    { echo "$out"; fail "rvfit plugins of $prefix"; }
  echo "$out"
  dirs=$(echo "$out" | grep -E '^  [^ ].*:( \(not present\))?$' |
         sed -E 's/^  //; s/:( \(not present\))?$//')
  [ "$dirs" = "$(realpath "$prefix")/lib/rvfit/plugins" ] ||
    fail "$prefix/bin/rvfit searches '$dirs', not only its own plugins"
  grep -qF "$build/plugins" <<< "$out" && fail "$prefix/bin/rvfit shows the build tree's plugins"
  listed=$(echo "$out" | awk '$1 == "backend" || $1 == "instrument" {
             print "rvfit_" $1 "_" $2 ".so" }' | sort)
  want=$(cd "$prefix/lib/rvfit/plugins" && ls rvfit_*.so | sort)
  [ "$listed" = "$want" ] ||
    fail "$prefix/bin/rvfit lists [$(echo $listed)], installed are [$(echo $want)]"
}
check_listing "$tmp/prefix"

# 1. CMake package: the SDSS plugin sources built standalone.
cmake -S "$RVFIT_SOURCE_DIR/instruments/sdss" -B "$tmp/sdss" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" \
  > "$tmp/sdss.log" 2>&1 && cmake --build "$tmp/sdss" -j2 >> "$tmp/sdss.log" 2>&1 ||
  { cat "$tmp/sdss.log"; fail "standalone sdss build"; }

flags=$(cat "$tmp"/sdss/CMakeFiles/rvfit_instrument_sdss.dir/flags.make)
grep -q -- "-std=c11" <<< "$flags" || fail "standalone plugin not compiled with -std=c11: $flags"
grep -q -- "-D_POSIX_C_SOURCE=200809L" <<< "$flags" ||
  fail "standalone plugin compiled without _POSIX_C_SOURCE=200809L: $flags"

# 2. pkg-config: one compiler line, nothing from the source tree.
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
grep -qx cfitsio <<< "$(pkg-config --print-requires rvfit-sdk)" ||
  fail "rvfit-sdk.pc does not require cfitsio"
# docs/plugins.md installs a pkg-config-built plugin into plugindir
[ "$(realpath "$(pkg-config --variable=plugindir rvfit-sdk)")" = \
  "$(realpath "$tmp/prefix/lib/rvfit/plugins")" ] ||
  fail "rvfit-sdk.pc plugindir is not where the installed rvfit looks"
mkdir -p "$tmp/sdss-pc"
cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
  -o "$tmp/sdss-pc/rvfit_instrument_sdss.so" "$RVFIT_SOURCE_DIR"/instruments/sdss/*.c \
  $(pkg-config --cflags --libs rvfit-sdk) -lm || fail "pkg-config build of the sdss plugin"
mkdir -p "$tmp/ascii"
cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
  -o "$tmp/ascii/rvfit_instrument_ascii.so" \
  "$RVFIT_SOURCE_DIR/docs/examples/ascii/ascii_plugin.c" \
  $(pkg-config --cflags --libs rvfit-sdk) || fail "pkg-config build of the example"
grep -q "$RVFIT_SOURCE_DIR" "$tmp/ascii/rvfit_instrument_ascii.so" &&
  fail "example plugin refers to the source tree"

# Plugins link the SDK, never the engine.
for so in "$tmp/sdss/plugins/rvfit_instrument_sdss.so" "$tmp/ascii/rvfit_instrument_ascii.so"; do
  needed=$(readelf -d "$so" | grep NEEDED)
  grep -q 'librvfit_sdk\.so\.' <<< "$needed" || fail "$so does not link librvfit_sdk"
  grep -qE 'librvfit(_tools)?\.so' <<< "$needed" && fail "$so links the engine: $needed"
done

# The installed CLI, with only the out-of-tree plugins on its path.
out=$(RVFIT_PLUGIN_PATH="$tmp/sdss/plugins:$tmp/ascii" \
      "$tmp/prefix/bin/rvfit" plugins 2>&1) || { echo "$out"; fail "rvfit plugins"; }
echo "$out"
block=$(grep -A1 "$tmp/sdss/plugins" <<< "$out" || true)
grep -q "instrument sdss" <<< "$block" ||
  fail "sdss not listed from the out-of-tree build"
grep -q "instrument ascii" <<< "$out" || fail "ascii not listed"
grep -iE "ascii|sdss" <<< "$out" | grep -iE "fail|error|reject" &&
  fail "a plugin was rejected"

# A reader-only plugin has no 'mock' extension: a clear error, no crash.
rc=0
out=$(RVFIT_PLUGIN_PATH="$tmp/ascii" "$tmp/prefix/bin/rvfit" mock spectra \
      --instrument ascii --out "$tmp/ascii/mock.txt" --truth "$tmp/ascii/truth.fits" \
      --nstar 2 2>&1) || rc=$?
echo "$out"
[ $rc = 1 ] || fail "rvfit mock spectra -i ascii exited with $rc"
grep -qF "instrument 'ascii' cannot write synthetic files (no 'mock' extension)" <<< "$out" ||
  fail "no clear error for a plugin without the mock extension"

# The exported rvfit_add_plugin installs into the installed rvfit's plugin
# directory, whatever the plugin project's own prefix.
cmake --install "$tmp/sdss" > "$tmp/sdss-install.log" 2>&1 ||
  { cat "$tmp/sdss-install.log"; fail "install of the standalone sdss build"; }
grep -qE -- "-- (Installing|Up-to-date): $tmp/prefix/lib/rvfit/plugins/rvfit_instrument_sdss.so\$" \
  "$tmp/sdss-install.log" || { cat "$tmp/sdss-install.log"; fail "standalone sdss not installed into the rvfit prefix"; }

# The prefix is relocatable: moved, it still finds its own plugins only.
mv "$tmp/prefix" "$tmp/moved"
check_listing "$tmp/moved"

echo "test_out_of_tree: passed"
