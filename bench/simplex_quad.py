#!/usr/bin/env python3
"""Simplex interpolation with a local quadratic correction, noise-free
(docs/benchmarks.md, "Measured, not built: a quadratic correction for
simplex").  A prototype for issue 13, not part of rvfit.

At every model of a finer library FINE (the `std` synthetic grid: the
small grid's nodes plus the midpoints in TEFF and LOGG) that is not a node
of SIMPLEX's grid, it compares with that model (rms over every pixel of
every arm):
  simplex        the barycentric interpolation in SIMPLEX's own stored
                 triangulation (its SIMPLEX HDU);
  simplex+quad   the same minus [sum_i lam_i q(x_i) - q(x)], q the
                 weighted least-squares quadratic (14 terms: no [a/Fe]^2,
                 a two-node axis) through the models present within RAD
                 node spacings of x in TEFF, LOGG and [Fe/H], weights
                 (1 + |offset|^2)^-2: exact where the flux is quadratic;
  full multilinear  multilinear interpolation in FULL (the full grid).
Coordinates are the scaled ones divided by each axis' mean node spacing
(barycentric weights do not depend on an affine change of coordinates).
Points where the quadratic is rank-deficient or a multilinear corner is
missing are skipped.  Prints median / 90th percentile per midpoint class.

Usage: simplex_quad.py SIMPLEX_LIB FULL_LIB FINE_LIB [RAD=1.5]
(each the rvfit_library.fits of a library folder)
"""
import itertools
import sys

import numpy as np
from astropy.io import fits

from astropy.io import fits
sx_path, full_path, fine_path = sys.argv[1:4]
RAD = float(sys.argv[4]) if len(sys.argv) > 4 else 1.5
def load(p):
    h = fits.open(p)
    ax = [h['AXIS_'+n].data.astype(float) for n in ['TEFF','LOGG','FEH','ALPHAFE']]
    ex = h['EXISTS'].data.astype(bool)
    fl = np.hstack([h['FLUX_'+a].data.astype(float) for a in 'BRZ'])
    sx = h['SIMPLEX'].data.astype(np.int64) if 'SIMPLEX' in h else None
    return ax, ex, fl, sx
ax, ex, fl, sx = load(sx_path)
axf, exf, flf, _ = load(full_path)
axF, exF, flF, _ = load(fine_path)
step = np.array([np.mean(np.diff(a)) if len(a) > 1 else 1 for a in ax])
grid = np.array(list(itertools.product(*ax)))      # model coordinates, row-major
X = grid / step
# simplex geometry: T^-1 per simplex
V = X[sx]                                           # ns x 5 x 4
T = (V[:, :4, :] - V[:, 4:5, :]).transpose(0, 2, 1) # ns x 4 x 4 (columns v_i - v_4)
Tinv = np.linalg.inv(T)
def bary(x):
    l = np.einsum('sij,sj->si', Tinv, x - V[:, 4, :])
    lam = np.hstack([l, 1 - l.sum(1, keepdims=True)])
    ok = np.where(lam.min(1) > -1e-9)[0]
    return (ok[0], lam[ok[0]]) if len(ok) else (None, None)
pres = np.where(ex)[0]
def terms(d):  # d: n x 4 offsets; 14 terms (no alpha^2)
    t, l, f, a = d.T
    return np.stack([np.ones(len(d)), t, l, f, a, t*t, l*l, f*f, t*l, t*f, l*f, t*a, l*a, f*a], 1)
def quad_corr(x, verts, lam):
    d = X[pres] - x
    m = np.max(np.abs(d[:, :3]), 1) <= RAD
    dn = d[m]; idx = pres[m]
    w = (1 + (dn**2).sum(1))**-2
    A = terms(dn) * np.sqrt(w)[:, None]
    if np.linalg.matrix_rank(A) < A.shape[1]:
        return None
    coef, *_ = np.linalg.lstsq(A, fl[idx] * np.sqrt(w)[:, None], rcond=None)
    q_x = coef[0]
    qv = terms(X[verts] - x) @ coef                 # q at the vertices
    return lam @ qv - q_x                           # barycentric q minus q(x)
def multilin(x):
    # multilinear on the full small grid (axf same nodes)
    idx = []; wts = []
    per = []
    for k, a in enumerate(axf):
        xs = x[k] * step[k]
        j = min(max(np.searchsorted(a, xs) - 1, 0), len(a) - 2)
        t = (xs - a[j]) / (a[j+1] - a[j])
        per.append([(j, 1 - t), (j + 1, t)])
    shape = [len(a) for a in axf]
    out = 0
    for combo in itertools.product(*per):
        m = np.ravel_multi_index([c[0] for c in combo], shape)
        wgt = np.prod([c[1] for c in combo])
        if wgt == 0: continue
        if not exf[m]: return None
        out = out + wgt * flf[m]
    return out
gF = np.array(list(itertools.product(*axF)))
res = {'simplex': [], 'simplex+quad': [], 'full multilinear': []}
cls = []
for mF, xg in enumerate(gF):
    on = [np.min(np.abs(ax[k] - xg[k])) < 1e-9 for k in range(4)]
    if all(on): continue
    x = xg / step
    s, lam = bary(x)
    if s is None: continue
    truth = flF[mF]
    base = lam @ fl[sx[s]]
    c = quad_corr(x, sx[s], lam)
    ml = multilin(x)
    if c is None or ml is None: continue
    rms = lambda y: np.sqrt(np.mean((y - truth)**2))
    res['simplex'].append(rms(base)); res['simplex+quad'].append(rms(base - c)); res['full multilinear'].append(rms(ml))
    cls.append(('T' if not on[0] else '') + ('G' if not on[1] else ''))
cls = np.array(cls)
for c in ['T', 'G', 'TG']:
    m = cls == c
    print(f'midpoint {c:2s} n={m.sum():3d} ' + '  '.join(f'{k}: {np.median(np.array(v)[m]):.2e}/{np.percentile(np.array(v)[m],90):.2e}' for k, v in res.items()))
