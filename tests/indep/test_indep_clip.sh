#!/usr/bin/env bash
# The clip stage ([fit] clip) against an independent truth: rvfit-indep
# writes the same per-exposure spectra twice, with and without cosmic rays
# (--ablate cosmics changes nothing else), so the difference of the two
# files is exactly the hits the coadd left unflagged.  clip_check.py
# requires, on numbers measured at this seed (the data and fits are
# deterministic):
#  - every arm with an unflagged hit above 20 sigma has NCLIP >= 1 there;
#  - those spectra's velocities lie within 0.5 VRAD_ERR of the cosmic-free
#    twin's, rms at most 0.2 (measured max 0.19, rms 0.082), where without
#    clipping their rms is at least 0.3 (measured 0.53: the data can show
#    the effect);
#  - on the twin at most 1e-4 of the pixels are rejected (measured 6e-6).
# Library: the indep_lib fixture.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
py=
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import astropy, numpy' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "needs a python3 with astropy and numpy (scripts/setup-deps.sh" \
         "installs python3-astropy)" >&2
    exit 1
fi
d=$RVFIT_TEST_TMP/indep_clip
lib=$RVFIT_TEST_TMP/indep_lib/lib
rm -rf "$d"
mkdir -p "$d"
gen=(epochs --truth "$d/truth.fits" --nstar 40 --seed 11 --nfile 1
     --nexp-max 4 --binary-frac 0 --threads 2)
"$ind" "${gen[@]}" --out "$d/cr"
"$ind" "${gen[@]}" --out "$d/nocr" --ablate cosmics
fit() { # OUT CLIP INPUT [OPTION...]
    local out=$1 clip=$2 in=$3
    shift 3
    "$RVFIT_BIN" fit -t "$lib" -o "$d/$out" --no-models \
        --set "fit.clip=$clip" "$@" "$in" 2>"$d/$out.log"
}
fit on 5 "$d/cr/spectra-0.fits" -j 2 --set run.driver_threads=0
fit off 0 "$d/cr/spectra-0.fits" -j 2
fit twin 5 "$d/nocr/spectra-0.fits" -j 2
# With run.driver_threads the rejections, the Newton steps and the error
# terms' tables are worked out on the fit driver's threads: one thread
# and small batches must give the same table to the last bit.
fit on1 5 "$d/cr/spectra-0.fits" -j 1 --batch-size 13 --set run.readahead=0
"$py" - "$d/on/rvtab_spectra-0.fits" "$d/on1/rvtab_spectra-0.fits" <<'EOF'
import sys
import numpy as np
from astropy.io import fits
a, b = (fits.getdata(p, "RVTAB") for p in sys.argv[1:3])
bad = [n for n in a.names
       if not np.array_equal(a[n], b[n], equal_nan=a[n].dtype.kind == "f")]
if bad:
    sys.exit("2 threads and 1 thread differ in " + ", ".join(bad))
print("rvtab identical with 2 threads and with 1 (%d rows)" % len(a))
EOF
"$py" "$(dirname "${BASH_SOURCE[0]}")/clip_check.py" \
    "$d/cr/spectra-0.fits" "$d/nocr/spectra-0.fits" \
    "$d/on/rvtab_spectra-0.fits" "$d/off/rvtab_spectra-0.fits" \
    "$d/twin/rvtab_spectra-0.fits"
rm -rf "$d"
