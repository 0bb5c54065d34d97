/* lamost_internal.h — shared state of the LAMOST instrument plugin.
 *
 * One spec-*.fits file holds one low-resolution (LRS) spectrum, in one of
 * two layouts:
 *   - DR1-DR7: the primary image, float32 [5][npix], rows flux, ivar,
 *     wavelength, andmask, ormask;
 *   - DR8 and later: a binary table COADD of one row with vector columns
 *     FLUX, IVAR, WAVELENGTH, ANDMASK, ORMASK.
 * Both keep the pipeline's results (OBSID, CLASS, Z, SNRG, HELIO_RV, ...)
 * in the primary header.  One med-*.fits file holds the medium-resolution
 * (MRS) spectra of one target on one night: the coadds COADD_B and
 * COADD_R and one table per exposure and arm, B-<LMJM> and R-<LMJM>, all
 * of one row per pixel (lamost_mrs_scan.c); a spectrum is the coadd or one
 * exposure, with two arms, MRS_B and MRS_R.  LAMOST publishes vacuum
 * wavelengths in the heliocentric frame on a log-linear grid (LRS:
 * COEFF0/COEFF1).  Batches that
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
#define LAMOST_MRS_NARM 2    /* MRS_B, MRS_R                               */
#define LAMOST_PATH_MAX 1024
#define LAMOST_STR_MAX 24    /* CLASS, SUBCLASS kept (SUBCLASS 'dM0' ...)  */
#define LAMOST_NTABLE 2      /* RVTAB, LAMOST                              */
#define LAMOST_NCOL_ID 3     /* RVTAB: TARGETID, TARGET_RA, TARGET_DEC     */
#define LAMOST_NCOL 17       /* LAMOST: CLASS ... HELIO_RV, OBSID ... DESIG */
#define LAMOST_NCOL_MRS 6    /* then, MRS only: LMJM ... NEXP_R            */
#define LAMOST_DESIG_MAX 32  /* DESIG 'LAMOST J041615.64+451723.3' kept    */
#define LAMOST_DLOGLAM 1e-4  /* LRS pixel in log10(lambda), 69 km/s        */
#define LAMOST_C_KMS 299792.458
/* FWHM = 2 sqrt(2 ln 2) sigma */
#define LAMOST_FWHM_SIGMA 2.354820045030949382

/* The file kinds: the two LRS layouts and the MRS med- file. */
enum { LAMOST_DR7 = 7, LAMOST_DR8 = 8, LAMOST_MRS = 9 };
/* Which spectra of a med- file are read ([instrument.lamost] mrs). */
enum { LAMOST_MRS_COADD = 0, LAMOST_MRS_EXPOSURES = 1 };
/* Which template arms `rvfit templates` builds ([instrument.lamost]
 * arms): bits. */
enum { LAMOST_ARMS_LRS = 1, LAMOST_ARMS_MRS = 2 };

/* [instrument.lamost] options: the LRS template arm (which also bounds
 * the pixels the reader offers), the resolution and the mock layout; the
 * MRS arms' step, smoothing and resolution, and which MRS spectra. */
typedef struct lamost_opts {
    double lam_min, lam_max; /* vacuum Angstrom                         */
    double step;             /* template step at the arm centre, A      */
    double sigma_kms;        /* template smoothing, constant in v       */
    double resolution;       /* R = lambda / FWHM of the Gaussian LSF   */
    int mock_layout;         /* LAMOST_DR7, LAMOST_DR8, or 0: alternate */
    int arms;                /* LAMOST_ARMS_* bits                      */
    int mrs;                 /* LAMOST_MRS_COADD or _EXPOSURES          */
    double mrs_resolution;   /* R of both MRS arms                      */
    double mrs_step;         /* MRS template step at the arm centre, A  */
    double mrs_sigma_kms;    /* MRS template smoothing                  */
} lamost_opts;

/* The fixed wavelength ranges of the MRS arms (vacuum A): what the
 * templates cover and the reader offers (lamost_opts.c). */
typedef struct lamost_mrs_arm {
    const char *name, *tag; /* "MRS_B", "B": tables COADD_B, B-<LMJM>  */
    double lam_min, lam_max;
} lamost_mrs_arm;
extern const lamost_mrs_arm lamost_mrs_arms[LAMOST_MRS_NARM];

/* One MRS spectrum: the coadd or one exposure, and its two arms' tables
 * (lamost_mrs_scan.c). */
typedef struct lamost_mrs_spec {
    long long lmjm;          /* local Julian minute; -1: the coadd      */
    int hdu[LAMOST_MRS_NARM];      /* 1-based; 0: the arm's table absent */
    size_t npix[LAMOST_MRS_NARM];  /* its rows (pixels)                  */
    double exptime, snr[LAMOST_MRS_NARM]; /* table keys; NaN: absent    */
    double mjd;              /* the epoch, UTC (lamost_mrs_scan.c)      */
} lamost_mrs_spec;

/* The MRS spectra of one med- file. */
typedef struct lamost_mrs {
    size_t nspec, nsel;
    lamost_mrs_spec *spec;   /* [nspec], by LMJM                        */
    size_t *sel;             /* [nsel] indices into spec                */
    size_t npix[LAMOST_MRS_NARM]; /* the arms' lengths in the batch     */
    int32_t nexp[LAMOST_MRS_NARM]; /* NEXP_B, NEXP_R; -1 when absent    */
} lamost_mrs;

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
    int layout;               /* LAMOST_DR7, LAMOST_DR8 or LAMOST_MRS */
    size_t npix;              /* LRS                                  */
    lamost_meta meta;
    size_t nsel;              /* LRS: 0 or 1; MRS: mrs.nsel           */
    lamost_mrs mrs;           /* MRS only                             */
    rvfit_column rvtab_cols[LAMOST_NCOL_ID];
    rvfit_column lamost_cols[LAMOST_NCOL + LAMOST_NCOL_MRS];
    rvfit_table_schema schema[LAMOST_NTABLE];
    rvfit_file_info info;
} lamost_handle;

/* ---- lamost_opts.c ----------------------------------------------------- */
int lamost_parse_opts(const rvfit_kv *opts, int nopt, lamost_opts *o,
                      rvfit_err *err);
int lamost_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                         rvfit_template_arm *arms, rvfit_err *err);

/* ---- lamost_fits.c: the two LRS layouts, and which kind a file is ---- */
/* Open path; *layout and (LRS) *npix from its HDUs.  Errors name the file
 * and say which layouts were expected. */
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
/* RVFIT_ERR_FORMAT naming path (and hdu, when not NULL) unless w[0..n-1]
 * increase within 100 A - 10 um. */
int lamost_wave_ok(const char *path, const char *hdu, const double *w,
                   size_t n, rvfit_err *err);
/* w moved to the heliocentric frame when the file says HELIO = F. */
void lamost_wave_helio(const lamost_meta *m, double *w, size_t n);

/* ---- lamost_mrs_scan.c: the spectra of a med- file --------------------- */
/* The tables of the open MRS file fp that h->opts.mrs reads, checked,
 * into h->mrs (all selected); errors name the file and the HDU. */
int lamost_mrs_scan(fitsfile *fp, lamost_handle *h, rvfit_err *err);
/* 1 when an HDU of fp is named COADD_B, COADD_R, B-<LMJM> or R-<LMJM>. */
int lamost_mrs_is(fitsfile *fp);
void lamost_mrs_free(lamost_mrs *m);
/* Epoch (MJD, UTC) of the local Julian minute lmjm. */
double lamost_lmjm_mjd(long long lmjm);

/* ---- lamost_mrs_read.c ------------------------------------------------- */
/* An arm absent from every spectrum of a file still has this many pixels
 * (none usable). */
#define LAMOST_MRS_EMPTY_NPIX 64
/* The name of spectrum lmjm's table of arm a: COADD_B (lmjm < 0), B-<LMJM>,
 * ... */
void lamost_mrs_hdu_name(long long lmjm, int a, char *buf, size_t n);
/* Move fp to HDU hdu (called name) and check it is an MRS table of one
 * row per pixel: *npix rows (>= 2), cols[4] the numbers of FLUX, IVAR,
 * LOGLAM and the mask (ANDMASK for a coadd, PIXMASK for an exposure),
 * each one number per row.  Errors name the file, the HDU and what is
 * wrong. */
int lamost_mrs_table(fitsfile *fp, const char *path, int hdu,
                     const char *name, size_t *npix, int cols[4],
                     rvfit_err *err);
/* The selection (TARGETID, minimum S/N of either arm) of an MRS handle. */
int lamost_mrs_select(lamost_handle *h, const rvfit_select *sel,
                      rvfit_err *err);
int lamost_mrs_read(lamost_handle *h, size_t first, size_t count,
                    rvfit_batch *b, rvfit_err *err);

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
