/* sx_kind.c — the simplex kind: its descriptor (interp_internal.h), its
 * record in the library file (HDU SIMPLEX: int32 [ns][nvert] model
 * indices, SXCORR its correction), and the simplex functions of
 * rvfit/interp.h. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sx_internal.h"

static sx_data *sx_of(const rvfit_interpolator *ip)
{
    return ip && ip->kind == &interp_simplex ? ip->data : NULL;
}

int rvfit_simplex_correction_parse(const char *name)
{
    if (!name || !name[0] || !strcasecmp(name, "none"))
        return RVFIT_SXCORR_NONE;
    return strcasecmp(name, "quadratic") ? -1 : RVFIT_SXCORR_QUADRATIC;
}

/* The correction corr on sd (d free axes). */
static int sx_set_corr(sx_data *sd, int corr, rvfit_err *err)
{
    if (corr != RVFIT_SXCORR_NONE && corr != RVFIT_SXCORR_QUADRATIC)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex correction %d",
                             corr);
    /* the ball of R = 2.5 node spacings holds about 4.2 R^3 = 65 models
     * in 3 free axes, 4.9 R^4 = 193 in 4 (fewer where an axis has few
     * nodes), 5.3 R^5 = 514 in 5 */
    if (corr && sd->fa.d > 4)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex_correction = "
                             "quadratic: the library has %d axes of several "
                             "nodes, the correction at most 4 (its stencils "
                             "would exceed %d models)", sd->fa.d,
                             RVFIT_MAX_STENCIL);
    sd->corr = corr;
    return RVFIT_OK;
}

int rvfit_interp_simplex_correction(rvfit_interpolator *ip, int corr,
                                    rvfit_err *err)
{
    sx_data *sd = sx_of(ip);
    if (sd)
        return sx_set_corr(sd, corr, err);
    if (corr != RVFIT_SXCORR_NONE && corr != RVFIT_SXCORR_QUADRATIC)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex correction %d",
                             corr);
    return corr ? rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex_correction = "
                                "quadratic: the interpolator is %s, not "
                                "simplex", ip->kind ? ip->kind->name : "?")
                : RVFIT_OK;
}

int rvfit_interp_simplex_corr(const rvfit_interpolator *ip)
{
    const sx_data *sd = sx_of(ip);
    return sd ? sd->corr : RVFIT_SXCORR_NONE;
}

int rvfit_interp_simplices(const rvfit_interpolator *ip,
                           const uint32_t **vert, size_t *ns, int *nvert)
{
    const sx_data *sd = sx_of(ip);
    if (!sd)
        return -1;
    *vert = sd->vert;
    *ns = sd->ns;
    *nvert = sd->fa.d + 1;
    return 0;
}

/* The triangulation is of models at nodes, linear between them. */
static int sx_linear_axes(const rvfit_library *lib, rvfit_err *err)
{
    for (int p = 0; p < lib->nparam; p++)
        if (lib->axis[p].interp != RVFIT_INTERP_LINEAR)
            return rvfit_err_set(err, RVFIT_ERR_CONFIG, "the simplex "
                                 "interpolator has no cubic axes (%s asked "
                                 "for): leave [templates] cubic empty",
                                 lib->axis[p].name);
    return RVFIT_OK;
}

static int sx_build(const rvfit_library *lib, const rvfit_interp_opts *o,
                    void **data, rvfit_err *err)
{
    sx_data *sd = NULL;
    int corr = rvfit_simplex_correction_parse(o->simplex_correction);
    int rc = sx_linear_axes(lib, err);
    if (!rc)
        rc = sx_open(lib, NULL, 0, 0, &sd, err);
    if (!rc && corr)
        rc = sx_set_corr(sd, corr, err);
    if (rc)
        sx_free(sd);
    else
        *data = sd;
    return rc;
}

static void sx_free_data(void *data) { sx_free(data); }

static int sx_point(const rvfit_interpolator *ip, const double *theta,
                    uint32_t *idx, double *w, double *pen)
{
    return sx_stencil(ip->lib, ip->data, theta, idx, w, pen);
}

/* At or beyond the hull (holes at the edge of the domain, a missing
 * corner: inside the axes' box, yet an edge): theta or a point 1e-3 node
 * spacings from it along a free axis is charged the out-of-hull penalty,
 * as the axes' edges count within 1e-3 spacings. */
static int sx_at_edge(const rvfit_interpolator *ip, const double *theta)
{
    const rvfit_library *L = ip->lib;
    const sx_data *sd = ip->data;
    uint32_t idx[RVFIT_MAX_STENCIL];
    double w[RVFIT_MAX_STENCIL], pen = 0.0, t[RVFIT_MAX_PARAMS];
    memcpy(t, theta, (size_t)L->nparam * sizeof *t);
    sx_stencil(L, sd, t, idx, w, &pen);
    for (int i = 0, k = 0; pen == 0.0 && i < L->nparam; i++) {
        if (L->axis[i].nnode < 2)
            continue;
        for (int sg = -1; pen == 0.0 && sg <= 1; sg += 2) {
            t[i] = theta[i] + sg * 1e-3 * sd->fa.h[k];
            sx_stencil(L, sd, t, idx, w, &pen);
            t[i] = theta[i];
        }
        k++;
    }
    return pen > 0.0;
}

static void sx_describe(const rvfit_interpolator *ip, char *buf, size_t n)
{
    const sx_data *sd = ip->data;
    snprintf(buf, n, "%s",
             sd->corr == RVFIT_SXCORR_QUADRATIC ? " (quadratic correction)"
                                                : "");
}

/* SXCORR of the current HDU into *corr (NONE when absent). */
static int sx_read_corr(lio_rd *r, int *corr)
{
    char v[FLEN_VALUE] = "";
    int fs = 0;
    *corr = RVFIT_SXCORR_NONE;
    if (fits_read_key(r->f, TSTRING, "SXCORR", v, NULL, &fs)) {
        fits_clear_errmsg();
        return fs == KEY_NO_EXIST ? RVFIT_OK
                                  : rvfit_fits_error(r->err, fs, r->path,
                                                     "SIMPLEX",
                                                     "reading SXCORR");
    }
    *corr = rvfit_simplex_correction_parse(v);
    if (*corr < 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: HDU SIMPLEX: "
                             "SXCORR = '%s': not a correction this rvfit "
                             "knows (NONE, QUADRATIC)", r->path, v);
    return RVFIT_OK;
}

/* The HDU SIMPLEX: *vert ([ns][nvert] model indices, caller frees). */
static int sx_read_hdu(lio_rd *r, uint32_t **vert, size_t *ns, int *nvert,
                       int *corr)
{
    int fs = 0, nx = 0, anynul = 0, rc = RVFIT_OK;
    long ax[2] = {0, 0};
    *vert = NULL;
    if (fits_movnam_hdu(r->f, IMAGE_HDU, "SIMPLEX", 0, &fs))
        return rvfit_fits_error(r->err, fs, r->path, "SIMPLEX", "INTERP = "
                                "'SIMPLEX' but no SIMPLEX HDU (rebuild the "
                                "library)");
    fits_get_img_dim(r->f, &nx, &fs);
    if (!fs && nx == 2)
        fits_get_img_size(r->f, 2, ax, &fs);
    if (fs || nx != 2 || ax[0] < 3 || ax[0] > RVFIT_MAX_PARAMS + 1 ||
        ax[1] < 1)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: HDU SIMPLEX: "
                             "need a 2D image of [nsimplex][3..%d] indices",
                             r->path, RVFIT_MAX_PARAMS + 1);
    if ((rc = sx_read_corr(r, corr)))
        return rc;
    size_t n = (size_t)ax[0] * (size_t)ax[1];
    if (!(*vert = malloc(n * sizeof **vert)))
        return rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: no memory",
                             r->path);
    unsigned nul = 0;
    if (fits_read_img(r->f, TUINT, 1, (LONGLONG)n, &nul, *vert, &anynul,
                      &fs)) {
        free(*vert);
        *vert = NULL;
        return rvfit_fits_error(r->err, fs, r->path, "SIMPLEX",
                                "reading data");
    }
    *ns = (size_t)ax[1];
    *nvert = (int)ax[0];
    return RVFIT_OK;
}

static int sx_read_end(lio_rd *r, const rvfit_library *lib, void *state,
                       void **data)
{
    uint32_t *vert = NULL;
    size_t ns = 0;
    int nv = 0, corr = RVFIT_SXCORR_NONE;
    sx_data *sd = NULL;
    (void)state;
    int rc = sx_linear_axes(lib, r->err);
    if (!rc)
        rc = sx_read_hdu(r, &vert, &ns, &nv, &corr);
    if (!rc)
        rc = sx_open(lib, vert, ns, nv, &sd, r->err);
    free(vert);
    if (!rc && corr)
        rc = sx_set_corr(sd, corr, r->err);
    if (rc)
        sx_free(sd);
    else
        *data = sd;
    return rc;
}

/* The triangulation after the FLUX_* HDUs (readers that do not know it
 * stop before). */
static void sx_write_hdu(const void *ctx, const rvfit_library *lib,
                         fitsfile *f, int *fs)
{
    const sx_data *sd = ctx;
    int nv = sd->fa.d + 1;
    (void)lib;
    long naxes[2] = {nv, (long)sd->ns};
    fits_create_img(f, LONG_IMG, 2, naxes, fs);
    fits_write_key(f, TSTRING, "EXTNAME", "SIMPLEX", NULL, fs);
    fits_write_comment(f, "Delaunay simplices of the models present "
                       "(model indices), scaled coordinates in node "
                       "spacings", fs);
    fits_write_key(f, TSTRING, "SXCORR",
                   sd->corr == RVFIT_SXCORR_QUADRATIC ? "QUADRATIC" : "NONE",
                   "correction of the barycentric interpolant", fs);
    fits_write_img(f, TUINT, 1, (LONGLONG)sd->ns * nv, (void *)sd->vert,
                   fs);
}

static void sx_write_hooks(const rvfit_interpolator *ip, lio_write_hooks *h)
{
    h->ctx = ip->data;
    h->hdus = sx_write_hdu;
}

const rvfit_interp_kind interp_simplex = {
    .name = "simplex",
    .fits = "SIMPLEX",
    .device = 0,
    .kinks_on_nodes = 0,
    .cubaxes = INTERP_CUB_NONE,
    .build = sx_build,
    .free_data = sx_free_data,
    .stencil = sx_point,
    .at_edge = sx_at_edge,
    .describe = sx_describe,
    .read_end = sx_read_end,
    .write_hooks = sx_write_hooks,
};
