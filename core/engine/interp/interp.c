/* interp.c — the registry of interpolator kinds and what the rest of the
 * engine asks of an interpolator (rvfit/interp.h), answered from the
 * kind's descriptor (interp_internal.h).  A new kind is its own file or
 * folder and one line in `kinds` below. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "interp_internal.h"

static const rvfit_interp_kind *const kinds[] = {
    &interp_multilinear,
    &interp_cubic,
    &interp_simplex,
    &interp_pca,
};
#define NKIND (sizeof kinds / sizeof kinds[0])

const rvfit_interp_kind *interp_kind_find(const char *name)
{
    for (size_t k = 0; name && k < NKIND; k++)
        if (!strcasecmp(name, kinds[k]->name) ||
            !strcasecmp(name, kinds[k]->fits))
            return kinds[k];
    return NULL;
}

const rvfit_interp_kind *interp_kind_of(const rvfit_library *lib)
{
    for (int p = 0; p < lib->nparam; p++)
        if (lib->axis[p].interp == RVFIT_INTERP_CUBIC)
            return &interp_cubic;
    return &interp_multilinear;
}

const char *interp_kind_names(void)
{
    return "multilinear, cubic, simplex or pca";
}

int rvfit_interp_known(const char *name)
{
    return interp_kind_find(name) != NULL;
}

const char *rvfit_interp_name(const rvfit_interpolator *ip)
{
    return ip && ip->kind ? ip->kind->name : "?";
}

/* Options of one kind given to another are refused, not ignored. */
static int foreign_opts(const rvfit_interp_kind *k,
                        const rvfit_interp_opts *o, rvfit_err *err)
{
    int corr = rvfit_simplex_correction_parse(o->simplex_correction);
    if (corr < 0)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex_correction = "
                             "'%s': expected none or quadratic",
                             o->simplex_correction);
    if (corr && k != &interp_simplex)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex_correction = "
                             "quadratic: the interpolator is %s, not "
                             "simplex", k->name);
    return RVFIT_OK;
}

int rvfit_interp_build(rvfit_interpolator *ip, const rvfit_library *lib,
                       const rvfit_interp_opts *o, rvfit_err *err)
{
    memset(ip, 0, sizeof *ip);
    int rc = rvfit_library_check(lib, err);
    if (rc)
        return rc;
    const rvfit_interp_kind *k = o->kind ? interp_kind_find(o->kind)
                                         : interp_kind_of(lib);
    if (!k)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "interpolator '%s': use "
                             "%s", o->kind, interp_kind_names());
    if ((rc = foreign_opts(k, o, err)))
        return rc;
    void *data = NULL;
    if (k->build && (rc = k->build(lib, o, &data, err)))
        return rc;
    ip->kind = k;
    ip->lib = lib;
    ip->data = data;
    ip->host_stencils = o->host_stencils || !k->device;
    return RVFIT_OK;
}

int rvfit_interp_open(rvfit_interpolator *ip, const rvfit_library *lib,
                      const char *kind, int host_stencils, rvfit_err *err)
{
    rvfit_interp_opts o = {.kind = kind, .host_stencils = host_stencils};
    return rvfit_interp_build(ip, lib, &o, err);
}

void rvfit_interp_close(rvfit_interpolator *ip)
{
    if (!ip)
        return;
    if (ip->kind && ip->kind->free_data)
        ip->kind->free_data(ip->data);
    memset(ip, 0, sizeof *ip);
}

int rvfit_interp_stencil(const rvfit_interpolator *ip, const double *theta,
                         uint32_t *idx, double *w, double *pen)
{
    if (ip->kind->stencil)
        return ip->kind->stencil(ip, theta, idx, w, pen);
    size_t corner[RVFIT_MAX_CORNERS];
    int n = rvfit_library_stencil(ip->lib, theta, corner, w, pen);
    for (int k = 0; k < n; k++)
        idx[k] = (uint32_t)corner[k];
    return n;
}

int rvfit_interp_vec_stencil(const rvfit_interpolator *ip,
                             const double *theta, uint32_t *idx, double *w,
                             double *pen)
{
    if (ip->kind->vec_stencil)
        return ip->kind->vec_stencil(ip, theta, idx, w, pen);
    return rvfit_interp_stencil(ip, theta, idx, w, pen);
}

int rvfit_interp_to_vectors(const rvfit_interpolator *ip,
                            const uint32_t *midx, const double *mw, int n,
                            uint32_t *idx, double *w)
{
    if (ip->kind->to_vectors)
        return ip->kind->to_vectors(ip, midx, mw, n, idx, w);
    memmove(idx, midx, (size_t)n * sizeof *idx);
    memmove(w, mw, (size_t)n * sizeof *w);
    return n;
}

const rvfit_library *rvfit_interp_vectors(const rvfit_interpolator *ip)
{
    return ip->kind->vectors ? ip->kind->vectors(ip) : ip->lib;
}

int rvfit_interp_nweights(const rvfit_interpolator *ip)
{
    return ip->kind->arm_weights ? ip->lib->narm : 1;
}

int rvfit_interp_kinks_on_nodes(const rvfit_interpolator *ip)
{
    return !ip || ip->kind->kinks_on_nodes;
}

int rvfit_interp_at_edge(const rvfit_interpolator *ip, const double *theta)
{
    return ip && ip->kind->at_edge ? ip->kind->at_edge(ip, theta) : 0;
}


void rvfit_interp_describe(const rvfit_interpolator *ip, char *buf,
                           size_t n)
{
    if (n)
        buf[0] = '\0';
    if (ip->kind->describe)
        ip->kind->describe(ip, buf, n);
}
