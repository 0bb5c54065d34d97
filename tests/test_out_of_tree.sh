#!/bin/bash
# test_out_of_tree.sh — install rvfit to a temporary prefix, then build two
# plugins against the installed package only: the SDSS plugin's own
# directory with CMake (find_package(rvfit), rvfit_add_plugin) and the
# docs/examples/ascii plugin with a bare compiler line from pkg-config
# (rvfit-sdk.pc); `rvfit plugins` must list both as loaded, and both must
# link the SDK alone (librvfit_sdk, not the engine).
set -euo pipefail
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

# 1. CMake package: the SDSS plugin sources built standalone.
cmake -S "$RVFIT_SOURCE_DIR/instruments/sdss" -B "$tmp/sdss" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" \
  > "$tmp/sdss.log" 2>&1 && cmake --build "$tmp/sdss" -j2 >> "$tmp/sdss.log" 2>&1 ||
  { cat "$tmp/sdss.log"; fail "standalone sdss build"; }

# 2. pkg-config: one compiler line, nothing from the source tree.
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
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
  # here-strings, not pipes: under pipefail, grep -q closing the pipe early
  # can kill the writer with SIGPIPE and fail a correct check
  grep -q 'librvfit_sdk\.so\.' <<< "$needed" || fail "$so does not link librvfit_sdk"
  grep -qE 'librvfit(_tools)?\.so' <<< "$needed" && fail "$so links the engine: $needed"
done

# The installed CLI, with only the out-of-tree plugins on its path.
out=$(RVFIT_PLUGIN_PATH="$tmp/sdss/plugins:$tmp/ascii" \
      "$tmp/prefix/bin/rvfit" plugins 2>&1) || { echo "$out"; fail "rvfit plugins"; }
echo "$out"
sdss_entry=$(grep -A1 "$tmp/sdss/plugins" <<< "$out" || true)
grep -q "instrument sdss" <<< "$sdss_entry" ||
  fail "sdss not listed from the out-of-tree build"
grep -q "instrument ascii" <<< "$out" || fail "ascii not listed"
ours=$(grep -iE "ascii|sdss" <<< "$out" || true)
grep -qiE "fail|error|reject" <<< "$ours" &&
  fail "a plugin was rejected"

echo "test_out_of_tree: passed"
