/* rvfit/fits.h — helpers for plugins that read or write FITS with CFITSIO.
 *
 * CFITSIO keeps a process-global message stack: convert a status once, at
 * the plugin's boundary, with rvfit_fits_error, and do not call CFITSIO
 * from several threads at once.  Thread-safety: as CFITSIO itself.
 */
#ifndef RVFIT_FITS_H
#define RVFIT_FITS_H

#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill err with "PATH: HDU NAME: WHAT: <CFITSIO text> (CFITSIO N: <oldest
 * message>)" (the HDU part only when hdu is non-empty), clear CFITSIO's
 * message stack, and return RVFIT_ERR_IO for open/read/write/create
 * failures and RVFIT_ERR_FORMAT for everything else. */
RVFIT_EXPORT int rvfit_fits_error(rvfit_err *err, int fits_status,
                                  const char *path, const char *hdu,
                                  const char *what);

/* Finish an atomic FITS write begun on the temporary `tmp` (see
 * rvfit/files.h): close f (a fitsfile *, may be NULL) and, when fstatus
 * and the close are clean, rename tmp onto path; otherwise remove tmp.
 * Failures are RVFIT_ERR_IO naming path. */
RVFIT_EXPORT int rvfit_fits_commit(void *f, int fstatus, const char *tmp,
                                   const char *path, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
