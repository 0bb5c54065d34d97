/* pca_data.c — the pca kind's data at fit time: its stencils over the
 * mean and components of each arm, the library view backends load, and
 * the reconstruction of a model (pca_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pca_internal.h"

void pca_free(pca_data *pd)
{
    if (!pd)
        return;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        free(pd->vec[a]);
        free(pd->coef[a]);
    }
    free(pd->view_exists);
    free(pd);
}

int pca_alloc(const rvfit_library *lib, int k, pca_data **out,
              rvfit_err *err)
{
    *out = NULL;
    if (k < 1 || k > RVFIT_MAX_STENCIL - 1)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "pca: %d components "
                             "(1..%d: the mean and the components are one "
                             "stencil)", k, RVFIT_MAX_STENCIL - 1);
    pca_data *pd = calloc(1, sizeof *pd);
    if (!pd)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "pca: no memory");
    pd->k = k;
    pd->narm = lib->narm;
    pd->log_flux = lib->log_flux != 0;
    for (int a = 0; a < lib->narm; a++) {
        size_t np = lib->arm[a].npix;
        pd->vec[a] = malloc((size_t)(k + 1) * np * sizeof(float));
        pd->coef[a] = calloc(lib->nmodel * (size_t)k, sizeof(double));
        if (!pd->vec[a] || !pd->coef[a]) {
            pca_free(pd);
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "pca: no memory for "
                                 "%d vectors of arm %s", k + 1,
                                 lib->arm[a].name);
        }
    }
    *out = pd;
    return RVFIT_OK;
}

/* The view: the same arms (grids, smoothing, ln flux) whose stored
 * vectors are the k+1 of each arm, on one axis "PCA" so that the
 * library checks of every backend hold (nmodel = k+1 = its nodes). */
int pca_finish(const rvfit_library *lib, pca_data *pd, rvfit_err *err)
{
    size_t nv = (size_t)pd->k + 1;
    for (int a = 0; a < lib->narm; a++) {
        const float *v = pd->vec[a];
        for (size_t i = 0; i < nv * lib->arm[a].npix; i++)
            if (!isfinite(v[i]))
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "pca: arm %s: "
                                     "vector %zu is not finite",
                                     lib->arm[a].name, i / lib->arm[a].npix);
    }
    pd->view_exists = malloc(nv);
    if (!pd->view_exists)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "pca: no memory");
    memset(pd->view_exists, 1, nv);
    rvfit_library *v = &pd->view;
    *v = *lib;
    memset(v->axis, 0, sizeof v->axis);
    v->nparam = 1;
    snprintf(v->axis[0].name, sizeof v->axis[0].name, "PCA");
    v->axis[0].nnode = (int)nv;
    for (size_t i = 0; i < nv; i++)
        v->axis[0].node[i] = (double)i;
    v->nmodel = nv;
    v->exists = pd->view_exists;
    v->log_flux = pd->log_flux;
    for (int a = 0; a < lib->narm; a++)
        v->arm[a].flux = pd->vec[a];
    return rvfit_library_check(v, err);
}

void pca_reconstruct(const float *vec, const double *coef, int k,
                     size_t npix, size_t m, float *out)
{
    enum { B = 512 };
    const double *c = coef + m * (size_t)k;
    double acc[B];
    for (size_t p0 = 0; p0 < npix; p0 += B) {
        size_t n = npix - p0 < B ? npix - p0 : B;
        for (size_t j = 0; j < n; j++)
            acc[j] = (double)vec[p0 + j];
        for (int i = 0; i < k; i++) {
            const float *v = vec + (size_t)(i + 1) * npix + p0;
            double ci = c[i];
            for (size_t j = 0; j < n; j++)
                acc[j] += ci * (double)v[j];
        }
        for (size_t j = 0; j < n; j++)
            out[p0 + j] = (float)acc[j];
    }
}

int pca_to_vectors(const pca_data *pd, const uint32_t *midx,
                   const double *mw, int n, uint32_t *idx, double *w)
{
    if (n == 0)
        return 0;
    int k = pd->k, na = pd->narm;
    double sum = 0.0;
    for (int j = 0; j < n; j++)
        sum += mw[j];
    for (int a = 0; a < na; a++) {
        double acc[RVFIT_MAX_STENCIL];
        for (int i = 0; i < k; i++)
            acc[i] = 0.0;
        for (int j = 0; j < n; j++) {
            const double *c = pd->coef[a] + (size_t)midx[j] * (size_t)k;
            for (int i = 0; i < k; i++)
                acc[i] += mw[j] * c[i];
        }
        /* the mean weighs sum(mw): 1 for a point's stencil, 0 for an
         * error template (a divided difference) */
        w[a] = sum;
        for (int i = 0; i < k; i++)
            w[(size_t)(i + 1) * (size_t)na + (size_t)a] = acc[i];
    }
    for (int e = 0; e <= k; e++)
        idx[e] = (uint32_t)e;
    return k + 1;
}

int pca_stencil(const rvfit_library *lib, const pca_data *pd,
                const double *theta, uint32_t *idx, double *w, double *pen)
{
    size_t corner[RVFIT_MAX_CORNERS];
    uint32_t mi[RVFIT_MAX_CORNERS];
    double cw[RVFIT_MAX_CORNERS];
    int nc = rvfit_library_stencil(lib, theta, corner, cw, pen);
    for (int j = 0; j < nc; j++)
        mi[j] = (uint32_t)corner[j];
    /* no corners (a cell of holes): the flat template */
    return pca_to_vectors(pd, mi, cw, nc, idx, w);
}
