/* library_io_internal.h — the library file reader's helpers, shared by
 * library_io.c (the file) and library_io_pca.c (the records of the pca
 * interpolator).  Engine-internal. */
#ifndef RVFIT_LIBRARY_IO_INTERNAL_H
#define RVFIT_LIBRARY_IO_INTERNAL_H

#include <fitsio.h>

#include "interp/interp_internal.h"
#include "rvfit/fits.h"
#include "rvfit/library.h"

typedef struct lio_rd {
    fitsfile *f;
    const char *path;
    char hdu[40]; /* "HDU 3 (AXIS_TEFF)" for messages */
    rvfit_err *err;
    int kind;     /* INTERP of the primary header (enum rvfit_interp_kind) */
    int npca;     /* NPCA: components of a pca library                    */
    int log_flux; /* LOGFLUX of the primary header                        */
} lio_rd;

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

/* pca (library_io_pca.c).  Writing: the FLUX_<ARM> images hold the k+1
 * vectors of each arm (NAXIS2 = k+1, key PCARMS), then PCACOEF_<ARM>
 * images the coefficients (float64 [nmodel][k]). */
void lio_pca_write_arm(fitsfile *f, const pca_data *pd, int a, long npix,
                       int *fs);
void lio_pca_write_coef(fitsfile *f, const rvfit_library *lib,
                        const pca_data *pd, int *fs);
/* Reading, HDU FLUX_<ARM> current (keys read): arm a's models rebuilt
 * from the file's vectors and coefficients into ar->flux. */
int lio_pca_arm(lio_rd *r, int a, rvfit_library *lib);
/* The vectors and coefficients of every arm of the library at r (lib's
 * geometry already loaded) into pd (pca_alloc'ed for r->npca). */
int lio_pca_read(lio_rd *r, const rvfit_library *lib, pca_data *pd);
/* The pca records of the library file at path (a directory or the file)
 * over lib, loaded from it: *out ready for stencils (pca_finish'ed). */
int lio_pca_load(const char *path, const rvfit_library *lib,
                 pca_data **out, rvfit_err *err);

/* Filled models (library_io_fill.c): the primary key NFILLED, EXISTS as
 * 0/1, the HDU FILLED (written last, only when some are); reading FILLED
 * (if present) marks them RVFIT_MODEL_FILLED in lib->exists. */
void lio_fill_write_key(fitsfile *f, const rvfit_library *lib, int *fs);
void lio_fill_write_exists(fitsfile *f, const rvfit_library *lib, int *fs);
void lio_fill_write_hdu(fitsfile *f, const rvfit_library *lib, int *fs);
int lio_fill_read(lio_rd *r, rvfit_library *lib);

#endif
