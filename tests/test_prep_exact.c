/* test_prep_exact.c — rvfit_prep_batch_threads against the definitions in
 * rvfit/prep.h and docs/architecture.md ("No double smoothing"), written
 * out plainly here: medians by a full sort, every element of R (I - C D2)
 * from its formula with bounds checks, the LSF band from erf.  The
 * prepared batch must match bit for bit (a faster preparation is only
 * allowed to reorganise the same arithmetic), at 1 and 3 threads, on
 * full batches, batches with room and one large enough for many rounds
 * of the in-place band pass, made to reach every branch: non-finite and
 * non-positive pixels, ties in ivar, odd and even counts of usable
 * pixels, a spectrum with none, S/N per pixel above RVFIT_SNR_ABSURD,
 * exactly at it and with exactly half of the pixels above it (both
 * outcomes), an arm outside the templates, an arm the library does not
 * have, spectra shorter than the batch (padding), 2- and 3-pixel
 * spectra, shared and per-spectrum grids, band and Gaussian-LSF arms,
 * template smoothing in Angstrom and in km/s. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/library.h"
#include "rvfit/numeric.h"
#include "rvfit/prep.h"
#include "testutil.h"

#define NSPEC 12

/* ---- the definitions ------------------------------------------------- */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_sorted(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_d);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static double width(const double *w, size_t n, size_t j)
{
    if (j == 0)
        return w[1] - w[0];
    if (j == n - 1)
        return w[n - 1] - w[n - 2];
    return 0.5 * (w[j + 1] - w[j - 1]);
}

/* sigma >= 0.3 x median sigma over the usable pixels, all npix pixels */
static void def_floor(float *f, float *iv, size_t npix, double *tmp)
{
    size_t m = 0;
    for (size_t i = 0; i < npix; i++) {
        if (!isfinite(f[i]) || !isfinite(iv[i]) || iv[i] <= 0) {
            f[i] = isfinite(f[i]) ? f[i] : 0.0f;
            iv[i] = 0.0f;
        } else {
            tmp[m++] = 1.0 / sqrt((double)iv[i]);
        }
    }
    if (m == 0)
        return;
    double sf = 0.3 * median_sorted(tmp, m);
    float imax = (float)(1.0 / (sf * sf));
    for (size_t i = 0; i < npix; i++)
        if (iv[i] > imax)
            iv[i] = imax;
}

static void def_check(rvfit_batch *b, int a, const rvfit_lib_arm *L,
                      size_t s, double *tmp)
{
    rvfit_arm_batch *A = &b->arm[a];
    double lo = exp(L->lnl0), hi = exp(L->lnl0 + L->dlnl * (L->npix - 1));
    const double *w = A->wave + (A->wave_per_spec ? s * A->npix : 0);
    float *f = A->flux + s * A->npix, *iv = A->ivar + s * A->npix;
    size_t n = A->npix_own[s], used = 0, inside = 0;
    for (size_t i = 0; i < n; i++)
        if (iv[i] > 0) {
            inside += w[i] >= lo && w[i] <= hi;
            tmp[used++] = fabs((double)f[i]) * sqrt((double)iv[i]);
        }
    if (used && !inside) {
        for (size_t i = 0; i < n; i++)
            iv[i] = 0;
        b->flags[s] |= RVFIT_SPEC_ARM_OUTSIDE(a);
    } else if (used && median_sorted(tmp, used) > RVFIT_SNR_ABSURD) {
        b->flags[s] |= RVFIT_SPEC_BAD_IVAR;
    }
}

/* band of pixel-integrated Gaussians, columns normalised */
static void def_lsf_band(const double *w, size_t n, size_t ld,
                         const float *lsf, int h, float *res)
{
    for (size_t j = 0; j < n; j++) {
        double s = lsf[j] > 0 ? lsf[j] : 1e-3 * width(w, n, j), sum = 0;
        for (int k = 0; k <= 2 * h; k++) {
            long i = (long)j + k - h;
            double v = 0;
            if (i >= 0 && (size_t)i < n) {
                double half = 0.5 * width(w, n, (size_t)i);
                double r2s = 1.41421356237309504880 * s;
                double x0 = (w[i] - half - w[j]) / r2s;
                double x1 = (w[i] + half - w[j]) / r2s;
                v = 0.5 * (erf(x1) - erf(x0));
            }
            res[(size_t)k * ld + j] = (float)v;
            sum += v;
        }
        for (int k = 0; k <= 2 * h && sum > 0; k++)
            res[(size_t)k * ld + j] = (float)(res[(size_t)k * ld + j] / sum);
    }
}

static int def_lsf_half(const double *w, const float *lsf, size_t n)
{
    double smax = 0, dmin = INFINITY;
    for (size_t i = 0; i < n; i++)
        smax = lsf[i] > smax ? lsf[i] : smax;
    for (size_t j = 0; j + 1 < n; j++)
        if (w[j + 1] - w[j] > 0 && w[j + 1] - w[j] < dmin)
            dmin = w[j + 1] - w[j];
    int h = (int)ceil(4.0 * smax / dmin);
    return h < 1 ? 1 : h > 25 ? 25 : h;
}

static double R(const float *in, size_t n, size_t ld, int h, long i, long j)
{
    if (j < 0 || j >= (long)n || labs(i - j) > h)
        return 0.0;
    return (double)in[(size_t)(i - j + h) * ld + (size_t)j];
}

/* R' = R (I - C D2), c_j = sigma_t^2 / (2 dl^2) */
static void def_desmooth(const double *w, size_t n, size_t ld,
                         const float *in, int h, const rvfit_library *lib,
                         int la, float *out)
{
    double *c = malloc(n * sizeof *c);
    for (size_t j = 0; j < n; j++) {
        double dl = width(w, n, j), st = rvfit_library_sigma(lib, la, w[j]);
        c[j] = st * st / (2.0 * dl * dl);
    }
    for (size_t k = 0; k < ld; k++)
        for (int q = 0; q < 2 * h + 3; q++) {
            long i = (long)k + q - (h + 1);
            double v = 0;
            if (k < n && i >= 0 && i < (long)n) {
                v = R(in, n, ld, h, i, (long)k) * (1.0 + 2.0 * c[k]);
                if (k + 1 < n)
                    v -= c[k + 1] * R(in, n, ld, h, i, (long)k + 1);
                if (k > 0)
                    v -= c[k - 1] * R(in, n, ld, h, i, (long)k - 1);
            }
            out[(size_t)q * ld + k] = (float)v;
        }
    free(c);
}

static void def_prep(rvfit_batch *b, const rvfit_library *lib)
{
    double *tmp = malloc(4096 * sizeof *tmp);
    for (int a = 0; a < b->narm; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        size_t N = A->npix;
        int la = rvfit_library_arm(lib, A->name);
        for (size_t s = 0; s < b->nspec; s++) {
            def_floor(A->flux + s * N, A->ivar + s * N, N, tmp);
            if (la >= 0)
                def_check(b, a, &lib->arm[la], s, tmp);
        }
        if (A->res_kind == RVFIT_RES_NONE)
            continue;
        int *hs = malloc(b->nspec * sizeof *hs), h_in = A->ndiag / 2;
        for (size_t s = 0; s < b->nspec; s++) {
            const double *w = A->wave + (A->wave_per_spec ? s * N : 0);
            hs[s] = A->res_kind == RVFIT_RES_LSF
                        ? def_lsf_half(w, A->lsf + s * N, A->npix_own[s])
                        : A->ndiag / 2;
            h_in = hs[s] > h_in ? hs[s] : h_in;
        }
        size_t ndo = 2 * (size_t)h_in + 3;
        float *out = calloc(b->nspec * ndo * N, sizeof *out);
        float *band = calloc((2 * (size_t)h_in + 1) * N, sizeof *band);
        for (size_t s = 0; s < b->nspec; s++) {
            const double *w = A->wave + (A->wave_per_spec ? s * N : 0);
            size_t n = A->npix_own[s];
            const float *src = A->res + s * N * (size_t)A->ndiag;
            if (A->res_kind == RVFIT_RES_LSF) {
                memset(band, 0, (2 * (size_t)h_in + 1) * N * sizeof *band);
                def_lsf_band(w, n, N, A->lsf + s * N, hs[s],
                             band + (size_t)(h_in - hs[s]) * N);
                src = band;
            }
            def_desmooth(w, n, N, src, h_in, lib, la, out + s * ndo * N);
            for (size_t i = 0; i < (size_t)hs[s] + 1 && i < n; i++)
                A->ivar[s * N + i] = A->ivar[s * N + n - 1 - i] = 0;
        }
        free(band);
        free(hs);
        free(A->res), free(A->lsf);
        A->res = out, A->lsf = NULL;
        A->ndiag = (int)ndo, A->res_kind = RVFIT_RES_BAND;
    }
    for (size_t s = 0; s < b->nspec; s++) {
        size_t good = 0;
        for (int a = 0; a < b->narm; a++)
            for (size_t i = 0; i < b->arm[a].npix; i++)
                good += b->arm[a].ivar[s * b->arm[a].npix + i] > 0;
        if (!good)
            b->flags[s] |= RVFIT_SPEC_BAD;
    }
    free(tmp);
}

/* ---- the batches ----------------------------------------------------- */

static float pick(rvfit_rng *r, const float *v, int n)
{
    int k = (int)(rvfit_rng_uniform(r) * n);
    return v[k < n ? k : n - 1];
}

/* Pixel values with every kind of bad value and many ties. */
static void fill_pixels(rvfit_rng *r, float *f, float *iv, size_t n)
{
    static const float ivs[] = {0.25f, 1.0f, 1.0f, 4.0f, 4.0f, 9.0f, 0.0f,
                                -1.0f, NAN, INFINITY, 1e-30f, 1e30f};
    for (size_t i = 0; i < n; i++) {
        double u = rvfit_rng_uniform(r);
        f[i] = u < 0.02 ? NAN : u < 0.03 ? -INFINITY
                                         : (float)(5.0 + rvfit_rng_normal(r));
        iv[i] = rvfit_rng_uniform(r) < 0.7 ? pick(r, ivs, 6)
                                           : pick(r, ivs, 12);
    }
}

/* Spectrum s of arm A by its role (NSPEC spectra). */
static void fill_spec(rvfit_rng *r, rvfit_arm_batch *A, size_t s_batch)
{
    size_t s = s_batch % NSPEC, N = A->npix, n = A->npix_own[s_batch];
    float *f = A->flux + s_batch * N, *iv = A->ivar + s_batch * N;
    fill_pixels(r, f, iv, n);
    for (size_t i = 0; i < n; i++)
        switch (s) {
        case 0: iv[i] = 0.0f; break;                        /* none usable */
        case 1: f[i] = 1e6f, iv[i] = 1.0f; break;           /* absurd S/N */
        case 2: f[i] = 1e5f, iv[i] = 1.0f; break;           /* S/N = T   */
        case 3: /* half at 1.5e5, half at 1: mean 75000.5, not above */
        case 4: /* half at 2.5e5, half at 1: above */
            f[i] = i % 2 ? (s == 3 ? 1.5e5f : 2.5e5f) : 1.0f, iv[i] = 1.0f;
            break;
        default: break;
        }
    if ((s == 3 || s == 4) && n % 2) /* an even count of usable pixels */
        iv[n - 1] = 0.0f;
    for (size_t i = n; i < N; i++) /* padding as run_batch.c pads */
        f[i] = iv[i] = 0.0f;
}

static void fill_wave(double *w, size_t n, double l0, double step)
{
    for (size_t i = 0; i < n; i++)
        w[i] = l0 + step * (double)i + 0.01 * step * sin((double)i);
}

/* kind 0: band arms B (in the library), R (its grid outside the
 * library's R) and Q (not in the library), shared grids; kind 1: LSF
 * arms B and R, per-spectrum grids.  nspec spectra (roles repeat every
 * NSPEC) in a batch of cap. */
static void make_batch(rvfit_batch *b, int kind, size_t nspec, size_t cap,
                       uint64_t seed)
{
    static const size_t own[NSPEC] = {40, 40, 41, 40, 41, 40, 39, 2, 3, 17,
                                      40, 33};
    rvfit_arm_info I[3] = {{"B", 40, RVFIT_RES_BAND, 7, 0},
                           {"R", 30, RVFIT_RES_BAND, 11, 0},
                           {"Q", 20, RVFIT_RES_BAND, 3, 0}};
    if (kind == 1) {
        I[0] = (rvfit_arm_info){"B", 41, RVFIT_RES_LSF, 0, 1};
        I[1] = (rvfit_arm_info){"R", 37, RVFIT_RES_LSF, 0, 1};
    }
    int narm = kind == 1 ? 2 : 3;
    rvfit_err e;
    CHECK(rvfit_batch_alloc(b, narm, I, cap, &e) == RVFIT_OK);
    rvfit_rng r;
    rvfit_rng_seed(&r, seed, (uint64_t)kind);
    b->nspec = nspec;
    for (int a = 0; a < narm; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        size_t N = A->npix;
        double l0 = a == 0 ? 4500.0 : kind == 0 ? 9000.0 : 6000.0;
        for (size_t s = 0; s < nspec; s++) {
            A->npix_own[s] = own[s % NSPEC] < N ? own[s % NSPEC] : N;
            if (A->wave_per_spec || s == 0)
                fill_wave(A->wave + (A->wave_per_spec ? s * N : 0),
                          A->wave_per_spec ? A->npix_own[s] : N,
                          l0 + (double)s, 0.8 + 0.1 * (double)a);
            if (A->wave_per_spec)
                for (size_t i = A->npix_own[s]; i < N; i++)
                    A->wave[s * N + i] = A->wave[s * N + i - 1] + 0.8;
            fill_spec(&r, A, s);
            for (size_t i = 0; A->res && i < N * (size_t)A->ndiag; i++) {
                double u = rvfit_rng_uniform(&r);
                A->res[s * N * (size_t)A->ndiag + i] =
                    u < 0.1 ? 0.0f : (float)(1.2 * u - 0.15);
            }
            for (int k = 0; A->res && k < A->ndiag; k++) /* padding */
                for (size_t i = A->npix_own[s]; i < N; i++)
                    A->res[(s * (size_t)A->ndiag + (size_t)k) * N + i] = 0;
            for (size_t i = 0; A->lsf && i < N; i++)
                A->lsf[s * N + i] =
                    i < A->npix_own[s]
                        ? (float)(0.3 + 0.9 * rvfit_rng_uniform(&r)) *
                              (i % 13 == 5 ? 0.0f : 1.0f)
                        : A->lsf[s * N + A->npix_own[s] - 1];
        }
    }
}

static void make_library(rvfit_library *lib)
{
    memset(lib, 0, sizeof *lib);
    lib->narm = 2;
    lib->sigma0 = 0.4;
    snprintf(lib->arm[0].name, sizeof lib->arm[0].name, "B");
    lib->arm[0].lnl0 = log(4400.0);
    lib->arm[0].dlnl = 1e-5;
    lib->arm[0].npix = 5000; /* to ~4622 A: B's grids end inside */
    snprintf(lib->arm[1].name, sizeof lib->arm[1].name, "R");
    lib->arm[1].lnl0 = log(5900.0);
    lib->arm[1].dlnl = 1e-5;
    lib->arm[1].npix = 20000; /* ~5900-7200 A: kind 0's R lies beyond */
    lib->arm[1].sigma_kms = 45.0;
}

static int same_batch(const rvfit_batch *x, const rvfit_batch *y)
{
    if (x->narm != y->narm || x->nspec != y->nspec ||
        memcmp(x->flags, y->flags, x->nspec * sizeof *x->flags))
        return 0;
    for (int a = 0; a < x->narm; a++) {
        const rvfit_arm_batch *A = &x->arm[a], *B = &y->arm[a];
        size_t n = x->nspec * A->npix;
        if (A->ndiag != B->ndiag || A->res_kind != B->res_kind ||
            memcmp(A->flux, B->flux, n * sizeof(float)) ||
            memcmp(A->ivar, B->ivar, n * sizeof(float)) ||
            memcmp(A->res, B->res, n * (size_t)A->ndiag * sizeof(float)))
            return 0;
    }
    return 1;
}

int main(void)
{
    rvfit_library lib;
    make_library(&lib);
    /* nspec, cap: a full batch (band matrices grow where they are), one
     * with room (they need not), and one of many rounds in place */
    static const size_t shape[3][2] = {
        {NSPEC, NSPEC}, {NSPEC, 40}, {150, 160}};
    for (int kind = 0; kind < 2; kind++)
        for (int sh = 0; sh < 3; sh++)
            for (uint64_t seed = 1; seed <= (sh == 2 ? 3u : 20u); seed++) {
                size_t ns = shape[sh][0], cap = shape[sh][1];
                rvfit_batch def, got1, got3;
                rvfit_err e;
                rvfit_err_clear(&e);
                make_batch(&def, kind, ns, cap, seed);
                make_batch(&got1, kind, ns, cap, seed);
                make_batch(&got3, kind, ns, cap, seed);
                def_prep(&def, &lib);
                CHECK(rvfit_prep_batch_threads(&got1, &lib, 1, &e) ==
                      RVFIT_OK);
                CHECK(rvfit_prep_batch_threads(&got3, &lib, 3, &e) ==
                      RVFIT_OK);
                CHECK_MSG(same_batch(&def, &got1),
                          "kind %d %zu of %zu seed %llu, 1 thread", kind, ns,
                          cap, (unsigned long long)seed);
                CHECK_MSG(same_batch(&def, &got3),
                          "kind %d %zu of %zu seed %llu, 3 threads", kind, ns,
                          cap, (unsigned long long)seed);
                if (seed == 1 && sh == 0) { /* the roles reach their branch */
                    CHECK(def.flags[0] & RVFIT_SPEC_BAD);
                    CHECK(def.flags[1] & RVFIT_SPEC_BAD_IVAR);
                    CHECK(!(def.flags[2] & RVFIT_SPEC_BAD_IVAR));
                    CHECK(!(def.flags[3] & RVFIT_SPEC_BAD_IVAR));
                    CHECK(def.flags[4] & RVFIT_SPEC_BAD_IVAR);
                    CHECK(!(def.flags[5] & RVFIT_SPEC_BAD_IVAR));
                    CHECK((def.flags[6] & RVFIT_SPEC_ARM_OUTSIDE(1)) ==
                          (kind == 0 ? RVFIT_SPEC_ARM_OUTSIDE(1) : 0u));
                }
                rvfit_batch_free(&def);
                rvfit_batch_free(&got1);
                rvfit_batch_free(&got3);
            }
    return tu_finish("test_prep_exact");
}
