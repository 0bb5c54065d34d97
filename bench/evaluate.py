#!/usr/bin/env python3
"""Compare an rvtab_*.fits with the truth table of `rvfit mock spectra`.

Prints VRAD bias, robust scatter, pull width, >5 sigma fraction and
Teff/logg/[Fe/H] bias and scatter in S/N bins (<5, 5-15, >15), as
docs/benchmarks.md reports them.  Usage: evaluate.py RVTAB TRUTH [--json]
"""
import json
import sys

import numpy as np
from astropy.io import fits


def robust_std(x):
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan")
    q75, q25 = np.percentile(x, [75, 25])
    return float((q75 - q25) / 1.349)


def summarize(tab, tru, sel):
    d = tab["VRAD"][sel] - tru["VRAD"][sel]
    e = tab["VRAD_ERR"][sel]
    pull = d / e
    out = {
        "n": int(sel.sum()),
        "vrad_bias": float(np.nanmedian(d)),
        "vrad_rstd": robust_std(d),
        "vrad_pull": robust_std(pull),
        "vrad_out5": float(np.mean(np.abs(pull) > 5)) if sel.sum() else float("nan"),
    }
    for col in ("TEFF", "LOGG", "FEH"):
        dd = tab[col][sel] - tru[col][sel]
        out[col.lower() + "_bias"] = float(np.nanmedian(dd))
        out[col.lower() + "_rstd"] = robust_std(dd)
        ee = tab[col + "_ERR"][sel]
        out[col.lower() + "_pull"] = robust_std(dd / ee)
    return out


def main():
    tab = fits.getdata(sys.argv[1], "RVTAB")
    tru = fits.getdata(sys.argv[2], "TRUTH")
    index = {t: i for i, t in enumerate(tru["TARGETID"])}
    order = np.array([index[t] for t in tab["TARGETID"]])
    tru = tru[order]
    snr = tru["SNR"]
    bins = {"all": np.ones(len(tab), bool), "S/N<5": snr < 5,
            "5-15": (snr >= 5) & (snr < 15), ">15": snr >= 15}
    res = {k: summarize(tab, tru, m) for k, m in bins.items()}
    warn = tab["RVS_WARN"]
    res["warn_fraction"] = float(np.mean(warn != 0))
    # error-weighted mean of VRAD - true and its standard error
    d = tab["VRAD"] - tru["VRAD"]
    w = 1 / tab["VRAD_ERR"] ** 2
    ok = np.isfinite(d) & np.isfinite(w)
    res["vrad_wmean"] = float(np.sum(w[ok] * d[ok]) / np.sum(w[ok]))
    res["vrad_wmean_err"] = float(1 / np.sqrt(np.sum(w[ok])))
    if "--json" in sys.argv:
        print(json.dumps(res, indent=1))
        return
    print(f"{'bin':7s} {'n':>4s} {'dV med':>7s} {'dV rstd':>8s} {'pull':>5s} {'>5sig':>6s}"
          f" {'dTeff':>7s} {'sTeff':>6s} {'pTeff':>5s} {'dlogg':>6s} {'slogg':>6s} {'dFeH':>6s} {'sFeH':>6s}")
    for k in ("S/N<5", "5-15", ">15", "all"):
        r = res[k]
        print(f"{k:7s} {r['n']:4d} {r['vrad_bias']:7.2f} {r['vrad_rstd']:8.2f} {r['vrad_pull']:5.2f}"
              f" {r['vrad_out5']:6.3f} {r['teff_bias']:7.0f} {r['teff_rstd']:6.0f} {r['teff_pull']:5.2f}"
              f" {r['logg_bias']:6.2f} {r['logg_rstd']:6.2f} {r['feh_bias']:6.2f} {r['feh_rstd']:6.2f}")
    print(f"weighted mean dV = {res['vrad_wmean']:.3f} +- {res['vrad_wmean_err']:.3f} km/s;"
          f" warned fraction {res['warn_fraction']:.3f}")


if __name__ == "__main__":
    main()
