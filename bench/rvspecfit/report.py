#!/usr/bin/env python3
"""Tables of the rvfit / rvspecfit comparison from both rvtabs and the truth.

usage: report.py --truth TRUTH.fits --run NAME=RVTAB:FIT.json[:PREP.json] ...
                 [--mock COADD.fits] [--md OUT.md] [--json OUT.json]
                 [--update-docs docs/benchmarks.md] [--root REPO]

The first --run is the reference for the ratios (rvfit); the others are
compared with it.  Metrics follow bench/evaluate.py: bias = median of
(fit - truth), scatter = robust sigma (IQR / 1.349), pull width = robust
sigma of (fit - truth) / error, > 5 sigma = fraction with |pull| > 5.
Rows whose VRAD is not finite count as failures and are left out of the
metrics.  S/N bins use the truth table's SNR (median S/N per pixel).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import numpy as np
from astropy.io import fits

BINS = (("S/N<5", 0, 5), ("5-15", 5, 15), (">15", 15, np.inf),
        ("all", -np.inf, np.inf))
PARAMS = (("TEFF", "Teff", "K", "%.0f"), ("LOGG", "logg", "dex", "%.3f"),
          ("FEH", "[Fe/H]", "dex", "%.3f"))
BEGIN = "<!-- BEGIN rvspecfit-comparison (bench/rvspecfit/report.py) -->"
END = "<!-- END rvspecfit-comparison -->"

# Settings of the two programs: fixed by the harness, so kept with the code
# that produces the table (run.sh / prep_rvspecfit.sh / convert.py).
SETTINGS = """\
Same inputs: one synthetic grid in PHOENIX layout (`rvfit mock grid --preset
{preset}`: 412 models, Teff 4000–7000/500, logg 1–5/1, [Fe/H] −2…+0.5/0.5,
[α/Fe] 0/0.4, 2 % holes) and one synthetic DESI coadd (`rvfit mock spectra
--preset {preset}`, per-fibre resolution matrices, S/N 3–60, |RV| ≤ 500 km/s,
vsini ≤ 10 km/s). Both programs build their own templates from the grid:
arms B 3500–5900, R 5660–7720, Z 7420–9924 Å, 0.4 Å log-λ step
(Δlnλ = ln(1 + 0.4/λ_mid)), vacuum, ±1000 km/s padding, photon-flux
(f·λ) rebinning with exact Gaussian+pixel integration. Both fit with
{threads} workers (rvfit `-j {threads}` threads, rvs_desi_fit `--nthreads
{threads}` processes), velocity range ±1000 km/s, npoly 10 Gaussian-basis
continuum, vsini ≤ 500 km/s.

rvspecfit runs as `rvs_desi_fit` with its defaults except:
* `--resolution_matrix` plus config `lsf_sigma0_angstrom: {{b,r,z: 0.4}}`
  (run *resmat*): the per-fibre resolution matrix is applied at fit time,
  deconvolved by the templates' σ₀ = 0.4 Å, as rvfit does. Its templates are
  made with `rvs_make_interpol --fixed_fwhm --resol λ_mid/(2.3548·0.4)`
  (Gaussian σ₀ = 0.4 Å). Run *nores* is rvspecfit's own default (no
  resolution matrix) with its published DESI template recipe (FWHM 1.55 Å in
  B and R, 1.8 Å in Z, `--resol_func x/1.55`, `x/1.8`): with the 0.4 Å
  template pixel that is σ ≈ 0.67 Å (B, R) and 0.77 Å (Z), one LSF for all
  fibres, against the mock's per-fibre matrices (σ given above, ±7 %
  between fibres).
* `--resolution0 1e8` in rvs_make_interpol: the grid is analytic, with no
  instrumental LSF to subtract (the default 1e5 narrows σ₀ by ~0.5 %).
* `--no_subdirs` (output file placement only).
* Input: rvspecfit 0.9.0 reads `FIBERMAP.BRICKID` for every fibre, which the
  mock coadd lacks; `bench/rvspecfit/convert.py` copies the file and adds
  BRICKID = 0. Spectra, ivar, masks, resolution and SCORES are unchanged.

Remaining differences (not aligned, by design of each program):
* Template normalisation: rvspecfit divides each template by its median and
  a two-point linear continuum and interpolates ln flux; rvfit divides by
  the arm mean and interpolates flux.
* Interpolation: rvspecfit Delaunay simplices over (log10 Teff, logg,
  [Fe/H], [α/Fe]) (`rvs_make_nd` default; its regular-grid mode needs a
  full grid and a regularisation step); rvfit multilinear on the regular
  grid with explicit handling of the holes.
* Resolution deconvolution: rvspecfit solves R·G⁻¹ with a pixel-sampled
  Gaussian of σ₀ (template pixel not counted); rvfit removes, to second
  order, the templates' σ (σ₀ with the 0.4 Å template pixel) in excess of
  the data pixel's box.
* Initialisation: rvspecfit CCF against every 30th template (vsini 0 and
  300 km/s), 5 km/s velocity grid, then Nelder–Mead + BFGS per star; rvfit
  a batched coarse grid of library nodes × velocities (20 km/s step), then a
  batched optimizer, all spectra in lockstep.
* Masking: rvspecfit masks 4300–4450 Å (dichroic; both runs) and, in the
  resmat run, five edge pixels per arm; rvfit does not mask the dichroic
  (the mock has no dichroic feature) and drops the six edge pixels per arm
  whose band-matrix kernel is incomplete.
* Errors: both floor σ at 0.3 × median σ; rvspecfit sets masked pixels to a
  huge σ and interpolates the flux, rvfit gives them zero weight.
"""


def robust_std(x):
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return float("nan")
    q75, q25 = np.percentile(x, [75, 25])
    return float((q75 - q25) / 1.349)


def nanmed(x):
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    return float(np.median(x)) if x.size else float("nan")


def load_run(spec, truth):
    name, rest = spec.split("=", 1)
    parts = rest.split(":")
    tab = fits.getdata(parts[0], "RVTAB")
    fit = json.load(open(parts[1])) if len(parts) > 1 else {}
    prep = json.load(open(parts[2])) if len(parts) > 2 and \
        os.path.exists(parts[2]) else {}
    index = {int(t): i for i, t in enumerate(truth["TARGETID"])}
    order = np.array([index[int(t)] for t in tab["TARGETID"]])
    return {"name": name, "file": parts[0], "tab": tab, "tru": truth[order],
            "fit": fit, "prep": prep}


def bin_metrics(tab, tru, sel):
    d = np.asarray(tab["VRAD"][sel], float) - tru["VRAD"][sel]
    e = np.asarray(tab["VRAD_ERR"][sel], float)
    ok = np.isfinite(d) & np.isfinite(e) & (e > 0)
    pull = d[ok] / e[ok]
    warn = np.asarray(tab["RVS_WARN"][sel])
    out = {"n": int(sel.sum()), "n_failed": int((~np.isfinite(d)).sum()),
           "vrad_bias": nanmed(d), "vrad_rstd": robust_std(d),
           "vrad_pull": robust_std(pull),
           "vrad_out5": float(np.mean(np.abs(pull) > 5)) if ok.any()
           else float("nan"),
           "warn_frac": float(np.mean(warn != 0)) if sel.any() else 0.0,
           "bad_hessian_frac": float(np.mean(warn & 64 != 0)) if sel.any()
           else 0.0}
    for col, _, _, _ in PARAMS:
        dd = np.asarray(tab[col][sel], float) - tru[col][sel]
        ee = np.asarray(tab[col + "_ERR"][sel], float)
        good = np.isfinite(ee) & (ee > 0)
        out[col.lower() + "_bias"] = nanmed(dd)
        out[col.lower() + "_rstd"] = robust_std(dd)
        out[col.lower() + "_pull"] = robust_std(dd[good] / ee[good])
    return out


def run_metrics(run):
    snr = run["tru"]["SNR"]
    res = {}
    for label, lo, hi in BINS:
        res[label] = bin_metrics(run["tab"], run["tru"],
                                 (snr >= lo) & (snr < hi))
    nfit = len(run["tab"])
    fit = run["fit"]
    if fit:
        res["cost"] = {"nstar": nfit, "wall_s": fit["wall_s"],
                       "cpu_s": fit["cpu_s"],
                       "core_s_per_star": fit["cpu_s"] / nfit,
                       "spectra_per_s": nfit / fit["wall_s"],
                       "maxrss_mib": fit["maxrss_mib"],
                       "load1_before": fit.get("load1_before")}
    if run["prep"]:
        res["prep"] = {"wall_s": run["prep"]["wall_s"],
                       "cpu_s": run["prep"]["cpu_s"]}
    return res


def sh(cmd, cwd=None):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def machine():
    model, cpus = "?", "?"
    for line in sh(["lscpu"]).splitlines():
        k, _, v = line.partition(":")
        if k.strip() == "Model name":
            model = v.strip()
        if k.strip() == "CPU(s)":
            cpus = v.strip()
    return f"{model}, {cpus} cores ({platform.machine()}, Linux {platform.release()})"


def versions(root):
    try:
        from importlib.metadata import version
        rvs = version("rvspecfit")
    except Exception:  # noqa: BLE001 - only for the report line
        rvs = "?"
    commit = sh(["git", "rev-parse", "--short", "HEAD"], cwd=root)
    # the report's own output does not make the measured code dirty
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no", "--",
                ".", ":!docs/benchmarks.md"], cwd=root)
    return commit + ("-dirty" if dirty not in ("", "?") else ""), rvs


def mock_lsf(mock):
    """Median Gaussian-equivalent sigma (A, incl. pixel) of each arm's
    resolution matrix: what the data's line-spread function is."""
    out = {}
    with fits.open(mock) as h:
        for a in "BRZ":
            R = h[a + "_RESOLUTION"].data.astype(float)
            dl = float(np.median(np.diff(h[a + "_WAVELENGTH"].data)))
            k = R.shape[1] // 2 - np.arange(R.shape[1])
            m2 = (R * k[None, :, None] ** 2).sum(1) / R.sum(1)
            out[a] = float(np.median(np.sqrt(m2)) * dl)
    return out


def fmt(x, f="%.2f"):
    return "—" if x is None or not np.isfinite(x) else f % x


def cost_only(spec):
    name, rest = spec.split("=", 1)
    tabf, fitf = rest.split(":")[:2]
    n = len(fits.getdata(tabf, "RVTAB"))
    fit = json.load(open(fitf))
    return {"name": name, "cost": {
        "nstar": n, "wall_s": fit["wall_s"], "cpu_s": fit["cpu_s"],
        "core_s_per_star": fit["cpu_s"] / n, "spectra_per_s": n / fit["wall_s"],
        "maxrss_mib": fit["maxrss_mib"], "load1_before": fit.get("load1_before")}}


def cost_table(runs, res):
    ref = res[runs[0]["name"]].get("cost")
    lines = ["| code | stars | wall s | CPU s | core-s/star | spectra/s |"
             " peak RSS MiB | load at start | templates wall s (CPU s) |"
             f" core-s/star vs {runs[0]['name']} |", "|---" * 10 + "|"]
    for r in runs:
        c = res[r["name"]].get("cost", {})
        p = res[r["name"]].get("prep", {})
        ratio = (c["core_s_per_star"] / ref["core_s_per_star"]
                 if c and ref else float("nan"))
        lines.append(
            f"| {r['name']} | {c.get('nstar', '—')} | {fmt(c.get('wall_s'), '%.1f')}"
            f" | {fmt(c.get('cpu_s'), '%.1f')} | {fmt(c.get('core_s_per_star'), '%.3f')}"
            f" | {fmt(c.get('spectra_per_s'), '%.2f')} | {fmt(c.get('maxrss_mib'), '%.0f')}"
            f" | {fmt(c.get('load1_before'), '%.1f')}"
            f" | {fmt(p.get('wall_s'), '%.1f')} ({fmt(p.get('cpu_s'), '%.1f')})"
            f" | {fmt(ratio, '%.1f')}× |")
    return lines


def accuracy_table(runs, res):
    lines = ["| code | S/N | n | fail | ΔV bias | ΔV σ | V pull | >5σ |"
             " ΔTeff bias | σ | pull | Δlogg bias | σ | pull |"
             " Δ[Fe/H] bias | σ | pull | warn | BAD_HESS |",
             "|---" * 19 + "|"]
    for label, _, _ in BINS:
        for r in runs:
            m = res[r["name"]][label]
            row = (f"| {r['name']} | {label} | {m['n']} | {m['n_failed']}"
                   f" | {fmt(m['vrad_bias'])} | {fmt(m['vrad_rstd'])}"
                   f" | {fmt(m['vrad_pull'])} | {fmt(m['vrad_out5'], '%.3f')}")
            for col, _, _, f in PARAMS:
                c = col.lower()
                row += (f" | {fmt(m[c + '_bias'], f)} | {fmt(m[c + '_rstd'], f)}"
                        f" | {fmt(m[c + '_pull'])}")
            row += (f" | {fmt(m['warn_frac'], '%.2f')}"
                    f" | {fmt(m['bad_hessian_frac'], '%.2f')} |")
            lines.append(row)
    return lines


def ratio_table(runs, res):
    """Scatter of each other run / scatter of the reference (rvfit): > 1
    means the reference is more precise."""
    ref = runs[0]["name"]
    lines = [f"| other / {ref} | S/N | ΔV σ | Teff σ | logg σ | [Fe/H] σ |"
             " V pull |", "|---" * 7 + "|"]
    for r in runs[1:]:
        for label, _, _ in BINS:
            a, b = res[r["name"]][label], res[ref][label]
            q = [a[k] / b[k] if b[k] else float("nan") for k in
                 ("vrad_rstd", "teff_rstd", "logg_rstd", "feh_rstd",
                  "vrad_pull")]
            lines.append(f"| {r['name']} | {label} | " +
                         " | ".join(fmt(x) for x in q) + " |")
    return lines


def summary(runs, res):
    """One line per compared run: speed ratios, then per-bin scatter."""
    ref = runs[0]["name"]
    rc = res[ref].get("cost")
    lines = []
    for r in runs[1:]:
        c = res[r["name"]].get("cost")
        if not (c and rc):
            continue
        lines.append(
            f"* {ref} vs {r['name']}: {c['core_s_per_star'] / rc['core_s_per_star']:.0f}×"
            f" fewer core-seconds per star, {rc['spectra_per_s'] / c['spectra_per_s']:.0f}×"
            " the spectra/s; robust ΔV σ " + ", ".join(
                f"{lab} {res[ref][lab]['vrad_rstd']:.2f} vs "
                f"{res[r['name']][lab]['vrad_rstd']:.2f}"
                for lab, _, _ in BINS[:3]) + " km/s; [Fe/H] σ " + ", ".join(
                f"{res[ref][lab]['feh_rstd']:.3f} vs "
                f"{res[r['name']][lab]['feh_rstd']:.3f}"
                for lab, _, _ in BINS[:3]) + " dex (S/N < 5, 5–15, > 15).")
    return lines


def markdown(args, runs, res, lsf):
    commit, rvs = versions(args.root)
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = ["## rvspecfit comparison", "",
           "Regenerate with one command (from a fresh clone; builds rvfit,"
           " installs rvspecfit into bench/rvspecfit/.venv):"
           " `bash bench/rvspecfit/run.sh`"
           " (≈ 20 minutes on a shared 2-core machine, most of it"
           " rvspecfit; not part of CI).", "",
           f"Date {today}; machine {machine()}; commit {commit};"
           f" rvspecfit {rvs} (PyPI, pinned in bench/rvspecfit/requirements.txt);"
           f" rvfit backend cpu, {args.threads} threads; grid preset"
           f" `{args.preset}`; {res[runs[0]['name']]['all']['n']} stars."
           " The machine is shared, so wall times carry ±20 %; CPU-seconds"
           " are the steadier measure.", "",
           "### Summary", ""] + summary(runs, res) + [
           "", "### Cost (end to end, file in → rvtab out)", ""]
    out += cost_table(runs + [{"name": n} for n in
                                getattr(args, "cost_names", [])], res)
    out += ["", "CPU s counts all threads and worker processes (getrusage of"
            " children); core-s/star = CPU s / stars; spectra/s = stars / wall"
            " s on the stated workers. Python start-up and rvspecfit's"
            " per-process template loading are included, as a user pays"
            " them. The 1000-star row (a second mock, seed 2) measures rvfit's"
            " throughput on a larger batch only. Load = 1-minute load average when the fit started (2 cores;"
            " above ~2 other work competed).", "", "### Accuracy against truth", ""]
    out += accuracy_table(runs, res)
    out += ["", "Bias = median(fit − truth); σ = IQR/1.349; pull = robust σ"
            " of (fit − truth)/error; >5σ = fraction of |ΔV/VRAD_ERR| > 5;"
            " warn = RVS_WARN ≠ 0; BAD_HESS = RVS_WARN bit 64. Velocities in"
            " km/s, Teff in K.", "", "### Ratios", ""]
    out += ratio_table(runs, res)
    if lsf:
        out += ["", "Data LSF of the mock coadd (median Gaussian-equivalent σ"
                " of the resolution matrices, including the 0.8 Å pixel): " +
                ", ".join(f"{a} {s:.2f} Å" for a, s in lsf.items()) + "."]
    out += ["", "### Settings and differences", "",
            SETTINGS.format(preset=args.preset, threads=args.threads).rstrip()]
    return "\n".join(out) + "\n"


def update_docs(path, section):
    """Replace only our section: between the markers, else the placeholder
    section under the same heading (up to the next '## '), else append."""
    block = BEGIN + "\n" + section + END + "\n"
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n\n"
    head = section.splitlines()[0] + "\n"
    if BEGIN in text and END in text:
        pre, rest = text.split(BEGIN, 1)
        post = rest.split(END, 1)[1].lstrip("\n")
    elif text.startswith(head) or "\n" + head in text:
        at = 0 if text.startswith(head) else text.index("\n" + head) + 1
        pre, rest = text[:at], text[at + len(head):]
        nxt = rest.find("\n## ")
        post = "" if nxt < 0 else rest[nxt + 1:]
    else:
        pre, post = text.rstrip("\n") + "\n\n", ""
    text = pre + block + ("\n" + post if post else "")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--truth", required=True)
    ap.add_argument("--run", action="append", required=True)
    ap.add_argument("--cost-run", action="append", default=[],
                    help="NAME=RVTAB:FIT.json: a cost row only")
    ap.add_argument("--mock")
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--update-docs")
    ap.add_argument("--root", default=".")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    truth = fits.getdata(args.truth, "TRUTH")
    runs = [load_run(s, truth) for s in args.run]
    res = {r["name"]: run_metrics(r) for r in runs}
    for spec in args.cost_run:
        extra = cost_only(spec)
        res[extra["name"]] = {"cost": extra["cost"]}
        args.cost_names = getattr(args, "cost_names", []) + [extra["name"]]
    lsf = mock_lsf(args.mock) if args.mock else None
    md = markdown(args, runs, res, lsf)
    if args.md:
        open(args.md, "w").write(md)
    else:
        sys.stdout.write(md)
    if args.json:
        json.dump(res, open(args.json, "w"), indent=1)
    if args.update_docs:
        update_docs(args.update_docs, md)


if __name__ == "__main__":
    main()
