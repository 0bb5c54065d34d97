/* util.c — private helpers: mkdir -p, CFITSIO error conversion,
 * temporary names for atomic writes, splitmix64. */
#include "util.h"

#include <errno.h>
#include <fitsio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rvfit_i_mkdirs(const char *path, rvfit_err *err)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "bad directory name '%s'", path);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return rvfit_err_set(err, RVFIT_ERR_IO,
                                 "cannot create directory %s: %s", buf,
                                 strerror(errno));
        buf[i] = c;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s is not a directory",
                             path);
    return RVFIT_OK;
}

int rvfit_i_fits_err(rvfit_err *err, int code, int fstatus, const char *what)
{
    char text[FLEN_STATUS] = "";
    char last[FLEN_ERRMSG] = "";
    char msg[FLEN_ERRMSG];
    fits_get_errstatus(fstatus, text);
    /* The oldest message is usually the most specific one. */
    if (fits_read_errmsg(msg))
        snprintf(last, sizeof last, "%s", msg);
    fits_clear_errmsg();
    if (last[0])
        return rvfit_err_set(err, code, "%s: %s (CFITSIO status %d): %s",
                             what, text, fstatus, last);
    return rvfit_err_set(err, code, "%s: %s (CFITSIO status %d)", what, text,
                         fstatus);
}

int rvfit_i_tmpname(char *buf, size_t size, const char *path)
{
    const char *slash = strrchr(path, '/');
    int n;
    if (slash)
        n = snprintf(buf, size, "%.*s/.%s.tmp.%ld", (int)(slash - path),
                     path, slash + 1, (long)getpid());
    else
        n = snprintf(buf, size, ".%s.tmp.%ld", path, (long)getpid());
    return (n < 0 || (size_t)n >= size) ? -1 : 0;
}

uint64_t rvfit_i_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double rvfit_i_uniform(uint64_t *s)
{
    return (double)(rvfit_i_splitmix(s) >> 11) * (1.0 / 9007199254740992.0);
}

int rvfit_i_fits_commit(void *f, int fstatus, const char *tmp,
                        const char *path, rvfit_err *err)
{
    int cs = 0;
    if (f)
        fits_close_file((fitsfile *)f, &cs);
    if (fstatus || cs) {
        remove(tmp);
        return rvfit_i_fits_err(err, RVFIT_ERR_IO, fstatus ? fstatus : cs,
                                path);
    }
    if (rename(tmp, path) != 0) {
        remove(tmp);
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: rename from %s failed",
                             path, tmp);
    }
    return RVFIT_OK;
}
