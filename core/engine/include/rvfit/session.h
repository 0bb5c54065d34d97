/* rvfit/session.h — an in-process session for language bindings (the
 * Python package, python/): a configuration, a template library and a
 * backend held behind one opaque handle, fed with spectra from the
 * caller's arrays instead of files.  Everything goes through the same code
 * the CLI runs: rvfit_prep_batch, the backend plugin's load_batch and
 * chisq, and rvfit_fit_batch; the result columns are the RVTAB columns of
 * `rvfit fit` (names, units, values).
 *
 * Only plain C types cross this interface (no struct layouts), so that a
 * binding through ctypes needs no copy of rvfit's headers.
 *
 * Order: new -> [load_config] [set]* -> open_library -> open_backend ->
 * { batch_new -> batch_arm (each arm) -> batch_load -> chisq* / fit ->
 * results }*.  Settings that shape the library ([templates] cubic,
 * log_flux) act at open_library, backend options at open_backend, [fit]
 * settings at batch_load and fit.
 *
 * Units: wavelengths vacuum Angstrom, velocities km/s, parameters in
 * physical units (Teff in K, others dex).
 * Ownership: the session copies every array it is given; strings it
 * returns live until the next call that changes the session.
 * Thread-safety: one thread per session; sessions are independent.
 */
#ifndef RVFIT_SESSION_H
#define RVFIT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rvfit_session rvfit_session;

/* A session with the default configuration ([run] log_level = warn:
 * bindings log only problems unless asked). */
RVFIT_EXPORT int rvfit_session_new(rvfit_session **s, rvfit_err *err);
RVFIT_EXPORT void rvfit_session_free(rvfit_session *s);

/* Read an INI file / set one key, as `rvfit fit --config` / `--set`. */
RVFIT_EXPORT int rvfit_session_load_config(rvfit_session *s,
                                           const char *path,
                                           rvfit_err *err);
RVFIT_EXPORT int rvfit_session_set(rvfit_session *s, const char *section,
                                   const char *key, const char *value,
                                   rvfit_err *err);

/* Load the template library (path: a directory or the file; NULL: the
 * configured [templates] path) with the configured interpolation. */
RVFIT_EXPORT int rvfit_session_open_library(rvfit_session *s,
                                            const char *path,
                                            rvfit_err *err);

/* The grid: parameter i's axis name, unit, nodes in physical units
 * (node[RVFIT_MAX_NODES] or NULL; *nnode of them) and whether it is
 * log10-scaled; arm a's name, ln-lambda start and step, pixels and
 * velocity smoothing.  Names are copied into n-byte buffers. */
RVFIT_EXPORT int rvfit_session_nparam(const rvfit_session *s);
RVFIT_EXPORT int rvfit_session_axis(const rvfit_session *s, int i,
                                    char *name, char *unit, size_t n,
                                    int *log10_scale, int *nnode,
                                    double *node, rvfit_err *err);
RVFIT_EXPORT int rvfit_session_narm(const rvfit_session *s);
RVFIT_EXPORT int rvfit_session_arm(const rvfit_session *s, int a,
                                   char *name, size_t n, double *lnl0,
                                   double *dlnl, size_t *npix,
                                   double *sigma_kms, rvfit_err *err);
/* Models in the grid and which exist (exists[nmodel], 0 = hole, 1 =
 * model, RVFIT_MODEL_FILLED = a hole filled at build time; node index
 * row-major, last axis fastest). */
RVFIT_EXPORT size_t rvfit_session_nmodel(const rvfit_session *s);
RVFIT_EXPORT int rvfit_session_exists(const rvfit_session *s,
                                      uint8_t *exists, rvfit_err *err);

/* Open the backend `name` (NULL: the configured [backend] name, which
 * may be a fallback list) and load the library into it.  A backend
 * already open is closed first.  The device description ("cpu: 2
 * threads") is valid until the backend is closed. */
RVFIT_EXPORT int rvfit_session_open_backend(rvfit_session *s,
                                            const char *name,
                                            rvfit_err *err);
RVFIT_EXPORT const char *rvfit_session_device(const rvfit_session *s);

/* How an arm gives its resolution (values of enum rvfit_res_kind). */
#define RVFIT_SESSION_RES_NONE 0
#define RVFIT_SESSION_RES_BAND 1 /* res[nspec*ndiag*npix], DESI layout    */
#define RVFIT_SESSION_RES_LSF 2  /* res[nspec*npix]: Gaussian sigma in A,
                                    the pixel box excluded (>= 0)       */

/* Start a batch of nspec spectra in narm arms (drops the previous batch
 * and its results). */
RVFIT_EXPORT int rvfit_session_batch_new(rvfit_session *s, size_t nspec,
                                         int narm, rvfit_err *err);
/* Arm a of the batch, copied: wave[npix] (wave_per_spec 0) or
 * wave[nspec*npix]; flux and ivar [nspec*npix] (ivar 0, or a non-finite
 * flux or ivar, marks a pixel unused); res as res_kind says (NULL for
 * NONE; ndiag odd for BAND).  The arm's name must be one of the
 * library's. */
RVFIT_EXPORT int rvfit_session_batch_arm(rvfit_session *s, int a,
                                         const char *name, size_t npix,
                                         int wave_per_spec,
                                         const double *wave,
                                         const float *flux, const float *ivar,
                                         int res_kind, int ndiag,
                                         const float *res, rvfit_err *err);
/* Prepare the batch (rvfit_prep_batch) and load it into the backend.
 * snr[nspec*narm] (NULL: from the pixels, NaN entries too) is the S/N
 * per arm reported in the SN_<arm> columns.  A spectrum with no usable
 * pixel in any arm is not fitted (RVS_WARN bit 32). */
RVFIT_EXPORT int rvfit_session_batch_load(rvfit_session *s,
                                          const double *snr, rvfit_err *err);

/* -2 ln L of the loaded batch at n points: spectrum spec[k], parameters
 * param[k*nparam..] (physical), v[k], vsini[k]; into m2lnl[n] and, when
 * not NULL, chi^2 per arm into chisq[n*narm].  This is the backend's
 * chisq: the out-of-grid penalty is included, the fit's soft velocity
 * limits are not. */
RVFIT_EXPORT int rvfit_session_chisq(rvfit_session *s, size_t n,
                                     const uint32_t *spec,
                                     const double *param, const double *v,
                                     const double *vsini, double *m2lnl,
                                     double *chisq, rvfit_err *err);

/* Fit every spectrum of the loaded batch as `rvfit fit` does
 * (rvfit_fit_batch with the [fit] settings); models: also compute the
 * best-fit models (rvfit_session_model). */
RVFIT_EXPORT int rvfit_session_fit(rvfit_session *s, int models,
                                   rvfit_err *err);

/* The RVTAB columns of the fit: their number, column c's name and unit
 * (n-byte buffers; the physical unit, "dex" too, which the file's TUNIT
 * leaves empty) and FITS type letter ('D', 'J' or 'L'), and its nspec
 * values as doubles (NaN where `rvfit fit` writes a null). */
RVFIT_EXPORT int rvfit_session_ncol(const rvfit_session *s);
RVFIT_EXPORT int rvfit_session_col(const rvfit_session *s, int c,
                                   char *name, char *unit, size_t n,
                                   char *type, rvfit_err *err);
RVFIT_EXPORT int rvfit_session_col_values(const rvfit_session *s, int c,
                                          double *out, rvfit_err *err);
/* Best-fit models of arm a into out[nspec*npix] (NaN for spectra not
 * fitted); needs rvfit_session_fit(s, 1, ...). */
RVFIT_EXPORT int rvfit_session_model(const rvfit_session *s, int a,
                                     float *out, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
