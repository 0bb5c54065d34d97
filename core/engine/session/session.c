/* session.c — rvfit_session: configuration, library and backend of an
 * in-process session (the batch, fit and results: session_batch.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/library_io.h"
#include "session_internal.h"

/* Lines go straight to stderr: bindings have no log window of their own,
 * and one fputs per line keeps plugin threads from interleaving. */
static void sess_log(void *ctx, int level, const char *who, const char *msg)
{
    static const char *lv[] = {"error", "warning", "info", "debug"};
    char line[RVFIT_ERR_LEN + 128];
    (void)ctx;
    snprintf(line, sizeof line, "rvfit %s: %s: %s\n",
             level >= 0 && level <= 3 ? lv[level] : "?", who, msg);
    fputs(line, stderr);
}

/* Host settings follow the configuration at each open. */
static void sess_host(rvfit_session *s)
{
    long n = s->cfg.threads > 0 ? s->cfg.threads
                                : sysconf(_SC_NPROCESSORS_ONLN);
    s->host.log_level = (int)s->cfg.log_level;
    s->host.nthreads = n > 0 ? (int)n : 1;
}

int rvfit_session_new(rvfit_session **out, rvfit_err *err)
{
    rvfit_session *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "session: out of memory");
    rvfit_config_defaults(&s->cfg);
    s->cfg.log_level = RVFIT_LOG_WARN;
    s->host.size = sizeof s->host;
    s->host.log = sess_log;
    s->host.nranks = s->host.local_size = 1;
    sess_host(s);
    *out = s;
    return RVFIT_OK;
}

static void close_backend(rvfit_session *s)
{
    if (s->have_be)
        rvfit_backend_close(&s->be);
    s->have_be = 0;
    s->loaded = 0;
}

void rvfit_session_free(rvfit_session *s)
{
    if (!s)
        return;
    sess_batch_clear(s);
    close_backend(s);
    if (s->have_lib) {
        rvfit_interp_close(&s->interp);
        rvfit_library_free(&s->lib);
    }
    rvfit_stencil_buf_free(&s->sbuf);
    rvfit_config_free(&s->cfg);
    free(s);
}

int rvfit_session_load_config(rvfit_session *s, const char *path,
                              rvfit_err *err)
{
    return rvfit_config_load(&s->cfg, path, err);
}

int rvfit_session_set(rvfit_session *s, const char *section, const char *key,
                      const char *value, rvfit_err *err)
{
    return rvfit_config_set(&s->cfg, section, key, value, "session", 0, err);
}

int rvfit_session_open_library(rvfit_session *s, const char *path,
                               rvfit_err *err)
{
    const char *p = path ? path : s->cfg.templates;
    if (!p[0])
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "session: no template "
                             "library given (build one with `rvfit "
                             "templates`)");
    if (s->have_lib || s->have_be)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: library "
                             "already open");
    /* The CLI's way: run-time options, and the interpolator the file
     * records (a simplex library needs stencils from the core). */
    int rc = rvfit_library_open_fit(&s->lib, &s->interp, p, &s->cfg, err);
    if (rc)
        return rc;
    s->have_lib = 1;
    snprintf(s->cfg.templates, sizeof s->cfg.templates, "%s", p);
    return RVFIT_OK;
}

static int need_lib(const rvfit_session *s, rvfit_err *err)
{
    return s->have_lib ? RVFIT_OK
                       : rvfit_err_set(err, RVFIT_ERR_INVALID,
                                       "session: no library open");
}

int rvfit_session_nparam(const rvfit_session *s)
{
    return s->have_lib ? s->lib.nparam : 0;
}

int rvfit_session_narm(const rvfit_session *s)
{
    return s->have_lib ? s->lib.narm : 0;
}

size_t rvfit_session_nmodel(const rvfit_session *s)
{
    return s->have_lib ? s->lib.nmodel : 0;
}

int rvfit_session_axis(const rvfit_session *s, int i, char *name, char *unit,
                       size_t n, int *log10_scale, int *nnode, double *node,
                       rvfit_err *err)
{
    int rc = need_lib(s, err);
    if (rc)
        return rc;
    if (i < 0 || i >= s->lib.nparam)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: parameter "
                             "%d of %d", i, s->lib.nparam);
    const rvfit_axis *a = &s->lib.axis[i];
    snprintf(name, n, "%s", a->name);
    snprintf(unit, n, "%s", a->unit);
    *log10_scale = a->scale == RVFIT_SCALE_LOG10;
    *nnode = a->nnode;
    for (int k = 0; node && k < a->nnode; k++)
        node[k] = rvfit_axis_unscale(a, a->node[k]);
    return RVFIT_OK;
}

int rvfit_session_arm(const rvfit_session *s, int a, char *name, size_t n,
                      double *lnl0, double *dlnl, size_t *npix,
                      double *sigma_kms, rvfit_err *err)
{
    int rc = need_lib(s, err);
    if (rc)
        return rc;
    if (a < 0 || a >= s->lib.narm)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: arm %d of %d",
                             a, s->lib.narm);
    const rvfit_lib_arm *A = &s->lib.arm[a];
    snprintf(name, n, "%s", A->name);
    *lnl0 = A->lnl0;
    *dlnl = A->dlnl;
    *npix = A->npix;
    *sigma_kms = A->sigma_kms;
    return RVFIT_OK;
}

int rvfit_session_exists(const rvfit_session *s, uint8_t *exists,
                         rvfit_err *err)
{
    int rc = need_lib(s, err);
    if (!rc)
        memcpy(exists, s->lib.exists, s->lib.nmodel);
    return rc;
}

int rvfit_session_open_backend(rvfit_session *s, const char *name,
                               rvfit_err *err)
{
    int rc = need_lib(s, err);
    if (rc)
        return rc;
    sess_batch_clear(s);
    close_backend(s);
    if (name && (rc = rvfit_config_set(&s->cfg, "backend", "name", name,
                                       "session", 0, err)))
        return rc;
    sess_host(s);
    if ((rc = rvfit_backend_open(&s->cfg, &s->host, &s->be, err)))
        return rc;
    s->have_be = 1;
    rc = s->be.ops->load_library(s->be.state,
                                 rvfit_interp_vectors(&s->interp), err);
    if (rc) {
        rvfit_err_prefix(err, "backend '%s': load_library", s->be.name);
        close_backend(s);
    }
    return rc;
}

const char *rvfit_session_device(const rvfit_session *s)
{
    return s->have_be ? s->be.ops->device(s->be.state) : "";
}
