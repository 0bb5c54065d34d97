/* interp.c — the template interpolators registered in the core (table
 * below): open, close, a point's stencil (rvfit/interp.h).  The stencil
 * tables the fit sends to backends are interp_buf.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "interp_internal.h"
#include "library/library_io_internal.h"
#include "rvfit/library_io.h"

typedef struct interp_kind {
    const char *name;  /* [templates] interpolator */
    const char *fits;  /* INTERP keyword           */
    int device;        /* backends can compute its stencil themselves */
} interp_kind;

static const interp_kind kinds[RVFIT_IKIND_NKIND] = {
    [RVFIT_IKIND_MULTILINEAR] = {"multilinear", "MULTILIN", 1},
    [RVFIT_IKIND_CUBIC] = {"cubic", "CUBIC", 1},
    [RVFIT_IKIND_SIMPLEX] = {"simplex", "SIMPLEX", 0},
    [RVFIT_IKIND_PCA] = {"pca", "PCA", 0},
};

int rvfit_interp_kind_parse(const char *name)
{
    for (int k = 0; k < RVFIT_IKIND_NKIND; k++)
        if (!strcasecmp(name, kinds[k].name) ||
            !strcasecmp(name, kinds[k].fits))
            return k;
    return -1;
}

const char *rvfit_interp_kind_name(int kind)
{
    return kind >= 0 && kind < RVFIT_IKIND_NKIND ? kinds[kind].name : "?";
}

const char *rvfit_interp_kind_fits(int kind)
{
    return kind >= 0 && kind < RVFIT_IKIND_NKIND ? kinds[kind].fits : "?";
}

int rvfit_interp_kind_of(const rvfit_library *lib)
{
    for (int p = 0; p < lib->nparam; p++)
        if (lib->axis[p].interp == RVFIT_INTERP_CUBIC)
            return RVFIT_IKIND_CUBIC;
    return RVFIT_IKIND_MULTILINEAR;
}

int rvfit_interp_open(rvfit_interpolator *ip, const rvfit_library *lib,
                      int kind, const char *path, int host_stencils,
                      rvfit_err *err)
{
    memset(ip, 0, sizeof *ip);
    int rc = rvfit_library_check(lib, err);
    if (rc)
        return rc;
    if (kind < 0)
        kind = rvfit_interp_kind_of(lib);
    if (kind >= RVFIT_IKIND_NKIND)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "interpolator kind %d",
                             kind);
    int corr = RVFIT_SXCORR_NONE; /* simplex: as its file records */
    if (kind == RVFIT_IKIND_SIMPLEX) {
        uint32_t *vert = NULL;
        size_t ns = 0;
        int nv = 0;
        sx_data *sd = NULL;
        for (int p = 0; p < lib->nparam; p++)
            if (lib->axis[p].interp != RVFIT_INTERP_LINEAR)
                return rvfit_err_set(err, RVFIT_ERR_CONFIG, "the simplex "
                                     "interpolator has no cubic axes (%s "
                                     "asked for): leave [templates] cubic "
                                     "empty", lib->axis[p].name);
        rc = path ? rvfit_library_read_simplices(path, &vert, &ns, &nv,
                                                 &corr, err)
                  : RVFIT_OK;
        if (!rc)
            rc = sx_open(lib, vert, ns, nv, &sd, err);
        free(vert);
        if (rc)
            return rc;
        ip->data = sd;
    }
    if (kind == RVFIT_IKIND_PCA) {
        pca_data *pd = NULL;
        rc = path ? lio_pca_load(path, lib, &pd, err)
                  : pca_build(lib, 0, RVFIT_PCA_RMS, &pd, err);
        if (rc)
            return rc;
        ip->data = pd;
    }
    ip->lib = lib;
    ip->kind = kind;
    ip->host_stencils = host_stencils || !kinds[kind].device;
    if (corr && (rc = rvfit_interp_simplex_correction(ip, corr, err)))
        rvfit_interp_close(ip);
    return rc;
}

void rvfit_interp_close(rvfit_interpolator *ip)
{
    if (!ip)
        return;
    if (ip->kind == RVFIT_IKIND_SIMPLEX)
        sx_free(ip->data);
    if (ip->kind == RVFIT_IKIND_PCA)
        pca_free(ip->data);
    memset(ip, 0, sizeof *ip);
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
    ip->kind = RVFIT_IKIND_PCA;
    ip->host_stencils = 1;
    ip->lib = lib;
    ip->data = pd;
    return RVFIT_OK;
}

int rvfit_interp_pca_k(const rvfit_interpolator *ip)
{
    return ip->kind == RVFIT_IKIND_PCA ? ((const pca_data *)ip->data)->k
                                       : -1;
}

double rvfit_interp_pca_rms(const rvfit_interpolator *ip, int arm)
{
    if (ip->kind != RVFIT_IKIND_PCA || arm < 0 || arm >= ip->lib->narm)
        return NAN;
    return ((const pca_data *)ip->data)->rms[arm];
}

const rvfit_library *rvfit_interp_vectors(const rvfit_interpolator *ip)
{
    return ip->kind == RVFIT_IKIND_PCA ? &((const pca_data *)ip->data)->view
                                       : ip->lib;
}

int rvfit_interp_nweights(const rvfit_interpolator *ip)
{
    return ip->kind == RVFIT_IKIND_PCA ? ip->lib->narm : 1;
}

int rvfit_interp_simplices(const rvfit_interpolator *ip,
                           const uint32_t **vert, size_t *ns, int *nvert)
{
    const sx_data *sd = ip->kind == RVFIT_IKIND_SIMPLEX ? ip->data : NULL;
    if (!sd)
        return -1;
    *vert = sd->vert;
    *ns = sd->ns;
    *nvert = sd->d + 1;
    return 0;
}

int rvfit_interp_stencil(const rvfit_interpolator *ip, const double *theta,
                         uint32_t *idx, double *w, double *pen)
{
    if (ip->kind == RVFIT_IKIND_SIMPLEX)
        return sx_stencil(ip->lib, ip->data, theta, idx, w, pen);
    size_t corner[RVFIT_MAX_CORNERS];
    int n = rvfit_library_stencil(ip->lib, theta, corner, w, pen);
    for (int k = 0; k < n; k++)
        idx[k] = (uint32_t)corner[k];
    return n;
}

int rvfit_simplex_correction_parse(const char *name)
{
    if (!name || !name[0] || !strcasecmp(name, "none"))
        return RVFIT_SXCORR_NONE;
    return strcasecmp(name, "quadratic") ? -1 : RVFIT_SXCORR_QUADRATIC;
}

int rvfit_interp_simplex_correction(rvfit_interpolator *ip, int corr,
                                    rvfit_err *err)
{
    sx_data *sd = ip->kind == RVFIT_IKIND_SIMPLEX ? ip->data : NULL;
    if (corr != RVFIT_SXCORR_NONE && corr != RVFIT_SXCORR_QUADRATIC)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex correction %d",
                             corr);
    if (!sd)
        return corr ? rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex_"
                                    "correction = quadratic: the "
                                    "interpolator is %s, not simplex",
                                    rvfit_interp_kind_name(ip->kind))
                    : RVFIT_OK;
    /* the ball of R = 2.5 node spacings holds about 4.2 R^3 = 65 models
     * in 3 free axes, 4.9 R^4 = 193 in 4 (fewer where an axis has few
     * nodes), 5.3 R^5 = 514 in 5 */
    if (corr && sd->d > 4)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex_correction = "
                             "quadratic: the library has %d axes of several "
                             "nodes, the correction at most 4 (its stencils "
                             "would exceed %d models)", sd->d,
                             RVFIT_MAX_STENCIL);
    sd->corr = corr;
    return RVFIT_OK;
}

int rvfit_interp_simplex_corr(const rvfit_interpolator *ip)
{
    const sx_data *sd = ip->kind == RVFIT_IKIND_SIMPLEX ? ip->data : NULL;
    return sd ? sd->corr : RVFIT_SXCORR_NONE;
}
