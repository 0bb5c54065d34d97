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

/* fits_read_key (comment not read), with CFITSIO's status conventions,
 * except that for a numeric or logical datatype (TINT, TLONGLONG,
 * TDOUBLE, TLOGICAL, ...) a quoted string value fails with BAD_C2D before
 * CFITSIO converts it: CFITSIO 4.2 converts a string of about 30 or more
 * characters through a fixed-size buffer and aborts the process under
 * _FORTIFY_SOURCE (found by the library fuzzer).  Every numeric keyword
 * read goes through it; TSTRING passes straight to fits_read_key. */
RVFIT_EXPORT int rvfit_fits_read_key(void *fptr, int datatype,
                                     const char *key, void *value,
                                     int *status);
/* Numeric keyword `key` of the current HDU of fptr (a fitsfile *) as a
 * double; NaN when absent or not a number (CFITSIO's message stack is
 * cleared). */
RVFIT_EXPORT double rvfit_fits_key_double(void *fptr, const char *key);

/* What rvfit_fits_check_col expects of a column. */
enum {
    RVFIT_FITS_STRING = 1, /* fixed-width characters (TFORM rA)          */
    RVFIT_FITS_NUMBER = 2, /* fixed-size numbers or logicals, any repeat */
    RVFIT_FITS_SCALAR = 3  /* one number per row (repeat 1)              */
};

/* Check that column col of the current table HDU of fptr holds `kind`
 * data before it is read (CFITSIO converts a number read as TSTRING to
 * text of its own width, overflowing a buffer sized from TFORM).  Stores
 * the repeat count (characters for strings) in *repeat when not NULL.
 * Otherwise RVFIT_ERR_FORMAT: "PATH: HDU HDU: column NAME: TFORMn 'X' is
 * not ...". */
RVFIT_EXPORT int rvfit_fits_check_col(void *fptr, int col, int kind,
                                      const char *path, const char *hdu,
                                      long *repeat, rvfit_err *err);

/* Check that the data of the current HDU of fptr, as its header sizes
 * them (NAXISn, PCOUNT), end within the file `path` (a header claiming
 * more rows than the file holds would make a reader allocate or read for
 * ever).  Paths that stat() cannot see (CFITSIO filter syntax) pass.
 * Otherwise RVFIT_ERR_FORMAT: "PATH: HDU HDU: file truncated ...". */
RVFIT_EXPORT int rvfit_fits_check_extent(void *fptr, const char *path,
                                         const char *hdu, rvfit_err *err);

/* Look at the raw header bytes of every HDU of the FITS file `path`
 * before CFITSIO parses them: header bytes must be printable ASCII,
 * TTYPEn values quoted strings and unquoted values at most 28 characters
 * (CFITSIO 4.2 aborts the process on a 70-column unquoted TTYPEn and on
 * an integer keyword holding a word of 29 or more).  A file that is not FITS, or whose structure
 * cannot be followed, passes: CFITSIO and the reader's checks report it.
 * Otherwise RVFIT_ERR_FORMAT: "PATH: HDU N: ...". */
RVFIT_EXPORT int rvfit_fits_check_headers(const char *path, rvfit_err *err);

/* Open the FITS file `path` read-only for a reader: its headers checked
 * first (rvfit_fits_check_headers), then CFITSIO's disk driver (no
 * extended-filename syntax).  *fptr (a fitsfile **) is NULL on failure:
 * RVFIT_ERR_IO "PATH: cannot read ..." when the file cannot be read,
 * otherwise RVFIT_ERR_FORMAT "PATH: not a FITS file ...". */
RVFIT_EXPORT int rvfit_fits_open_reader(const char *path, void **fptr,
                                        rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
