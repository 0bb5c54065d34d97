#!/usr/bin/env python3
"""Accuracy of two rvtab_*.fits of the same stars against one truth table.

For VRAD, TEFF, LOGG and FEH in S/N bins (<5, 5-15, >15): robust scatter
of (x - true) and robust pull width (x - true)/error, before (A) and after
(B), with B/A - 1 in percent, and the stars beyond 5 sigma in B but not in
A.  This is issue 12's acceptance ("within 3 % of today's, no new > 5
sigma outliers").  The column "+-" is the standard deviation of the
scatter ratio B/A over 300 bootstrap resamplings of the stars (paired):
how far the ratio of two equally good fits of these stars may wander.
Usage: compare.py RVTAB_A RVTAB_B TRUTH [--json]
"""
import json
import sys

import numpy as np
from astropy.io import fits

from evaluate import robust_std  # bench/evaluate.py: one definition

COLS = ("VRAD", "TEFF", "LOGG", "FEH")


def aligned(path, truth):
    tab = fits.getdata(path, "RVTAB")
    index = {t: i for i, t in enumerate(tab["TARGETID"])}
    return tab[np.array([index[t] for t in truth["TARGETID"]])]


def boot_ratio(a, b, tru, sel, col, nboot=300):
    """Std of rstd(B)/rstd(A) over paired bootstrap resamplings."""
    da, db = (a[col] - tru[col])[sel], (b[col] - tru[col])[sel]
    rng = np.random.default_rng(12)
    r = []
    for _ in range(nboot):
        k = rng.integers(0, len(da), len(da))
        r.append(robust_std(db[k]) / robust_std(da[k]))
    return float(np.std(r))


def stats(tab, tru, sel):
    out = {}
    for c in COLS:
        d = tab[c][sel] - tru[c][sel]
        p = d / tab[c + "_ERR"][sel]
        out[c] = {"rstd": robust_std(d), "pull": robust_std(p),
                  "out5": int(np.sum(~(np.abs(p) <= 5)))}
    return out


def main():
    tru = fits.getdata(sys.argv[3], "TRUTH")
    both = set(fits.getdata(sys.argv[1], "RVTAB")["TARGETID"]) & set(
        fits.getdata(sys.argv[2], "RVTAB")["TARGETID"])
    tru = tru[np.isin(tru["TARGETID"], list(both))]  # a subset fitted
    a, b = aligned(sys.argv[1], tru), aligned(sys.argv[2], tru)
    snr = tru["SNR"]
    bins = {"S/N<5": snr < 5, "5-15": (snr >= 5) & (snr < 15),
            ">15": snr >= 15, "all": np.ones(len(tru), bool)}
    res = {k: {"n": int(m.sum()), "A": stats(a, tru, m), "B": stats(b, tru, m),
               "boot": {c: boot_ratio(a, b, tru, m, c) for c in COLS}}
           for k, m in bins.items()}
    new = {}
    for c in COLS:
        pa = np.abs((a[c] - tru[c]) / a[c + "_ERR"])
        pb = np.abs((b[c] - tru[c]) / b[c + "_ERR"])
        new[c] = [int(t) for t in tru["TARGETID"][~(pb <= 5) & (pa <= 5)]]
    res["new_out5"] = new
    res["warn"] = [float(np.mean(a["RVS_WARN"] != 0)),
                   float(np.mean(b["RVS_WARN"] != 0))]
    res["maxdiff"] = {c: float(np.nanmax(np.abs(a[c] - b[c]))) for c in COLS}
    if "--json" in sys.argv:
        print(json.dumps(res, indent=1))
        return
    worst = 0.0
    print(f"{'bin':6s} {'n':>4s} {'col':5s} {'rstd A':>9s} {'rstd B':>9s} {'%':>6s} {'+-':>4s}"
          f" {'pull A':>7s} {'pull B':>7s} {'%':>6s} {'>5s A':>5s} {'>5s B':>5s}")
    for k in ("S/N<5", "5-15", ">15", "all"):
        for c in COLS:
            sa, sb = res[k]["A"][c], res[k]["B"][c]
            ds = 100 * (sb["rstd"] / sa["rstd"] - 1)
            dp = 100 * (abs(sb["pull"] - 1) - abs(sa["pull"] - 1)) / sa["pull"]
            if k != "all":
                worst = max(worst, ds, dp)
            print(f"{k:6s} {res[k]['n']:4d} {c:5s} {sa['rstd']:9.4f} {sb['rstd']:9.4f}"
                  f" {ds:+6.1f} {100 * res[k]['boot'][c]:4.1f} {sa['pull']:7.3f} {sb['pull']:7.3f} {dp:+6.1f}"
                  f" {sa['out5']:5d} {sb['out5']:5d}")
    print("pull %: change of |pull - 1| relative to pull A (positive = further from 1)")
    print(f"worst change in a bin: {worst:+.1f} %; new > 5 sigma: "
          + ", ".join(f"{c} {len(v)}" for c, v in new.items()))
    print(f"warned fraction {res['warn'][0]:.3f} -> {res['warn'][1]:.3f}; max |B - A|: "
          + ", ".join(f"{c} {v:.3g}" for c, v in res["maxdiff"].items()))


if __name__ == "__main__":
    main()
