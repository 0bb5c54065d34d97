/* pca_records.c — the pca kind's records in the library file
 * (docs/template-library.md): the primary keys NPCA and PCATARG, per arm
 * the k+1 vectors in the FLUX_<ARM> image (key PCARMS) and the models'
 * coefficients in PCACOEF_<ARM>, after every FLUX_ image.  Reading
 * rebuilds the models from them, so that a pca library loads as any
 * other; the interpolator keeps the vectors and coefficients. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pca_internal.h"

int pca_read_begin(lio_rd *r, void **state)
{
    pca_read *s = calloc(1, sizeof *s);
    if (!s)
        return rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: no memory",
                             r->path);
    *state = s;
    int st = lio_key(r, TINT, "NPCA", &s->k), fs = 0;
    if (!st && (s->k < 1 || s->k > RVFIT_MAX_STENCIL - 1))
        st = rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: NPCA = %d not in "
                           "1..%d", r->path, s->k, RVFIT_MAX_STENCIL - 1);
    if (!st && rvfit_fits_read_key(r->f, TDOUBLE, "PCATARG", &s->target,
                                   &fs))
        s->target = 0.0; /* optional */
    fits_clear_errmsg();
    return st;
}

void pca_read_free(void *state)
{
    pca_read *s = state;
    if (!s)
        return;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        free(s->vec[a]);
        free(s->coef[a]);
    }
    free(s);
}

/* Arm a's vectors (HDU FLUX_<ARM>, current) and coefficients (HDU
 * PCACOEF_<ARM>) into vec and coef. */
static int pca_arm_read(lio_rd *r, int a, int k, const rvfit_library *lib,
                        float *vec, double *coef)
{
    const rvfit_lib_arm *ar = &lib->arm[a];
    int st, fs = 0, anynul = 0;
    char name[16];
    LONGLONG nv = (LONGLONG)ar->npix * (k + 1);
    if ((st = lio_goto(r, lio_arm_hdu(lib, a), "FLUX_", NULL)) ||
        (st = lio_dims(r, 2, (long)ar->npix, k + 1)))
        return st;
    float fnul = NAN;
    if (fits_read_img(r->f, TFLOAT, 1, nv, &fnul, vec, &anynul, &fs))
        return lio_fail(r, fs, "reading the pca vectors");
    if ((st = lio_goto(r, lio_arm_hdu(lib, lib->narm + a), "PCACOEF_",
                       name)) ||
        (st = lio_dims(r, 2, k, (long)lib->nmodel)))
        return st;
    if (strcmp(name, ar->name) != 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: expected "
                             "PCACOEF_%s", r->path, r->hdu, ar->name);
    double dnul = NAN;
    LONGLONG nc = (LONGLONG)lib->nmodel * k;
    if (fits_read_img(r->f, TDOUBLE, 1, nc, &dnul, coef, &anynul, &fs))
        return lio_fail(r, fs, "reading the pca coefficients");
    for (LONGLONG i = 0; i < nc; i++)
        if (!isfinite(coef[i]))
            return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: "
                                 "coefficient %lld of model %lld is not "
                                 "finite", r->path, r->hdu, i % k, i / k);
    for (LONGLONG i = 0; i < nv; i++)
        if (!isfinite(vec[i]))
            return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: FLUX_%s: "
                                 "pca vector %lld is not finite", r->path,
                                 ar->name, i / (LONGLONG)ar->npix);
    return RVFIT_OK;
}

int pca_read_arm(void *state, lio_rd *r, int a, rvfit_library *lib)
{
    pca_read *s = state;
    rvfit_lib_arm *ar = &lib->arm[a];
    size_t np = ar->npix, k = (size_t)s->k;
    float *vec = s->vec[a] = malloc((k + 1) * np * sizeof *vec);
    double *coef = s->coef[a] = malloc(lib->nmodel * k * sizeof *coef);
    ar->flux = malloc(lib->nmodel * np * sizeof *ar->flux);
    int st = vec && coef && ar->flux
                 ? pca_arm_read(r, a, s->k, lib, vec, coef)
                 : rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: arm %s: no "
                                 "memory", r->path, ar->name);
    for (size_t m = 0; m < lib->nmodel && !st; m++) {
        float *f = ar->flux + m * np;
        if (lib->exists[m]) {
            pca_reconstruct(vec, coef, (int)k, np, m, f);
        } else { /* holes: the flat template, in the vectors' space */
            for (size_t p = 0; p < np; p++)
                f[p] = r->log_flux ? 0.0f : 1.0f;
        }
    }
    return st;
}

int pca_read_end(lio_rd *r, const rvfit_library *lib, void *state,
                 void **data)
{
    pca_read *s = state;
    if (r->log_flux != (lib->log_flux != 0))
        return rvfit_err_set(r->err, RVFIT_ERR_CONFIG, "%s: the pca "
                             "components are in %s, the templates are to be "
                             "interpolated in %s: [templates] log_flux "
                             "cannot change a pca library (rebuild it)",
                             r->path, r->log_flux ? "ln flux" : "flux",
                             lib->log_flux ? "ln flux" : "flux");
    pca_data *pd = calloc(1, sizeof *pd);
    if (!pd)
        return rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "pca: no memory");
    pd->k = s->k;
    pd->narm = lib->narm;
    pd->log_flux = lib->log_flux != 0;
    pd->target = s->target;
    int st = RVFIT_OK;
    for (int a = 0; a < lib->narm; a++) { /* the state's arrays move */
        pd->vec[a] = s->vec[a];
        pd->coef[a] = s->coef[a];
        s->vec[a] = NULL;
        s->coef[a] = NULL;
    }
    for (int a = 0; a < lib->narm && !st; a++) {
        int fs = 0;
        if ((st = lio_goto(r, lio_arm_hdu(lib, a), "FLUX_", NULL)))
            break;
        if (rvfit_fits_read_key(r->f, TDOUBLE, "PCARMS", &pd->rms[a], &fs))
            st = lio_fail(r, fs, "keyword PCARMS");
    }
    if (!st)
        st = pca_finish(lib, pd, r->err);
    if (st)
        pca_free(pd);
    else
        *data = pd;
    return st;
}

static void pca_write_keys(const void *ctx, fitsfile *f, int *fs)
{
    const pca_data *pd = ctx;
    int k = pd->k;
    fits_write_key(f, TINT, "NPCA", &k, "pca: principal components per arm",
                   fs);
    fits_write_key_dbl(f, "PCATARG", pd->target, -17, "pca: rms error asked "
                       "for (0: NPCA given)", fs);
}

static long pca_arm_rows(const void *ctx)
{
    return ((const pca_data *)ctx)->k + 1;
}

static void pca_write_arm(const void *ctx, fitsfile *f, int a, long npix,
                          int *fs)
{
    const pca_data *pd = ctx;
    LONGLONG n = (LONGLONG)npix * (pd->k + 1);
    fits_write_key_dbl(f, "PCARMS", pd->rms[a], -17, "rms reconstruction "
                       "error of the models of this arm", fs);
    fits_write_comment(f, "rows: the mean, then the principal components "
                       "(interpolation space: ln flux if LOGFLUX)", fs);
    fits_write_img(f, TFLOAT, 1, n, pd->vec[a], fs);
}

static void pca_write_coef(const void *ctx, const rvfit_library *lib,
                           fitsfile *f, int *fs)
{
    const pca_data *pd = ctx;
    char ext[32];
    for (int a = 0; a < lib->narm && !*fs; a++) {
        long naxes[2] = {pd->k, (long)lib->nmodel};
        fits_create_img(f, DOUBLE_IMG, 2, naxes, fs);
        snprintf(ext, sizeof ext, "PCACOEF_%s", lib->arm[a].name);
        fits_write_key(f, TSTRING, "EXTNAME", ext, NULL, fs);
        fits_write_key(f, TSTRING, "ARMNAME", (void *)lib->arm[a].name,
                       "arm", fs);
        fits_write_comment(f, "coefficients of each model (row) on the "
                           "components of FLUX_<ARM>; 0 for holes", fs);
        fits_write_img(f, TDOUBLE, 1, (LONGLONG)naxes[0] * naxes[1],
                       pd->coef[a], fs);
    }
}

void pca_write_hooks(const rvfit_interpolator *ip, lio_write_hooks *h)
{
    h->ctx = ip->data;
    h->keys = pca_write_keys;
    h->arm_rows = pca_arm_rows;
    h->arm = pca_write_arm;
    h->hdus = pca_write_coef;
}
