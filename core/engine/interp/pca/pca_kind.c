/* pca_kind.c — the pca kind: its descriptor (interp_internal.h) and the
 * pca functions of rvfit/interp.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pca_internal.h"

static const pca_data *pca_of(const rvfit_interpolator *ip)
{
    return ip && ip->kind == &interp_pca ? ip->data : NULL;
}

int rvfit_interp_open_pca(rvfit_interpolator *ip, const rvfit_library *lib,
                          int k, double rms, rvfit_err *err)
{
    memset(ip, 0, sizeof *ip);
    pca_data *pd = NULL;
    int rc = rvfit_library_check(lib, err);
    if (!rc)
        rc = pca_build(lib, k, rms, &pd, err);
    if (rc)
        return rc;
    ip->kind = &interp_pca;
    ip->host_stencils = 1;
    ip->lib = lib;
    ip->data = pd;
    return RVFIT_OK;
}

int rvfit_interp_pca_k(const rvfit_interpolator *ip)
{
    const pca_data *pd = pca_of(ip);
    return pd ? pd->k : -1;
}

double rvfit_interp_pca_rms(const rvfit_interpolator *ip, int arm)
{
    const pca_data *pd = pca_of(ip);
    if (!pd || arm < 0 || arm >= ip->lib->narm)
        return NAN;
    return pd->rms[arm];
}

static int pca_kind_build(const rvfit_library *lib,
                          const rvfit_interp_opts *o, void **data,
                          rvfit_err *err)
{
    pca_data *pd = NULL;
    int rc = pca_build(lib, o->pca_k,
                       o->pca_rms > 0 ? o->pca_rms : RVFIT_PCA_RMS, &pd,
                       err);
    if (!rc)
        *data = pd;
    return rc;
}

static void pca_free_data(void *data) { pca_free(data); }

/* Over the models: the grid stencil of its coefficients, i.e. over the
 * models the file's reader rebuilt from them. */
static int pca_model_stencil(const rvfit_interpolator *ip,
                             const double *theta, uint32_t *idx, double *w,
                             double *pen)
{
    size_t corner[RVFIT_MAX_CORNERS];
    int n = rvfit_library_stencil(ip->lib, theta, corner, w, pen);
    for (int k = 0; k < n; k++)
        idx[k] = (uint32_t)corner[k];
    return n;
}

static int pca_vec_stencil(const rvfit_interpolator *ip,
                           const double *theta, uint32_t *idx, double *w,
                           double *pen)
{
    return pca_stencil(ip->lib, ip->data, theta, idx, w, pen);
}

static int pca_kind_to_vectors(const rvfit_interpolator *ip,
                               const uint32_t *midx, const double *mw,
                               int n, uint32_t *idx, double *w)
{
    return pca_to_vectors(ip->data, midx, mw, n, idx, w);
}

static const rvfit_library *pca_vectors(const rvfit_interpolator *ip)
{
    return &((const pca_data *)ip->data)->view;
}

static void pca_describe(const rvfit_interpolator *ip, char *buf, size_t n)
{
    snprintf(buf, n, " (%d components)", ((const pca_data *)ip->data)->k);
}

const rvfit_interp_kind interp_pca = {
    .name = "pca",
    .fits = "PCA",
    .device = 0,
    .kinks_on_nodes = 1,
    .cubaxes = INTERP_CUB_ANY,
    .models_in_space = 1,
    .arm_weights = 1,
    .build = pca_kind_build,
    .free_data = pca_free_data,
    .stencil = pca_model_stencil,
    .vec_stencil = pca_vec_stencil,
    .to_vectors = pca_kind_to_vectors,
    .vectors = pca_vectors,
    .describe = pca_describe,
    .read_begin = pca_read_begin,
    .read_arm = pca_read_arm,
    .read_end = pca_read_end,
    .free_state = pca_read_free,
    .write_hooks = pca_write_hooks,
};
