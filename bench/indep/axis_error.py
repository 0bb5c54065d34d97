"""Interpolation error of one grid axis, in units of the Cramer-Rao bound.

    python3 bench/indep/axis_error.py --indep build/rvfit-indep
        [--snr 30] [--seed 1] [--axis FEH:0.5 --axis FEH:0.25 ...]
        [--star 4500,2.5,0.25,0.2 ...] [--ln-flux] [--exp10]

For each star and each AXIS:STEP it takes the independent generator's
noiseless, continuum-normalised spectra (rvfit-indep model --norm) at six
nodes STEP apart along the axis, the star half a step past the third,
interpolates them to the star with the cubic Hermite weights of rvfit's
library stencils (slopes of the quadratic through each node's neighbours),
and projects the interpolant's error delta onto the parameters: the bias
b = F^-1 J^T delta that a fit at S/N SNR per pixel would take from it
(J: central differences of the generator's spectra in TEFF, LOGG, FEH,
ALPHAFE; a multiplicative Legendre continuum of degree 10 marginalised),
printed as b / sigma with sigma the bound of the same Fisher matrix.
--ln-flux interpolates ln flux instead (`[templates] log_flux`); --exp10
places the nodes and the star at 10^value along the axis (for [Fe/H]:
linear in the abundance rather than its logarithm).
|b / sigma| well below 1 means the axis at that step cannot hold a fit
away from the bound at that S/N; a bias of 2 sigma alone makes
rms((fit - true)/bound) about 2.2.

The spectra are smoothed to R = 4000 and sampled at 1.2e-4 in ln lambda
(about DESI's 0.8 A pixel at 6600 A) over 3600-9800 A: a stand-in for an
instrument, not DESI's resolution matrices, so the figures compare axes
and steps rather than predict a survey's ratios.  Needs numpy.
"""
import argparse
import functools
import subprocess

import numpy as np

AXES = {"TEFF": 0, "LOGG": 1, "FEH": 2, "ALPHAFE": 3}
DLNL = 1e-5          # the generator's sampling (rvfit-indep model --dlnl)
BIN = 12             # output pixel = 12 samples = 1.2e-4 in ln lambda
RES = 4000.0
FD = (20.0, 0.05, 0.02, 0.02)   # central-difference steps of J


class Generator:
    def __init__(self, exe, seed):
        self.exe, self.seed = exe, seed
        sig = 1.0 / (2.3548 * RES) / DLNL
        x = np.arange(-int(5 * sig), int(5 * sig) + 1)
        k = np.exp(-0.5 * (x / sig) ** 2)
        self.kernel = k / k.sum()

    @functools.lru_cache(maxsize=None)
    def _spec(self, p):
        args = [self.exe, "model", "--norm", "--lo", "3600", "--hi", "9800",
                "--seed", str(self.seed)]
        for name, v in zip(("--teff", "--logg", "--feh", "--alpha"), p):
            args += [name, repr(v)]
        out = subprocess.run(args, capture_output=True, text=True,
                             check=True).stdout
        flux = np.array([float(r.split()[1]) for r in out.splitlines()])
        h = len(self.kernel) // 2
        return np.convolve(flux, self.kernel, mode="same")[h:-h:BIN]

    def spec(self, p):
        return self._spec(tuple(round(float(v), 9) for v in p))


def node_slope(nodes, j):
    """Weights on nodes c-1, c, c+1 of d/dx at node j (library_stencil.c)."""
    n = len(nodes)
    c = 1 if j == 0 else (n - 2 if j == n - 1 else j)
    h0, h1 = nodes[c] - nodes[c - 1], nodes[c + 1] - nodes[c]
    if j < c:
        d = (-(2 * h0 + h1) / (h0 * (h0 + h1)), (h0 + h1) / (h0 * h1),
             -h0 / (h1 * (h0 + h1)))
    elif j > c:
        d = (h1 / (h0 * (h0 + h1)), -(h0 + h1) / (h0 * h1),
             (h0 + 2 * h1) / (h1 * (h0 + h1)))
    else:
        d = (-h1 / (h0 * (h0 + h1)), (h1 - h0) / (h0 * h1),
             h0 / (h1 * (h0 + h1)))
    return c, d


def hermite_weights(nodes, x):
    i0 = int(np.clip(np.searchsorted(nodes, x) - 1, 0, len(nodes) - 2))
    h = nodes[i0 + 1] - nodes[i0]
    t = (x - nodes[i0]) / h
    w = np.zeros(len(nodes))
    w[i0] += 2 * t**3 - 3 * t**2 + 1
    w[i0 + 1] += -2 * t**3 + 3 * t**2
    for e, hs in enumerate((h * (t**3 - 2 * t**2 + t), h * (t**3 - t**2))):
        c, d = node_slope(nodes, i0 + e)
        for q in range(3):
            w[c - 1 + q] += hs * d[q]
    return w


def bias_over_sigma(gen, p, delta, snr):
    s = gen.spec(p)
    cols = []
    for k, h in enumerate(FD):
        hi, lo = list(p), list(p)
        hi[k] += h
        lo[k] -= h
        cols.append((gen.spec(hi) - gen.spec(lo)) / (2 * h))
    x = np.linspace(-1.0, 1.0, len(s))
    cont = np.polynomial.legendre.legvander(x, 10) * s[:, None]
    a = np.hstack([np.array(cols).T, cont])
    cov = np.linalg.inv(a.T @ a)
    b = cov @ (a.T @ delta)
    return b[:4] / (np.sqrt(np.diag(cov))[:4] / snr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--indep", required=True, help="the rvfit-indep program")
    ap.add_argument("--snr", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1, help="line list (model seed)")
    ap.add_argument("--axis", action="append",
                    help="AXIS:STEP, e.g. FEH:0.5 (default: the dense "
                         "grid's steps and FEH:0.25)")
    ap.add_argument("--ln-flux", action="store_true")
    ap.add_argument("--exp10", action="store_true")
    ap.add_argument("--star", action="append",
                    help="TEFF,LOGG,FEH,ALPHAFE of a node next to the star")
    o = ap.parse_args()
    axes = o.axis or ["TEFF:100", "LOGG:0.5", "FEH:0.5", "ALPHAFE:0.2",
                      "FEH:0.25"]
    stars = [tuple(map(float, s.split(","))) for s in o.star] if o.star else [
        (4200, 1.5, -0.25, 0.2), (4500, 2.5, 0.25, 0.2),
        (4800, 4.5, 0.25, 0.2), (5500, 4.0, -0.25, 0.2),
        (6200, 4.0, 0.25, 0.2)]
    gen = Generator(o.indep, o.seed)
    print(f"bias / bound at S/N {o.snr:g} per pixel: TEFF LOGG FEH ALPHAFE")
    for spec in axes:
        name, step = spec.split(":")
        ax, step = AXES[name.upper()], float(step)
        for p0 in stars:
            nodes = p0[ax] + step * np.arange(-2.0, 4.0)
            flux = []
            for v in nodes:
                p = list(p0)
                p[ax] = v
                flux.append(gen.spec(p))
            q = list(p0)
            q[ax] = p0[ax] + 0.5 * step
            x = 10.0 ** nodes if o.exp10 else nodes
            w = hermite_weights(x, 10.0 ** q[ax] if o.exp10 else q[ax])
            flux = np.array(flux)
            model = np.exp(w @ np.log(flux)) if o.ln_flux else w @ flux
            delta = model - gen.spec(q)
            b = bias_over_sigma(gen, q, delta, o.snr)
            star = "/".join(f"{v:g}" for v in q)
            print(f"{name.upper():8s} step {step:<6g} at {star:24s}"
                  + "".join(f" {v:+6.2f}" for v in b))


if __name__ == "__main__":
    main()
