#!/bin/bash
# test_plugins_built.sh — the plugin directory of the build holds exactly
# the plugins this configuration built ($RVFIT_PLUGINS_BUILT, recorded by
# rvfit_add_plugin), and `rvfit plugins` loads every one of them: a plugin
# that was built but does not load is a failure here, whatever device the
# machine has ("unavailable" is fine; FAILED or broken is not).  A module
# left over from an earlier configuration (e.g. reconfigured with
# -DRVFIT_OPENCL=OFF) would be loaded by rvfit and skipped by the tests
# that check for the plugin, so it fails too.
set -u
dir=${RVFIT_PLUGIN_PATH:?}
built=",${RVFIT_PLUGINS_BUILT:?},"
fail=0
for so in "$dir"/rvfit_*.so; do
    [ -e "$so" ] || continue
    t=$(basename "$so" .so)
    case $built in *,"$t",*) ;; *)
        echo "FAIL: $so was not built by this configuration (stale? remove it)"
        fail=1 ;;
    esac
done
out=$("${RVFIT_BIN:?}" plugins 2>/dev/null)
# Entries listed under the build's plugin directory only (the install
# directory may hold other plugins).
block=$(printf '%s\n' "$out" | awk -v d="  $dir:" '
    $0 == d { on = 1; next }
    /^  [^ ]/ { on = 0 }
    on')
printf '%s\n' "$block"
n=0
for t in ${RVFIT_PLUGINS_BUILT//,/ }; do
    case $t in
        rvfit_backend_cuda_emu) continue ;; # apart, outside the search path
        rvfit_backend_*) kind=backend name=${t#rvfit_backend_} ;;
        rvfit_instrument_*) kind=instrument name=${t#rvfit_instrument_} ;;
        *) echo "FAIL: unexpected plugin target $t"; fail=1; continue ;;
    esac
    n=$((n + 1))
    # a backend's entry line is followed by its status line
    after=0; [ $kind = backend ] && after=1
    entry=$(printf '%s\n' "$block" | grep -A$after -E "^ +$kind +$name ")
    if [ -z "$entry" ]; then
        echo "FAIL: $kind $name built but not listed under $dir"; fail=1
    elif printf '%s\n' "$entry" | grep -qE 'FAILED|broken'; then
        echo "FAIL: $kind $name built but does not load: $entry"; fail=1
    fi
done
[ $n -gt 0 ] || { echo "FAIL: no plugin built"; fail=1; }
[ $fail -eq 0 ] && echo "test_plugins_built: $n plugins built and loaded"
exit $fail
