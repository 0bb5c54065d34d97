#!/usr/bin/env python3
"""Where the simplex interpolator's parameter scatter comes from on an
irregular grid (docs/benchmarks.md, "Simplex interpolation on an
irregular grid").

Locates each star's TRUE parameters in the triangulation stored in a
simplex library (HDU SIMPLEX; coordinates: scaled axes / mean node
spacing, as core/engine/interp/simplex/sx_build.c uses), measures that
simplex's largest extent along any axis (1 = within one grid cell; 2 or
more = the simplex bridges a missing model), and prints the robust
scatter of recovered - true TEFF, LOGG, FEH per class for each RVTAB
given (e.g. the irregular-grid simplex fit and the full-grid multilinear
fit of the same stars), plus stars outside the hull.

Usage: simplex_diag.py LIBRARY TRUTH NAME=RVTAB...
"""
import sys

import numpy as np
from astropy.io import fits


def robust_std(x):
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    if x.size < 3:
        return float("nan")
    q75, q25 = np.percentile(x, [75, 25])
    return float((q75 - q25) / 1.349)


def load_triangulation(path):
    with fits.open(path) as h:
        axes = [x for x in h if x.name.startswith("AXIS_")]
        nodes = [np.array(x.data, float) for x in axes]
        names = [x.header["AXNAME"] for x in axes]
        log10 = [x.header["SCALE"] == "LOG10" for x in axes]
        vert = np.array(h["SIMPLEX"].data, np.int64)
    free = [i for i, n in enumerate(nodes) if len(n) > 1]
    h = np.array([(nodes[i][-1] - nodes[i][0]) / (len(nodes[i]) - 1)
                  for i in free])
    shape = [len(n) for n in nodes]
    idx = np.array(np.unravel_index(np.arange(np.prod(shape)), shape)).T
    coords = np.array([[nodes[i][idx[m, i]] for i in free]
                       for m in range(len(idx))]) / h
    return names, log10, free, h, coords, vert


def locate(p, coords, vert):
    """Index of a simplex containing p (barycentric >= -1e-9), or -1."""
    v = coords[vert]                      # [ns][d+1][d]
    t = np.transpose(v[:, 1:, :] - v[:, :1, :], (0, 2, 1))  # [ns][d][d]
    rhs = p - v[:, 0, :]
    ok = np.abs(np.linalg.det(t)) > 1e-12
    lam = np.full((len(vert), v.shape[2]), -1.0)
    lam[ok] = np.linalg.solve(t[ok], rhs[ok][..., None])[..., 0]
    l0 = 1 - lam.sum(1)
    inside = (lam.min(1) >= -1e-9) & (l0 >= -1e-9) & ok
    hit = np.nonzero(inside)[0]
    return int(hit[0]) if hit.size else -1


def main():
    lib, truth = sys.argv[1], sys.argv[2]
    names, log10, free, h, coords, vert = load_triangulation(lib)
    tru = fits.getdata(truth, "TRUTH")
    cls = {}
    for row in tru:
        x = []
        for i in free:
            v = row[names[i]] if names[i] in tru.columns.names else 0.0
            x.append(np.log10(v) if log10[i] else v)
        s = locate(np.array(x) / h, coords, vert)
        if s < 0:
            cls[row["TARGETID"]] = "outside hull"
            continue
        ext = np.ptp(coords[vert[s]], axis=0).max()
        cls[row["TARGETID"]] = ("extent 1 (one cell)" if ext <= 1 + 1e-9
                                else "extent >= 2 (bridges holes)")
    kinds = sorted(set(cls.values()))
    print("stars per class: " + ", ".join(
        f"{k}: {sum(c == k for c in cls.values())}" for k in kinds))
    index = {t: i for i, t in enumerate(tru["TARGETID"])}
    print("| fit | class | n | TEFF | LOGG | FEH |")
    print("|---|---|---|---|---|---|")
    for arg in sys.argv[3:]:
        name, _, path = arg.partition("=")
        tab = fits.getdata(path, "RVTAB")
        t = tru[np.array([index[x] for x in tab["TARGETID"]])]
        c = np.array([cls[x] for x in tab["TARGETID"]])
        for k in kinds + ["all"]:
            sel = np.ones(len(c), bool) if k == "all" else c == k
            print(f"| {name} | {k} | {sel.sum()} | "
                  + " | ".join(f"{robust_std(tab[p][sel] - t[p][sel]):.3g}"
                               for p in ("TEFF", "LOGG", "FEH")) + " |")


if __name__ == "__main__":
    main()
