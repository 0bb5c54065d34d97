/* rvfit/synth.h — synthetic stars: an analytic, line-rich high-resolution
 * spectrum that responds smoothly to (Teff, logg, [Fe/H], [alpha/Fe]),
 * a synthetic template grid written in PHOENIX layout, and star lists.
 *
 * The same analytic spectrum feeds both the template grid (sampled at grid
 * nodes) and the synthetic observations (exact off-grid parameters, then
 * the instrument's own LSF and pixel integration), so a fit never sees the
 * generator's own interpolation (no inverse crime).
 *
 * Units: wavelengths vacuum Angstrom; flux erg/s/cm^2/cm like PHOENIX
 * (surface flux of a blackbody-like continuum times line absorption).
 * All functions are pure or write only their outputs; thread-safe.
 */
#ifndef RVFIT_SYNTH_H
#define RVFIT_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/instrument.h"
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rest-frame flux at parameters (teff K, logg, feh, alphafe) on the log
 * grid lambda_k = exp(lnl0 + k*dlnl), k < n.  Lines are intrinsically
 * resolved at this sampling (dlnl <= 2e-5 recommended). */
RVFIT_EXPORT int rvfit_synth_flux(double teff, double logg, double feh,
                                  double alphafe, double lnl0, double dlnl,
                                  size_t n, double *flux, rvfit_err *err);

/* rvfit_truth_fn for mock writers: ctx is a `const rvfit_mock_star *`
 * array; applies rotation (limb-darkened kernel) and the Doppler shift. */
RVFIT_EXPORT int rvfit_synth_truth(void *ctx, size_t star, double lnl0,
                                   double dlnl, size_t n, double *flux,
                                   rvfit_err *err);

/* A regular grid to write in PHOENIX layout. */
typedef struct rvfit_grid_spec {
    double teff0, teff1, teff_step;   /* K                               */
    double logg0, logg1, logg_step;
    double feh0, feh1, feh_step;
    double alpha0, alpha1, alpha_step; /* alpha_step 0: only alpha0      */
    double lam_min, lam_max;          /* vacuum Angstrom                 */
    double dlnl;                      /* sampling of the files           */
    double hole_fraction;             /* drop this fraction of nodes      */
    uint64_t seed;                    /* which nodes are holes            */
} rvfit_grid_spec;

/* Presets: "std" = grid-std of docs (benchmarks.md), "small" = a reduced
 * grid for tests.  Returns RVFIT_ERR_INVALID for an unknown name. */
RVFIT_EXPORT int rvfit_grid_preset(const char *name, rvfit_grid_spec *spec,
                                   rvfit_err *err);

/* Write the grid under dir in PHOENIX layout (WAVE_PHOENIX-...fits and
 * PHOENIX-ACES-AGSS-COND-2011/Z.../lte...fits with PHX* keywords).
 * nthreads >= 1 for parallel model generation. */
RVFIT_EXPORT int rvfit_grid_write(const char *dir,
                                  const rvfit_grid_spec *spec, int nthreads,
                                  rvfit_err *err);

/* Draw n stars at off-grid parameters inside the spec's ranges (margins of
 * half a step avoided at the edges), RV uniform in [-vmax, vmax], vsini
 * uniform in [0, vsini_max], S/N log-uniform in [snr_min, snr_max];
 * TARGETIDs 1000000+i.  Deterministic in seed. */
RVFIT_EXPORT void rvfit_mock_stars(const rvfit_grid_spec *spec, size_t n,
                                   uint64_t seed, double vmax,
                                   double vsini_max, double snr_min,
                                   double snr_max, rvfit_mock_star *stars);

/* Write the truth table (HDU TRUTH: TARGETID, TEFF, LOGG, FEH, ALPHAFE,
 * VRAD, VSINI, SNR) atomically. */
RVFIT_EXPORT int rvfit_truth_write(const char *path, size_t n,
                                   const rvfit_mock_star *stars,
                                   rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
