/* prep.c — instrument-independent preparation of a batch before it goes to
 * a backend: error floor, unusable edge pixels, LSF -> band matrix, and the
 * correction of band matrices for the templates' own smoothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/prep.h"
#include "rvfit/numeric.h"

#define SIGMA_FLOOR 0.3   /* sigma >= 0.3 x median sigma (rvspecfit) */
#define LSF_NSIGMA 4.0    /* band half width for LSF arms, in sigma   */
#define LSF_MAX_HALF 25
#define SQRT2 1.41421356237309504880

/* Non-finite values become unusable pixels; sigma is floored. */
static void clean_and_floor(float *flux, float *ivar, size_t n, double *tmp)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(flux[i]) || !isfinite(ivar[i]) || ivar[i] <= 0) {
            flux[i] = isfinite(flux[i]) ? flux[i] : 0.0f;
            ivar[i] = 0.0f;
        } else {
            tmp[m++] = 1.0 / sqrt((double)ivar[i]);
        }
    }
    if (m == 0)
        return;
    double sfloor = SIGMA_FLOOR * rvfit_median(tmp, m);
    float imax = (float)(1.0 / (sfloor * sfloor));
    for (size_t i = 0; i < n; i++)
        if (ivar[i] > imax)
            ivar[i] = imax;
}

static double pixel_width(const double *w, size_t n, size_t j)
{
    if (n < 2)
        return 1.0;
    if (j == 0)
        return w[1] - w[0];
    if (j == n - 1)
        return w[n - 1] - w[n - 2];
    return 0.5 * (w[j + 1] - w[j - 1]);
}

/* Gaussian LSF (sigma per pixel, Angstrom) of one spectrum's n own pixels
 * -> band matrix of pixel-integrated Gaussians of half width h whose
 * columns sum to one, row stride ld. */
static void lsf_to_band(const double *w, size_t n, size_t ld,
                        const float *lsf, int h, float *res)
{
    int nd = 2 * h + 1;
    for (size_t j = 0; j < n; j++) {
        double s = lsf[j] > 0 ? lsf[j] : 1e-3 * pixel_width(w, n, j);
        double sum = 0;
        for (int k = 0; k < nd; k++) {
            long i = (long)j + k - h;
            double v = 0;
            if (i >= 0 && (size_t)i < n) {
                double half = 0.5 * pixel_width(w, n, (size_t)i);
                double a = (w[i] - half - w[j]) / (SQRT2 * s);
                double b = (w[i] + half - w[j]) / (SQRT2 * s);
                v = 0.5 * (erf(b) - erf(a));
            }
            res[(size_t)k * ld + j] = (float)v;
            sum += v;
        }
        for (int k = 0; k < nd && sum > 0; k++)
            res[(size_t)k * ld + j] = (float)(res[(size_t)k * ld + j] / sum);
    }
}

/* R' = R (I - C D2): undo, to second order, the part of the templates'
 * Gaussian smoothing (variance sigma_t^2) that exceeds the box of a data
 * pixel (variance dl^2/12), which the band matrix already includes.
 * c_j = excess / (2 dl_j^2) in pixel units.  Input: half width h, output
 * h+1 (both row stride ld) over the n own pixels of one spectrum;
 * columns beyond n are padding and stay 0. */
static void desmooth_band(const double *w, size_t n, size_t ld,
                          const float *in, int h, const rvfit_library *lib,
                          int la, float *out, double *c)
{
    int ho = h + 1, ndo = 2 * ho + 1;
    for (size_t j = 0; j < n; j++) {
        double dl = pixel_width(w, n, j);
        double sigma_t = rvfit_library_sigma(lib, la, w[j]);
        double excess = sigma_t * sigma_t - dl * dl / 12.0;
        c[j] = excess > 0 ? excess / (2.0 * dl * dl) : 0.0;
    }
    /* R(i, j) from the input band, 0 outside. */
#define RIN(i, j)                                                         \
    (((long)(j) < 0 || (size_t)(j) >= n || labs((long)(i) - (long)(j)) > h) \
         ? 0.0                                                            \
         : (double)in[(size_t)((long)(i) - (long)(j) + h) * ld + (size_t)(j)])
    for (size_t k = 0; k < ld; k++) {
        for (int q = 0; q < ndo; q++) {
            long i = (long)k + q - ho;
            double v = 0;
            if (k < n && i >= 0 && (size_t)i < n) {
                v = RIN(i, k) * (1.0 + 2.0 * c[k]);
                if (k + 1 < n)
                    v -= c[k + 1] * RIN(i, k + 1);
                if (k > 0)
                    v -= c[k - 1] * RIN(i, (long)k - 1);
            }
            out[(size_t)q * ld + k] = (float)v;
        }
    }
#undef RIN
}

/* Half width of the band an LSF spectrum needs: LSF_NSIGMA of its widest
 * sigma in units of its narrowest pixel, over its own n pixels only, so
 * that the band does not depend on the other spectra of the batch. */
static int lsf_half(const double *w, const float *lsf, size_t n)
{
    double smax = 0, dmin = INFINITY;
    for (size_t i = 0; i < n; i++)
        smax = lsf[i] > smax ? lsf[i] : smax;
    for (size_t j = 0; j + 1 < n; j++) {
        double d = w[j + 1] - w[j];
        dmin = d > 0 && d < dmin ? d : dmin;
    }
    int h = (int)ceil(LSF_NSIGMA * smax / dmin);
    return h < 1 ? 1 : h > LSF_MAX_HALF ? LSF_MAX_HALF : h;
}

static const double *spec_wave(const rvfit_arm_batch *A, size_t s)
{
    return A->wave + (A->wave_per_spec ? s * A->npix : 0);
}

/* Spectrum s's arm a: no usable pixel inside the templates' wavelengths
 * (the model there would be a template's edge value stretched out) ->
 * dropped and flagged; a median S/N per pixel beyond any detector ->
 * flagged (its velocity error would claim 1e-9 km/s). */
static void check_spec(rvfit_batch *b, int a, const rvfit_lib_arm *L,
                       size_t s, double *tmp)
{
    rvfit_arm_batch *A = &b->arm[a];
    double lo = exp(L->lnl0), hi = exp(L->lnl0 + L->dlnl * (L->npix - 1));
    const double *w = spec_wave(A, s);
    float *f = A->flux + s * A->npix, *iv = A->ivar + s * A->npix;
    size_t n = rvfit_arm_npix(A, s), used = 0, inside = 0;
    for (size_t i = 0; i < n; i++)
        if (iv[i] > 0) {
            inside += w[i] >= lo && w[i] <= hi;
            tmp[used++] = fabs((double)f[i]) * sqrt((double)iv[i]);
        }
    if (used && !inside) {
        for (size_t i = 0; i < n; i++)
            iv[i] = 0;
        b->flags[s] |= RVFIT_SPEC_ARM_OUTSIDE(a);
    } else if (used && rvfit_median(tmp, used) > RVFIT_SNR_ABSURD) {
        b->flags[s] |= RVFIT_SPEC_BAD_IVAR;
    }
}

/* Band of spectrum s (half width hs, embedded in the arm's half width h_in
 * with zeros around it) into band[ndiag_in * ld]. */
static const float *spec_band(const rvfit_arm_batch *A, size_t s, int hs,
                              int h_in, float *band)
{
    size_t ld = A->npix, n = rvfit_arm_npix(A, s);
    if (A->res_kind != RVFIT_RES_LSF)
        return A->res + s * ld * (size_t)A->ndiag;
    memset(band, 0, ld * (size_t)(2 * h_in + 1) * sizeof *band);
    lsf_to_band(spec_wave(A, s), n, ld, A->lsf + s * ld, hs,
                band + (size_t)(h_in - hs) * ld);
    return band;
}

/* Readers check their grids; this catches a plugin that does not: a
 * wavelength <= 0 makes ln(lambda) NaN and a backend's pixel index
 * overflow, so it is an error, not a bad star. */
static int check_wave(const rvfit_batch *b, const rvfit_arm_batch *A,
                      rvfit_err *err)
{
    size_t nw = A->wave_per_spec ? b->nspec : (b->nspec ? 1 : 0);
    for (size_t s = 0; s < nw; s++) {
        const double *w = spec_wave(A, s);
        size_t n = rvfit_arm_npix(A, s);
        for (size_t i = 0; i < n; i++)
            if (!isfinite(w[i]) || !(w[i] > 0.0) || (i && w[i] <= w[i - 1]))
                return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                                     "spectrum %zu of the file: wavelength "
                                     "%zu (%g) is not finite, positive and "
                                     "increasing",
                                     b->index[s], i, w[i]);
    }
    return RVFIT_OK;
}

/* One arm of a batch, spectra in parallel: each spectrum's preparation
 * depends on that spectrum alone (and the arm's band width, found
 * between the two passes), so the result is the same for any thread
 * count. */
typedef struct prep_job {
    rvfit_batch *b;
    int a, la, h_in, nd_out;
    const rvfit_library *lib;
    const int *hs;
    float *out;
} prep_job;

typedef struct prep_scratch {
    double *tmp;  /* npix + 1 */
    float *band;  /* npix x (2 h_in + 1), LSF arms only */
} prep_scratch;

static void *prep_scratch_new(void *ctx)
{
    const prep_job *J = ctx;
    const rvfit_arm_batch *A = &J->b->arm[J->a];
    prep_scratch *S = calloc(1, sizeof *S);
    if (!S)
        return NULL;
    S->tmp = malloc((A->npix + 1) * sizeof *S->tmp);
    if (J->out && A->res_kind == RVFIT_RES_LSF)
        S->band = malloc(A->npix * (size_t)(2 * J->h_in + 1) * sizeof *S->band);
    if (!S->tmp || (J->out && A->res_kind == RVFIT_RES_LSF && !S->band)) {
        free(S->tmp), free(S->band), free(S);
        return NULL;
    }
    return S;
}

static void prep_scratch_free(void *scratch)
{
    prep_scratch *S = scratch;
    free(S->tmp), free(S->band), free(S);
}

/* First pass: clean, floor and check spectrum s. */
static int prep_clean_item(void *ctx, void *scratch, size_t s, rvfit_err *err)
{
    const prep_job *J = ctx;
    rvfit_arm_batch *A = &J->b->arm[J->a];
    prep_scratch *S = scratch;
    clean_and_floor(A->flux + s * A->npix, A->ivar + s * A->npix, A->npix,
                    S->tmp);
    if (J->la >= 0)
        check_spec(J->b, J->a, &J->lib->arm[J->la], s, S->tmp);
    return RVFIT_OK;
}

/* Second pass: spectrum s's band matrix, corrected for the templates'
 * smoothing, into its rows of J->out. */
static int prep_band_item(void *ctx, void *scratch, size_t s, rvfit_err *err)
{
    const prep_job *J = ctx;
    rvfit_arm_batch *A = &J->b->arm[J->a];
    prep_scratch *S = scratch;
    size_t n = A->npix, no = rvfit_arm_npix(A, s);
    const float *src = spec_band(A, s, J->hs[s], J->h_in, S->band);
    desmooth_band(spec_wave(A, s), no, n, src, J->h_in, J->lib, J->la,
                  J->out + s * n * (size_t)J->nd_out, S->tmp);
    /* Edge rows miss part of their kernel: do not fit them. */
    for (size_t i = 0; i < (size_t)J->hs[s] + 1 && i < no; i++)
        A->ivar[s * n + i] = A->ivar[s * n + no - 1 - i] = 0;
    return RVFIT_OK;
}

static int prep_arm(rvfit_batch *b, int a, const rvfit_library *lib,
                    int nthreads, rvfit_err *err)
{
    if (check_wave(b, &b->arm[a], err))
        return RVFIT_ERR_FORMAT;
    rvfit_arm_batch *A = &b->arm[a];
    size_t n = A->npix, ns = b->nspec;
    prep_job J = {.b = b, .a = a, .la = rvfit_library_arm(lib, A->name),
                  .lib = lib, .h_in = A->ndiag / 2};
    rvfit_parallel_job pj = {.ctx = &J, .scratch_new = prep_scratch_new,
                             .scratch_free = prep_scratch_free,
                             .item = prep_clean_item};
    int rc = rvfit_parallel_for(&pj, ns, nthreads, err);
    if (rc != RVFIT_OK || A->res_kind == RVFIT_RES_NONE)
        return rc;
    int *hs = malloc((ns ? ns : 1) * sizeof *hs);
    if (!hs)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "prep: out of memory");
    for (size_t s = 0; s < ns; s++) {
        hs[s] = A->ndiag / 2;
        if (A->res_kind == RVFIT_RES_LSF)
            hs[s] = lsf_half(spec_wave(A, s), A->lsf + s * n,
                             rvfit_arm_npix(A, s));
        J.h_in = hs[s] > J.h_in ? hs[s] : J.h_in;
    }
    J.hs = hs;
    J.nd_out = 2 * J.h_in + 3;
    J.out = malloc(ns * n * (size_t)J.nd_out * sizeof *J.out);
    if (!J.out) {
        free(hs);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "prep: out of memory");
    }
    pj.item = prep_band_item;
    rc = rvfit_parallel_for(&pj, ns, nthreads, err);
    free(hs);
    if (rc != RVFIT_OK) {
        free(J.out);
        return rc;
    }
    free(A->res);
    free(A->lsf);
    A->lsf = NULL;
    A->res = J.out;
    A->ndiag = J.nd_out;
    A->res_kind = RVFIT_RES_BAND;
    return RVFIT_OK;
}

int rvfit_prep_batch(rvfit_batch *b, const rvfit_library *lib,
                     rvfit_err *err)
{
    return rvfit_prep_batch_threads(b, lib, 1, err);
}

int rvfit_prep_batch_threads(rvfit_batch *b, const rvfit_library *lib,
                             int nthreads, rvfit_err *err)
{
    for (int a = 0; a < b->narm; a++) {
        int rc = prep_arm(b, a, lib, nthreads, err);
        if (rc != RVFIT_OK) {
            rvfit_err_prefix(err, "arm %s", b->arm[a].name);
            return rc;
        }
    }
    /* A spectrum with no usable pixel left is bad, whatever the reader
     * thought. */
    for (size_t s = 0; s < b->nspec; s++) {
        size_t good = 0;
        for (int a = 0; a < b->narm; a++) {
            const rvfit_arm_batch *A = &b->arm[a];
            for (size_t i = 0; i < A->npix; i++)
                good += A->ivar[s * A->npix + i] > 0;
        }
        if (!good)
            b->flags[s] |= RVFIT_SPEC_BAD;
    }
    return RVFIT_OK;
}
