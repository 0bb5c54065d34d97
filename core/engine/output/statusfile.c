/* statusfile.c — see rvfit/output.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/files.h"
#include "rvfit/output.h"

#define SF_STATE 16
#define SF_DETAIL 512
#define SF_PERIOD 1.0 /* seconds between rewrites while states change */

typedef struct sf_line {
    char *input;
    char state[SF_STATE];
    char detail[SF_DETAIL];
} sf_line;

struct rvfit_statusfile {
    char *path;
    size_t n;
    sf_line *line;
    int dirty;
    double last;
};

static int sf_write(rvfit_statusfile *sf, rvfit_err *err)
{
    char tmp[4200];
    if (rvfit_tmpname(tmp, sizeof tmp, sf->path) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "status file %s: name too "
                             "long", sf->path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return rvfit_err_set(err, RVFIT_ERR_IO, "status file %s: %s", tmp,
                             strerror(errno));
    for (size_t i = 0; i < sf->n; i++)
        fprintf(f, "%s\t%s\t%s\n", sf->line[i].state, sf->line[i].input,
                sf->line[i].detail);
    int bad = ferror(f);
    int e = bad ? EIO : 0;
    if (fclose(f) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, sf->path) != 0)
        e = errno;
    if (e) {
        remove(tmp);
        return rvfit_err_set(err, RVFIT_ERR_IO, "status file %s: %s",
                             sf->path, strerror(e));
    }
    sf->dirty = 0;
    sf->last = rvfit_now();
    return RVFIT_OK;
}

int rvfit_statusfile_open(rvfit_statusfile **out, const char *path,
                          size_t n, char *const *inputs, rvfit_err *err)
{
    rvfit_statusfile *sf = calloc(1, sizeof *sf);
    int ok = sf && (sf->path = strdup(path)) &&
             (sf->line = calloc(n ? n : 1, sizeof *sf->line));
    for (size_t i = 0; ok && i < n; i++) {
        ok = (sf->line[i].input = strdup(inputs[i])) != NULL;
        snprintf(sf->line[i].state, SF_STATE, "pending");
        sf->n = i + 1;
    }
    int rc = ok ? sf_write(sf, err)
                : rvfit_err_set(err, RVFIT_ERR_NOMEM, "status file: out of "
                                "memory");
    if (rc) {
        rvfit_err tmp;
        rvfit_statusfile_close(sf ? (sf->dirty = 0, sf) : NULL, &tmp);
        return rc;
    }
    *out = sf;
    return RVFIT_OK;
}

int rvfit_statusfile_set(rvfit_statusfile *sf, size_t i, const char *state,
                         const char *detail, rvfit_err *err)
{
    if (!sf || i >= sf->n)
        return RVFIT_OK;
    sf_line *l = &sf->line[i];
    snprintf(l->state, SF_STATE, "%s", state);
    snprintf(l->detail, SF_DETAIL, "%s", detail ? detail : "");
    for (char *p = l->detail; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            *p = ' ';
    sf->dirty = 1;
    if (rvfit_now() - sf->last < SF_PERIOD)
        return RVFIT_OK;
    return sf_write(sf, err);
}

int rvfit_statusfile_close(rvfit_statusfile *sf, rvfit_err *err)
{
    if (!sf)
        return RVFIT_OK;
    int rc = sf->dirty ? sf_write(sf, err) : RVFIT_OK;
    for (size_t i = 0; i < sf->n; i++)
        free(sf->line[i].input);
    free(sf->line);
    free(sf->path);
    free(sf);
    return rc;
}
