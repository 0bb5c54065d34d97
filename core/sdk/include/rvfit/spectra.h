/* rvfit/spectra.h — a batch of observed spectra in structure-of-arrays form,
 * and pass-through tables copied from the input file to the outputs.
 *
 * Units: wavelengths in vacuum Angstrom; flux in the instrument's units
 * (only ratios matter to the fit); ivar = 1/sigma^2 in flux^-2, and
 * ivar == 0 marks a pixel that must not be used.
 *
 * Ownership: a batch is allocated and freed by the core
 * (rvfit_batch_alloc/rvfit_batch_free).  Instrument readers fill it; the
 * backend reads it during load_batch and must copy what it needs.
 * Thread-safety: none; one thread fills a batch at a time.
 */
#ifndef RVFIT_SPECTRA_H
#define RVFIT_SPECTRA_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/limits.h" /* RVFIT_MAX_ARMS, RVFIT_MAX_PARAMS */
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_NAME_LEN 72

/* How an arm describes its resolution. */
enum rvfit_res_kind {
    RVFIT_RES_NONE = 0, /* no resolution data: template used as is        */
    RVFIT_RES_BAND = 1, /* per-spectrum band matrix `res` (DESI layout)    */
    RVFIT_RES_LSF = 2   /* per-spectrum Gaussian LSF sigma `lsf` in Angstrom */
};

/* Static description of one arm of an input file. */
typedef struct rvfit_arm_info {
    char name[16];      /* "B", "R", "Z", ...; used in column names    */
    size_t npix;        /* pixels per spectrum in this arm             */
    int res_kind;       /* enum rvfit_res_kind                          */
    int ndiag;          /* diagonals of the band matrix (odd), if BAND */
    int wave_per_spec;  /* 0: one wavelength grid shared by all spectra */
} rvfit_arm_info;

/* One arm of a batch.  Pixel p of spectrum s is at index s*npix + p. */
typedef struct rvfit_arm_batch {
    char name[16];
    size_t npix;
    int wave_per_spec; /* 0: wave[npix]; 1: wave[nspec*npix]            */
    double *wave;      /* vacuum Angstrom, increasing                   */
    float *flux;       /* [nspec*npix]                                   */
    float *ivar;       /* [nspec*npix], 0 = unusable                     */
    int res_kind;      /* enum rvfit_res_kind                            */
    int ndiag;         /* odd; half width ndiag/2 (BAND only)            */
    /* Band matrix, DESI convention: element k*npix + j of spectrum s's
     * block (s*ndiag*npix) holds R[i][j] with i = j + k - ndiag/2, i.e.
     * model_obs[i] = sum_d res[(h-d)*npix + i+d] * model[i+d], h=ndiag/2. */
    float *res;        /* [nspec*ndiag*npix] (BAND) or NULL              */
    float *lsf;        /* [nspec*npix] Gaussian sigma in Angstrom (LSF) */
    /* [cap] pixels of spectrum s on its own grid, 2 <= npix_own[s] <=
     * npix (rvfit_batch_alloc sets npix).  A spectrum shorter than the
     * batch (batches mix files whose arms differ in length) is padded
     * beyond npix_own[s]: flux and ivar 0, wavelengths continued on its
     * last step, band-matrix columns 0, LSF its last value.  Everything
     * that depends on a spectrum's extent (the continuum coordinate, edge
     * pixels) uses npix_own[s], so padding never changes a result. */
    size_t *npix_own;
} rvfit_arm_batch;

/* Per-spectrum flags an instrument reader may set. */
#define RVFIT_SPEC_BAD 0x1u /* nothing usable; the fit is skipped */

typedef struct rvfit_batch {
    size_t nspec;      /* spectra filled                                 */
    size_t cap;        /* spectra allocated                              */
    int narm;
    rvfit_arm_batch arm[RVFIT_MAX_ARMS];
    double *snr;       /* [cap*narm] median S/N per pixel, NaN = unknown */
    uint32_t *flags;   /* [cap] RVFIT_SPEC_* bits                        */
    size_t *index;     /* [cap] index of the spectrum in the input file  */
} rvfit_batch;

/* ---- pass-through tables ------------------------------------------- */

enum rvfit_col_type {
    RVFIT_COL_U8 = 1,  /* uint8_t; FITS 'B' (also used for logical 'L') */
    RVFIT_COL_I16 = 2, /* int16_t; 'I'                                   */
    RVFIT_COL_I32 = 3, /* int32_t; 'J'                                   */
    RVFIT_COL_I64 = 4, /* int64_t; 'K'                                   */
    RVFIT_COL_F32 = 5, /* float;   'E'                                   */
    RVFIT_COL_F64 = 6, /* double;  'D'                                   */
    RVFIT_COL_STR = 7  /* char[repeat], NUL padded, not terminated; 'A'  */
};

typedef struct rvfit_column {
    char name[RVFIT_NAME_LEN];
    int type;       /* enum rvfit_col_type                              */
    long repeat;    /* elements per row (characters for STR)            */
    char unit[RVFIT_NAME_LEN];    /* TUNITn, may be empty               */
    char comment[RVFIT_NAME_LEN]; /* TCOMMn, may be empty               */
} rvfit_column;

/* A table schema owned by the instrument handle (valid until close).
 * An extname of "RVTAB" means: copy these columns into the RVTAB HDU
 * (identifiers such as TARGETID); any other name becomes its own HDU. */
typedef struct rvfit_table_schema {
    char extname[RVFIT_NAME_LEN];
    int ncol;
    const rvfit_column *cols;
} rvfit_table_schema;

/* Rows of one table for one batch; data[c] holds nrow*repeat elements of
 * column c's type.  Allocated by the core from the schema, filled by the
 * reader. */
typedef struct rvfit_table_rows {
    size_t nrow;
    void **data;
} rvfit_table_rows;

/* Pixels of spectrum s of arm A that are its own (see npix_own). */
static inline size_t rvfit_arm_npix(const rvfit_arm_batch *A, size_t s)
{
    return A->npix_own ? A->npix_own[s] : A->npix;
}

/* Size in bytes of one element of a column type (0 for unknown). */
RVFIT_EXPORT size_t rvfit_col_size(int type);

/* Allocate a batch for `cap` spectra with the arms in info[0..narm-1];
 * shared wavelength grids are allocated per arm ([npix]). */
RVFIT_EXPORT int rvfit_batch_alloc(rvfit_batch *b, int narm,
                                   const rvfit_arm_info *info, size_t cap,
                                   rvfit_err *err);
RVFIT_EXPORT void rvfit_batch_free(rvfit_batch *b);

RVFIT_EXPORT int rvfit_rows_alloc(rvfit_table_rows *r,
                                  const rvfit_table_schema *s, size_t nrow,
                                  rvfit_err *err);
RVFIT_EXPORT void rvfit_rows_free(rvfit_table_rows *r,
                                  const rvfit_table_schema *s);

/* The batch check of a one-arm reader whose spectra carry their own
 * wavelengths and a Gaussian LSF (sdss, lamost): b must hold count
 * spectra of one RVFIT_RES_LSF arm of npix pixels with wave_per_spec and
 * lsf arrays; otherwise RVFIT_ERR_INVALID naming path and what b is. */
RVFIT_EXPORT int rvfit_batch_check_lsf(const char *path,
                                       const rvfit_batch *b, size_t count,
                                       size_t npix, rvfit_err *err);

/* Set every field of column c: name, type (enum rvfit_col_type), repeat,
 * unit and comment (may be "", not NULL), strings cut to
 * RVFIT_NAME_LEN - 1 characters and the rest of c zeroed. */
RVFIT_EXPORT void rvfit_column_set(rvfit_column *c, const char *name,
                                   int type, long repeat, const char *unit,
                                   const char *comment);

/* The argument check of an instrument's read_rows: table t of ntable,
 * rows [first, first+count) of the nsel selected.  RVFIT_ERR_INVALID
 * naming path, the rows and the table otherwise. */
RVFIT_EXPORT int rvfit_rows_check(const char *path, int t, int ntable,
                                  size_t first, size_t count, size_t nsel,
                                  rvfit_err *err);

/* Median S/N per pixel of one spectrum: the median of flux*sqrt(ivar) over
 * the pixels with ivar > 0 (the batch's snr).  work: n doubles of
 * scratch, or NULL to allocate them.  NaN when no pixel is usable or the
 * allocation fails. */
RVFIT_EXPORT double rvfit_pixel_snr(const float *flux, const float *ivar,
                                    size_t n, double *work);

#ifdef __cplusplus
}
#endif
#endif
