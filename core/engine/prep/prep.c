/* prep.c — instrument-independent preparation of a batch before it goes to
 * a backend: error floor, unusable edge pixels, LSF -> band matrix, and the
 * correction of band matrices for the templates' own smoothing. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/numeric.h"
#include "rvfit/pool.h"
#include "rvfit/prep.h"

/* The band loop is also compiled for x86-64-v3 (AVX2) and picked at load
 * time; without FP contraction (no FMA) each element is the same
 * operations in either clone, so the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define PREP_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PREP_HOT
#endif

#define SIGMA_FLOOR 0.3   /* sigma >= 0.3 x median sigma (rvspecfit) */
#define LSF_NSIGMA 4.0    /* band half width for LSF arms, in sigma   */
#define LSF_MAX_HALF 25
#define SQRT2 1.41421356237309504880

/* The k-th smallest (k from 0) of the n bit patterns key[] of positive
 * floats, which order as the floats do: a radix selection, 11, 10 and 10
 * bits from the top, each round keeping the keys of the bucket that
 * holds rank k (key[] is reordered).  Counting instead of comparing
 * values: none of a quickselect's mispredicted branches, and 4-byte keys
 * instead of the doubles 1/sqrt(ivar). */
static uint32_t select_key(uint32_t *key, size_t n, size_t k,
                           uint32_t *hist /* [2048] */)
{
    static const int shift[3] = {20, 10, 0}, nbin[3] = {2048, 1024, 1024};
    for (int r = 0; r < 3 && n > 1; r++) {
        uint32_t sh = (uint32_t)shift[r], mask = (uint32_t)nbin[r] - 1, b = 0;
        memset(hist, 0, (size_t)nbin[r] * sizeof *hist);
        for (size_t i = 0; i < n; i++)
            hist[(key[i] >> sh) & mask]++;
        while (k >= hist[b])
            k -= hist[b++];
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            key[m] = key[i];
            m += ((key[i] >> sh) & mask) == b;
        }
        n = m;
    }
    return key[0]; /* one left, or all equal after the last round */
}

static float key_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Non-finite flux: no pixel (flux and ivar 0); non-finite or
 * non-positive ivar: no ivar.  On the bit patterns (finite: exponent not
 * all ones; positive and finite: 0 < bits < 0x7f800000 as a signed
 * integer), as isfinite and > 0 decide, so that the loop vectorises. */
static void clean_pixels(float *restrict flux, float *restrict ivar,
                         size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t f, v;
        memcpy(&f, &flux[i], sizeof f);
        memcpy(&v, &ivar[i], sizeof v);
        uint32_t fok = (f & 0x7fffffffu) < 0x7f800000u;
        uint32_t vok = fok & ((int32_t)v > 0) & ((int32_t)v < 0x7f800000);
        f &= 0u - fok;
        v &= 0u - vok;
        memcpy(&flux[i], &f, sizeof f);
        memcpy(&ivar[i], &v, sizeof v);
    }
}

/* Non-finite values become unusable pixels; sigma is floored at
 * SIGMA_FLOOR x the median of 1/sqrt(ivar) over the usable pixels.
 * That median is taken on ivar itself (x -> 1/sqrt(x) reverses the
 * order, so the middle values are the same pixels'), by the same
 * formulas as rvfit_median's.  Returns the number of usable pixels and
 * in *imax the ivar of the floor; key[n] and hist[2048] are scratch. */
static size_t clean_floor_ivar(float *flux, float *ivar, size_t n,
                               uint32_t *key, uint32_t *hist, float *imax)
{
    clean_pixels(flux, ivar, n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) { /* usable ivar: positive, so not 0 */
        memcpy(&key[m], &ivar[i], sizeof *key);
        m += key[m] != 0;
    }
    if (m == 0)
        return 0;
    /* sigma ranks h (and h - 1) are ivar ranks m-1-h (and m-h) */
    size_t h = m / 2;
    float iv_h = key_float(select_key(key, m, m - 1 - h, hist));
    double med = 1.0 / sqrt((double)iv_h);
    if (m % 2 == 0) {
        /* ivar rank m-h = h: the smallest above rank h-1, or a tie (on
         * the bit patterns, which order as the ivar >= 0 do) */
        uint32_t kh, k1 = UINT32_MAX, above = 0; /* n < 2^32 pixels */
        memcpy(&kh, &iv_h, sizeof kh);
        for (size_t i = 0; i < n; i++) {
            uint32_t k;
            memcpy(&k, &ivar[i], sizeof k);
            above += k > kh;
            k = k > kh ? k : UINT32_MAX;
            k1 = k < k1 ? k : k1;
        }
        float iv_h1 = above < h ? iv_h : key_float(k1);
        double lo = 1.0 / sqrt((double)iv_h1);
        med = 0.5 * (lo + med);
    }
    double sfloor = SIGMA_FLOOR * med;
    *imax = (float)(1.0 / (sfloor * sfloor));
    return m;
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

/* R' = R (I - C D2): undo, to second order, the templates' Gaussian
 * smoothing (variance sigma_t^2, their pixel box included).  The band
 * matrix holds the whole LSF and the data pixel's box and acts on the
 * model sampled at the data pixels (docs/architecture.md, "No double
 * smoothing"), so none of the templates' smoothing belongs in the model.
 * Keeping a data pixel's box of it (dl^2/12), as if R acted on pixel
 * means, left the model broader than data made with R and biased TEFF,
 * LOGG and FEH of stars on grid nodes by +0.2 to +0.5 of their
 * Cramer-Rao bounds (docs/benchmarks.md, "The data pixel's box").
 * c_j = sigma_t^2 / (2 dl_j^2) in pixel units, for the n own pixels of
 * grid w. */
static void desmooth_coef(const double *w, size_t n, const rvfit_library *lib,
                          int la, double *c)
{
    for (size_t j = 0; j < n; j++) {
        double dl = pixel_width(w, n, j);
        double sigma_t = rvfit_library_sigma(lib, la, w[j]);
        c[j] = sigma_t * sigma_t / (2.0 * dl * dl);
    }
}

/* R(i, j) from the input band (half width h, row stride ld), 0 outside
 * the band and outside the n own pixels. */
static double band_at(const float *in, size_t n, size_t ld, int h, long i,
                      long j)
{
    if (j < 0 || (size_t)j >= n || labs(i - j) > h)
        return 0.0;
    return (double)in[(size_t)(i - j + h) * ld + (size_t)j];
}

/* Element (q, k) of R' (i = k + q - h - 1) by its definition, 0 outside
 * the n x n matrix. */
static float desmooth_at(const float *in, size_t n, size_t ld, int h,
                         const double *c, size_t k, int q)
{
    long i = (long)k + q - (h + 1), j = (long)k;
    if (k >= n || i < 0 || (size_t)i >= n)
        return 0.0f;
    double v = band_at(in, n, ld, h, i, j) * (1.0 + 2.0 * c[k]);
    if (k + 1 < n)
        v -= c[k + 1] * band_at(in, n, ld, h, i, j + 1);
    if (k > 0)
        v -= c[k - 1] * band_at(in, n, ld, h, i, j - 1);
    return (float)v;
}

/* R' of one spectrum: input half width h, output h+1 (both row stride
 * ld) over its n own pixels; columns beyond n are padding and stay 0.
 * Output diagonal q at column k takes input diagonals q-1 (column k),
 * q-2 (column k+1) and q (column k-1).  Inside the matrix and away from
 * its first and last column every term is one load, a diagonal outside
 * the input band reading `zero` (ld zeros) where desmooth_at has 0.0: the
 * same operations in the same order, so the same bits; the rest goes
 * through desmooth_at. */
PREP_HOT static void desmooth_band(const float *restrict in, size_t n,
                                   size_t ld, int h, const double *restrict c,
                                   const float *restrict zero,
                                   float *restrict out)
{
    int ho = h + 1, ndo = 2 * ho + 1;
    for (int q = 0; q < ndo; q++) {
        /* interior columns [lo, end): 1 <= k <= n - 2, 0 <= k + q - ho < n */
        long lo = ho - q > 1 ? ho - q : 1;
        long end = q > ho ? (long)n - (q - ho) : (long)n - 1;
        if (end <= lo)
            lo = end = 0; /* none: all by the definition */
        const float *restrict ra =
            q >= 1 && q <= 2 * h + 1 ? in + (size_t)(q - 1) * ld : zero;
        const float *restrict rb = q >= 2 ? in + (size_t)(q - 2) * ld : zero;
        const float *restrict rd = q <= 2 * h ? in + (size_t)q * ld : zero;
        float *restrict o = out + (size_t)q * ld;
        for (long k = 0; k < lo; k++)
            o[k] = desmooth_at(in, n, ld, h, c, (size_t)k, q);
        for (long k = lo; k < end; k++)
            o[k] = (float)((double)ra[k] * (1.0 + 2.0 * c[k]) -
                           c[k + 1] * (double)rb[k + 1] -
                           c[k - 1] * (double)rd[k - 1]);
        for (long k = end; k < (long)ld; k++)
            o[k] = desmooth_at(in, n, ld, h, c, (size_t)k, q);
    }
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

/* Whether the median of the used values x_i = |f_i| sqrt(iv_i) (as
 * rvfit_median takes it) exceeds RVFIT_SNR_ABSURD, from nbig, how many of
 * them do: the odd median exceeds it when the upper half does; the mean
 * of two middle values above it exceeds it (2 T + ulp(2 T) is a double),
 * and of two at or below it does not.  Only when exactly the upper half
 * exceeds it are the values needed. */
static int snr_absurd(const float *f, const float *iv, size_t n, size_t used,
                      size_t nbig, double *tmp)
{
    size_t h = used / 2;
    if (used % 2 || nbig != used - h)
        return nbig >= used - h;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (iv[i] > 0)
            tmp[m++] = fabs((double)f[i]) * sqrt((double)iv[i]);
    return rvfit_median(tmp, m) > RVFIT_SNR_ABSURD;
}

/* Spectrum s's arm a after cleaning: ivar floored at imax, then (L, the
 * library's arm, given) no usable pixel inside the templates'
 * wavelengths (the model there would be a template's edge value
 * stretched out) -> dropped and flagged; a median S/N per pixel beyond
 * any detector -> flagged (its velocity error would claim 1e-9 km/s).
 * One pass over the pixels: x_i is worked out only where x_i^2 from
 * f^2 iv (one rounding) may exceed T^2 / 4, i.e. x_i may exceed T. */
static void floor_and_check(rvfit_batch *b, int a, const rvfit_lib_arm *L,
                            size_t s, float imax, double *tmp)
{
    rvfit_arm_batch *A = &b->arm[a];
    const double *w = spec_wave(A, s);
    float *f = A->flux + s * A->npix, *iv = A->ivar + s * A->npix;
    size_t n = rvfit_arm_npix(A, s), used = 0, inside = 0, nbig = 0;
    for (size_t i = L ? n : 0; i < A->npix; i++) /* padding, or all */
        iv[i] = iv[i] > imax ? imax : iv[i];
    if (!L)
        return;
    const double T = RVFIT_SNR_ABSURD, big2 = 0.25 * T * T;
    double lo = exp(L->lnl0), hi = exp(L->lnl0 + L->dlnl * (L->npix - 1));
    size_t cand = 0; /* pixels whose x_i may exceed T: almost never */
    for (size_t i = 0; i < n; i++) { /* branch-free: it vectorises */
        float v = iv[i] > imax ? imax : iv[i];
        iv[i] = v;
        size_t u = v > 0;
        double fi = f[i];
        used += u;
        inside += u & (w[i] >= lo) & (w[i] <= hi);
        cand += u & (fi * fi * (double)v > big2);
    }
    for (size_t i = 0; cand && i < n; i++)
        if (iv[i] > 0 && (double)f[i] * f[i] * (double)iv[i] > big2)
            nbig += fabs((double)f[i]) * sqrt((double)iv[i]) > T;
    if (used && !inside) {
        for (size_t i = 0; i < n; i++)
            iv[i] = 0;
        b->flags[s] |= RVFIT_SPEC_ARM_OUTSIDE(a);
    } else if (used && snr_absurd(f, iv, n, used, nbig, tmp)) {
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
 * count.  A band arm's matrices are rewritten in place: the array grows
 * from nd_in to nd_out diagonals per spectrum (realloc), and spectrum s
 * moves from s nd_in to s nd_out rows up, over the input of spectra
 * above it, in rounds (band_rounds) that never write where another
 * spectrum of the round, or one left for later, still reads. */
typedef struct prep_job {
    rvfit_batch *b;
    int a, la, h_in, nd_out;
    const rvfit_library *lib;
    const int *hs;
    float *out;      /* the band matrices made (in place: the input's array) */
    int in_place;    /* a band arm: input at out + s npix nd_in            */
} prep_job;

#define PREP_MAX_THREADS 64

typedef struct prep_scratch {
    size_t npix, nband, ncopy; /* capacities                             */
    double *tmp;  /* npix + 1 */
    uint32_t *key; /* npix + 1, and hist[2048]: clean_floor_ivar */
    uint32_t hist[2048];
    float *band;  /* nband: an LSF spectrum's band, (2 h_in + 1) npix */
    float *copy;  /* ncopy: a band spectrum's input, in place           */
    double *c;    /* npix: desmooth_coef of grid c_wave, c_n pixels */
    const double *c_wave;
    size_t c_n;
    float *zero;  /* npix zeros */
} prep_scratch;

/* The threads of one preparation: a pool made once per batch, and each
 * thread's scratch, grown as the arms need. */
typedef struct prep_par {
    rvfit_pool *pool;
    prep_scratch scr[PREP_MAX_THREADS];
    atomic_int nomem;
} prep_par;

/* p of at least n elements of esz bytes (the new ones 0 when zero). */
static int grow(void **p, size_t *cap, size_t n, size_t esz, int zero)
{
    if (n <= *cap)
        return 1;
    void *q = realloc(*p, n * esz);
    if (!q)
        return 0;
    if (zero)
        memset((char *)q + *cap * esz, 0, (n - *cap) * esz);
    *p = q;
    *cap = n;
    return 1;
}

/* Scratch for job J; 0 when out of memory. */
static int scratch_fit(prep_scratch *S, const prep_job *J)
{
    const rvfit_arm_batch *A = &J->b->arm[J->a];
    size_t n = A->npix;
    if (n > S->npix) {
        size_t c1 = S->npix ? S->npix + 1 : 0, c2 = c1, c3 = S->npix,
               c4 = S->npix;
        S->c_wave = NULL; /* c moves */
        if (!grow((void **)&S->tmp, &c1, n + 1, sizeof *S->tmp, 0) ||
            !grow((void **)&S->key, &c2, n + 1, sizeof *S->key, 0) ||
            !grow((void **)&S->c, &c3, n, sizeof *S->c, 0) ||
            !grow((void **)&S->zero, &c4, n, sizeof *S->zero, 1))
            return 0;
        S->npix = n;
    }
    if (J->out && A->res_kind == RVFIT_RES_LSF &&
        !grow((void **)&S->band, &S->nband, n * (size_t)(2 * J->h_in + 1),
              sizeof *S->band, 0))
        return 0;
    if (J->in_place && !grow((void **)&S->copy, &S->ncopy,
                             n * (size_t)A->ndiag, sizeof *S->copy, 0))
        return 0;
    return 1;
}

static void scratch_free(prep_scratch *S)
{
    free(S->tmp), free(S->key), free(S->band), free(S->copy), free(S->c);
    free(S->zero);
}

/* First pass: clean, floor and check spectrum s. */
static void prep_clean_item(const prep_job *J, prep_scratch *S, size_t s)
{
    rvfit_arm_batch *A = &J->b->arm[J->a];
    float imax = 0.0f;
    if (clean_floor_ivar(A->flux + s * A->npix, A->ivar + s * A->npix,
                         A->npix, S->key, S->hist, &imax))
        floor_and_check(J->b, J->a, J->la >= 0 ? &J->lib->arm[J->la] : NULL,
                        s, imax, S->tmp);
}

/* Second pass: spectrum s's band matrix, corrected for the templates'
 * smoothing, into its rows of J->out. */
static void prep_band_item(const prep_job *J, prep_scratch *S, size_t s)
{
    rvfit_arm_batch *A = &J->b->arm[J->a];
    size_t n = A->npix, no = rvfit_arm_npix(A, s), nd_in = (size_t)A->ndiag;
    float *out = J->out + s * n * (size_t)J->nd_out;
    const double *w = spec_wave(A, s);
    const float *src;
    if (J->in_place) {
        src = J->out + s * n * nd_in;
        if (src + n * nd_in > out) { /* its own rows overlap: a copy */
            memcpy(S->copy, src, n * nd_in * sizeof *src);
            src = S->copy;
        }
    } else {
        src = spec_band(A, s, J->hs[s], J->h_in, S->band);
    }
    if (w != S->c_wave || no != S->c_n) { /* a shared grid: once */
        desmooth_coef(w, no, J->lib, J->la, S->c);
        S->c_wave = w;
        S->c_n = no;
    }
    desmooth_band(src, no, n, J->h_in, S->c, S->zero, out);
    /* Edge rows miss part of their kernel: do not fit them. */
    for (size_t i = 0; i < (size_t)J->hs[s] + 1 && i < no; i++)
        A->ivar[s * n + i] = A->ivar[s * n + no - 1 - i] = 0;
}

typedef struct prep_for_ctx {
    prep_par *P;
    const prep_job *J;
    size_t s0;
    void (*item)(const prep_job *J, prep_scratch *S, size_t s);
} prep_for_ctx;

static void prep_for_item(void *ctx, int tid, size_t i)
{
    prep_for_ctx *F = ctx;
    prep_scratch *S = &F->P->scr[tid];
    if (atomic_load(&F->P->nomem))
        return;
    if (!scratch_fit(S, F->J)) {
        atomic_store(&F->P->nomem, 1);
        return;
    }
    F->item(F->J, S, F->s0 + i);
}

/* item for spectra [s0, s1) on the pool. */
static int prep_for(prep_par *P, const prep_job *J, size_t s0, size_t s1,
                    void (*item)(const prep_job *, prep_scratch *, size_t),
                    rvfit_err *err)
{
    prep_for_ctx F = {P, J, s0, item};
    rvfit_pool_run(P->pool, s1 - s0, prep_for_item, &F);
    return atomic_load(&P->nomem)
               ? rvfit_err_set(err, RVFIT_ERR_NOMEM, "prep: out of memory")
               : RVFIT_OK;
}

/* Whether spectrum s may be rewritten in place in the same round as
 * spectra [s+1, top): the input rows its output covers, other than its
 * own, belong to spectra from top up (done) or to none. */
static int band_round_ok(size_t s, size_t top, size_t ns, size_t nd_in,
                         size_t nd_out)
{
    size_t first = s * nd_out / nd_in; /* lowest s' whose rows end above */
    first = first > s + 1 ? first : s + 1;
    return first >= ns || first * nd_in >= (s + 1) * nd_out || first >= top;
}

/* The in-place band pass: rounds from the top of the batch down. */
static int band_rounds(prep_par *P, const prep_job *J, size_t ns,
                       rvfit_err *err)
{
    size_t nd_in = (size_t)J->b->arm[J->a].ndiag, nd_out = (size_t)J->nd_out;
    for (size_t top = ns; top > 0;) {
        size_t lo = top - 1;
        while (lo > 0 && band_round_ok(lo - 1, top, ns, nd_in, nd_out))
            lo--;
        int rc = prep_for(P, J, lo, top, prep_band_item, err);
        if (rc)
            return rc;
        top = lo;
    }
    return RVFIT_OK;
}

static void *mem_get(const rvfit_prep_mem *mem, size_t bytes)
{
    return mem && mem->get ? mem->get(mem->ctx, bytes) : malloc(bytes);
}

static void mem_put(const rvfit_prep_mem *mem, void *p, size_t bytes)
{
    if (mem && mem->put && p)
        mem->put(mem->ctx, p, bytes);
    else
        free(p);
}

/* The band matrices of an arm: in place for a band arm, into a new array
 * from mem for an LSF arm (whose lsf goes back to mem). */
static int prep_bands(prep_par *P, prep_job *J, const rvfit_prep_mem *mem,
                      rvfit_err *err)
{
    rvfit_batch *b = J->b;
    rvfit_arm_batch *A = &b->arm[J->a];
    size_t n = A->npix, ns = b->nspec;
    size_t need = (ns ? ns : 1) * n * (size_t)J->nd_out;
    int rc;
    if (A->res_kind == RVFIT_RES_BAND) {
        /* arrays of b->cap spectra, as rvfit_batch_alloc makes them */
        if (need > b->cap * n * (size_t)A->ndiag) {
            float *r = realloc(A->res, need * sizeof *r);
            if (!r)
                return rvfit_err_set(err, RVFIT_ERR_NOMEM, "prep: out of "
                                     "memory");
            A->res = r;
        }
        J->out = A->res;
        J->in_place = 1;
        rc = band_rounds(P, J, ns, err);
    } else {
        J->out = mem_get(mem, need * sizeof *J->out);
        if (!J->out)
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "prep: out of memory");
        rc = prep_for(P, J, 0, ns, prep_band_item, err);
        if (rc) {
            mem_put(mem, J->out, need * sizeof *J->out);
            return rc;
        }
        mem_put(mem, A->lsf, b->cap * n * sizeof *A->lsf);
        A->lsf = NULL;
        A->res = J->out;
    }
    if (rc == RVFIT_OK) {
        A->ndiag = J->nd_out;
        A->res_kind = RVFIT_RES_BAND;
    }
    return rc;
}

static int prep_arm(prep_par *P, rvfit_batch *b, int a,
                    const rvfit_library *lib, const rvfit_prep_mem *mem,
                    rvfit_err *err)
{
    if (check_wave(b, &b->arm[a], err))
        return RVFIT_ERR_FORMAT;
    rvfit_arm_batch *A = &b->arm[a];
    size_t n = A->npix, ns = b->nspec;
    prep_job J = {.b = b, .a = a, .la = rvfit_library_arm(lib, A->name),
                  .lib = lib, .h_in = A->ndiag / 2};
    int rc = prep_for(P, &J, 0, ns, prep_clean_item, err);
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
    rc = prep_bands(P, &J, mem, err);
    free(hs);
    return rc;
}

int rvfit_prep_batch(rvfit_batch *b, const rvfit_library *lib,
                     rvfit_err *err)
{
    return rvfit_prep_batch_threads(b, lib, 1, err);
}

int rvfit_prep_batch_threads(rvfit_batch *b, const rvfit_library *lib,
                             int nthreads, rvfit_err *err)
{
    return rvfit_prep_batch_mem(b, lib, nthreads, NULL, err);
}

int rvfit_prep_batch_mem(rvfit_batch *b, const rvfit_library *lib,
                         int nthreads, const rvfit_prep_mem *mem,
                         rvfit_err *err)
{
    prep_par *P = calloc(1, sizeof *P);
    int nt = nthreads < 1 ? 1 : nthreads > PREP_MAX_THREADS ? PREP_MAX_THREADS
                                                            : nthreads;
    if (P && rvfit_pool_create(nt, &P->pool, err) != RVFIT_OK) {
        free(P);
        P = NULL;
    }
    if (!P)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "prep: out of memory");
    atomic_init(&P->nomem, 0);
    int rc = RVFIT_OK;
    for (int a = 0; a < b->narm && !rc; a++)
        if ((rc = prep_arm(P, b, a, lib, mem, err)) != RVFIT_OK)
            rvfit_err_prefix(err, "arm %s", b->arm[a].name);
    rvfit_pool_destroy(P->pool);
    for (int t = 0; t < PREP_MAX_THREADS; t++)
        scratch_free(&P->scr[t]);
    free(P);
    if (rc)
        return rc;
    /* A spectrum with no usable pixel left is bad, whatever the reader
     * thought. */
    for (size_t s = 0; s < b->nspec; s++) {
        int good = 0;
        for (int a = 0; a < b->narm && !good; a++) {
            const rvfit_arm_batch *A = &b->arm[a];
            for (size_t i = 0; i < A->npix && !good; i++)
                good = A->ivar[s * A->npix + i] > 0;
        }
        if (!good)
            b->flags[s] |= RVFIT_SPEC_BAD;
    }
    return RVFIT_OK;
}
