/* lamost_internal.h — shared state of the LAMOST LRS instrument plugin.
 *
 * One spec-*.fits file holds one low-resolution spectrum, in one of two
 * layouts:
 *   - DR1-DR7: the primary image, float32 [5][npix], rows flux, ivar,
 *     wavelength, andmask, ormask;
 *   - DR8 and later: a binary table COADD of one row with vector columns
 *     FLUX, IVAR, WAVELENGTH, ANDMASK, ORMASK.
 * Both keep the pipeline's results (OBSID, CLASS, Z, SNRG, HELIO_RV, ...)
 * in the primary header.  LAMOST publishes vacuum wavelengths in the
 * heliocentric frame on a log-linear grid (COEFF0/COEFF1).  Batches that
 * span files are the core's job: a handle is one file.  Only the entry
 * symbol is exported; lamost_* names are shared between the plugin's
 * files.  All CFITSIO calls happen on the handle's thread. */
#ifndef LAMOST_INTERNAL_H
#define LAMOST_INTERNAL_H

#include <fitsio.h>
#include <stddef.h>
#include <stdint.h>

#include "rvfit/fits.h"
#include "rvfit/instrument.h"
#include "rvfit/instrument_epochs.h"
#include "rvfit/numeric.h"

#define LAMOST_WHO "lamost"
#define LAMOST_ARM "LRS"
#define LAMOST_PATH_MAX 1024
#define LAMOST_STR_MAX 24    /* CLASS, SUBCLASS kept (SUBCLASS 'dM0' ...)  */
#define LAMOST_NTABLE 2      /* RVTAB, LAMOST                              */
#define LAMOST_NCOL_ID 3     /* RVTAB: TARGETID, TARGET_RA, TARGET_DEC     */
#define LAMOST_NCOL 17       /* LAMOST: CLASS ... HELIO_RV, OBSID ... DESIG */
#define LAMOST_DESIG_MAX 32  /* DESIG 'LAMOST J041615.64+451723.3' kept    */
#define LAMOST_DLOGLAM 1e-4  /* LRS pixel in log10(lambda), 69 km/s        */
#define LAMOST_C_KMS 299792.458
/* FWHM = 2 sqrt(2 ln 2) sigma */
#define LAMOST_FWHM_SIGMA 2.354820045030949382

enum { LAMOST_DR7 = 7, LAMOST_DR8 = 8 }; /* the two layouts */

/* [instrument.lamost] options: the template arm (which also bounds the
 * pixels the reader offers), the resolution and the mock layout. */
typedef struct lamost_opts {
    double lam_min, lam_max; /* vacuum Angstrom                         */
    double step;             /* template step at the arm centre, A      */
    double sigma_kms;        /* template smoothing, constant in v       */
    double resolution;       /* R = lambda / FWHM of the Gaussian LSF   */
    int mock_layout;         /* LAMOST_DR7, LAMOST_DR8, or 0: alternate */
} lamost_opts;

/* What open() learns from the primary header.  NaN / "" when absent. */
typedef struct lamost_meta {
    int64_t targetid;            /* OBSID, or derived (lamost_ids.c)    */
    int64_t obsid;               /* OBSID keyword if an integer, else 0 */
    int derived;                 /* 1: targetid derived, why says so    */
    int32_t lmjd, spid, fiberid; /* -1 when absent or out of range      */
    char planid[FLEN_VALUE];     /* PLANID, trailing blanks removed     */
    char desig[LAMOST_DESIG_MAX]; /* DESIG (truncated)                  */
    char why[256];               /* the warning when derived            */
    double ra, dec;              /* deg                                 */
    char cls[LAMOST_STR_MAX];    /* CLASS                               */
    char subcls[LAMOST_STR_MAX]; /* SUBCLASS                            */
    double z, z_err;
    double snr[5];               /* SNRU, SNRG, SNRR, SNRI, SNRZ        */
    double helio_rv;             /* km/s, HELIO_RV                      */
    int helio_done;              /* 1: wavelengths heliocentric already */
    double coeff0, coeff1;       /* log10 grid; NaN when absent         */
    double mjd;                  /* MJD keyword; NaN when absent        */
} lamost_meta;

/* The five LRS pixel quantities of one file, npix each. */
typedef struct lamost_pix {
    size_t npix;
    float *flux, *ivar;
    double *wave;
    int32_t *andmask;
} lamost_pix;

typedef struct lamost_handle {
    const rvfit_host *host;
    char path[LAMOST_PATH_MAX];
    lamost_opts opts;
    int layout;               /* LAMOST_DR7 or LAMOST_DR8             */
    size_t npix;
    lamost_meta meta;
    size_t nsel;              /* 0 or 1                               */
    rvfit_column rvtab_cols[LAMOST_NCOL_ID];
    rvfit_column lamost_cols[LAMOST_NCOL];
    rvfit_table_schema schema[LAMOST_NTABLE];
    rvfit_file_info info;
} lamost_handle;

/* ---- lamost_opts.c ----------------------------------------------------- */
int lamost_parse_opts(const rvfit_kv *opts, int nopt, lamost_opts *o,
                      rvfit_err *err);
int lamost_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                         rvfit_template_arm *arms, rvfit_err *err);

/* ---- lamost_fits.c: the two layouts ------------------------------------ */
/* Open path; *layout and *npix from its HDUs.  Errors name the file and
 * say which layout was expected. */
int lamost_open_file(const char *path, fitsfile **fp, int *layout,
                     size_t *npix, rvfit_err *err);
void lamost_close_file(fitsfile *fp);
/* Read the pixels of an open file (p->npix set, arrays allocated). */
int lamost_read_pixels(fitsfile *fp, const char *path, int layout,
                       lamost_pix *p, rvfit_err *err);
int lamost_pix_alloc(lamost_pix *p, size_t npix);
void lamost_pix_free(lamost_pix *p);

/* ---- lamost_meta.c ----------------------------------------------------- */
/* Primary-header keywords of fp into m; checks VACUUM, derives the
 * TARGETID when the OBSID is not usable (lamost_ids.c). */
int lamost_read_meta(fitsfile *fp, const char *path, lamost_meta *m,
                     rvfit_err *err);
/* String keyword into out[size] (truncated, trailing blanks removed);
 * "" when absent. */
void lamost_key_str(fitsfile *fp, const char *key, char *out, size_t size);

/* ---- lamost_ids.c ------------------------------------------------------ */
/* OBSID, LMJD, PLANID, SPID, FIBERID and DESIG into m; m->targetid is the
 * OBSID when a positive integer, else derived (m->derived, m->why); an
 * error names the keywords missing for the derivation. */
int lamost_read_ids(fitsfile *fp, const char *path, lamost_meta *m,
                    rvfit_err *err);

/* ---- lamost_wave.c ----------------------------------------------------- */
/* Vacuum heliocentric wavelengths of p in place: the exact COEFF0 +
 * i*COEFF1 grid when the stored (float32) row follows it, the row
 * otherwise; then the heliocentric shift when the file says it is not
 * applied. */
int lamost_wave(const lamost_meta *m, const char *path, lamost_pix *p,
                rvfit_err *err);

/* ---- lamost_epochs.c: the 'epochs' extension --------------------------- */
int lamost_epochs(void *handle, size_t first, size_t count, rvfit_epoch *out,
                  rvfit_err *err);

/* ---- lamost_open.c ----------------------------------------------------- */
int lamost_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                const char *path, const rvfit_select *sel, void **handle,
                rvfit_err *err);
void lamost_info(void *handle, rvfit_file_info *info);
void lamost_close(void *handle);
/* Pixels of the handle's file, wavelengths final. */
int lamost_load(const lamost_handle *h, lamost_pix *p, rvfit_err *err);

/* ---- lamost_read.c ----------------------------------------------------- */
int lamost_read(void *handle, size_t first, size_t count, rvfit_batch *b,
                rvfit_err *err);
/* ivar zeroed where unusable (andmask, non-finite, outside the arm). */
void lamost_usable(const lamost_opts *o, lamost_pix *p);

/* ---- lamost_tables.c --------------------------------------------------- */
void lamost_tables_init(lamost_handle *h);
int lamost_read_rows(void *handle, int t, size_t first, size_t count,
                     rvfit_table_rows *rows, rvfit_err *err);

/* ---- lamost_mock.c ----------------------------------------------------- */
int lamost_write_mock(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                      const char *path, size_t nstar,
                      const rvfit_mock_star *stars, rvfit_truth_fn truth,
                      void *ctx, uint64_t seed, rvfit_err *err);

#endif
