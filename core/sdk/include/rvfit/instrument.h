/* rvfit/instrument.h — the instrument reader interface (desi, sdss, ...).
 *
 * An instrument plugin knows one survey's file format: it opens a file,
 * applies the target selection only it understands (object types, fibre
 * status, S/N columns), reads ranges of the selected spectra into a batch,
 * hands over table rows to copy into the outputs and describes the arms
 * for template preparation.  Writing synthetic files is not part of the
 * reader interface: it is the optional 'mock' extension
 * (rvfit/instrument_mock.h), which uses the star and truth types below.
 *
 * Threading: a handle is used by one thread at a time; CFITSIO-based
 * readers must not be called from several threads at once.
 * Ownership: the handle owns everything returned through info(); it stays
 * valid until close().
 * Versioning: as in backend.h, with RVFIT_INSTRUMENT_OPS_VERSION (append
 * only, minor bump; size and version checked by the loader).
 */
#ifndef RVFIT_INSTRUMENT_H
#define RVFIT_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/host.h"
#include "rvfit/spectra.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Target selection requested by the user. */
typedef struct rvfit_select {
    double minsn;            /* keep a spectrum if any arm's median S/N
                                >= minsn; <= 0 keeps all                */
    size_t ntargetid;        /* > 0: keep only these TARGETIDs           */
    const int64_t *targetid;
} rvfit_select;

typedef struct rvfit_file_info {
    int narm;
    rvfit_arm_info arm[RVFIT_MAX_ARMS];
    size_t ntotal;    /* spectra in the file                            */
    size_t nselect;   /* spectra passing the selection, read by index
                         0..nselect-1 in file order                    */
    int ntable;       /* pass-through tables, see spectra.h             */
    const rvfit_table_schema *table;
} rvfit_file_info;

/* Arms for template preparation: coverage of the data plus a log-lambda
 * step.  The library pads each arm by the velocity range itself. */
typedef struct rvfit_template_arm {
    char name[16];
    double lam_min, lam_max; /* vacuum Angstrom covered by the data     */
    double step;             /* Angstrom at the arm centre:
                                dlnl = ln(1 + step / lambda_mid)       */
    double sigma_kms;        /* > 0: smooth this arm's templates with a
                                Gaussian constant in velocity (km/s)
                                instead of the constant --sigma0 (A).
                                Instruments whose pixels are constant in
                                velocity need it: the resolution matrix
                                acts on templates sampled at the data
                                pixels, so templates must be smooth on
                                that scale (sigma ~ 0.5-0.8 pixel).    */
} rvfit_template_arm;

/* One synthetic star (star lists, the 'mock' extension's write_mock). */
typedef struct rvfit_mock_star {
    int64_t targetid;
    double teff, logg, feh, alphafe; /* physical units (K, dex, dex, dex) */
    double vrad, vsini;              /* km/s                              */
    double snr;                      /* median S/N per pixel per arm      */
} rvfit_mock_star;

/* Callback a mock writer uses to get the true spectrum of star `star`:
 * the observed-frame flux (Doppler shift and rotation applied, no
 * instrumental broadening), arbitrary units, sampled at
 * lambda_k = exp(lnl0 + k*dlnl), k < n.  The writer convolves it with its
 * own LSF and integrates it over its own pixels. */
typedef int (*rvfit_truth_fn)(void *ctx, size_t star, double lnl0,
                              double dlnl, size_t n, double *flux,
                              rvfit_err *err);

typedef struct rvfit_instrument_ops {
    uint32_t size;    /* sizeof(rvfit_instrument_ops) as compiled  */
    uint32_t version; /* RVFIT_INSTRUMENT_OPS_VERSION as compiled  */

    /* --- instrument ops 1.0 (ABI 2.0) --- */

    /* Open `path` and apply the selection.  opts are the plugin's
     * [instrument.NAME] options. Errors name the file and HDU. */
    int (*open)(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                const char *path, const rvfit_select *sel, void **handle,
                rvfit_err *err);
    void (*info)(void *handle, rvfit_file_info *info);
    /* Read selected spectra [first, first+count) into b (allocated by the
     * core from info->arm, b->cap >= count); sets b->nspec = count, fills
     * wave, flux, ivar (0 for masked/bad pixels), res or lsf, snr, flags
     * and index. */
    int (*read)(void *handle, size_t first, size_t count, rvfit_batch *b,
                rvfit_err *err);
    /* Rows of pass-through table t for selected spectra [first,
     * first+count); rows allocated by the core from info->table[t]. */
    int (*read_rows)(void *handle, int t, size_t first, size_t count,
                     rvfit_table_rows *rows, rvfit_err *err);
    void (*close)(void *handle);

    /* Arms for `rvfit templates --instrument NAME`. */
    int (*template_arms)(const rvfit_kv *opts, int nopt, int *narm,
                         rvfit_template_arm *arms, rvfit_err *err);
} rvfit_instrument_ops;

/* The [SECTION] options of a single-arm instrument's templates, read into
 * arm over the defaults the caller put there (absent keys keep them):
 * lam_min, lam_max (1000-30000 A), step (0.01-10 A), sigma_kms (0-500
 * km/s), and lam_max more than 100 A above lam_min.  RVFIT_ERR_CONFIG
 * naming the key (rvfit_kv_double) or SECTION; arm->name is untouched.
 * Reentrant: reads kv, writes arm only. */
RVFIT_EXPORT int rvfit_kv_template_arm(const rvfit_kv *kv, int n,
                                       const char *section,
                                       rvfit_template_arm *arm,
                                       rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
