/* fits.c — CFITSIO status conversion and the end of atomic FITS writes,
 * for the engine, the tools and plugins alike. */
#include <errno.h>
#include <fitsio.h>
#include <stdio.h>
#include <string.h>

#include "rvfit/fits.h"

int rvfit_fits_error(rvfit_err *err, int fstatus, const char *path,
                     const char *hdu, const char *what)
{
    char text[FLEN_STATUS] = "";
    char detail[FLEN_ERRMSG] = "";
    fits_get_errstatus(fstatus, text);
    /* The oldest message on the stack is usually the most specific one;
     * keep it and drop the rest so the next call starts clean. */
    if (fits_read_errmsg(detail) == 0)
        detail[0] = '\0';
    fits_clear_errmsg();
    int st = (fstatus == FILE_NOT_OPENED || fstatus == READ_ERROR ||
              fstatus == WRITE_ERROR || fstatus == FILE_NOT_CREATED)
                 ? RVFIT_ERR_IO
                 : RVFIT_ERR_FORMAT;
    int has_hdu = hdu && hdu[0];
    return rvfit_err_set(err, st, "%s: %s%s%s%s: %s (CFITSIO %d%s%s)", path,
                         has_hdu ? "HDU " : "", has_hdu ? hdu : "",
                         has_hdu ? ": " : "", what, text, fstatus,
                         detail[0] ? ": " : "", detail);
}

int rvfit_fits_commit(void *f, int fstatus, const char *tmp,
                      const char *path, rvfit_err *err)
{
    int cs = 0;
    if (f)
        fits_close_file((fitsfile *)f, &cs);
    if (fstatus || cs) {
        remove(tmp);
        rvfit_fits_error(err, fstatus ? fstatus : cs, path, NULL,
                         fstatus ? "writing" : "closing");
        return RVFIT_ERR_IO;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: rename from %s failed: "
                             "%s", path, tmp, strerror(e));
    }
    return RVFIT_OK;
}
