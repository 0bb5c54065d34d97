/* rvfit/fits.h — helpers for plugins that read or write FITS with CFITSIO.
 *
 * CFITSIO keeps a process-global message stack: convert a status once, at
 * the plugin's boundary, with rvfit_fits_error, and do not call CFITSIO
 * from several threads at once.  Thread-safety: as CFITSIO itself.
 * fitsfile pointers travel as void * so that this header needs no
 * fitsio.h.
 *
 * Atomic writes: rvfit_fits_create opens a new file at a temporary name
 * beside the final one, the caller writes with a chained CFITSIO status,
 * and rvfit_fits_commit renames it into place (or removes it).
 */
#ifndef RVFIT_FITS_H
#define RVFIT_FITS_H

#include <stddef.h>

#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill err with "PATH: HDU NAME: WHAT: <CFITSIO text> (CFITSIO N: <oldest
 * message>)" (the HDU part only when hdu is non-empty), clear CFITSIO's
 * message stack, and return RVFIT_ERR_IO for open/read/write/create
 * failures and RVFIT_ERR_FORMAT for everything else.  When the status is a
 * failed system call (open, create, read, write, seek, close) and errno
 * holds a plausible cause, the OS's text comes first: "PATH: WHAT: No
 * space left on device (CFITSIO 106: ...)".  CFITSIO keeps no errno, so
 * clear errno before a sequence of CFITSIO writes whose failure you will
 * convert; "no such file"-like errnos are used only for open/create, and a
 * failed write on a file system with no space left is ENOSPC. */
RVFIT_EXPORT int rvfit_fits_error(rvfit_err *err, int fits_status,
                                  const char *path, const char *hdu,
                                  const char *what);

/* Begin an atomic FITS write of `path`: create a new file at its
 * rvfit_tmpname (tmp, size bytes; a stale file of that name is replaced)
 * and store its fitsfile * in *(fitsfile **)fpp.  On failure nothing is
 * left behind, *fpp is NULL, tmp is "" and the status is RVFIT_ERR_IO
 * naming path with the OS's reason (read-only, permission, name too long:
 * the file is created with open(2) first, as CFITSIO says "already
 * exists?" for all of them) or CFITSIO's path limit. */
RVFIT_EXPORT int rvfit_fits_create(const char *path, char *tmp, size_t size,
                                   void *fpp, rvfit_err *err);

/* Finish an atomic FITS write begun on the temporary `tmp` (see
 * rvfit/files.h): close f (a fitsfile *, may be NULL) and, when fstatus
 * and the close are clean, rename tmp onto path; otherwise remove tmp.
 * Failures are RVFIT_ERR_IO naming path. */
RVFIT_EXPORT int rvfit_fits_commit(void *f, int fstatus, const char *tmp,
                                   const char *path, rvfit_err *err);

/* Abandon an atomic FITS write: close f (may be NULL) and remove tmp
 * (nothing for ""), ignoring CFITSIO's complaints (the caller already
 * has its error). */
RVFIT_EXPORT void rvfit_fits_discard(void *f, const char *tmp);

/* Number of the column called `name` in the current table HDU of fptr (a
 * fitsfile *), case-insensitive; 0 when absent (CFITSIO's message stack is
 * cleared).  Names must not contain CFITSIO's wildcards '*', '?', '#'. */
RVFIT_EXPORT int rvfit_fits_colnum(void *fptr, const char *name);

/* Numeric keyword `key` of the current HDU of fptr (a fitsfile *) as a
 * double; NaN when absent or not a number (CFITSIO's message stack is
 * cleared). */
RVFIT_EXPORT double rvfit_fits_key_double(void *fptr, const char *key);

#ifdef __cplusplus
}
#endif
#endif
