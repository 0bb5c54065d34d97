"""Wrong-basin fits: -2 ln L of each fit against -2 ln L at the truth.

    python3 bench/indep/basin.py COADD TRUTH RVTAB LIBRARY [--margin 25]
                                 [--bound FILE]... [--list]

For every star of RVTAB (matched to TRUTH and COADD by TARGETID) the
backend evaluates -2 ln L (rvfit's Python package, the function the fit
minimises) at the fitted (TEFF, LOGG, FEH, ALPHAFE, VRAD, VSINI) and at the
true ones.  A fit whose value exceeds the truth's by more than --margin is
in a wrong basin: a point with a clearly lower value exists, so the
optimiser, not the template library, stopped short.  (The converse does
not hold: off the grid's nodes the truth carries the interpolation error,
so this counts a lower bound of the optimiser's failures.)

Prints the fraction per class (cool giants: true TEFF < 4800 K and LOGG <
3.5; the rest) and S/N bin, the median and largest excess, and with
--bound rms((fit - true)/bound) per parameter for S/N 5-15 and > 15 of the
stars the bound file covers.  --list prints every wrong-basin star.

Needs numpy, astropy and the rvfit package (PYTHONPATH=python/src with
RVFIT_BUILD_DIR=build from a source tree).
"""
import argparse
import sys

import numpy as np
from astropy.io import fits

import rvfit

PARS = ("TEFF", "LOGG", "FEH", "ALPHAFE")


def match(ids, keys):
    pos = {int(k): i for i, k in enumerate(keys)}
    return np.array([pos[int(t)] for t in ids])


def m2lnl_at(lib, spectra, rows, th, v, vsini):
    out = np.empty(len(rows))
    for s in range(0, len(rows), 256):
        sl = slice(s, s + 256)
        sp = spectra[rows[sl]]
        out[sl] = lib.m2lnl(sp, th[sl], v[sl], vsini[sl],
                            spec=np.arange(len(rows[sl]), dtype=np.uint32))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("coadd")
    ap.add_argument("truth")
    ap.add_argument("rvtab")
    ap.add_argument("library")
    ap.add_argument("--margin", type=float, default=25.0)
    ap.add_argument("--bound", action="append",
                    help="bound file(s) of rvfit-indep bound; repeatable")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()

    tab = fits.getdata(a.rvtab, "RVTAB")
    tru = fits.getdata(a.truth, "TRUTH")
    tab = tab[np.all([np.isfinite(tab[c]) for c in PARS + ("VRAD",)],
                     axis=0)]
    ids = np.asarray(tab["TARGETID"])
    t = tru[match(ids, tru["TARGETID"])]
    lib = rvfit.Library(a.library)
    with fits.open(a.coadd) as f:
        fib = np.asarray(f["FIBERMAP"].data["TARGETID"])
    rows = match(ids, fib)
    spectra = rvfit.read_desi(a.coadd, rows=np.sort(rows))
    rows = match(ids, np.asarray(spectra.ids))

    def theta(src):
        return np.stack([np.asarray(src[p], float) for p in PARS], axis=1)

    mfit = m2lnl_at(lib, spectra, rows, theta(tab), np.asarray(tab["VRAD"]),
                    np.asarray(tab["VSINI"], float))
    mtru = m2lnl_at(lib, spectra, rows, theta(t), np.asarray(t["VRAD"]),
                    np.asarray(t["VSINI"], float))
    dm = mfit - mtru
    wrong = dm > a.margin
    cool = (t["TEFF"] < 4800) & (t["LOGG"] < 3.5)
    snr = np.asarray(t["SNR"])
    print("%d stars; wrong basin: -2 ln L(fit) > -2 ln L(truth) + %g" %
          (len(ids), a.margin))
    print("%-22s %5s %6s %8s %10s %10s" %
          ("class", "n", "wrong", "frac", "med dm", "max dm"))
    bins = (("S/N<5", snr < 5), ("5-15", (snr >= 5) & (snr < 15)),
            ("S/N>15", snr >= 15), ("all", snr > -1))
    for cname, cm in (("cool giants", cool), ("others", ~cool),
                      ("all", cool | ~cool)):
        for bname, bm in bins:
            m = cm & bm
            if not m.any():
                continue
            w = wrong & m
            print("%-22s %5d %6d %8.3f %10.1f %10.1f" %
                  (cname + " " + bname, m.sum(), w.sum(), w.sum() / m.sum(),
                   np.median(dm[w]) if w.any() else 0,
                   dm[m].max()))
    if a.list:
        print("\nTARGETID   SNR  TEFF_T TEFF  LOGG_T LOGG  FEH_T  FEH  "
              "VS_T  VS    m2lnl_fit  m2lnl_true  excess")
        for i in np.flatnonzero(wrong):
            print("%d %5.1f %5.0f %5.0f %5.2f %5.2f %5.2f %5.2f %4.1f %4.1f "
                  "%11.1f %11.1f %7.1f" %
                  (ids[i], snr[i], t["TEFF"][i], tab["TEFF"][i],
                   t["LOGG"][i], tab["LOGG"][i], t["FEH"][i], tab["FEH"][i],
                   t["VSINI"][i], tab["VSINI"][i], mfit[i], mtru[i], dm[i]))
    if a.bound:
        b = np.concatenate([fits.getdata(p, "BOUND") for p in a.bound])
        keep = np.isin(ids, b["TARGETID"])
        bb = b[match(ids[keep], b["TARGETID"])]
        print("\nrms((fit - true)/bound), %d stars of the bound file" %
              keep.sum())
        print("%-8s %5s %7s %7s %7s %7s %7s" %
              (("bin", "n", "VRAD") + PARS))
        for bname, bm in bins[1:3]:
            m = bm[keep]
            if not m.any():
                continue
            row = []
            for p in ("VRAD",) + PARS:
                r = (np.asarray(tab[p])[keep][m] - np.asarray(t[p])[keep][m]
                     ) / np.asarray(bb[p])[m]
                row.append(np.sqrt(np.mean(r * r)))
            print("%-8s %5d" % (bname, m.sum()) +
                  "".join(" %7.2f" % x for x in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
