#!/usr/bin/env python3
"""Filled holes against the truth (docs/benchmarks.md, "Filling holes
before triangulating").

FULL: a library of the full grid (the truth at every node); FILLED: a
simplex library of an irregular grid built with [templates] fill_holes =
quadratic; PLAIN: the simplex library of the same irregular grid without
filling.  Prints, over the filled nodes that the full grid has, the rms
(over every pixel of every arm) of filled - truth and of the simplex
interpolation of PLAIN at the same nodes - truth; with TRUTH (a truth
table, columns TEFF LOGG FEH ALPHAFE), how many of its stars lie in a
simplex of FILLED with a filled vertex.

Usage: fill_check.py FULL FILLED PLAIN [TRUTH]
"""
import sys

import numpy as np
from astropy.io import fits


def load(path):
    return fits.open(path + "/rvfit_library.fits")


def coords(h):
    """u (node spacings, free axes) of every model; axes' nodes."""
    nodes = [x.data for x in h if x.name.startswith("AXIS_")]
    shape = [len(n) for n in nodes]
    idx = np.array(np.unravel_index(np.arange(np.prod(shape)), shape)).T
    free = [k for k, n in enumerate(nodes) if len(n) > 1]
    u = np.array([(nodes[k][idx[:, k]] - nodes[k][0]) /
                  ((nodes[k][-1] - nodes[k][0]) / (len(nodes[k]) - 1))
                  for k in free]).T
    return u, nodes, free


def flux(h):
    return np.concatenate([x.data for x in h if x.name.startswith("FLUX_")],
                          axis=1).astype(float)


def locate(vert, u, p):
    """Vertices and barycentric weights of the simplex holding p (None
    outside the hull)."""
    V = u[vert]                                  # [ns][d+1][d]
    T = np.transpose(V[:, 1:] - V[:, :1], (0, 2, 1))
    ok = np.abs(np.linalg.det(T)) > 1e-10
    lam = np.linalg.solve(T[ok], (p - V[ok, 0])[..., None])[..., 0]
    w = np.concatenate([1 - lam.sum(1, keepdims=True), lam], axis=1)
    s = np.argmax(w.min(1))
    return (vert[ok][s], w[s]) if w[s].min() > -1e-9 else (None, None)


def main():
    full, filled, plain = (load(p) for p in sys.argv[1:4])
    u, nodes, free = coords(filled)
    ex_full = full["EXISTS"].data.astype(bool)
    ex = filled["EXISTS"].data.astype(bool)
    fl = (filled["FILLED"].data.astype(bool) if "FILLED" in filled
          else np.zeros_like(ex))
    truth = flux(full)
    sel = np.flatnonzero(fl & ex_full)
    rms_fill = np.sqrt(np.mean((flux(filled)[sel] - truth[sel]) ** 2, 1))
    vert = plain["SIMPLEX"].data.astype(int)
    rms_sx = []
    for i in sel:
        v, w = locate(vert, u, u[i])
        rms_sx.append(np.nan if v is None else
                      np.sqrt(np.mean((w @ truth[v] - truth[i]) ** 2)))
    rms_sx = np.array(rms_sx)
    print(f"holes filled {fl.sum()} ({len(sel)} of them in the full grid), "
          f"left {(~ex).sum()}")
    for name, r in (("filled", rms_fill), ("simplex without filling", rms_sx)):
        print(f"{name}: rms - truth median {np.nanmedian(r):.2e}, 90% "
              f"{np.nanpercentile(r, 90):.2e}, max {np.nanmax(r):.2e}")
    print(f"filled closer to the truth at {np.sum(rms_fill < rms_sx)} of "
          f"{len(sel)} nodes")
    if len(sys.argv) > 4:
        t = fits.getdata(sys.argv[4], "TRUTH")
        cols = ["TEFF", "LOGG", "FEH", "ALPHAFE"]
        fv = filled["SIMPLEX"].data.astype(int)
        touch = out = 0
        for row in t:
            th = [np.log10(row[c]) if c == "TEFF" else row[c] for c in cols]
            p = np.array([(th[k] - nodes[k][0]) /
                          ((nodes[k][-1] - nodes[k][0]) / (len(nodes[k]) - 1))
                          for k in free])
            v, w = locate(fv, u, p)
            if v is None:
                out += 1
            else:
                touch += bool(np.any(fl[v[w > 1e-12]]))
        print(f"stars: {touch} of {len(t)} in a simplex with a filled "
              f"vertex (weight > 0), {out} outside the hull")


if __name__ == "__main__":
    main()
