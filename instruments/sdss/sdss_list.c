/* sdss_list.c — the input path: one spec file, or a text list of them.
 *
 * A path ending in .list or .txt is a list; otherwise a file that starts
 * like FITS ("SIMPLE  =") or holds binary bytes (gzip, ...) is one spec
 * file, and any other text file is a list.  List lines are paths; blank
 * lines and lines starting with '#' are skipped.  A relative entry is
 * looked up next to the list first, then in the working directory. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sdss_internal.h"

static int sdss_has_suffix(const char *s, const char *sfx)
{
    size_t n = strlen(s), m = strlen(sfx);
    return n >= m && strcmp(s + n - m, sfx) == 0;
}

/* 1: a text list, 0: FITS (or binary: let CFITSIO judge). */
static int sdss_is_list(const char *path, FILE *f)
{
    if (sdss_has_suffix(path, ".list") || sdss_has_suffix(path, ".txt"))
        return 1;
    unsigned char buf[512];
    size_t n = fread(buf, 1, sizeof buf, f);
    rewind(f);
    if (n >= 9 && memcmp(buf, "SIMPLE  =", 9) == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == 0 || (buf[i] < 32 && !isspace(buf[i])))
            return 0;
    return n > 0;
}

static int sdss_add(sdss_handle *h, size_t *cap, const char *p)
{
    if (h->nfile == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        sdss_spec *g = realloc(h->spec, nc * sizeof *g);
        if (!g)
            return RVFIT_ERR_NOMEM;
        h->spec = g;
        *cap = nc;
    }
    memset(&h->spec[h->nfile], 0, sizeof h->spec[0]);
    if (!(h->spec[h->nfile].path = strdup(p)))
        return RVFIT_ERR_NOMEM;
    h->nfile++;
    return RVFIT_OK;
}

/* Resolve list entry e (line `line`) into out. */
static int sdss_resolve(const sdss_handle *h, const char *e, int line,
                        char *out, size_t len, rvfit_err *err)
{
    struct stat sb;
    const char *slash = strrchr(h->path, '/');
    if (e[0] != '/' && slash) {
        snprintf(out, len, "%.*s/%s", (int)(slash - h->path), h->path, e);
        if (stat(out, &sb) == 0)
            return RVFIT_OK;
    }
    snprintf(out, len, "%s", e);
    if (stat(out, &sb) == 0)
        return RVFIT_OK;
    return rvfit_err_set(err, RVFIT_ERR_IO,
                         "%s:%d: list entry '%s': %s (looked next to the "
                         "list%s)",
                         h->path, line, e, strerror(errno),
                         e[0] == '/' ? "" : " and in the working directory");
}

static int sdss_read_list(sdss_handle *h, FILE *f, rvfit_err *err)
{
    char line[SDSS_PATH_MAX + 2], full[2 * SDSS_PATH_MAX];
    size_t cap = 0;
    int ln = 0, rc = RVFIT_OK;
    while (!rc && fgets(line, sizeof line, f)) {
        ln++;
        size_t n = strcspn(line, "\r\n");
        if (n == sizeof line - 2 && line[n] == '\0')
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s:%d: line longer "
                                 "than %d characters", h->path, ln,
                                 SDSS_PATH_MAX);
        line[n] = '\0';
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        n = strlen(p);
        while (n && isspace((unsigned char)p[n - 1]))
            p[--n] = '\0';
        if (!*p || *p == '#')
            continue;
        rc = sdss_resolve(h, p, ln, full, sizeof full, err);
        if (!rc && sdss_add(h, &cap, full))
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s:%d: out of memory",
                               h->path, ln);
    }
    if (!rc && ferror(f))
        rc = rvfit_err_set(err, RVFIT_ERR_IO, "%s: read error", h->path);
    if (!rc && h->nfile == 0)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT,
                           "%s: neither a FITS file nor a list of spec "
                           "files (no entries)", h->path);
    return rc;
}

int sdss_list_files(sdss_handle *h, rvfit_err *err)
{
    FILE *f = fopen(h->path, "rb");
    if (!f)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: %s", h->path,
                             strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: is a directory (give a "
                             "spec file or a .list of them)", h->path);
    }
    int rc;
    h->is_list = sdss_is_list(h->path, f);
    if (h->is_list) {
        rc = sdss_read_list(h, f, err);
    } else {
        size_t cap = 0;
        rc = sdss_add(h, &cap, h->path)
                 ? rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s", h->path)
                 : RVFIT_OK;
    }
    fclose(f);
    return rc;
}
