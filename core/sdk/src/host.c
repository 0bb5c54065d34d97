/* host.c — plugin-facing logging and option parsing helpers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rvfit/host.h"

#define RVFIT_PATH_MAX_WHERE 1100 /* a file name and a line number */

void rvfit_log(const rvfit_host *h, int level, const char *who,
               const char *fmt, ...)
{
    if (!h || !h->log || level > h->log_level)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h->log(h->log_ctx, level, who, msg);
}

const char *rvfit_kv_get(const rvfit_kv *kv, int n, const char *key)
{
    /* Last one wins: command-line overrides are appended after the file. */
    const char *v = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            v = kv[i].value;
    return v;
}

const char *rvfit_kv_where(const char *file, int line, char *buf, size_t n)
{
    if (line > 0)
        snprintf(buf, n, "%s:%d", file ? file : "?", line);
    else
        snprintf(buf, n, "%s", file ? file : "?");
    return buf;
}

static const rvfit_kv *kv_find(const rvfit_kv *kv, int n, const char *key)
{
    const rvfit_kv *p = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            p = &kv[i];
    return p;
}

int rvfit_kv_int(const rvfit_kv *kv, int n, const char *key, long lo,
                 long hi, long *out, rvfit_err *err)
{
    const rvfit_kv *p = kv_find(kv, n, key);
    if (!p)
        return RVFIT_OK;
    char *end;
    errno = 0;
    long v = strtol(p->value, &end, 10);
    if (errno || end == p->value || *end != '\0' || v < lo || v > hi)
    {
        char at[RVFIT_PATH_MAX_WHERE];
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "%s: key '%s': '%s' is not an integer in "
                             "[%ld, %ld]",
                             rvfit_kv_where(p->file, p->line, at, sizeof at),
                             key, p->value, lo, hi);
    }
    *out = v;
    return RVFIT_OK;
}

int rvfit_kv_double(const rvfit_kv *kv, int n, const char *key, double lo,
                    double hi, double *out, rvfit_err *err)
{
    const rvfit_kv *p = kv_find(kv, n, key);
    if (!p)
        return RVFIT_OK;
    char *end;
    errno = 0;
    double v = strtod(p->value, &end);
    if (errno || end == p->value || *end != '\0' || !isfinite(v) || v < lo ||
        v > hi)
    {
        char at[RVFIT_PATH_MAX_WHERE];
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "%s: key '%s': '%s' is not a number in "
                             "[%g, %g]",
                             rvfit_kv_where(p->file, p->line, at, sizeof at),
                             key, p->value, lo, hi);
    }
    *out = v;
    return RVFIT_OK;
}

double rvfit_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
