/* file.c — a template library file with the interpolator it records,
 * read in one pass: the library part reads what every library has
 * (library/library_internal.h) and the kind named by INTERP reads its own
 * records through the hooks of its descriptor.  The one way every front
 * end (CLI, session, tools, bindings) loads and saves libraries. */
#include <string.h>

#include "interp_internal.h"
#include "rvfit/config.h"

/* Run-time options applied after the file's own (NULL: none). */
typedef struct file_opts {
    const char *cubic;
    long log_flux;
    int host_stencils;
} file_opts;

/* The kind's CUBAXES and LOGFLUX as the file records them (lio_rd). */
static int file_options(lio_rd *r, const rvfit_interp_kind *k,
                        rvfit_library *lib)
{
    int cub = r->cubaxes[0] != '\0';
    int bad = k->cubaxes == INTERP_CUB_NONE ? cub
              : k->cubaxes == INTERP_CUB_SOME ? !cub
                                              : 0;
    if (bad)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: INTERP = '%s' "
                             "with CUBAXES = '%s'", r->path, k->fits,
                             r->cubaxes);
    int st = rvfit_library_set_cubic(lib, r->cubaxes, r->err);
    if (!st && r->log_flux && k->models_in_space)
        lib->log_flux = 1;
    else if (!st && r->log_flux)
        st = rvfit_library_set_log_flux(lib, r->err);
    if (st)
        rvfit_err_prefix(r->err, "%s", r->path);
    return st;
}

/* The library at path into lib and, when ip is not NULL, its
 * interpolator into ip, with the run-time options o. */
static int file_read(rvfit_library *lib, rvfit_interpolator *ip,
                     const char *path, const file_opts *o, rvfit_err *err)
{
    lio_rd r;
    void *state = NULL, *data = NULL;
    memset(lib, 0, sizeof *lib);
    int st = lio_open(&r, path, err);
    if (!st)
        st = lio_read_head(&r, lib);
    const rvfit_interp_kind *k = st ? NULL : interp_kind_find(r.interp);
    if (!st && !k)
        st = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: INTERP = '%s': not "
                           "an interpolator this rvfit knows", r.path,
                           r.interp);
    if (!st && k->read_begin)
        st = k->read_begin(&r, &state);
    if (!st)
        st = lio_read_body(&r, lib, k->read_arm, state);
    if (!st)
        st = file_options(&r, k, lib);
    if (!st && o)
        st = rvfit_library_configure(lib, NULL, o->cubic, o->log_flux, err);
    /* The grid kinds follow the (possibly overridden) axes; the others
     * read their records from the file. */
    if (!st && ip && !k->read_end)
        k = interp_kind_of(lib);
    if (!st && ip)
        st = rvfit_library_check(lib, err);
    if (!st && ip && k->read_end)
        st = k->read_end(&r, lib, state, &data);
    lio_close(&r);
    if (k && k->free_state)
        k->free_state(state);
    if (st) {
        rvfit_library_free(lib);
        return st;
    }
    if (ip) {
        memset(ip, 0, sizeof *ip);
        ip->kind = k;
        ip->lib = lib;
        ip->data = data;
        ip->host_stencils = (o && o->host_stencils) || !k->device;
    }
    return RVFIT_OK;
}

int rvfit_library_load(rvfit_library *lib, const char *path, rvfit_err *err)
{
    return file_read(lib, NULL, path, NULL, err);
}

int rvfit_library_open(rvfit_library *lib, rvfit_interpolator *ip,
                       const char *path, rvfit_err *err)
{
    return file_read(lib, ip, path, NULL, err);
}

int rvfit_library_open_fit(rvfit_library *lib, rvfit_interpolator *ip,
                           const char *path, const rvfit_config *c,
                           rvfit_err *err)
{
    file_opts o = {c->cubic, c->log_flux, (int)c->host_stencils};
    return file_read(lib, ip, path, &o, err);
}

int rvfit_library_save_interp(const rvfit_library *lib,
                              const rvfit_interpolator *ip, const char *dir,
                              rvfit_err *err)
{
    lio_write_hooks h;
    memset(&h, 0, sizeof h);
    const rvfit_interp_kind *k = ip ? ip->kind : interp_kind_of(lib);
    h.interp = k->fits;
    if (ip && k->write_hooks)
        k->write_hooks(ip, &h);
    return lio_save(lib, dir, &h, err);
}

int rvfit_library_save(const rvfit_library *lib, const char *dir,
                       rvfit_err *err)
{
    return rvfit_library_save_interp(lib, NULL, dir, err);
}
