/* fits.c — CFITSIO status conversion, atomic FITS writes and column
 * lookup, for the engine, the tools and plugins alike. */
#include <errno.h>
#include <fitsio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

static const char *rvfit_fits_kind_name(int kind)
{
    return kind == RVFIT_FITS_STRING   ? "a string column"
           : kind == RVFIT_FITS_SCALAR ? "a one-number-per-row column"
                                       : "a numeric column";
}

int rvfit_fits_check_col(void *fptr, int col, int kind, const char *path,
                         const char *hdu, long *repeat, rvfit_err *err)
{
    fitsfile *fp = fptr;
    int st = 0, tc = 0;
    long rep = 0, w = 0;
    char key[FLEN_KEYWORD], name[FLEN_VALUE] = "", form[FLEN_VALUE] = "";
    snprintf(key, sizeof key, "TTYPE%d", col);
    fits_read_key(fp, TSTRING, key, name, NULL, &st);
    st = 0;
    snprintf(key, sizeof key, "TFORM%d", col);
    fits_read_key(fp, TSTRING, key, form, NULL, &st);
    st = 0;
    if (fits_get_coltype(fp, col, &tc, &rep, &w, &st))
        return rvfit_fits_error(err, st, path, hdu, "reading column types");
    fits_clear_errmsg();
    /* variable-length arrays have negative codes; bits and complex
     * numbers are not what any reader wants */
    int num = tc == TLOGICAL || tc == TBYTE || tc == TSBYTE ||
              tc == TSHORT || tc == TUSHORT || tc == TINT || tc == TUINT ||
              tc == TLONG || tc == TULONG || tc == TLONGLONG ||
              tc == TULONGLONG || tc == TFLOAT || tc == TDOUBLE;
    int ok = kind == RVFIT_FITS_STRING ? tc == TSTRING && rep >= 1
             : kind == RVFIT_FITS_SCALAR ? num && rep == 1
                                         : num && rep >= 1;
    if (!ok)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: %s%s%scolumn %s: TFORM%d '%s' is not %s",
                             path, hdu && hdu[0] ? "HDU " : "",
                             hdu && hdu[0] ? hdu : "",
                             hdu && hdu[0] ? ": " : "", name, col, form,
                             rvfit_fits_kind_name(kind));
    if (repeat)
        *repeat = rep;
    return RVFIT_OK;
}

int rvfit_fits_check_extent(void *fptr, const char *path, const char *hdu,
                            rvfit_err *err)
{
    struct stat sb;
    LONGLONG head = 0, data = 0, end = 0;
    int st = 0;
    if (stat(path, &sb) != 0)
        return RVFIT_OK;
    if (fits_get_hduaddrll((fitsfile *)fptr, &head, &data, &end, &st))
        return rvfit_fits_error(err, st, path, hdu, "locating the data");
    if ((LONGLONG)sb.st_size < end)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: %s%s%sfile truncated (data end at byte "
                             "%lld, file has %lld bytes)",
                             path, hdu && hdu[0] ? "HDU " : "",
                             hdu && hdu[0] ? hdu : "",
                             hdu && hdu[0] ? ": " : "", (long long)end,
                             (long long)sb.st_size);
    return RVFIT_OK;
}
