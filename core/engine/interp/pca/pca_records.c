/* library_io_pca.c — the records of the pca interpolator in the library
 * file (docs/template-library.md): per arm the k+1 vectors in the
 * FLUX_<ARM> image and the models' coefficients in PCACOEF_<ARM>, after
 * every FLUX_ image.  The loader rebuilds the models from them, so that
 * a pca library reads as any other; the interpolator reads the vectors
 * and coefficients themselves (lio_pca_read). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library/library_io_internal.h"

void lio_pca_write_arm(fitsfile *f, const pca_data *pd, int a, long npix,
                       int *fs)
{
    LONGLONG n = (LONGLONG)npix * (pd->k + 1);
    fits_write_key_dbl(f, "PCARMS", pd->rms[a], -17, "rms reconstruction "
                       "error of the models of this arm", fs);
    fits_write_comment(f, "rows: the mean, then the principal components "
                       "(interpolation space: ln flux if LOGFLUX)", fs);
    fits_write_img(f, TFLOAT, 1, n, pd->vec[a], fs);
}

void lio_pca_write_coef(fitsfile *f, const rvfit_library *lib,
                        const pca_data *pd, int *fs)
{
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

/* Arm a's vectors (HDU FLUX_<ARM>, current) and coefficients (HDU
 * PCACOEF_<ARM>) into vec and coef. */
static int lio_pca_arm_read(lio_rd *r, int a, const rvfit_library *lib,
                            float *vec, double *coef)
{
    const rvfit_lib_arm *ar = &lib->arm[a];
    int st, fs = 0, anynul = 0, k = r->npca;
    char name[16];
    LONGLONG nv = (LONGLONG)ar->npix * (k + 1);
    if ((st = lio_goto(r, 3 + lib->nparam + a, "FLUX_", NULL)) ||
        (st = lio_dims(r, 2, (long)ar->npix, k + 1)))
        return st;
    float fnul = NAN;
    if (fits_read_img(r->f, TFLOAT, 1, nv, &fnul, vec, &anynul, &fs))
        return lio_fail(r, fs, "reading the pca vectors");
    if ((st = lio_goto(r, 3 + lib->nparam + lib->narm + a, "PCACOEF_",
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

int lio_pca_arm(lio_rd *r, int a, rvfit_library *lib)
{
    rvfit_lib_arm *ar = &lib->arm[a];
    size_t np = ar->npix, k = (size_t)r->npca;
    float *vec = malloc((k + 1) * np * sizeof *vec);
    double *coef = malloc(lib->nmodel * k * sizeof *coef);
    ar->flux = malloc(lib->nmodel * np * sizeof *ar->flux);
    int st = vec && coef && ar->flux
                 ? lio_pca_arm_read(r, a, lib, vec, coef)
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
    free(vec);
    free(coef);
    return st;
}

int lio_pca_read(lio_rd *r, const rvfit_library *lib, pca_data *pd)
{
    int st = RVFIT_OK;
    for (int a = 0; a < lib->narm && !st; a++)
        st = lio_pca_arm_read(r, a, lib, pd->vec[a], pd->coef[a]);
    for (int a = 0; a < lib->narm && !st; a++) {
        int fs = 0;
        if ((st = lio_goto(r, 3 + lib->nparam + a, "FLUX_", NULL)))
            break;
        if (rvfit_fits_read_key(r->f, TDOUBLE, "PCARMS", &pd->rms[a], &fs))
            st = lio_fail(r, fs, "keyword PCARMS");
    }
    return st;
}
