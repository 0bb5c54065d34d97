#!/usr/bin/env python3
"""Template interpolators side by side: library size, backend time and
injection-recovery accuracy (docs/benchmarks.md, "Template interpolators").

For each variant NAME=KEY:VALUE,... (keys of [templates], e.g.
"pca40=interpolator:pca,pca_components:40"), builds a library from GRID
with `rvfit templates` (desi arms), fits COADD with `rvfit fit` (cpu
backend, --threads THREADS, no models) and prints one row: library file
size, vectors the backend holds (models or pca vectors) and their bytes,
backend seconds and points, and the robust scatter (IQR/1.349) of
recovered - true VRAD, TEFF, LOGG, FEH over every star, with the ratio to
the first variant's.  The paired difference to the first variant,
rms((VRAD - VRAD_ref) / VRAD_ERR), says how far the fits moved.

--irregular SEED: fit with a copy of GRID (symlinks) whose models in the
corner TEFF >= 6500 K, LOGG <= 2 and 30% of the rest (numpy seed SEED)
are removed; a variant named with the prefix "full:" uses GRID itself.

Usage: interp_kinds.py RVFIT GRID COADD TRUTH WORKDIR [--threads N]
       [--irregular SEED] VARIANT...
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
from astropy.io import fits


def robust_std(x):
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    q75, q25 = np.percentile(x, [75, 25])
    return float((q75 - q25) / 1.349)


def irregular_grid(grid, out, seed):
    """Symlink copy of a PHOENIX-layout grid without the corner and 30%
    of the other models; returns (removed, kept)."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rng = np.random.default_rng(seed)
    removed = kept = 0
    for root, _, files in sorted(os.walk(grid)):
        rel = os.path.relpath(root, grid)
        os.makedirs(os.path.join(out, rel), exist_ok=True)
        for f in sorted(files):
            src = os.path.join(root, f)
            if f.startswith("lte"):
                h = fits.getheader(src)
                corner = h["PHXTEFF"] >= 6500 and h["PHXLOGG"] <= 2
                if corner or rng.random() < 0.3:
                    removed += 1
                    continue
                kept += 1
            os.symlink(os.path.abspath(src), os.path.join(out, rel, f))
    return removed, kept


def library_info(path):
    f = os.path.join(path, "rvfit_library.fits")
    with fits.open(f) as h:
        nvec = sum(x.data.shape[0] * x.data.shape[1]
                   for x in h if x.name.startswith("FLUX_"))
        npix = sum(x.data.shape[1] for x in h if x.name.startswith("FLUX_"))
        kind = h[0].header.get("INTERP", "MULTILIN")
        k = h[0].header.get("NPCA", 0)
        rms = [x.header.get("PCARMS") for x in h if x.name.startswith("FLUX_")]
    return {"file_mb": os.path.getsize(f) / 2**20, "kind": kind, "k": k,
            "vec_mb": nvec * 4 / 2**20, "nvec": nvec // npix,
            "rms": [r for r in rms if r is not None]}


def run(cmd, log):
    t0 = time.time()
    with open(log, "w") as fh:
        subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=True)
    return time.time() - t0


def main():
    args = sys.argv[1:]
    threads, seed = "2", None
    if "--threads" in args:
        i = args.index("--threads")
        threads = args[i + 1]
        del args[i:i + 2]
    if "--irregular" in args:
        i = args.index("--irregular")
        seed = int(args[i + 1])
        del args[i:i + 2]
    rvfit, grid, coadd, truth, work = args[:5]
    variants = args[5:]
    os.makedirs(work, exist_ok=True)
    igrid = grid
    if seed is not None:
        igrid = os.path.join(work, "grid-irregular")
        rem, kept = irregular_grid(grid, igrid, seed)
        print(f"irregular grid: {rem} models removed, {kept} kept")
    tru = fits.getdata(truth, "TRUTH")
    index = {t: i for i, t in enumerate(tru["TARGETID"])}
    rows, ref = [], None
    for v in variants:
        name, _, spec = v.partition("=")
        use = grid if name.startswith("full:") else igrid
        ini = os.path.join(work, f"{name.replace(':', '_')}.ini")
        with open(ini, "w") as fh:
            fh.write("[templates]\n")
            for kv in filter(None, spec.split(",")):
                k, _, val = kv.partition(":")
                fh.write(f"{k} = {val}\n")
        tag = name.replace(":", "_")
        lib = os.path.join(work, "lib_" + tag)
        tb = run([rvfit, "templates", "--grid", use, "--out", lib, "-c", ini,
                  "-j", threads], os.path.join(work, f"templates_{tag}.log"))
        out = os.path.join(work, "fit_" + tag)
        flog = os.path.join(work, f"fit_{tag}.log")
        tf = run([rvfit, "fit", "-t", lib, "-o", out, "-c", ini, "-j", threads,
                  "--no-models", "--overwrite", coadd], flog)
        text = open(flog).read()
        m = re.search(r"evaluated (\d+) points in (\d+) calls \(([\d.]+) s "
                      r"inside the backend, fitting ([\d.]+) s", text)
        tab = fits.getdata(os.path.join(out, "rvtab_" + os.path.basename(
            coadd)), "RVTAB")
        t = tru[np.array([index[x] for x in tab["TARGETID"]])]
        r = {"name": name, "build_s": tb, "fit_s": tf,
             "points": int(m.group(1)), "backend_s": float(m.group(3)),
             "fitting_s": float(m.group(4)), "tab": tab,
             "param_warn": int(np.sum((tab["RVS_WARN"] & 8) != 0))}
        r.update(library_info(lib))
        for c in ("VRAD", "TEFF", "LOGG", "FEH"):
            r[c] = robust_std(tab[c] - t[c])
        if ref is None:
            ref = r
        d = (tab["VRAD"] - ref["tab"]["VRAD"]) / tab["VRAD_ERR"]
        r["paired"] = float(np.sqrt(np.nanmean(d ** 2)))
        rows.append(r)
        print(json.dumps({k: x for k, x in r.items() if k != "tab"}),
              flush=True)
    print()
    print("| variant | kind | K | backend vectors | MiB resident | file MiB "
          "| backend s | points | VRAD | TEFF | LOGG | FEH | PARAM_WARN | "
          "paired dV/σ |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rat = [r[c] / ref[c] for c in ("VRAD", "TEFF", "LOGG", "FEH")]
        print(f"| {r['name']} | {r['kind']} | {r['k'] or ''} | {r['nvec']} | "
              f"{r['vec_mb']:.1f} | {r['file_mb']:.1f} | {r['backend_s']:.1f} "
              f"| {r['points']} | {r['VRAD']:.3f} ({rat[0]:.2f}) | "
              f"{r['TEFF']:.1f} ({rat[1]:.2f}) | {r['LOGG']:.3f} ({rat[2]:.2f})"
              f" | {r['FEH']:.3f} ({rat[3]:.2f}) | {r['param_warn']} | "
              f"{r['paired']:.3f} |")


if __name__ == "__main__":
    main()
