/* backend_open.c — choose and open a backend (strict name or fallback
 * list: a name no backend has is an error either way, a fallback list
 * asks for devices that are not CPUs) and load instrument plugins, with
 * their option sections. */
#include <ctype.h>
#include <dirent.h>
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

/* The backends rvfit itself provides, whether or not this build has
 * them: in a fallback list they may be missing ("not found" falls back);
 * any other name must be a plugin on the search path. */
static const char *const builtin_backends[] = {"cpu", "opencl", "cuda",
                                               NULL};

static int has_key(const rvfit_plugin *d, const char *key)
{
    for (const char *const *k = d->config_keys; k && *k; k++)
        if (!strcmp(*k, key))
            return 1;
    return 0;
}

/* Open backend `name`.  in_list: one entry of a fallback list, where a
 * plugin that declares the key device_type and is not given one in its
 * section is asked for device_type = gpu (no OpenCL CPU device such as
 * PoCL: far slower than the cpu backend). */
static int open_one(const rvfit_config *c, const rvfit_host *host,
                    const char *name, int in_list, rvfit_backend *b,
                    int *stage, rvfit_err *err)
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
    if (configured && in_list && has_key(b->ph.desc, "device_type") &&
        !rvfit_kv_get(kv, nkv, "device_type")) {
        /* room: rvfit_config_section allocates one entry per plugin key
         * of the whole file; add one */
        rvfit_kv *g = realloc(kv, (size_t)(nkv + 1) * sizeof *g);
        if (!g)
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "out of memory");
        else {
            kv = g;
            kv[nkv++] = (rvfit_kv){"device_type", "gpu",
                                   "a fallback list ([backend] name)", 0};
        }
        configured = rc == RVFIT_OK;
    }
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

int rvfit_backend_open_name(const rvfit_config *c, const rvfit_host *host,
                            const char *name, rvfit_backend *b, int *stage,
                            rvfit_err *err)
{
    return open_one(c, host, name, 0, b, stage, err);
}

/* Append name to the comma list buf (n bytes) unless it is there. */
static void add_name(char *buf, size_t n, const char *name, size_t len)
{
    for (const char *p = buf; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && !strncmp(p, name, len))
            return;
        p = e ? e + 2 : p + l;
    }
    size_t used = strlen(buf);
    snprintf(buf + used, n - used, "%s%.*s", used ? ", " : "", (int)len,
             name);
}

/* The backend names rvfit knows: its own and every plugin file
 * rvfit_backend_<name>.so on the search path; 1 when `name` is one. */
static int known_backend(const rvfit_config *c, const char *name,
                         char *known, size_t n)
{
    known[0] = '\0';
    int hit = 0;
    for (const char *const *k = builtin_backends; *k; k++) {
        add_name(known, n, *k, strlen(*k));
        hit |= !strcmp(*k, name);
    }
    char **dirs = rvfit_plugin_dirs(c);
    for (int i = 0; dirs && dirs[i]; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            const char *f = e->d_name;
            size_t len = strlen(f);
            if (len <= 17 || strncmp(f, "rvfit_backend_", 14) ||
                strcmp(f + len - 3, ".so"))
                continue;
            add_name(known, n, f + 14, len - 17);
            hit |= len - 17 == strlen(name) && !strncmp(f + 14, name,
                                                         len - 17);
        }
        if (d)
            closedir(d);
    }
    rvfit_plugin_dirs_free(dirs);
    return hit;
}

/* Split c->backend into at most 16 trimmed names (in buf). */
static int split_names(const rvfit_config *c, char *buf, size_t n,
                       char **names)
{
    snprintf(buf, n, "%s", c->backend);
    int nnames = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save);
         t && nnames < 16; t = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*t))
            t++;
        char *e = t + strlen(t);
        while (e > t && isspace((unsigned char)e[-1]))
            *--e = '\0';
        if (*t)
            names[nnames++] = t;
    }
    return nnames;
}

int rvfit_backend_open(const rvfit_config *c, const rvfit_host *host,
                       rvfit_backend *b, rvfit_err *err)
{
    char list[sizeof c->backend], known[1024];
    char *names[16];
    int nnames = split_names(c, list, sizeof list, names);
    if (nnames == 0)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[backend] name is empty");
    /* A typo is an error, also inside a list: only a backend that exists
     * but cannot run here falls back. */
    for (int i = 0; i < nnames; i++)
        if (!known_backend(c, names[i], known, sizeof known))
            return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                 "backend '%s' does not exist ([backend] "
                                 "name = %s; known: %s; `rvfit plugins` "
                                 "lists those found)", names[i], c->backend,
                                 known);
    rvfit_err why;
    for (int i = 0; i < nnames; i++) {
        int stage = 0;
        rvfit_err_clear(&why);
        int rc = open_one(c, host, names[i], nnames > 1, b, &stage, &why);
        if (rc == RVFIT_OK) {
            if (nnames > 1)
                rvfit_log(host, i > 0 ? RVFIT_LOG_WARN : RVFIT_LOG_INFO,
                          "rvfit", "backend '%s' chosen: position %d of "
                          "the fallback list '%s'%s", names[i], i + 1,
                          c->backend, i > 0 ? "; those before it cannot "
                          "run here (said above)" : "");
            else
                rvfit_log(host, RVFIT_LOG_INFO, "rvfit",
                          "backend '%s' chosen: [backend] name names it "
                          "alone (strict)", names[i]);
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
