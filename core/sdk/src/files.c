/* files.c — mkdir -p and temporary names for atomic writes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rvfit/files.h"

int rvfit_mkdirs(const char *path, rvfit_err *err)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "bad directory name '%.64s%s'", path,
                             len > 64 ? "..." : "");
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
    if (stat(path, &sb) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: %s", path,
                             strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s is not a directory",
                             path);
    return RVFIT_OK;
}

int rvfit_tmpname(char *buf, size_t size, const char *path)
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
