/* sdss_internal.h — shared state of the SDSS/BOSS instrument plugin.
 *
 * One spec-PLATE-MJD-FIBER.fits file holds one spectrum; a text list of
 * such files is one input holding many.  At open every file's headers,
 * identifiers and SPALL values are read once and cached (a few hundred
 * bytes per spectrum); read() reopens the files of the requested range.
 * Only the entry symbol is exported; sdss_* names are shared between the
 * plugin's files.  All CFITSIO calls happen on the handle's thread. */
#ifndef SDSS_INTERNAL_H
#define SDSS_INTERNAL_H

#include <fitsio.h>
#include <stddef.h>
#include <stdint.h>

#include "rvfit/fits.h"
#include "rvfit/numeric.h"
#include "rvfit/instrument.h"

#define SDSS_WHO "sdss"
#define SDSS_ARM "BOSS"
#define SDSS_PATH_MAX 1024
#define SDSS_STR_MAX 32   /* longest SPALL string kept (SUBCLASS is 21) */
#define SDSS_NTABLE 2     /* RVTAB, SPALL */
#define SDSS_DLOGLAM 1e-4 /* BOSS pixel in log10(lambda)                */

/* TARGETID of a BOSS spectrum: unique over PLATE < 9.2e6, MJD < 1e5,
 * FIBERID < 1e4, and decodable by eye (3586 55181 0500). */
#define SDSS_TARGETID(plate, mjd, fiber)                                   \
    ((int64_t)(plate) * 1000000000LL + (int64_t)(mjd) * 10000LL +         \
     (int64_t)(fiber))

/* [instrument.sdss] options: the template arm, which also bounds the
 * pixels the reader offers (the library covers nothing beyond it). */
typedef struct sdss_opts {
    double lam_min, lam_max; /* vacuum Angstrom                         */
    double step;             /* template step at the arm centre, A      */
    double sigma_kms;        /* template smoothing, constant in v       */
} sdss_opts;

/* SPALL columns passed through (when present in at least one file). */
typedef struct sdss_cand {
    const char *name;
    int type; /* RVFIT_COL_F32, F64, I32 or STR */
} sdss_cand;
#define SDSS_NCAND 18
const sdss_cand *sdss_cands(void);

/* What open() learns about one file. */
typedef struct sdss_spec {
    char *path;
    size_t npix;          /* rows of COADD                              */
    double coeff0, coeff1; /* primary COEFF0/COEFF1; NaN when absent     */
    int32_t plate, mjd, fiber;
    double ra, dec;       /* PLUG_RA/PLUG_DEC, deg                      */
    int64_t targetid;
    double snr;           /* SN_MEDIAN_ALL, or from pixels; NaN unknown */
} sdss_spec;

typedef struct sdss_handle {
    const rvfit_host *host;
    char path[SDSS_PATH_MAX]; /* the input: one spec file or a list      */
    int is_list;
    sdss_opts opts;
    size_t nfile;
    sdss_spec *spec;          /* [nfile]                                 */
    size_t nsel;
    size_t *rows;             /* [nsel] selected file indices            */
    size_t npix;              /* max over files                          */
    /* SPALL cache: numbers as double, strings NUL-terminated */
    double *num;              /* [nfile * SDSS_NCAND]                    */
    char *str;                /* [nfile * SDSS_NCAND * SDSS_STR_MAX]     */
    long width[SDSS_NCAND];   /* 0: column in no file; STR: max width    */
    /* schemas handed out by info() */
    rvfit_column rvtab_cols[6];
    rvfit_column spall_cols[SDSS_NCAND];
    int spall_src[SDSS_NCAND]; /* candidate index of each SPALL column   */
    rvfit_table_schema schema[SDSS_NTABLE];
    rvfit_file_info info;
} sdss_handle;

/* ---- sdss_fits.c: CFITSIO glue ---------------------------------------- */
/* Move to the table HDU named extname; 0 when found. */
int sdss_goto_hdu(fitsfile *fp, const char *extname);

/* ---- sdss_opts.c: options and template arms --------------------------- */
int sdss_parse_opts(const rvfit_kv *opts, int nopt, sdss_opts *o,
                    rvfit_err *err);
int sdss_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                       rvfit_template_arm *arms, rvfit_err *err);

/* ---- sdss_list.c: the input as a list of files ------------------------ */
/* Fill h->spec paths from h->path: itself when it is FITS, its entries
 * when it is a text list (relative entries resolved against the list's
 * directory, then the working directory). */
int sdss_list_files(sdss_handle *h, rvfit_err *err);

/* ---- sdss_open.c ------------------------------------------------------ */
int sdss_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
              const char *path, const rvfit_select *sel, void **handle,
              rvfit_err *err);
void sdss_info(void *handle, rvfit_file_info *info);
void sdss_close(void *handle);
/* Open spec file f and move to COADD; *npix its rows; cols[5] the column
 * numbers of flux, loglam, ivar, and_mask, wdisp. */
int sdss_open_coadd(const char *path, fitsfile **fp, size_t *npix,
                    int cols[5], rvfit_err *err);

/* ---- sdss_read.c ------------------------------------------------------ */
int sdss_read(void *handle, size_t first, size_t count, rvfit_batch *b,
              rvfit_err *err);
/* Pixels of file k into npix-long arrays (padded past the file's end):
 * wave (A), flux, ivar (0 = unusable), lsf (sigma, A). */
int sdss_read_one(sdss_handle *h, size_t k, double *wave, float *flux,
                  float *ivar, float *lsf, rvfit_err *err);

/* ---- sdss_tables.c ---------------------------------------------------- */
/* Read identifiers and SPALL values of file k from the open fp. */
int sdss_read_meta(sdss_handle *h, size_t k, fitsfile *fp, rvfit_err *err);
/* Build the RVTAB and SPALL schemas once every file is scanned. */
void sdss_tables_init(sdss_handle *h);
int sdss_read_rows(void *handle, int t, size_t first, size_t count,
                   rvfit_table_rows *rows, rvfit_err *err);

/* ---- sdss_mock.c ------------------------------------------------------ */
int sdss_write_mock(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                    const char *path, size_t nstar,
                    const rvfit_mock_star *stars, rvfit_truth_fn truth,
                    void *ctx, uint64_t seed, rvfit_err *err);

#endif
