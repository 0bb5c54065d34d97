/* library_internal.h — what the library part gives the parts above it
 * (core-internal; the public interface is rvfit/library_io.h):
 *
 *   - the library file's reader and writer (read.c, write.c, fits_io.c),
 *     with the hooks through which an interpolator kind keeps its own
 *     records in the file without this part knowing the kind;
 *   - the grid's index arithmetic;
 *   - the free axes of a grid measured in node spacings and the local
 *     weighted least-squares quadratic over them (geometry.c), shared by
 *     the hole filling here and the simplex kind's correction.
 *
 * Thread-safety: a reader or writer is used by one thread; the rest is
 * reentrant.  CFITSIO is not called from several threads at once. */
#ifndef RVFIT_LIBRARY_INTERNAL_H
#define RVFIT_LIBRARY_INTERNAL_H

#include <fitsio.h>
#include <stddef.h>

#include "rvfit/fits.h"
#include "rvfit/library.h"
#include "rvfit/library_io.h"
#include "rvfit/linalg.h"

/* ---- grid index: model index <-> node indices (row-major, the last axis
 * fastest), and the cell of a coordinate on one axis -------------------- */

/* Model index of node indices n[nparam] (each within its axis). */
static inline size_t grid_ravel(const rvfit_library *L, const int *n)
{
    size_t m = 0;
    for (int p = 0; p < L->nparam; p++)
        m = m * (size_t)L->axis[p].nnode + (size_t)n[p];
    return m;
}

/* Cell of x on axis ax (nnode >= 2): the largest k <= nnode - 2 with
 * node[k] <= x, 0 below the axis, so that [node[k], node[k+1]] holds x
 * whenever the axis does. */
static inline int grid_cell(const rvfit_axis *ax, double x)
{
    int k = 0;
    while (k < ax->nnode - 2 && ax->node[k + 1] <= x)
        k++;
    return k;
}

/* Node indices n[nparam] of model m. */
static inline void grid_unravel(const rvfit_library *L, size_t m, int *n)
{
    for (int p = L->nparam - 1; p >= 0; p--) {
        n[p] = (int)(m % (size_t)L->axis[p].nnode);
        m /= (size_t)L->axis[p].nnode;
    }
}

/* ---- geometry.c: free axes in node spacings, local least squares ----- */

/* The axes of more than one node ("free"), with u_k = (theta_ax[k] -
 * node_0) / h_k the coordinate in mean node spacings h_k. */
typedef struct lib_axes {
    int d;                       /* free axes                             */
    int ax[RVFIT_MAX_PARAMS];    /* their library axes                    */
    double h[RVFIT_MAX_PARAMS];  /* their mean node spacing (scaled)      */
    int ncell[RVFIT_MAX_PARAMS]; /* cells (node spacings) per free axis   */
} lib_axes;

void lib_axes_init(const rvfit_library *lib, lib_axes *fa);
/* u coordinates [fa->d] of model m. */
void lib_model_u(const rvfit_library *lib, const lib_axes *fa, size_t m,
                 double *u);

/* The local weighted least-squares quadratic over the free axes.  With A
 * the rows of basis values of n models at offsets du from a point and W
 * their weights, any linear functional r^T c of the fitted coefficients
 * c = (A^T W A)^-1 A^T W f is a weighted sum of the models, sum_i g_i f_i
 * with g = W A (A^T W A)^-1 r: one weight vector for every pixel.  It
 * reproduces the functional exactly for any f quadratic in u (hence in
 * theta), whatever W. */
typedef struct qls_basis {
    int d;                     /* free axes                               */
    int sq[RVFIT_MAX_PARAMS];  /* free axis k has a square term           */
    int nterm;                 /* 1 + d + d(d-1)/2 + squares              */
} qls_basis;

/* The basis over fa's free axes: 1, du_k, du_k du_l (k < l), and du_k^2
 * where the axis has at least 3 nodes (on two a square is a line).
 * Returns 0 when nterm exceeds RVFIT_LINALG_MAX. */
int qls_init(const rvfit_library *lib, const lib_axes *fa, qls_basis *B);
/* Basis values at du into row[nterm]. */
void qls_terms(const qls_basis *B, const double *du, double *row);
/* g[i] = w[i] row_i^T (A^T W A)^-1 r for the n rows (row: [n][nterm]);
 * 0 when n < nterm or A^T W A is singular (equilibrated Cholesky), 1
 * otherwise. */
int qls_weights(const qls_basis *B, size_t n, const double *row,
                const double *w, const double *r, double *g);

/* ---- the library file (docs/template-library.md) -------------------- */

/* A library file open for reading. */
typedef struct lio_rd {
    fitsfile *f;
    char path[4096];          /* the file (DIR/rvfit_library.fits)        */
    char hdu[40];             /* "HDU 3 (AXIS_TEFF)" for messages         */
    rvfit_err *err;
    /* The interpolator the primary header records: INTERP ("MULTILIN"
     * when absent, as files written before it), CUBAXES ("" when absent)
     * and LOGFLUX.  This part does not interpret them. */
    char interp[FLEN_VALUE];
    char cubaxes[FLEN_VALUE];
    int log_flux;
} lio_rd;

/* Open the library at path (a directory holding RVFIT_LIBRARY_FILE, or
 * the file) after checking its headers; the primary HDU is current. */
int lio_open(lio_rd *r, const char *path, rvfit_err *err);
void lio_close(lio_rd *r);

/* The primary HDU's keys into lib (counts, SIGMA0, VMAX, INSTRUM, SOURCE)
 * and r (INTERP, CUBAXES, LOGFLUX).  The primary HDU stays current. */
int lio_read_head(lio_rd *r, rvfit_library *lib);

/* Reads arm a's models into lib->arm[a].flux from the current HDU
 * FLUX_<ARM>, whose keys (grid, SIGMAV) are read and whose pixels hold
 * something other than one row per model; returns a status. */
typedef int (*lio_arm_fn)(void *ctx, lio_rd *r, int a, rvfit_library *lib);

/* After lio_read_head: the axes, EXISTS, the arms (through arm_fn when
 * not NULL, else one row per model) and FILLED. */
int lio_read_body(lio_rd *r, rvfit_library *lib, lio_arm_fn arm_fn,
                  void *ctx);

/* RVFIT_ERR_FORMAT naming the file, the current HDU and `what`. */
int lio_fail(lio_rd *r, int fs, const char *what);
/* Move to HDU number `num` (1-based), an image named prefix*, with a
 * sane layout; the rest of its name into suffix (16 bytes) if not NULL. */
int lio_goto(lio_rd *r, int num, const char *prefix, char *suffix);
/* The current image is naxis-D of n1 (x n2). */
int lio_dims(lio_rd *r, int naxis, long n1, long n2);
int lio_key(lio_rd *r, int type, const char *key, void *val);
/* Every existing model of arm ar finite (and, in flux, of positive mean
 * over the arm). */
int lio_check_models(lio_rd *r, const rvfit_library *lib,
                     const rvfit_lib_arm *ar, int log_space);
/* HDU numbers: the first FLUX_<ARM> is 3 + nparam, then one per arm. */
static inline int lio_arm_hdu(const rvfit_library *lib, int a)
{
    return 3 + lib->nparam + a;
}

/* What an interpolator kind adds to the file it is saved in (lio_save);
 * every hook may be NULL. */
typedef struct lio_write_hooks {
    const void *ctx;
    const char *interp;   /* INTERP (CUBAXES and LOGFLUX follow lib)    */
    /* its keys of the primary HDU, after INTERP, CUBAXES, LOGFLUX */
    void (*keys)(const void *ctx, fitsfile *f, int *fs);
    /* rows of every FLUX_<ARM> image (0: one per model, the models) and
     * arm a's data written into the current image */
    long (*arm_rows)(const void *ctx);
    void (*arm)(const void *ctx, fitsfile *f, int a, long npix, int *fs);
    /* its HDUs after the arms' */
    void (*hdus)(const void *ctx, const rvfit_library *lib, fitsfile *f,
                 int *fs);
} lio_write_hooks;

/* Write lib atomically (temp file + rename) to DIR/rvfit_library.fits (or
 * the .fits path given): primary HDU, axes, EXISTS, arms, the kind's HDUs,
 * FILLED. */
int lio_save(const rvfit_library *lib, const char *dir,
             const lio_write_hooks *h, rvfit_err *err);

#endif
