"""Checks of the clip stage against a cosmic-free twin (test_indep_clip.sh).

The generator wrote the same exposures twice, with and without cosmic rays
(`--ablate cosmics` draws them from their own stream, so everything else
is identical); the difference of the two files' flux is exactly the
cosmic rays, which nothing in rvfit sees.  usage:
clip_check.py CR_FILE NOCR_FILE CLIP_RVTAB OFF_RVTAB TWIN_RVTAB
"""
import sys

import numpy as np
from astropy.io import fits

STRONG = 20.0  # unflagged hits above this many sigma must be rejected


def main(cr, nocr, on, off, twin):
    tab = {k: fits.getdata(p, "RVTAB") for k, p in
           (("on", on), ("off", off), ("twin", twin))}
    fails = []
    strong = np.zeros(len(tab["on"]), bool)
    with fits.open(cr) as fc, fits.open(nocr) as fn:
        for a in ("B", "R", "Z"):
            hit = (fc[a + "_FLUX"].data - fn[a + "_FLUX"].data) * \
                np.sqrt(fc[a + "_IVAR"].data)
            hit[fc[a + "_MASK"].data != 0] = 0  # flagged: not the fit's job
            arm = hit.max(axis=1) > STRONG
            strong |= arm
            missed = arm & (tab["on"]["NCLIP_" + a] == 0)
            print(f"arm {a}: {arm.sum()} spectra with an unflagged hit > "
                  f"{STRONG:g} sigma, {missed.sum()} without NCLIP_{a}")
            if missed.any():
                fails.append(f"arm {a}: unflagged hits left in rows "
                             f"{np.flatnonzero(missed).tolist()}")
    n = strong.sum()
    if n < 5:
        fails.append(f"only {n} spectra with a strong unflagged hit: the "
                     "data cannot test the clip stage")
    err = tab["twin"]["VRAD_ERR"]
    rms = {}
    for k in ("on", "off"):
        z = np.abs(tab[k]["VRAD"] - tab["twin"]["VRAD"])[strong] / err[strong]
        rms[k] = np.sqrt(np.mean(z**2))
        print(f"clip {k}: |VRAD - twin's| / VRAD_ERR over the {n} hit "
              f"spectra: max {z.max():.3f}, rms {rms[k]:.3f}")
        if k == "on" and (z.max() > 0.5 or rms[k] > 0.2):
            fails.append(f"clip on: velocities off the cosmic-free twin's "
                         f"by up to {z.max():.2f} sigma, rms {rms[k]:.2f} "
                         "(limits 0.5 and 0.2)")
    if rms["off"] < 0.3:
        fails.append("without clipping the hits move the velocities by an "
                     f"rms of only {rms['off']:.2f} sigma: the data cannot "
                     "show what clipping does")
    used = tab["twin"]["NPIX_TOT"].sum()
    lost = sum(tab["twin"]["NCLIP_" + a].sum() for a in ("B", "R", "Z"))
    print(f"cosmic-free twin: {lost} of {used} pixels rejected "
          f"({lost / used:.2e})")
    if lost > 1e-4 * used:
        fails.append(f"{lost} pixels rejected without any cosmic ray "
                     "(limit 1e-4 of the pixels)")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
