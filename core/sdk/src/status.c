/* status.c — status texts and error-buffer helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/status.h"

const char *rvfit_strerror(int status)
{
    switch (status) {
    case RVFIT_OK: return "success";
    case RVFIT_ERR_INVALID: return "invalid input";
    case RVFIT_ERR_IO: return "I/O error";
    case RVFIT_ERR_FORMAT: return "bad file format";
    case RVFIT_ERR_CONFIG: return "configuration error";
    case RVFIT_ERR_NOMEM: return "out of memory";
    case RVFIT_ERR_PLUGIN: return "plugin error";
    case RVFIT_ERR_UNAVAILABLE: return "unavailable";
    case RVFIT_ERR_DEVICE: return "device error";
    case RVFIT_ERR_NUMERIC: return "numerical failure";
    case RVFIT_ERR_INTERNAL: return "internal error";
    case RVFIT_ERR_CANCELLED: return "interrupted";
    default: return "unknown status";
    }
}

/* src (len bytes) into dst (cap bytes).  A text too long loses its
 * middle, not its end: a message names the file first and gives the
 * reason last, and a 5,000-character path must not push the reason out. */
static void put_elided(char *dst, size_t cap, const char *src, size_t len)
{
    if (len < cap) {
        memmove(dst, src, len);
        dst[len] = '\0';
        return;
    }
    char mid[64];
    size_t head = cap / 3, tail = cap - 1 - head - 48;
    int ml = snprintf(mid, sizeof mid, " [... %zu characters left out "
                      "...] ", len - head - tail);
    size_t m = ml > 0 && ml < 48 ? (size_t)ml : 0;
    memmove(dst, src, head);
    memcpy(dst + head, mid, m);
    memmove(dst + head + m, src + len - tail, tail);
    dst[head + m + tail] = '\0';
}

/* fmt, ap formatted whole (malloc'ed when long) into e->msg. */
static void put_formatted(rvfit_err *e, const char *fmt, va_list ap)
{
    char buf[2 * RVFIT_ERR_LEN];
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n < 0) {
        snprintf(e->msg, sizeof e->msg, "(unprintable message)");
    } else if ((size_t)n < sizeof buf) {
        put_elided(e->msg, sizeof e->msg, buf, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (big && vsnprintf(big, (size_t)n + 1, fmt, aq) == n)
            put_elided(e->msg, sizeof e->msg, big, (size_t)n);
        else
            put_elided(e->msg, sizeof e->msg, buf, sizeof buf - 1);
        free(big);
    }
    va_end(aq);
}

int rvfit_err_set(rvfit_err *e, int status, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        put_formatted(e, fmt, ap);
        va_end(ap);
    }
    return status;
}

void rvfit_err_prefix(rvfit_err *e, const char *fmt, ...)
{
    if (!e)
        return;
    char head[RVFIT_ERR_LEN];
    char all[2 * RVFIT_ERR_LEN + 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    e->msg[sizeof e->msg - 1] = '\0';
    int n = snprintf(all, sizeof all, "%s%s%s", head, e->msg[0] ? ": " : "",
                     e->msg);
    size_t len = n < 0 ? 0 : (size_t)n;
    put_elided(e->msg, sizeof e->msg, all,
               len < sizeof all ? len : sizeof all - 1);
}

void rvfit_err_clear(rvfit_err *e)
{
    if (e)
        e->msg[0] = '\0';
}
