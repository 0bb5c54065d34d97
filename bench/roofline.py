#!/usr/bin/env python3
"""roofline.py -- flops per likelihood point of the cpu backend, counted
analytically from plugins/cpu/*.c, against this machine's dense (BLAS
dgemm) rate and a memory bandwidth figure (issue 12).

Counting rule: one multiply or add = 1 flop (an FMA would be 2; the cpu
backend has none: plugins/cpu/CMakeLists.txt builds with
-ffp-contract=off).  sqrt, div and log count 1 each (only in the tiny
Cholesky).  Integer index work, float->double conversions, sign flips,
compares and clamps count 0.

  bench/.venv/bin/python bench/roofline.py \
      --library bench/data/lib-desi-std \
      --coadd bench/data/coadd-desi-1000.fits \
      --points-per-s 9700 [--log rvfit-fit.log]
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time

import numpy as np

C_KMS = 299792.458
LANES = 8  # CPU_LANES in plugins/cpu/cpu_internal.h
KEYS_MIN_VEL = 4  # CPU_KEYS_MIN_VEL: vscan templates with Keys coefficients


# ---- parameters of the workload ------------------------------------------

def read_library(path):
    """Per-arm template grid and interpolation of an rvfit library."""
    from astropy.io import fits
    if os.path.isdir(path):
        path = os.path.join(path, "rvfit_library.fits")
    with fits.open(path) as h:
        p = h[0].header
        lib = {"interp": p.get("INTERP", "MULTILIN").strip(),
               "log_flux": bool(p.get("LOGFLUX", False)),
               "nnode": [], "arms": {}}
        for hdu in h[1:]:
            x = hdu.header
            if x.get("EXTNAME", "").startswith("AXIS_"):
                lib["nnode"].append(int(x["NAXIS1"]))
            elif "DLNL" in x:
                lib["arms"][x["ARMNAME"].strip()] = {
                    "lnl0": x["LNL0"], "dlnl": x["DLNL"], "npix": x["NPIX"]}
    return lib


def read_coadd(path, lib):
    """Per arm of a DESI coadd: npix, ndiag, template coordinate u of each
    pixel, and the mean usable range [first, last] over the spectra
    (cpu_batch.c:cpu_copy_arm; masked pixels reach it with ivar 0)."""
    from astropy.io import fits
    arms = {}
    with fits.open(path, memmap=True) as h:
        for name in ("B", "R", "Z"):
            if name + "_WAVELENGTH" not in h:
                continue
            la = lib["arms"][name]
            wave = h[name + "_WAVELENGTH"].data.astype(float)
            iv = h[name + "_IVAR"].data
            ok = (iv > 0) & np.isfinite(iv) & np.isfinite(h[name + "_FLUX"].data)
            if name + "_MASK" in h:
                ok &= h[name + "_MASK"].data == 0
            n = wave.size
            idx = np.arange(n)
            first = np.where(ok, idx, n).min(axis=1)
            last = np.where(ok, idx, -1).max(axis=1)
            good = last >= first
            arms[name] = {
                "npix": n,
                "ndiag": h[name + "_RESOLUTION"].data.shape[1],
                "u": (np.log(wave) - la["lnl0"]) / la["dlnl"],
                "first": first[good], "last": last[good],
                "dlnl": la["dlnl"], "npix_t": la["npix"]}
    return arms


# ---- flop counts, following the code --------------------------------------

def vsini_half_width(vsini, dlnl):
    # physics.c:rvfit_vsini_kernel: h = ceil(half), 0 below 1e-6 pixels
    half = min(abs(vsini) / C_KMS / dlnl, 512.0)
    return 0 if half < 1e-6 else math.ceil(half)


def cholesky_flops(n):
    """linalg.c:rvfit_chol_eq_quad for an n x n system as a chisq point
    calls it (no solution wanted): equilibrate, rvfit_chol, log det, the
    forward substitution and b^T A^-1 b = |y|^2."""
    f = 4 * n                          # 1/sqrt(d), log(d), ld +=
    f += 2 * n * (n + 1) // 2          # a[k,l] *= sc[k]*sc[l]
    for j in range(n):                 # rvfit_chol
        f += 2 * j + 1                 # d -= a*a (j terms), sqrt
        f += (n - 1 - j) * (2 * j + 1)  # s -= a*a (j terms), s/d
    f += 3 * n                         # ld += 2*log(L_kk)
    f += n                             # y = b*sc
    f += sum(2 * k + 1 for k in range(n))  # forward
    f += 2 * n                         # q += y*y
    return f


def bspline_sup(n, npoly):
    """cpu_batch.c:cpu_support for the clamped cubic B-splines of
    physics.c on n pixels (x linear in the pixel index, as for a coadd's
    common wavelengths): [lo, hi) per row, widened to LANES."""
    m = npoly - 3
    t = (np.arange(n) / (n - 1)) * m   # (x + 1) / 2 * m
    sup = []
    for k in range(npoly):
        lo_t, hi_t = max(0, k - 3), min(m, k + 1)
        inside = (t > lo_t) & (t < hi_t)
        if k == 0:
            inside |= t == 0
        if k == npoly - 1:
            inside |= t == m
        i = np.nonzero(inside)[0]
        sup.append((i[0] // LANES * LANES,
                    (i[-1] + 1 + LANES - 1) // LANES * LANES))
    return sup


def gauss_sup(n, npoly):
    """cpu_batch.c:cpu_support for the Gaussian basis of physics.c (1, x,
    x^2 everywhere; Gaussian k where |x - c_k| < RVFIT_GAUSS_CUT s)."""
    x = -1.0 + 2.0 * np.arange(n) / (n - 1)
    ng = npoly - 3
    sup = [(0, (n + LANES - 1) // LANES * LANES)] * min(npoly, 3)
    for k in range(max(ng, 0)):
        c = -1.0 if ng == 1 else -1.0 + 2.0 * k / (ng - 1)
        i = np.nonzero(np.abs((x - c) * ng) < 6.0)[0]
        sup.append((i[0] // LANES * LANES,
                    (i[-1] + 1 + LANES - 1) // LANES * LANES))
    return sup


def gauss_normal_flops(n, npoly, a0, a1, block=256):
    """cpu_normal.c:cpu_normal as it runs, mean over the spectra's solve
    ranges: per cache block, g B_k over row k's support, each group of
    up to four rows l <= k over the hull of their supports within row
    k's (cpu_cut), the right-hand sides likewise; then the reductions."""
    sup = gauss_sup(n, npoly)

    def cut(rows, r0, r1):
        live = [sup[j] for j in rows if sup[j][1] > sup[j][0]]
        if not live:
            return r0, r0
        return max(r0, min(lo for lo, _ in live)), min(r1, max(hi for _, hi in live))

    npair = npoly * (npoly + 1) // 2
    tot = 0.0
    memo = {}
    for b0s, b1s in zip(a0, a1):
        key = (int(b0s), int(b1s))
        if key not in memo:
            f = 0
            for b0 in range(key[0], key[1], block):
                e0 = min(key[1], b0 + block)
                for k in range(npoly):
                    k0, k1 = cut([k], b0, e0)
                    if k1 <= k0:
                        continue
                    f += k1 - k0
                    for l in range(0, k + 1, 4):
                        rows = list(range(l, min(k + 1, l + 4)))
                        g0, g1 = cut(rows, k0, k1)
                        f += max(0, g1 - g0) * 2 * len(rows)
                for l in range(0, npoly, 4):
                    rows = list(range(l, min(npoly, l + 4)))
                    g0, g1 = cut(rows, b0, e0)
                    f += max(0, g1 - g0) * 2 * len(rows)
            memo[key] = f
        tot += memo[key]
    return tot / len(a0) + 7 * (npair + npoly)


def bspline_cells(n, npoly):
    """cpu_batch.c:cpu_fill_cells for the clamped cubic B-splines of
    physics.c on n pixels (x linear in the pixel index, as for a coadd's
    common wavelengths): each interval's pixels [lo, hi), widened to
    LANES."""
    m = npoly - 3
    t = (np.arange(n) / (n - 1)) * m   # (x + 1) / 2 * m
    cell = np.minimum(np.floor(t).astype(int), m - 1)
    lim = []
    for j in range(m):
        i = np.nonzero(cell == j)[0]
        lim.append((i[0] // LANES * LANES,
                    (i[-1] + 1 + LANES - 1) // LANES * LANES))
    return lim


def bspline_normal_flops(n, npoly, a0, a1):
    """cpu_normal.c:cpu_normal_bsm, mean over the spectra's solve ranges
    [a0, a1): per interval the 7 moments of g and the 4 of c (mul+add
    per pixel), their 8-lane reductions, G from the moments (add, mul
    per entry), then per row r of the four e = G D_r (16 mul+add), b
    (4 mul+add) and the r + 1 entries of A (4 mul+add each)."""
    lim = bspline_cells(n, npoly)
    per_int = 7 * 11 + 2 * 16 + sum(32 + 8 + 8 * (r + 1) for r in range(4))
    tot = 0.0
    for b0, b1 in zip(a0, a1):
        for lo, hi in lim:
            r0, r1 = max(lo, b0), min(hi, b1)
            if r1 > r0:
                tot += (r1 - r0) * 2 * 11 + per_int
    return tot / len(a0)


def arm_flops(arm, npoly, basis, ncorner, h, log_flux, span_pix=0.0, nk=1):
    """Flops of one arm at one point, per component, averaged over the
    spectra.  span_pix: template pixels between the lowest and highest
    shift the prepared template must cover (vscan chunk; 0 for chisq);
    nk: velocities sharing the template (cpu_eval.c:cpu_vscan_task)."""
    n, hb, nt, u = arm["npix"], arm["ndiag"] // 2, arm["npix_t"], arm["u"]
    i0, i1 = arm["first"], arm["last"]           # cpu_model.c:cpu_range_of
    j0 = np.clip(i0 - hb, 0, n - 1)
    j1 = np.clip(i1 + hb, 0, n - 1)
    # cpu_model.c:cpu_template: template pixels the cubic taps reach
    J0 = np.clip(np.floor(u[j0]).astype(int) - 1, 0, nt - 1)
    J1 = np.clip(np.floor(u[j1] + span_pix).astype(int) + 2, 0, nt - 1)
    l0, l1 = np.clip(J0 - h, 0, nt - 1), np.clip(J1 + h, 0, nt - 1)
    n_interp = (l1 - l0 + 1).mean()            # interpolated pixels
    n_rot = (J1 - J0 + 1).mean()               # rotated pixels
    n_shift = (j1 - j0 + 1).mean()             # shifted data pixels
    n_band = (i1 - i0 + 1).mean()              # band-matrix outputs
    a0, a1 = i0 // LANES * LANES, (i1 // LANES + 1) * LANES
    n_solve = (a1 - a0).mean()                 # lane-aligned solve range
    npair = npoly * (npoly + 1) // 2
    f = {}
    # cpu_model.c:cpu_interp: w0*f0, then (mul+add) per further corner;
    # exp() per pixel for a log-flux library (counted as 1).
    f["interp"] = n_interp * (2 * ncorner - 1 + (1 if log_flux else 0))
    # cpu_model.c:cpu_rotate: w[0]*x, then 2h (mul+add); memcpy when h=0
    f["rotate"] = n_rot * (1 + 4 * h) if h > 0 else 0.0
    if nk >= KEYS_MIN_VEL:
        # cpu_model.c:cpu_keys_coef, once per template pixel for the nk
        # velocities (e 1, c1 2, c3 4, c2 2), then cpu_shift_coef per data
        # pixel: p=u+dp 1, x=p-k0 1, Horner 6
        f["keys"] = n_rot * 9
        f["shift"] = n_shift * 8
    else:
        # cpu_model.c:cpu_shift_taps, per pixel: the Keys coefficients
        # from the four taps 9, Horner 6; the taps and fractions (p=u+dp
        # 1, x=p-k0 1, cpu_taps_at) are kept from the previous point of
        # the same spectrum and velocity, as the optimiser's, Hessian's
        # and lattice's points are taken (not counted)
        f["keys"] = 0.0
        f["shift"] = n_shift * 15
    # cpu_model.c:cpu_band: acc += res*t over ndiag taps (edges ignored)
    f["band"] = n_band * 2 * arm["ndiag"]
    # cpu_normal.c:cpu_solve: wm=iv*m, g=wm*m, c=wm*f
    f["weights"] = n_solve * 3
    if basis == "bspline":
        f["normal"] = bspline_normal_flops(n, npoly, a0, a1)
    elif basis == "cheb":
        # cpu_normal.c:cpu_normal_cheb: the 2 npoly - 1 moments sum g T_j
        # and the npoly sums c T_k (mul+add each), 8-lane reductions,
        # then A_kl = (mu_{k+l} + mu_{k-l}) / 2 (add, mul)
        nmom = 2 * npoly - 1
        f["normal"] = (n_solve * 2 * (nmom + npoly) + 7 * (nmom + npoly)
                       + 2 * npair)
    else:
        # cpu_normal.c:cpu_normal: gk=g*B_k, the lower-triangle dot
        # products and the right-hand-side ones (mul+add each) over the
        # Gaussians' support cuts as the code takes them, then the
        # fixed-order 8-lane reductions (7 adds per sum)
        f["normal"] = gauss_normal_flops(n, npoly, a0, a1)
    f["cholesky"] = cholesky_flops(npoly)
    # cpu_normal.c:cpu_solve: chi^2 = f^T W f - b^T A^-1 b (f^T W f once
    # per spectrum, cpu_batch.c), tot += chi + ld (cpu_eval.c); no
    # continuum and no residual pass
    f["chisq"] = 3
    # Bytes read per point from arrays too big for L2 (scratch buffers
    # stay in L1/L2): an upper bound of DRAM traffic, since nearby points
    # share library corners in L3.
    bytes_ = {
        "templates (float32)": 4 * ncorner * n_interp,
        "resolution (float32)": 4 * arm["ndiag"] * n_band,
        "u, flux, ivar (double)": 8 * (n_shift + 2 * n_solve),
        "basis (double, may stay cached)": 8 * npoly * n_solve}
    return f, bytes_, {"interp": n_interp, "data": n_band}


def point_flops(arms, npoly, basis, ncorner, vsini, log_flux, nk=1,
                vstep=0.0):
    """Flops per point: a chisq point (nk = 1), or a vscan point whose
    template is prepared once per chunk of nk velocities vstep apart
    (cpu_eval.c:cpu_vscan_task) and shifted, banded, solved per velocity."""
    tot, byt = {}, {}
    for a in arms.values():
        h = vsini_half_width(vsini, a["dlnl"])
        span = (nk - 1) * vstep / C_KMS / a["dlnl"]
        f, b, _ = arm_flops(a, npoly, basis, ncorner, h, log_flux, span,
                            round(nk))
        for k in ("interp", "rotate", "keys"):    # shared by the chunk
            f[k] /= nk
        b["templates (float32)"] /= nk
        for k, v in f.items():
            tot[k] = tot.get(k, 0.0) + v
        for k, v in b.items():
            byt[k] = byt.get(k, 0.0) + v
    return tot, byt


def vscan_chunks(nvel, chunk=32):
    """Mean velocities per vscan work item (CPU_VCHUNK = 32)."""
    sizes = [min(chunk, nvel - k) for k in range(0, nvel, chunk)]
    return sum(sizes) / len(sizes)


# ---- machine rates --------------------------------------------------------

DGEMM = """
import time, numpy as np
n = {n}; a = np.random.rand(n, n); b = np.random.rand(n, n); a @ b
best = min((lambda t: (a @ b, time.perf_counter() - t)[1])(time.perf_counter())
           for _ in range(3))
print(2.0 * n ** 3 / best / 1e9)
"""


def dgemm_gflops(n, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", DGEMM.format(n=n)], env=env,
                         check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def bandwidth_gbs(nbytes=256 << 20):
    """One-thread STREAM-like figures: copy (16 B/elem) and
    triad a = b + s*c done by numpy in two passes (40 B/elem)."""
    n = nbytes // 8 // 3
    a, b, c = np.ones(n), np.ones(n), np.ones(n)
    best_copy = best_triad = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        np.copyto(a, b)
        best_copy = min(best_copy, time.perf_counter() - t)
        t = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best_triad = min(best_triad, time.perf_counter() - t)
    return 16 * n / best_copy / 1e9, 40 * n / best_triad / 1e9


# ---- rvfit fit log --------------------------------------------------------

def read_log(path):
    """Spectra, points per stage and the backend rate from an `rvfit fit`
    log."""
    stages, rate, nspec = {}, None, 0
    for line in open(path, errors="replace"):
        m = re.search(r"profile: (\d+) spectra", line)
        if m:
            nspec = int(m.group(1))
        m = re.search(r"profile: (\w+)\s+[\d.]+ s\s+(\d+) points", line)
        if m and int(m.group(2)) > 0:
            stages[m.group(1)] = int(m.group(2))
        m = re.search(r"evaluated (\d+) points in \d+ calls \(([\d.]+) s "
                      r"inside the backend", line)
        if m:
            rate = int(m.group(1)) / float(m.group(2))
    return stages, rate, nspec


# ---- report ---------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", required=True)
    ap.add_argument("--coadd", required=True)
    ap.add_argument("--npoly", type=int, default=0,
                    help="[fit] npoly (0, the default: the basis's own, "
                    "7 for bspline, 10 for gauss and cheb; fit.c)")
    ap.add_argument("--basis", choices=("gauss", "cheb", "bspline"),
                    default="bspline",
                    help="[fit] basis (docs/configuration.md)")
    ap.add_argument("--vsini", type=float, default=5.0,
                    help="vsini of the chisq points, km/s (optimizer start)")
    ap.add_argument("--corners", type=int, default=0,
                    help="stencil corners (0: 2^(axes with > 1 node))")
    ap.add_argument("--vmin", type=float, default=-1000.0)
    ap.add_argument("--vmax", type=float, default=1000.0)
    ap.add_argument("--ccf-vstep", type=float, default=60.0)
    ap.add_argument("--points-per-s", type=float, default=0.0)
    ap.add_argument("--log", help="rvfit fit log: per-stage point mix "
                    "(and points/s if --points-per-s is not given)")
    ap.add_argument("--backend-threads", type=int, default=2,
                    help="threads the backend ran on for --points-per-s")
    ap.add_argument("--threads", default="1,2", help="dgemm thread counts")
    ap.add_argument("--dgemm-n", type=int, default=3000)
    args = ap.parse_args()

    lib = read_library(args.library)
    arms = read_coadd(args.coadd, lib)
    free = [n for n in lib["nnode"] if n > 1]
    if lib["interp"] != "MULTILIN" and not args.corners:
        sys.exit("INTERP=%s: give --corners" % lib["interp"])
    nc_ = args.corners or 2 ** len(free)
    np_ = args.npoly or (7 if args.basis == "bspline" else 10)

    print("# cpu backend roofline (bench/roofline.py)")
    print("date %s UTC; load average %s" % (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        " ".join(open("/proc/loadavg").read().split()[:3])))
    print("library %s: %s, nodes %s, log_flux %d; npoly %d, basis %s"
          % (args.library, lib["interp"], "x".join(map(str, lib["nnode"])),
             lib["log_flux"], np_, args.basis))
    for k, a in arms.items():
        print("arm %s: %d data px (usable %.0f), ndiag %d, template dlnl "
              "%.3g, %.2f template px per data px"
              % (k, a["npix"], (a["last"] - a["first"] + 1).mean(),
                 a["ndiag"], a["dlnl"],
                 (a["u"][-1] - a["u"][0]) / (a["npix"] - 1)))

    # init scans every other velocity of the ccf_vstep grid (nc of them),
    # then 2 velocities beside the minimum (fit/stage_init.c:init_vscan)
    nvel = int((args.vmax - args.vmin) // args.ccf_vstep) + 1
    nc = (nvel + 1) // 2
    kinds = {  # name: (corners, vsini, velocities per chunk, step)
        "chisq (optimize/hessian)": (nc_, args.vsini, 1, 0.0),
        "chisq node, vsini 0 (lattice)": (1, 0.0, 1, 0.0),
        "vscan init (%d vel, node)" % nc:
            (1, 0.0, vscan_chunks(nc), 2 * args.ccf_vstep),
        "vscan vrefine (25 vel)": (nc_, args.vsini, 25, 0.5),
        "vscan init refine (2 vel, node)": (1, 0.0, 2, 2 * args.ccf_vstep),
        "vscan vrefine probes (2 vel)": (nc_, args.vsini, 2, 8.0),
    }
    table = {k: point_flops(arms, np_, args.basis, *v[:2], lib["log_flux"],
                            *v[2:])
             for k, v in kinds.items()}
    comps = list(next(iter(table.values()))[0])
    print("\nflops per point (all arms), %d corners, vsini %g km/s:"
          % (nc_, args.vsini))
    names = list(kinds)
    print("%-11s" % "component" + "".join("%16s" % ("[%d]" % i)
                                        for i in range(len(names))))
    for c in comps:
        print("%-11s" % c + "".join("%16.0f" % table[k][0][c] for k in names))
    tot = {k: sum(table[k][0].values()) for k in names}
    byt = {k: sum(table[k][1].values()) for k in names}
    print("%-11s" % "TOTAL" + "".join("%16.0f" % tot[k] for k in names))
    print("%-11s" % "bytes read" + "".join("%16.0f" % byt[k] for k in names))
    print("%-11s" % "flop/byte" + "".join("%16.2f" % (tot[k] / byt[k])
                                        for k in names))
    for i, k in enumerate(names):
        print("  [%d] %s" % (i, k))

    # Stage mix of a real run (the stages as of issue 12's second session).
    # init = 3 templates x nc velocities per star by vscan
    # (fit/stage_init.c:init_vscan, 3 Teff nodes), 2 refine velocities, and a
    # node lattice by chisq (init_lattice); optimize, hessian, diagnostics:
    # chisq at general theta; vrefine: 2 probes, then vscans of 25
    # velocities (fit_stage_vrefine).  Logs of older commits (full init
    # scans, 15-point coarse vrefine scans) are counted as if they were
    # of this algorithm.
    mix = None
    pps = args.points_per_s
    if args.log:
        stages, rate, nspec = read_log(args.log)
        if not pps and rate:
            pps = rate
        cls = {"optimize": names[0], "hessian": names[0],
               "diagnostics": names[0], "vrefine": names[3]}
        fl = n = 0.0
        for s, npt in stages.items():
            if s == "init":  # coarse scan, 2 refine points, lattice
                vs = min(npt, 3 * nc * nspec)
                rf = min(npt - vs, 2 * nspec)
                fl += (vs * tot[names[2]] + rf * tot[names[4]] +
                       (npt - vs - rf) * tot[names[1]])
            elif s == "vrefine":  # 2 probes, then scans of 25
                pr = min(npt, 2 * nspec)
                fl += pr * tot[names[5]] + (npt - pr) * tot[names[3]]
            else:
                fl += npt * tot[cls.get(s, names[0])]
            n += npt
        mix = fl / n
        print("\nstage mix of %s: %s points -> %.0f flops/point"
              % (args.log, ", ".join("%s %d" % kv for kv in stages.items()),
                 mix))

    print("\nmachine (%d cpus):" % os.cpu_count())
    dense = {}
    for t in [int(x) for x in args.threads.split(",")]:
        dense[t] = dgemm_gflops(args.dgemm_n, t)
        print("  numpy dgemm %d^3, %d thread(s): %.1f GFLOP/s (FMA)"
              % (args.dgemm_n, t, dense[t]))
    cp, tr = bandwidth_gbs()
    print("  numpy copy %.1f GB/s, triad %.1f GB/s (1 thread, 256 MiB)"
          % (cp, tr))

    if pps:
        t = args.backend_threads
        t1 = min(dense)
        ideal = t * dense[t1] / t1  # dgemm scaled linearly to t threads
        ref = dense.get(t, ideal)   # dgemm measured on t threads
        print("\nat %.0f points/s (backend, %d threads); dense reference: "
              "dgemm on %d threads %.1f GFLOP/s, and %d x the %d-thread rate "
              "%.1f GFLOP/s" % (pps, t, t, ref, t, t1, ideal))
        rows = [("stage mix of the log", mix, None)] if mix else []
        rows += [("if all were " + k, tot[k], byt[k]) for k in names]
        for k, f, b in rows:
            g = f * pps / 1e9
            line = "  %-42s %5.2f GFLOP/s = %4.1f %% / %4.1f %%" % (
                k, g, 100 * g / ref, 100 * g / ideal)
            if b:  # memory roof: intensity x one-thread copy bandwidth
                line += "; %5.2f GB/s, roof %4.1f GFLOP/s" % (
                    b * pps / 1e9, f / b * cp * t)
            print(line)
        print("  (points/s belongs to the run's own mix: only the stage-mix "
              "row is a measurement; the others bound what each kind costs. "
              "Memory roof = flop/byte x %d x the one-thread copy rate.)" % t)

if __name__ == "__main__":
    main()
