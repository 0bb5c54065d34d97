#!/bin/bash
# test_e2e_python_wheel.sh — `pip install ./python` as a user does it: a
# fresh virtual environment without system site packages and without any
# RVFIT_* variable; pip builds the wheel through the package's PEP 517
# backend (scikit-build-core driving this CMake project) and installs it
# with numpy and astropy from PyPI.  Then, from the venv alone:
#   - `import rvfit` loads the package's own librvfit, and its backends
#     load from the package's plugin directory;
#   - the README's Python block runs on a mock coadd standing in for the
#     demo's and prints the velocities that this build's `rvfit fit`
#     finds for the same file;
#   - the venv's `rvfit` command fits that coadd: its VRAD equals this
#     build's rvfit's and lies within 5 sigma of the mock truth.
# The wheel is kept in the build tree (python-wheel/) and rebuilt only when
# a source file is newer; its CMake tree stays there too, so a rebuild is
# incremental.  Needs PyPI (the build backend, numpy, astropy).  Skips (77)
# only when no python3 can make a venv with pip.
set -euo pipefail
: "${RVFIT_BIN:?}" "${RVFIT_SOURCE_DIR:?}" "${RVFIT_TEST_DATA:?}"
build=$(cd "$(dirname "$RVFIT_BIN")" && pwd)
src=$RVFIT_SOURCE_DIR
lib=$RVFIT_TEST_DATA/lib
rvbin=$RVFIT_BIN
pys=("${RVFIT_PYTHON:-}" python3 /usr/bin/python3)
tmp=${RVFIT_TEST_TMP:-/tmp}/python_wheel
cache=$build/python-wheel
fail() { echo "FAIL: $*" >&2; exit 1; }

# From here on nothing of rvfit's or Python's environment: the venv must
# find everything itself.
for v in $(compgen -e); do
  case $v in RVFIT_*|PYTHON*|PIP_*|VIRTUAL_ENV|LD_LIBRARY_PATH|PKG_CONFIG_PATH)
    unset "$v" ;;
  esac
done
rm -rf "$tmp" && mkdir -p "$tmp" "$cache"
cd "$tmp"

venv=$tmp/venv
made=""
for p in "${pys[@]}"; do
  [ -n "$p" ] || continue
  command -v "$p" > /dev/null || continue
  rm -rf "$venv"
  if "$p" -m venv "$venv" > "$tmp/venv.log" 2>&1 &&
     "$venv/bin/python" -m pip --version > /dev/null 2>&1; then
    made=$p; break
  fi
done
if [ -z "$made" ]; then
  cat "$tmp/venv.log" 2>/dev/null || true
  echo "SKIP: no python3 that makes a venv with pip (Debian: apt-get install python3-venv)"
  exit 77
fi
py=$venv/bin/python
"$py" -c 'import sys; assert sys.prefix != sys.base_prefix
import site; assert not any("dist-packages" in p for p in sys.path), sys.path' ||
  fail "the venv of $made sees system site packages"
echo "venv from $made: $("$py" --version)"

# The wheel, built once per change of the sources (and per Python: its
# name carries the interpreter's tag).
dist=$cache/dist-$("$py" -c 'import sys; print("%s%d%d" % (sys.implementation.name, *sys.version_info[:2]))')
whl=$(ls "$dist"/rvfit-*.whl 2>/dev/null | head -1 || true)
if [ -n "$whl" ] && [ -z "$(find "$src/CMakeLists.txt" "$src/core" "$src/plugins" \
       "$src/instruments" "$src/python/pyproject.toml" "$src/python/src" \
       -newer "$whl" -type f ! -name '*.pyc' -print -quit)" ]; then
  echo "wheel up to date: $whl"
else
  rm -rf "$dist"
  start=$SECONDS
  "$py" -m pip wheel --no-deps -w "$dist" \
    --config-settings=build-dir="$cache/cmake" "$src/python" \
    > "$tmp/wheel.log" 2>&1 || { tail -50 "$tmp/wheel.log"; fail "pip wheel ./python"; }
  whl=$(ls "$dist"/rvfit-*.whl)
  echo "built $whl in $((SECONDS - start)) s"
fi
"$py" -m pip install -q "$whl" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "pip install $whl"; }
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')

# The package's own librvfit and plugins.
out=$("$py" -c '
import sys, rvfit, rvfit._lib as L
lib = rvfit.Library(sys.argv[1])
print(L.lib()._name)
print(lib.device("cpu"))
print(lib.params)' "$lib" 2>&1) || { echo "$out"; fail "import rvfit in the venv"; }
echo "$out"
abi=$(sed -n 's/^#define RVFIT_ABI_MAJOR \([0-9]*\)$/\1/p' \
      "$src/core/sdk/include/rvfit/abi.h")
[ "$(sed -n 1p <<< "$out")" = "$site/rvfit/lib/librvfit.so.$abi" ] ||
  fail "the venv's rvfit did not load its own librvfit"
grep -q "^cpu" <<< "$(sed -n 2p <<< "$out")" || fail "no cpu backend"
out=$("$venv/bin/rvfit" plugins 2>&1) || { echo "$out"; fail "rvfit plugins"; }
grep -qxF "  $site/rvfit/lib/rvfit/plugins:" <<< "$out" ||
  { echo "$out"; fail "the venv's rvfit does not search the package's plugins"; }
grep -qE '^    backend +cpu ' <<< "$out" || { echo "$out"; fail "cpu backend not listed"; }
grep -qE '^    instrument +desi ' <<< "$out" || { echo "$out"; fail "desi not listed"; }
grep -qF "$build/plugins" <<< "$out" && fail "the venv's rvfit shows this build's plugins"

# A mock coadd made by the venv's rvfit, fitted by this build's rvfit.
mkdir -p demo
ln -s "$lib" demo/lib
"$venv/bin/rvfit" mock spectra --instrument desi --nstar 8 --seed 11 \
  --snr-min 10 --snr-max 60 --vmax 300 --vsini-max 5 \
  --out demo/coadd-demo.fits --truth truth.fits > mock.log 2>&1 ||
  { cat mock.log; fail "rvfit mock spectra from the venv"; }
"$rvbin" fit --templates "$lib" --instrument desi --output-dir ref \
  --log-level warn demo/coadd-demo.fits > ref.log 2>&1 ||
  { cat ref.log; fail "this build's rvfit fit"; }

# The README's Python block, as written.
awk '/^### Python/ { s = 1 } s && /^```python$/ { b = 1; next }
     b && /^```$/ { exit } b' "$src/README.md" > readme.py
[ -s readme.py ] || fail "no python block under '### Python' in README.md"
"$py" readme.py > readme.out 2> readme.err || { cat readme.err; fail "README's Python block"; }
cat readme.out

# The venv's rvfit command.
"$venv/bin/rvfit" fit --templates demo/lib --output-dir out --log-level warn \
  demo/coadd-demo.fits > fit.log 2>&1 || { cat fit.log; fail "rvfit fit from the venv"; }

"$py" - <<'EOF' || fail "results differ"
import numpy as np
from astropy.io import fits
import rvfit
ref = rvfit.read_rvtab("ref/rvtab_coadd-demo.fits")
venv = rvfit.read_rvtab("out/rvtab_coadd-demo.fits")
truth = fits.getdata("truth.fits", "TRUTH")
assert len(ref) == len(venv) == len(truth) == 8
assert list(venv["TARGETID"]) == list(ref["TARGETID"]) == list(truth["TARGETID"])
# the same code, compiled apart (Release for the wheel): equal to rounding
dv = np.abs(venv["VRAD"] - ref["VRAD"])
assert np.all(dv <= 1e-6 * np.maximum(1, np.abs(ref["VRAD"]))), dv
pull = (venv["VRAD"] - truth["VRAD"]) / venv["VRAD_ERR"]
print("venv rvfit: |VRAD - true| / VRAD_ERR =", np.round(np.abs(pull), 2))
assert np.all(np.abs(pull) < 5), pull
# the README block printed each TARGETID with the CLI's VRAD
rows = {}
for line in open("readme.out"):
    w = line.split()
    if len(w) >= 2 and w[0].isdigit():
        rows[int(w[0])] = float(w[1])
assert sorted(rows) == sorted(int(t) for t in ref["TARGETID"]), rows
for t, v in zip(ref["TARGETID"], ref["VRAD"]):
    assert abs(rows[int(t)] - v) <= 1e-6 * max(1, abs(v)), (t, rows[int(t)], v)
EOF
echo "OK: pip-installed rvfit (python and command) in a fresh venv"
