/* status.c — status texts and error-buffer helpers. */
#include <stdio.h>
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

int rvfit_err_set(rvfit_err *e, int status, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

void rvfit_err_prefix(rvfit_err *e, const char *fmt, ...)
{
    if (!e)
        return;
    char head[RVFIT_ERR_LEN];
    char old[RVFIT_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    /* Truncation is acceptable: keep as much context as fits. */
    size_t hl = strlen(head);
    if (hl > sizeof e->msg - 1)
        hl = sizeof e->msg - 1;
    memcpy(e->msg, head, hl);
    size_t pos = hl;
    if (old[0] && pos + 2 < sizeof e->msg) {
        e->msg[pos++] = ':';
        e->msg[pos++] = ' ';
        size_t ol = strlen(old);
        if (ol > sizeof e->msg - 1 - pos)
            ol = sizeof e->msg - 1 - pos;
        memcpy(e->msg + pos, old, ol);
        pos += ol;
    }
    e->msg[pos] = '\0';
}

void rvfit_err_clear(rvfit_err *e)
{
    if (e)
        e->msg[0] = '\0';
}
