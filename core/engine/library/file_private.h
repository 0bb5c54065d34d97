/* file_private.h — helpers the library file's reader and writer share
 * (private to the library part). */
#ifndef RVFIT_LIBRARY_FILE_PRIVATE_H
#define RVFIT_LIBRARY_FILE_PRIVATE_H

#include "library_internal.h"

/* "DIR" -> "DIR/rvfit_library.fits"; a path ending in .fits (or, when
 * reading, any existing file) is kept.  -1 when it does not fit. */
int lio_path(const char *in, int for_save, char *out, size_t size,
             int *file_given);

/* Structural checks shared by save (before writing) and load (after
 * reading the headers): counts, axis names and nodes; arm names and
 * grids. */
int lio_check_axes(const rvfit_library *lib, const char *file,
                   rvfit_err *err);
int lio_check_arms(const rvfit_library *lib, const char *file,
                   rvfit_err *err);

/* Filled models (filled.c): the primary key NFILLED, EXISTS as 0/1, the
 * HDU FILLED (written last, only when some are); reading FILLED (if
 * present) marks them RVFIT_MODEL_FILLED in lib->exists. */
void lio_fill_write_key(fitsfile *f, const rvfit_library *lib, int *fs);
void lio_fill_write_exists(fitsfile *f, const rvfit_library *lib, int *fs);
void lio_fill_write_hdu(fitsfile *f, const rvfit_library *lib, int *fs);
int lio_fill_read(lio_rd *r, rvfit_library *lib);

#endif
