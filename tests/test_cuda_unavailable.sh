#!/bin/bash
# test_cuda_unavailable.sh — without a CUDA device, `rvfit plugins` lists
# the cuda backend as loadable and "unavailable: ... no CUDA device (...)",
# never as FAILED or broken.  Skips (77) when this configuration did not
# build the plugin ($RVFIT_PLUGINS_BUILT, from tests/CMakeLists.txt) or a
# device is present (test_cuda_equiv covers that case).
set -u
case ",${RVFIT_PLUGINS_BUILT:?}," in
    *,rvfit_backend_cuda,*) ;;
    *) echo "SKIPPED: rvfit_backend_cuda was not built in this configuration (built: $RVFIT_PLUGINS_BUILT)"
       exit 77 ;;
esac
so="${RVFIT_PLUGIN_PATH:?}/rvfit_backend_cuda.so"
if [ ! -e "$so" ]; then
    echo "FAIL: cuda backend built but $so is absent"
    exit 1
fi
out=$("${RVFIT_BIN:?}" plugins 2>&1)
# The cuda entry up to its status line: the plugin's own log lines (the
# device it opened, on a machine with a GPU) may come in between.
block=$(printf '%s\n' "$out" | awk '/^ +backend +cuda /{f=1} f{print} f&&/status:/{exit}')
echo "$block"
fail=0
if printf '%s\n' "$block" | grep -q 'status: available'; then
    echo "SKIPPED: a CUDA device is present: $(printf '%s\n' "$block" | tail -1)"
    exit 77
fi
if [ -z "$block" ]; then
    echo "FAIL: cuda backend not listed by 'rvfit plugins':"; echo "$out"; fail=1
fi
if ! printf '%s\n' "$block" | grep -q 'status: unavailable: .*no CUDA device (cudaGetDeviceCount: '; then
    echo "FAIL: expected 'status: unavailable: ... no CUDA device (cudaGetDeviceCount: ...)'"; fail=1
fi
if printf '%s\n' "$block" | grep -qE 'FAILED|broken'; then
    echo "FAIL: cuda backend reported as FAILED/broken"; fail=1
fi
[ $fail -eq 0 ] && echo "test_cuda_unavailable: passed"
exit $fail
