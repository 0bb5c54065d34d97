/* statusfile.c — see rvfit/output.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/files.h"
#include "rvfit/output.h"

#define SF_STATE 16
#define SF_DETAIL 512

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
    /* rename() replaces the file whole: a reader, or a process killed at
     * any moment, sees the previous state or this one. */
    if (!e && rename(tmp, sf->path) != 0)
        e = errno;
    if (e) {
        remove(tmp);
        return rvfit_err_set(err, RVFIT_ERR_IO, "status file %s: %s",
                             sf->path, strerror(e));
    }
    sf->dirty = 0;
    return RVFIT_OK;
}

/* Temporaries of the status file left by killed runs: ".BASE.tmp.PID"
 * beside it (rvfit_tmpname), whatever the PID. */
static void sf_remove_stale(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[4096], pre[1100];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
             slash ? path : ".");
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    snprintf(pre, sizeof pre, ".%s.tmp.", base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, pre, strlen(pre)))
            continue;
        char full[4096 + 1200];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        unlink(full);
    }
    closedir(d);
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
    if (!ok) {
        rvfit_err tmp;
        if (sf)
            sf->dirty = 0;
        rvfit_statusfile_close(sf, &tmp);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "status file: out of "
                             "memory");
    }
    sf_remove_stale(path);
    sf->dirty = 1;
    *out = sf;
    return RVFIT_OK;
}

void rvfit_statusfile_mark(rvfit_statusfile *sf, size_t i, const char *state,
                           const char *detail)
{
    if (!sf || i >= sf->n)
        return;
    sf_line *l = &sf->line[i];
    char d[SF_DETAIL];
    snprintf(d, sizeof d, "%s", detail ? detail : "");
    for (char *p = d; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            *p = ' ';
    if (!strcmp(l->state, state) && !strcmp(l->detail, d))
        return;
    snprintf(l->state, SF_STATE, "%s", state);
    memcpy(l->detail, d, sizeof d);
    sf->dirty = 1;
}

int rvfit_statusfile_flush(rvfit_statusfile *sf, rvfit_err *err)
{
    return sf && sf->dirty ? sf_write(sf, err) : RVFIT_OK;
}

int rvfit_statusfile_set(rvfit_statusfile *sf, size_t i, const char *state,
                         const char *detail, rvfit_err *err)
{
    rvfit_statusfile_mark(sf, i, state, detail);
    return rvfit_statusfile_flush(sf, err);
}

int rvfit_statusfile_close(rvfit_statusfile *sf, rvfit_err *err)
{
    if (!sf)
        return RVFIT_OK;
    int rc = rvfit_statusfile_flush(sf, err);
    for (size_t i = 0; i < sf->n; i++)
        free(sf->line[i].input);
    free(sf->line);
    free(sf->path);
    free(sf);
    return rc;
}
