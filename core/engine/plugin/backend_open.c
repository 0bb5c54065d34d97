/* backend_open.c — choose and open a backend (strict name or fallback
 * list) and load instrument plugins, with their option sections. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/loader.h"

static int section_opts(const rvfit_config *c, const char *section,
                        const rvfit_plugin *d, rvfit_kv **kv, int *n,
                        rvfit_err *err)
{
    int rc = rvfit_config_check_keys(c, section, d->config_keys, err);
    if (rc != RVFIT_OK)
        return rc;
    if (rvfit_config_section(c, section, kv, n) != RVFIT_OK)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "out of memory");
    return RVFIT_OK;
}

int rvfit_backend_open_name(const rvfit_config *c, const rvfit_host *host,
                            const char *name, rvfit_backend *b, int *stage,
                            rvfit_err *err)
{
    memset(b, 0, sizeof *b);
    char **dirs = rvfit_plugin_dirs(c);
    if (!dirs)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "out of memory");
    int rc = rvfit_plugin_load(dirs, RVFIT_PLUGIN_BACKEND, name, &b->ph,
                               stage, err);
    rvfit_plugin_dirs_free(dirs);
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(err, "backend '%s'", name);
        return rc;
    }
    char section[96];
    snprintf(section, sizeof section, "backend.%s", name);
    rvfit_kv *kv = NULL;
    int nkv = 0;
    rc = section_opts(c, section, b->ph.desc, &kv, &nkv, err);
    int configured = rc == RVFIT_OK;
    if (configured) {
        rc = b->ph.backend.open(host, kv, nkv, &b->state, err);
        if (rc != RVFIT_OK && stage)
            *stage = RVFIT_STAGE_INIT;
    }
    free(kv);
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(err, configured ? "backend '%s': init"
                                         : "backend '%s'", name);
        rvfit_plugin_unload(&b->ph);
        return rc;
    }
    b->ops = &b->ph.backend;
    snprintf(b->name, sizeof b->name, "%s", name);
    return RVFIT_OK;
}

int rvfit_backend_open(const rvfit_config *c, const rvfit_host *host,
                       rvfit_backend *b, rvfit_err *err)
{
    char list[sizeof c->backend];
    snprintf(list, sizeof list, "%s", c->backend);
    int nnames = 0;
    char *names[16];
    for (char *save = NULL, *t = strtok_r(list, ",", &save);
         t && nnames < 16; t = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*t))
            t++;
        char *e = t + strlen(t);
        while (e > t && isspace((unsigned char)e[-1]))
            *--e = '\0';
        if (*t)
            names[nnames++] = t;
    }
    if (nnames == 0)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[backend] name is empty");
    rvfit_err why;
    for (int i = 0; i < nnames; i++) {
        int stage = 0;
        rvfit_err_clear(&why);
        int rc = rvfit_backend_open_name(c, host, names[i], b, &stage, &why);
        if (rc == RVFIT_OK) {
            if (i > 0)
                rvfit_log(host, RVFIT_LOG_WARN, "rvfit",
                          "using fallback backend '%s' (position %d in "
                          "'%s')", names[i], i + 1, c->backend);
            return RVFIT_OK;
        }
        int fallible = stage == RVFIT_STAGE_NOT_FOUND ||
                       stage == RVFIT_STAGE_DLOPEN ||
                       rc == RVFIT_ERR_UNAVAILABLE;
        if (nnames == 1 || i == nnames - 1 || !fallible) {
            if (err)
                *err = why;
            return rc;
        }
        rvfit_log(host, RVFIT_LOG_WARN, "rvfit", "%s; trying '%s'", why.msg,
                  names[i + 1]);
    }
    return RVFIT_ERR_INTERNAL;
}

void rvfit_backend_close(rvfit_backend *b)
{
    if (!b || !b->ops)
        return;
    b->ops->close(b->state);
    rvfit_plugin_unload(&b->ph);
    memset(b, 0, sizeof *b);
}

int rvfit_instrument_load(const rvfit_config *c, const char *name,
                          rvfit_plugin_handle *h, rvfit_err *err)
{
    char **dirs = rvfit_plugin_dirs(c);
    if (!dirs)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "out of memory");
    int rc = rvfit_plugin_load(dirs, RVFIT_PLUGIN_INSTRUMENT, name, h, NULL,
                               err);
    rvfit_plugin_dirs_free(dirs);
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(err, "instrument '%s'", name);
        return rc;
    }
    char section[96];
    snprintf(section, sizeof section, "instrument.%s", name);
    rc = rvfit_config_check_keys(c, section, h->desc->config_keys, err);
    if (rc != RVFIT_OK)
        rvfit_plugin_unload(h);
    return rc;
}

const rvfit_instrument_mock_ops *rvfit_instrument_mock(
    const rvfit_plugin_handle *h, rvfit_err *err)
{
    rvfit_err why;
    rvfit_err_clear(&why);
    const rvfit_instrument_mock_ops *m = rvfit_plugin_ext(
        h, RVFIT_EXT_MOCK, RVFIT_MOCK_EXT_VERSION, sizeof *m, &why);
    if (m && !m->write_mock) {
        snprintf(why.msg, sizeof why.msg, "its '%s' extension has no "
                 "write_mock", RVFIT_EXT_MOCK);
        m = NULL;
    }
    if (!m)
        rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                      "instrument '%s' cannot write synthetic files (%s)",
                      h && h->desc ? h->desc->name : "?", why.msg);
    return m;
}
