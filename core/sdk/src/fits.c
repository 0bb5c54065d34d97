/* fits.c — CFITSIO status conversion, atomic FITS writes and column
 * lookup, for the engine, the tools and plugins alike. */
#include <errno.h>
#include <fitsio.h>
#include <stdio.h>
#include <string.h>

#include "rvfit/files.h"
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

int rvfit_fits_create(const char *path, char *tmp, size_t size, void *fpp,
                      rvfit_err *err)
{
    fitsfile **fp = fpp;
    *fp = NULL;
    if (rvfit_tmpname(tmp, size, path) != 0) {
        if (size)
            tmp[0] = '\0';
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: path too long", path);
    }
    /* A crashed run with our pid may have left it; CFITSIO will not
     * overwrite, and the diskfile call parses no extended syntax. */
    remove(tmp);
    int fs = 0;
    if (fits_create_diskfile(fp, tmp, &fs)) {
        *fp = NULL;
        tmp[0] = '\0';
        rvfit_fits_error(err, fs, path, NULL, "creating a temporary file");
        return RVFIT_ERR_IO;
    }
    return RVFIT_OK;
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

void rvfit_fits_discard(void *f, const char *tmp)
{
    int cs = 0;
    if (f)
        fits_close_file((fitsfile *)f, &cs);
    if (cs)
        fits_clear_errmsg();
    if (tmp && tmp[0])
        remove(tmp);
}

int rvfit_fits_colnum(void *fptr, const char *name)
{
    int st = 0, col = 0;
    if (fits_get_colnum((fitsfile *)fptr, CASEINSEN, (char *)name, &col,
                        &st))
        col = 0;
    if (st)
        fits_clear_errmsg();
    return col;
}
