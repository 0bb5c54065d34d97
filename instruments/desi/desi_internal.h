/* desi_internal.h — shared state of the DESI instrument plugin.
 *
 * Only the entry symbol is exported (the plugin is built with
 * -fvisibility=hidden); the desi_* functions below are shared between the
 * plugin's own files.  A handle is used by one thread at a time; its
 * reads may spread over the host's threads (desi_read.c), each with a
 * CFITSIO handle of its own on the file. */
#ifndef DESI_INTERNAL_H
#define DESI_INTERNAL_H

#include <fitsio.h>
#include <stddef.h>
#include <stdint.h>

#include "rvfit/fits.h"
#include "rvfit/mockkit.h"
#include "rvfit/numeric.h"
#include "rvfit/instrument.h"
#include "rvfit/instrument_epochs.h"
#include "rvfit/pool.h"

#define DESI_WHO "desi"
#define DESI_NTABLE 3   /* RVTAB, FIBERMAP, SCORES */
#define DESI_PATH_MAX 1024

/* One camera (arm): HDU numbers of its five images and its grid. */
typedef struct desi_cam {
    char name[16];
    int hdu_wave, hdu_flux, hdu_ivar, hdu_mask, hdu_res; /* 1-based, 0=absent */
    size_t npix;
    int ndiag;
    int mask_unsigned; /* MASK stored as uint32 (BZERO 2^31): read TUINT */
    double *wave;      /* [npix], read at open (small)                    */
} desi_cam;

/* A pass-through table: its schema plus where each column comes from. */
typedef struct desi_table {
    rvfit_column *cols;
    int hdu;        /* source HDU (1-based); 0 when the table is empty */
    int *src_col;   /* column number in the source HDU                 */
    int *fits_type; /* CFITSIO datatype used to read it                */
} desi_table;

/* Up to this many threads read one file (desi_read.c). */
#define DESI_MAX_WORKERS 16

/* What one reading thread owns: a CFITSIO handle on the file (worker 0's
 * is the handle's own fp) and its MASK scratch. */
typedef struct desi_worker {
    fitsfile *fp;
    uint32_t *mask_buf; /* grown on demand */
    size_t mask_cap;
} desi_worker;

/* Plugin options ([instrument.desi]). */
typedef struct desi_opts {
    long fiberstatus_mask; /* bits of (COADD_)FIBERSTATUS that reject; -1 all */
    int nobjtype;          /* 0: keep all but SKY and BAD                    */
    char objtype[16][16];  /* OBJTYPE values to keep                         */
} desi_opts;

typedef struct desi_handle {
    const rvfit_host *host;
    char path[DESI_PATH_MAX];
    fitsfile *fp;
    int ncam;
    desi_cam cam[RVFIT_MAX_ARMS];
    int hdu_fibermap, hdu_scores;
    size_t ntotal;   /* spectra in the file                               */
    size_t nsel;     /* selected spectra                                  */
    size_t *rows;    /* [nsel] 0-based file rows of the selection         */
    double *snr;     /* [nsel*ncam] SCORES MEDIAN_COADD_SNR_X, NaN absent */
    rvfit_table_schema schema[DESI_NTABLE]; /* contiguous, for info() */
    desi_table table[DESI_NTABLE];
    desi_worker wk[DESI_MAX_WORKERS]; /* wk[0].fp == fp                  */
    rvfit_pool *pool;   /* the reading threads, made at the first read   */
    rvfit_file_info info;
} desi_handle;

/* ---- desi_fits.c: CFITSIO glue ---------------------------------------- */

/* Name of HDU number n (1-based) of fp ("PRIMARY" for 1), into buf. */
void desi_hdu_name(fitsfile *fp, int n, char *buf, size_t len);
/* Image dimensions of HDU hdu: naxis and naxes[0..2] (FITS order). */
int desi_img_dims(desi_handle *h, int hdu, const char *name, int *naxis,
                  long naxes[3], int *bitpix_equiv, rvfit_err *err);
/* Read numeric column `name` of the current table (nrow rows from 1) as
 * datatype (TINT, TLONGLONG, TDOUBLE ...) into out. */
int desi_read_col(desi_handle *h, const char *hdu, int col, int datatype,
                  size_t nrow, void *out, rvfit_err *err);

/* ---- desi_open.c ------------------------------------------------------ */
int desi_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
              const char *path, const rvfit_select *sel, void **handle,
              rvfit_err *err);
void desi_info(void *handle, rvfit_file_info *info);
void desi_close(void *handle);

/* ---- desi_select.c ---------------------------------------------------- */
/* Parse [instrument.desi] options (defaults when absent). */
int desi_parse_opts(const rvfit_kv *opts, int nopt, desi_opts *o,
                    rvfit_err *err);
/* Apply selection; fills h->rows/h->nsel and h->snr. */
int desi_select(desi_handle *h, const desi_opts *o, const rvfit_select *sel,
                rvfit_err *err);

/* ---- desi_read.c ------------------------------------------------------ */
int desi_read(void *handle, size_t first, size_t count, rvfit_batch *b,
              rvfit_err *err);
/* Read spectrum rows [row0, row0+n) of camera c into flux/ivar (cleaned,
 * bad pixels ivar = 0) with worker w's handle.  Used by read and by the
 * S/N fallback of selection. */
int desi_read_pixels(desi_handle *h, desi_worker *w, int c, size_t row0,
                     size_t n, float *flux, float *ivar, rvfit_err *err);
/* Close the reading threads' handles and the threads (desi_close). */
void desi_workers_free(desi_handle *h);

/* ---- desi_tables.c ---------------------------------------------------- */
int desi_tables_init(desi_handle *h, rvfit_err *err);
void desi_tables_free(desi_handle *h);
int desi_read_rows(void *handle, int t, size_t first, size_t count,
                   rvfit_table_rows *rows, rvfit_err *err);

/* ---- desi_epochs.c: the 'epochs' extension ---------------------------- */
int desi_epochs(void *handle, size_t first, size_t count, rvfit_epoch *out,
                rvfit_err *err);

/* ---- desi_arms.c ------------------------------------------------------ */
int desi_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                       rvfit_template_arm *arms, rvfit_err *err);

/* The real DESI pixel grids, used by the mock writer. */
typedef struct desi_mock_arm {
    const char *name;
    double lam0;            /* first pixel centre, vacuum Angstrom   */
    size_t npix;            /* pixels of dlam                        */
    double dlam;            /* 0.8 Angstrom                          */
    double sig0, sig1;      /* LSF sigma (Angstrom) at first/last px */
    double sky;             /* relative sky level for the noise shape */
} desi_mock_arm;
#define DESI_MOCK_NARM 3
#define DESI_MOCK_NDIAG 11
const desi_mock_arm *desi_mock_arms(void);

/* ---- desi_lsf.c: LSF, resolution matrix and pixel integration --------- */
/* LSF sigma (Angstrom) at wavelength lam for arm A and fibre factor f. */
double desi_lsf_sigma(const desi_mock_arm *A, double f, double lam);
/* Band matrix of arm A for fibre factor f into res[ndiag*npix] (DESI DIA
 * layout, R[i][j] = res[(h-(j-i))*npix + j]), columns summing to 1. */
void desi_res_matrix(const rvfit_phi_table *t, const desi_mock_arm *A,
                     double f, float *res);
/* Pixel-integrated, LSF-convolved flux (mean flux density per pixel) of a
 * fine log-lambda spectrum fine[k] at exp(lnl0 + k*dlnl), k < n, into
 * out[npix].  The LSF is centred on each source wavelength with that
 * wavelength's sigma, as in the resolution matrix. */
void desi_pixelize(const rvfit_phi_table *t, const desi_mock_arm *A, double f,
                   double lnl0, double dlnl, size_t n, const double *fine,
                   double *out);

/* ---- desi_mock.c ------------------------------------------------------ */
int desi_write_mock(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                    const char *path, size_t nstar,
                    const rvfit_mock_star *stars, rvfit_truth_fn truth,
                    void *ctx, uint64_t seed, rvfit_err *err);

#endif
