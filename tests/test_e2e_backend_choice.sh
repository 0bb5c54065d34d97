#!/bin/bash
# test_e2e_backend_choice.sh — which backend `rvfit fit` runs on (issue 28):
#  - a name no backend has is an error, also inside a fallback list: exit
#    status 2, the known backends named, nothing fitted;
#  - `cuda, opencl, cpu` on a machine without a GPU chooses cpu, not an
#    OpenCL CPU device such as PoCL, and says why in its first lines;
#    `[backend.opencl] device_type = cpu` asks for the CPU device; a single
#    `opencl` still takes it (CI's OpenCL tests run on PoCL).
# The second part (argument `fallback`: test_e2e_backend_fallback.sh)
# needs the opencl plugin and PoCL, and no GPU: it skips (77) otherwise,
# saying why.
set -u
part=${1:-typo}
: "${RVFIT_BIN:?}" "${RVFIT_TEST_DATA:?}" "${RVFIT_TEST_TMP:?}"
fail() { echo "FAIL: $*"; exit 1; }
t="$RVFIT_TEST_TMP/backend_$part"
rm -rf "$t" && mkdir -p "$t"
"$RVFIT_BIN" mock spectra -i desi -n 2 --seed 7 --out "$t/two.fits" \
    --truth "$t/truth.fits" > "$t/mock.log" 2>&1 || fail "mock: $(cat "$t/mock.log")"
fit() { # fit OUTDIR LOG ARGS...
    local o=$1 l=$2; shift 2
    "$RVFIT_BIN" fit --templates "$RVFIT_TEST_DATA/lib" -o "$t/$o" -j 1 "$@" \
        "$t/two.fits" > "$t/$l" 2>&1
}
# the BACKEND keyword of an output's primary header (plain FITS cards)
backend_of() {
    python3 -c '
import sys
h = open(sys.argv[1], "rb").read(2880 * 4).decode("ascii", "replace")
print(next((h[i + 10:i + 80].split("\x27")[1].strip()
            for i in range(0, len(h), 80) if h[i:i + 9] == "BACKEND ="), ""))
' "$1"
}

# 1. a typo, alone and inside a list
[ "$part" = typo ] && for list in "gpu, cpu" "cuda, gpu" "gpu"; do
    fit typo typo.log -b "$list"; rc=$?
    cat "$t/typo.log"
    [ $rc = 2 ] || fail "-b '$list': exit $rc, want 2"
    grep -q "backend 'gpu' does not exist (\[backend\] name = $list; known: cpu, opencl, cuda" "$t/typo.log" ||
        fail "-b '$list': the message does not name the known backends"
    [ ! -e "$t/typo/rvtab_two.fits" ] || fail "-b '$list': an output was written"
done

if [ "$part" = typo ]; then
    echo "test_e2e_backend_choice: passed"
    exit 0
fi

# 2. the fallback list on a machine without a GPU
skip() { echo "SKIPPED: $*"; exit 77; }
case ",${RVFIT_PLUGINS_BUILT:?}," in
    *,rvfit_backend_opencl,*) ;;
    *) skip "the opencl backend was not built" ;;
esac
plugins=$("$RVFIT_BIN" plugins --devices 2>&1)
if printf '%s\n' "$plugins" | grep -qE '\((GPU|accelerator), [0-9]+ MiB\)'; then
    printf '%s\n' "$plugins"; skip "an OpenCL GPU is present"
fi
if printf '%s\n' "$plugins" | awk '/backend +cuda /{f=1} f&&/status:/{print; exit}' | grep -q 'status: available'; then
    skip "a CUDA device is present"
fi
if ! printf '%s\n' "$plugins" | grep -qE '\(CPU, [0-9]+ MiB\)'; then
    printf '%s\n' "$plugins"; skip "no OpenCL CPU device (PoCL) to leave out"
fi

fit list list.log -b "cuda, opencl, cpu" || fail "the list: $(cat "$t/list.log")"
cat "$t/list.log"
grep -q "backend 'cpu' chosen: position 3 of the fallback list 'cuda, opencl, cpu'" "$t/list.log" ||
    fail "the list did not choose cpu, saying so"
grep -q "backend 'opencl': init: no OpenCL GPU or accelerator; its 1 CPU device" "$t/list.log" ||
    grep -q "backend 'opencl': init: no OpenCL GPU or accelerator; its [0-9]* CPU devices" "$t/list.log" ||
    fail "the log does not say why opencl was passed over"
# the choice comes before the templates are read
first=$(grep -n "chosen" "$t/list.log" | head -1 | cut -d: -f1)
tmpl=$(grep -n "rvfit: templates " "$t/list.log" | head -1 | cut -d: -f1)
[ -n "$first" ] && [ -n "$tmpl" ] && [ "$first" -lt "$tmpl" ] ||
    fail "the backend line does not come first"
[ "$(backend_of "$t/list/rvtab_two.fits")" = cpu ] ||
    fail "BACKEND of the output is '$(backend_of "$t/list/rvtab_two.fits")', want cpu"

fit ask ask.log -b "cuda, opencl, cpu" --set backend.opencl.device_type=cpu ||
    fail "device_type = cpu: $(cat "$t/ask.log")"
grep -q "backend 'opencl' chosen: position 2" "$t/ask.log" ||
    fail "device_type = cpu did not choose opencl: $(cat "$t/ask.log")"
[ "$(backend_of "$t/ask/rvtab_two.fits")" = opencl ] || fail "BACKEND is not opencl"

fit one one.log -b opencl || fail "a single opencl: $(cat "$t/one.log")"
grep -q "backend 'opencl' chosen: \[backend\] name names it alone" "$t/one.log" ||
    fail "a single opencl was not used strictly: $(cat "$t/one.log")"
echo "test_e2e_backend_fallback: passed"
