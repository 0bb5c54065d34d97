/* fits.c — CFITSIO status conversion, atomic FITS writes and column
 * lookup, for the engine, the tools and plugins alike. */
#include <errno.h>
#include <fcntl.h>
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rvfit/files.h"
#include "rvfit/fits.h"

/* CFITSIO statuses that stand for a failed system call. */
static int os_status(int fs)
{
    return fs == FILE_NOT_OPENED || fs == FILE_NOT_CREATED ||
           fs == WRITE_ERROR || fs == READ_ERROR || fs == FILE_NOT_CLOSED ||
           fs == SEEK_ERROR;
}

/* The OS reason behind CFITSIO status fs, 0 when unknown.  CFITSIO keeps
 * no errno, so it is taken from errno as the failed call left it (writers
 * clear errno before their CFITSIO calls), but only where it can be the
 * cause: a stale "no such file" must not explain a write error.  A write
 * that failed without a usable errno on a full file system is ENOSPC. */
static int os_reason(int fs, int os, const char *path)
{
    if (!os_status(fs))
        return 0;
    int opening = fs == FILE_NOT_OPENED || fs == FILE_NOT_CREATED;
    switch (os) {
    case ENOSPC: case EDQUOT: case EFBIG: case EIO: case EROFS:
    case ESTALE: case EMFILE: case ENFILE:
        return os;
    case ENOENT: case ENOTDIR: case ELOOP: case EACCES: case EPERM:
    case ENAMETOOLONG: case EISDIR:
        return opening ? os : 0;
    default:
        break;
    }
    if ((fs == WRITE_ERROR || fs == FILE_NOT_CLOSED) && path) {
        char dir[4096];
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
                 slash ? path : ".");
        struct statvfs v;
        if (statvfs(dir[0] ? dir : "/", &v) == 0 && v.f_bavail == 0)
            return ENOSPC;
    }
    return 0;
}

int rvfit_fits_error(rvfit_err *err, int fstatus, const char *path,
                     const char *hdu, const char *what)
{
    int os = os_reason(fstatus, errno, path);
    char text[FLEN_STATUS] = "";
    char detail[FLEN_ERRMSG] = "";
    fits_get_errstatus(fstatus, text);
    /* The oldest message on the stack is usually the most specific one;
     * keep it and drop the rest so the next call starts clean. */
    if (fits_read_errmsg(detail) == 0)
        detail[0] = '\0';
    fits_clear_errmsg();
    int st = (fstatus == FILE_NOT_OPENED || fstatus == READ_ERROR ||
              fstatus == WRITE_ERROR || fstatus == FILE_NOT_CREATED ||
              os)
                 ? RVFIT_ERR_IO
                 : RVFIT_ERR_FORMAT;
    int has_hdu = hdu && hdu[0];
    if (os) /* the OS's reason first: "already exists?" misleads */
        return rvfit_err_set(err, st, "%s: %s%s%s%s: %s (CFITSIO %d: %s%s%s)",
                             path, has_hdu ? "HDU " : "", has_hdu ? hdu : "",
                             has_hdu ? ": " : "", what, strerror(os),
                             fstatus, text, detail[0] ? ": " : "", detail);
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
    if (rvfit_tmpname(tmp, size, path) != 0 ||
        strlen(tmp) >= FLEN_FILENAME - 1) {
        size_t need = strlen(path) + 32;
        if (size)
            tmp[0] = '\0';
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot create: its "
                             "temporary name needs about %zu characters, "
                             "CFITSIO takes at most %d: %s", path, need,
                             FLEN_FILENAME - 2, strerror(ENAMETOOLONG));
    }
    /* A crashed run with our pid may have left it; CFITSIO will not
     * overwrite, and the diskfile call parses no extended syntax. */
    remove(tmp);
    /* Ask the OS first: CFITSIO calls every failure to create "already
     * exists?", whether the directory is read-only or the name too long. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        int e = errno;
        rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot create the temporary "
                      "file %s: %s", path, tmp, strerror(e));
        tmp[0] = '\0';
        return RVFIT_ERR_IO;
    }
    close(fd);
    remove(tmp);
    int fs = 0;
    errno = 0;
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
        int e = errno; /* remove() must not replace the cause */
        remove(tmp);
        errno = e;
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

int rvfit_fits_read_key(void *fptr, int datatype, const char *key,
                        void *value, int *status)
{
    if (*status > 0 || datatype == TSTRING)
        return fits_read_key((fitsfile *)fptr, datatype, key, value, NULL,
                             status);
    char raw[FLEN_VALUE], com[FLEN_COMMENT];
    if (fits_read_keyword((fitsfile *)fptr, key, raw, com, status))
        return *status;
    if (raw[0] == '\'') {
        char msg[FLEN_ERRMSG];
        snprintf(msg, sizeof msg, "keyword %.20s holds a string, not a "
                 "number", key);
        ffpmsg(msg);
        return *status = BAD_C2D;
    }
    return fits_read_key((fitsfile *)fptr, datatype, key, value, NULL,
                         status);
}

double rvfit_fits_key_double(void *fptr, const char *key)
{
    double v = NAN;
    int st = 0;
    if (rvfit_fits_read_key(fptr, TDOUBLE, key, &v, &st)) {
        fits_clear_errmsg();
        v = NAN;
    }
    return v;
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

int rvfit_fits_open_reader(const char *path, void **fptr, rvfit_err *err)
{
    fitsfile *fp = NULL;
    int st = 0, rc = rvfit_fits_check_headers(path, err);
    *fptr = NULL;
    if (rc)
        return rc;
    if (fits_open_diskfile(&fp, path, READONLY, &st)) {
        int unreadable = access(path, R_OK) != 0;
        rvfit_fits_error(err, st, path, NULL,
                         unreadable ? "cannot read" : "not a FITS file");
        return unreadable ? RVFIT_ERR_IO : RVFIT_ERR_FORMAT;
    }
    *fptr = fp;
    return RVFIT_OK;
}
