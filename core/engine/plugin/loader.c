/* loader.c — plugin search path, dlopen, descriptor checks and default
 * methods (Open MPI MCA / SDL style: one entry symbol, name must match the
 * file, ABI major equal and minor not newer than ours). */
#define _GNU_SOURCE 1 /* RTLD_NODELETE, dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/loader.h"

/* Set by the build (core/CMakeLists.txt): where the build tree puts
 * librvfit and the plugins, and the plugin directory relative to the
 * directory librvfit is installed in. */
#ifndef RVFIT_LIB_BUILD_DIR
#error "RVFIT_LIB_BUILD_DIR must be defined"
#endif
#ifndef RVFIT_PLUGIN_BUILD_DIR
#error "RVFIT_PLUGIN_BUILD_DIR must be defined"
#endif
#ifndef RVFIT_PLUGIN_SUBDIR
#define RVFIT_PLUGIN_SUBDIR "rvfit/plugins"
#endif

const char *rvfit_stage_name(int stage)
{
    static const char *names[] = {"ok",  "not found", "dlopen", "symbol",
                                  "ABI", "name",      "init"};
    return stage >= 0 && stage <= RVFIT_STAGE_INIT ? names[stage] : "?";
}

const char *rvfit_kind_name(int kind)
{
    return kind == RVFIT_PLUGIN_BACKEND      ? "backend"
           : kind == RVFIT_PLUGIN_INSTRUMENT ? "instrument"
                                             : "unknown";
}

static int push_dirs(char ***v, int *n, const char *list)
{
    if (!list || !*list)
        return 0;
    char *copy = strdup(list);
    if (!copy)
        return -1;
    for (char *save = NULL, *t = strtok_r(copy, ":", &save); t;
         t = strtok_r(NULL, ":", &save)) {
        int dup = 0;
        for (int i = 0; i < *n; i++)
            dup |= !strcmp((*v)[i], t);
        if (dup)
            continue;
        char **grown = realloc(*v, (size_t)(*n + 2) * sizeof **v);
        if (!grown) {
            free(copy);
            return -1;
        }
        *v = grown;
        (*v)[(*n)++] = strdup(t);
        (*v)[*n] = NULL;
    }
    free(copy);
    return 0;
}

/* The plugins that belong to this librvfit, decided from where it was
 * loaded: the build tree's plugin directory when it is the build tree's
 * librvfit, else <directory of librvfit>/rvfit/plugins, so that an
 * installed prefix finds its own plugins wherever it was moved and never
 * those of the tree it was built in.  Empty when dladdr cannot tell. */
static void own_plugin_dir(char *out, size_t n)
{
    char **(*self)(const rvfit_config *) = rvfit_plugin_dirs;
    void *addr;
    memcpy(&addr, &self, sizeof addr);
    Dl_info info;
    char lib[PATH_MAX], build[PATH_MAX];
    out[0] = '\0';
    if (!dladdr(addr, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, lib))
        return;
    char *slash = strrchr(lib, '/');
    if (!slash)
        return;
    *slash = '\0';
    if (realpath(RVFIT_LIB_BUILD_DIR, build) && !strcmp(build, lib))
        snprintf(out, n, "%s", RVFIT_PLUGIN_BUILD_DIR);
    else
        snprintf(out, n, "%s/%s", lib, RVFIT_PLUGIN_SUBDIR);
}

char **rvfit_plugin_dirs(const rvfit_config *c)
{
    char **v = calloc(1, sizeof *v);
    int n = 0;
    if (!v)
        return NULL;
    char own[PATH_MAX + 64];
    own_plugin_dir(own, sizeof own);
    if ((c && push_dirs(&v, &n, c->plugin_path)) ||
        push_dirs(&v, &n, getenv("RVFIT_PLUGIN_PATH")) ||
        push_dirs(&v, &n, own)) {
        rvfit_plugin_dirs_free(v);
        return NULL;
    }
    return v;
}

void rvfit_plugin_dirs_free(char **dirs)
{
    for (int i = 0; dirs && dirs[i]; i++)
        free(dirs[i]);
    free(dirs);
}

/* ---- defaults for methods an older or partial plugin lacks ---------- */

static int def_open(const rvfit_host *h, const rvfit_kv *o, int n, void **s,
                    rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                         "plugin has no open method");
}
static const char *def_device(void *s) { return "unknown device"; }
static int def_lib(void *s, const rvfit_library *l, rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no load_library");
}
static int def_batch(void *s, const rvfit_batch *b,
                     const rvfit_model_opts *m, rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no load_batch");
}
static int def_chisq(void *s, size_t n, const rvfit_point *p,
                     const rvfit_stencils *st, rvfit_chisq_out *o,
                     rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no chisq");
}
static int def_vscan(void *s, size_t nq, const rvfit_point *b,
                     const rvfit_stencils *st, size_t nv, const double *v,
                     double *o, rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no vscan");
}
static int def_models(void *s, size_t n, const rvfit_point *p,
                      const rvfit_stencils *st, float *const *m,
                      float *const *c, rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no models");
}
static void def_counters(void *s, rvfit_counters *c)
{
    memset(c, 0, sizeof *c);
}
static void def_close(void *s) {}
static int def_update(void *s, const rvfit_batch *b, rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no update_data");
}
static int def_iopen(const rvfit_host *h, const rvfit_kv *o, int n,
                     const char *p, const rvfit_select *sel, void **hd,
                     rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                         "plugin has no open method");
}
static void def_info(void *h, rvfit_file_info *i) { memset(i, 0, sizeof *i); }
static int def_read(void *h, size_t f, size_t c, rvfit_batch *b,
                    rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no read method");
}
static int def_rows(void *h, int t, size_t f, size_t c, rvfit_table_rows *r,
                    rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no read_rows");
}
static int def_arms(const rvfit_kv *o, int n, int *na,
                    rvfit_template_arm *a, rvfit_err *err)
{
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                         "instrument cannot describe template arms");
}
/* Copy min(plugin size, host size) bytes of the table, then fill holes. */
static void fill_ops(rvfit_plugin_handle *h)
{
    if (h->kind == RVFIT_PLUGIN_BACKEND) {
        const rvfit_backend_ops *src = h->desc->ops;
        rvfit_backend_ops *d = &h->backend;
        size_t n = src->size < sizeof *d ? src->size : sizeof *d;
        memset(d, 0, sizeof *d);
        memcpy(d, src, n);
        d->size = sizeof *d;
        d->version = RVFIT_BACKEND_OPS_VERSION;
#define FILL(f, def) if (!d->f) d->f = def
        FILL(open, def_open); FILL(device, def_device);
        FILL(load_library, def_lib); FILL(load_batch, def_batch);
        FILL(chisq, def_chisq); FILL(vscan, def_vscan);
        FILL(models, def_models); FILL(counters, def_counters);
        FILL(close, def_close); FILL(update_data, def_update);
    } else {
        const rvfit_instrument_ops *src = h->desc->ops;
        rvfit_instrument_ops *d = &h->instrument;
        size_t n = src->size < sizeof *d ? src->size : sizeof *d;
        memset(d, 0, sizeof *d);
        memcpy(d, src, n);
        d->size = sizeof *d;
        d->version = RVFIT_INSTRUMENT_OPS_VERSION;
        FILL(open, def_iopen); FILL(info, def_info); FILL(read, def_read);
        FILL(read_rows, def_rows); FILL(close, def_close);
        FILL(template_arms, def_arms);
#undef FILL
    }
}

static int fail(int *stage, int s, rvfit_err *err, int status)
{
    if (stage)
        *stage = s;
    (void)err;
    return status;
}

/* A backend's declared capabilities: known bits, at least one way to be
 * called. */
static int check_caps(const void *ops, const char *path, rvfit_err *err)
{
    uint32_t caps = ((const rvfit_backend_ops *)ops)->caps;
    if (caps & ~RVFIT_BACKEND_CAPS_KNOWN)
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN, "ABI: %s declares "
                             "capabilities 0x%x this rvfit does not know "
                             "(known: 0x%x): rebuild it against this "
                             "rvfit's headers", path, (unsigned)caps,
                             (unsigned)RVFIT_BACKEND_CAPS_KNOWN);
    if (!(caps & (RVFIT_BACKEND_CAP_GRID | RVFIT_BACKEND_CAP_STENCILS)))
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN, "ABI: %s declares no "
                             "way to be called (caps 0x%x): set .caps to the "
                             "RVFIT_BACKEND_CAP_* its chisq, vscan and models "
                             "implement (GRID: stencils from theta; "
                             "STENCILS: the core's tables)", path,
                             (unsigned)caps);
    return RVFIT_OK;
}

/* The ops table of descriptor d: this kind's version (major equal, minor
 * not newer than ours), a size that covers at least one method, and for
 * a backend its capabilities. */
static int check_ops(const rvfit_plugin *d, const char *path, int kind,
                     rvfit_err *err)
{
    int be = kind == RVFIT_PLUGIN_BACKEND;
    const char *macro =
        be ? "RVFIT_BACKEND_OPS_VERSION" : "RVFIT_INSTRUMENT_OPS_VERSION";
    uint32_t host = be ? RVFIT_BACKEND_OPS_VERSION
                       : RVFIT_INSTRUMENT_OPS_VERSION;
    if (!d->ops)
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                             "ABI: %s has no operation table (ops is NULL)",
                             path);
    uint32_t hdr[2]; /* size, version: the start of every table */
    memcpy(hdr, d->ops, sizeof hdr);
    uint32_t maj = RVFIT_VERSION_MAJ(hdr[1]), min = RVFIT_VERSION_MIN(hdr[1]);
    if (maj != RVFIT_VERSION_MAJ(host))
        return rvfit_err_set(
            err, RVFIT_ERR_PLUGIN,
            "ABI: %s has %s operation table version %u.%u, this rvfit "
            "supports %u.0-%u.%u: rebuild the plugin against this rvfit's "
            "headers (its table's .version = %s)",
            path, rvfit_kind_name(kind), maj, min, RVFIT_VERSION_MAJ(host),
            RVFIT_VERSION_MAJ(host), RVFIT_VERSION_MIN(host), macro);
    if (min > RVFIT_VERSION_MIN(host))
        return rvfit_err_set(
            err, RVFIT_ERR_PLUGIN,
            "ABI: %s has %s operation table version %u.%u, newer than this "
            "rvfit's %u.%u: upgrade rvfit, or rebuild the plugin against "
            "this rvfit's headers",
            path, rvfit_kind_name(kind), maj, min, RVFIT_VERSION_MAJ(host),
            RVFIT_VERSION_MIN(host));
    size_t head = be ? offsetof(rvfit_backend_ops, open)
                     : offsetof(rvfit_instrument_ops, open);
    if (hdr[0] <= head)
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                             "ABI: %s: operation table size %u holds no "
                             "method; set .size = sizeof(rvfit_%s_ops)",
                             path, hdr[0], rvfit_kind_name(kind));
    return be ? check_caps(d->ops, path, err) : RVFIT_OK;
}

/* The extension array: ended within RVFIT_MAX_EXT entries, each with a
 * table at least as large as its size/version header. */
static int check_ext(const rvfit_plugin *d, const char *path,
                     rvfit_err *err)
{
    for (int i = 0; d->ext; i++) {
        if (i == RVFIT_MAX_EXT)
            return rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                                 "ABI: %s: extension list not ended within "
                                 "%d entries; end it with {NULL, NULL}",
                                 path, RVFIT_MAX_EXT);
        const rvfit_ext *e = &d->ext[i];
        if (!e->name)
            break;
        uint32_t size = 0;
        if (e->table)
            memcpy(&size, e->table, sizeof size);
        if (size < 2 * sizeof(uint32_t))
            return rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                                 "ABI: %s: extension '%s' has %s; give it a "
                                 "table starting with size and version",
                                 path, e->name,
                                 e->table ? "a table without a size"
                                          : "no table");
    }
    return RVFIT_OK;
}

/* The ABI stage: descriptor version, size and kind, then its tables. */
static int check_abi(const rvfit_plugin *d, const char *path, int kind,
                     rvfit_err *err)
{
    if (!d)
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                             "ABI: %s: %s() returned NULL", path,
                             RVFIT_PLUGIN_ENTRY_NAME);
    if (d->abi_major != RVFIT_ABI_MAJOR)
        return rvfit_err_set(
            err, RVFIT_ERR_PLUGIN,
            "ABI: %s was built for rvfit plugin ABI %u.%u, this rvfit "
            "supports %d.0-%d.%d: rebuild the plugin against the rvfit "
            "%d.x headers",
            path, d->abi_major, d->abi_minor, RVFIT_ABI_MAJOR,
            RVFIT_ABI_MAJOR, RVFIT_ABI_MINOR, RVFIT_ABI_MAJOR);
    if (d->abi_minor > RVFIT_ABI_MINOR)
        return rvfit_err_set(
            err, RVFIT_ERR_PLUGIN,
            "ABI: %s was built for rvfit plugin ABI %u.%u, newer than this "
            "rvfit's %d.%d: upgrade rvfit, or rebuild the plugin against "
            "this rvfit's headers",
            path, d->abi_major, d->abi_minor, RVFIT_ABI_MAJOR,
            RVFIT_ABI_MINOR);
    /* Every descriptor of this major has at least its .0 fields (up to
     * ext). */
    if (d->size < offsetof(rvfit_plugin, ext) + sizeof d->ext)
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                             "ABI: %s: descriptor size %u is smaller than "
                             "ABI %d.0's; set .size = sizeof(rvfit_plugin)",
                             path, d->size, RVFIT_ABI_MAJOR);
    if (d->kind != (uint32_t)kind)
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                             "ABI: %s is of kind %u (%s), its file name "
                             "says %s; rename the file or fix .kind",
                             path, d->kind, rvfit_kind_name((int)d->kind),
                             rvfit_kind_name(kind));
    int rc = check_ops(d, path, kind, err);
    return rc ? rc : check_ext(d, path, err);
}

/* Checks after dlopen: symbol, ABI, name. */
static int check_desc(rvfit_plugin_handle *h, int kind, const char *name,
                      int *stage, rvfit_err *err)
{
    dlerror();
    void *sym = dlsym(h->dl, RVFIT_PLUGIN_ENTRY_NAME);
    if (!sym)
        return fail(stage, RVFIT_STAGE_SYMBOL, err,
                    rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                                  "symbol: %s does not export %s (not an "
                                  "rvfit plugin, or built without "
                                  "RVFIT_EXPORT on the entry)",
                                  h->path, RVFIT_PLUGIN_ENTRY_NAME));
    rvfit_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    const rvfit_plugin *d = entry();
    int rc = check_abi(d, h->path, kind, err);
    if (rc)
        return fail(stage, RVFIT_STAGE_ABI, err, rc);
    if (!d->name || strcmp(d->name, name))
        return fail(stage, RVFIT_STAGE_NAME, err,
                    rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                                  "name: %s calls itself '%s' but its file "
                                  "name says '%s'; rename the file to "
                                  "rvfit_%s_%s.so or fix the descriptor",
                                  h->path, d->name ? d->name : "(null)",
                                  name, rvfit_kind_name(kind),
                                  d->name ? d->name : "NAME"));
    h->desc = d;
    fill_ops(h);
    return RVFIT_OK;
}

int rvfit_plugin_load_file(const char *path, int kind, const char *name,
                           rvfit_plugin_handle *h, int *stage,
                           rvfit_err *err)
{
    memset(h, 0, sizeof *h);
    h->kind = kind;
    snprintf(h->path, sizeof h->path, "%s", path);
    if (stage)
        *stage = RVFIT_STAGE_OK;
    /* NODELETE: GPU runtimes loaded by a plugin do not survive unmapping. */
    h->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h->dl) {
        const char *why = dlerror();
        return fail(stage, RVFIT_STAGE_DLOPEN, err,
                    rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                                  "dlopen failed: %s (file %s; install the "
                                  "library it names or pick another "
                                  "backend)",
                                  why ? why : "unknown error", path));
    }
    int rc = check_desc(h, kind, name, stage, err);
    if (rc != RVFIT_OK) {
        dlclose(h->dl);
        h->dl = NULL;
    }
    return rc;
}

int rvfit_plugin_load(char *const *dirs, int kind, const char *name,
                      rvfit_plugin_handle *h, int *stage, rvfit_err *err)
{
    char path[RVFIT_PATH_LEN + 128];
    char tried[1024] = "";
    for (int i = 0; dirs && dirs[i]; i++) {
        snprintf(path, sizeof path, "%s/rvfit_%s_%s.so", dirs[i],
                 rvfit_kind_name(kind), name);
        if (access(path, F_OK) == 0)
            return rvfit_plugin_load_file(path, kind, name, h, stage, err);
        strncat(tried, i ? ", " : "", sizeof tried - strlen(tried) - 1);
        strncat(tried, dirs[i], sizeof tried - strlen(tried) - 1);
    }
    memset(h, 0, sizeof *h);
    return fail(stage, RVFIT_STAGE_NOT_FOUND, err,
                rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                              "not found: no rvfit_%s_%s.so in %s (set "
                              "[run] plugin_path or RVFIT_PLUGIN_PATH, or "
                              "check the name; `rvfit plugins` lists what "
                              "is available)",
                              rvfit_kind_name(kind), name,
                              tried[0] ? tried : "(no directories)"));
}

const void *rvfit_plugin_ext(const rvfit_plugin_handle *h, const char *name,
                             uint32_t min_version, size_t min_size,
                             rvfit_err *err)
{
    const rvfit_ext *e = h && h->desc ? h->desc->ext : NULL;
    for (int i = 0; e && i < RVFIT_MAX_EXT && e[i].name; i++) {
        if (strcmp(e[i].name, name))
            continue;
        uint32_t hdr[2]; /* size, version; checked at load */
        memcpy(hdr, e[i].table, sizeof hdr);
        uint32_t maj = RVFIT_VERSION_MAJ(hdr[1]);
        uint32_t min = RVFIT_VERSION_MIN(hdr[1]);
        if (maj == RVFIT_VERSION_MAJ(min_version) &&
            min >= RVFIT_VERSION_MIN(min_version) && hdr[0] >= min_size)
            return e[i].table;
        rvfit_err_set(err, RVFIT_ERR_PLUGIN,
                      "its '%s' extension is version %u.%u (%u bytes), "
                      "this rvfit needs %u.%u or a later %u.x of at least "
                      "%zu bytes: rebuild the plugin against this rvfit's "
                      "headers",
                      name, maj, min, hdr[0], RVFIT_VERSION_MAJ(min_version),
                      RVFIT_VERSION_MIN(min_version),
                      RVFIT_VERSION_MAJ(min_version), min_size);
        return NULL;
    }
    rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "no '%s' extension", name);
    return NULL;
}

void rvfit_plugin_unload(rvfit_plugin_handle *h)
{
    if (h && h->dl)
        dlclose(h->dl);
    if (h)
        memset(h, 0, sizeof *h);
}
