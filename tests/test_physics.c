/* test_physics.c — known answers for rvfit/physics.h: the continuum solve
 * against an independent Householder QR in long double, basis values,
 * Keys cubic weights, the rotation kernel (against brute-force quadrature
 * and the analytic variance) and the Doppler shift. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rvfit/physics.h"
#include "testutil.h"

static uint64_t rng_state = 12345;
static double urand(void) /* xorshift64*, uniform in [0,1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) * 0x1p-53;
}

/* Least squares min |D - S a| by Householder QR in long double; returns
 * chisq, and logdet = ln det(S^T S) = 2 sum ln |R_kk|. */
static void qr_lsq(int n, int p, long double *S, long double *D,
                   long double *a, long double *chisq, long double *logdet)
{
    long double ld = 0;
    for (int k = 0; k < p; k++) {
        long double nrm = 0;
        for (int i = k; i < n; i++)
            nrm += S[i * p + k] * S[i * p + k];
        nrm = sqrtl(nrm);
        long double alpha = S[k * p + k] > 0 ? -nrm : nrm;
        /* v = x - alpha e1, stored in place; H = I - 2 v v^T / v^T v */
        S[k * p + k] -= alpha;
        long double vtv = 0;
        for (int i = k; i < n; i++)
            vtv += S[i * p + k] * S[i * p + k];
        for (int j = k + 1; j < p; j++) {
            long double s = 0;
            for (int i = k; i < n; i++)
                s += S[i * p + k] * S[i * p + j];
            s = 2 * s / vtv;
            for (int i = k; i < n; i++)
                S[i * p + j] -= s * S[i * p + k];
        }
        long double s = 0;
        for (int i = k; i < n; i++)
            s += S[i * p + k] * D[i];
        s = 2 * s / vtv;
        for (int i = k; i < n; i++)
            D[i] -= s * S[i * p + k];
        S[k * p + k] = alpha; /* R_kk (the rest of column k is unused) */
        ld += 2 * logl(fabsl(alpha));
    }
    for (int k = p - 1; k >= 0; k--) {
        long double s = D[k];
        for (int j = k + 1; j < p; j++)
            s -= S[k * p + j] * a[j];
        a[k] = s / S[k * p + k];
    }
    long double c = 0;
    for (int i = p; i < n; i++)
        c += D[i] * D[i];
    *chisq = c;
    *logdet = ld;
}

static void test_marg(int kind, int npoly, int n, double snr)
{
    double *m = malloc(sizeof(double) * n);
    float *f = malloc(sizeof(float) * n), *w = malloc(sizeof(float) * n);
    double *basis = malloc(sizeof(double) * n * npoly);
    long double *S = malloc(sizeof(long double) * n * npoly);
    long double *D = malloc(sizeof(long double) * n);
    int nuse = 0;
    for (int i = 0; i < n; i++) {
        double x = -1 + 2.0 * i / (n - 1);
        rvfit_basis(kind, npoly, x, basis + i * npoly);
        m[i] = 1 - 0.5 * exp(-0.5 * pow((x - 0.1) / 0.01, 2)) +
               0.1 * sin(40 * x);
        double sig = (0.5 + urand()) / snr;
        f[i] = (float)((2 + x) * m[i] + sig * (urand() - 0.5) * 3.4);
        w[i] = urand() < 0.05 ? 0.0f : (float)(1 / (sig * sig));
        if (w[i] > 0) {
            long double sw = sqrtl((long double)w[i]);
            for (int k = 0; k < npoly; k++)
                S[nuse * npoly + k] = sw * m[i] * basis[i * npoly + k];
            D[nuse++] = sw * f[i];
        }
    }
    long double a[RVFIT_MAX_POLY], chi_ref, ld_ref;
    qr_lsq(nuse, npoly, S, D, a, &chi_ref, &ld_ref);
    double chi, ld, coef[RVFIT_MAX_POLY];
    int rc = rvfit_marg_chisq(n, npoly, m, f, w, basis, &chi, &ld, coef);
    CHECK(rc == RVFIT_OK);
    CHECK_MSG(fabs(chi - (double)chi_ref) <= 1e-9 * (double)chi_ref,
              "kind %d npoly %d: chisq %.15g vs %.15Lg", kind, npoly, chi,
              chi_ref);
    CHECK_MSG(fabs(ld - (double)ld_ref) <= 1e-9 * fabsl(ld_ref),
              "logdet %.15g vs %.15Lg", ld, ld_ref);
    long double anorm = 0;
    for (int k = 0; k < npoly; k++)
        anorm = fmaxl(anorm, fabsl(a[k]));
    for (int k = 0; k < npoly; k++)
        CHECK_MSG(fabs(coef[k] - (double)a[k]) <= 1e-9 * (double)anorm,
                  "coef %d: %.15g vs %.15Lg", k, coef[k], a[k]);
    /* too few usable pixels: not positive definite.  Pixel 1 alone: the
     * functions that vanish there (far Gaussians, B-splines beyond the
     * first interval) are left out (test_marg_dead), the rest are several
     * functions on one pixel. */
    for (int i = 0; i < n; i++)
        if (i != 1)
            w[i] = 0;
    w[1] = 1.0f;
    CHECK(rvfit_marg_chisq(n, npoly, m, f, w, basis, &chi, &ld, coef) ==
          RVFIT_ERR_NUMERIC);
    free(m), free(f), free(w), free(basis), free(S), free(D);
}

/* B-splines with usable pixels only at x < -0.2: the functions living
 * wholly above are exactly 0 in every sum and left out (coefficient 0,
 * nothing in ln det); the rest must match the long-double QR solution of
 * the live columns alone. */
static void test_marg_dead(void)
{
    enum { N = 2000, P = 10 };
    static double m[N], basis[N * P];
    static float f[N], w[N];
    static long double S[N * P], D[N];
    int live[P] = {0}, nlive = 0, nuse = 0;
    for (int i = 0; i < N; i++) {
        double x = -1 + 2.0 * i / (N - 1);
        rvfit_basis(RVFIT_BASIS_BSPLINE, P, x, basis + i * P);
        m[i] = 1 - 0.3 * exp(-0.5 * pow((x + 0.5) / 0.01, 2));
        f[i] = (float)((2 + x) * m[i] + 0.01 * (urand() - 0.5));
        w[i] = x < -0.2 ? 1e4f : 0.0f;
        for (int k = 0; k < P && w[i] > 0; k++)
            live[k] |= basis[i * P + k] != 0.0;
    }
    int col[P];
    for (int k = 0; k < P; k++)
        if (live[k])
            col[nlive++] = k;
    CHECK(nlive == 6); /* intervals of 2/7: x < -0.2 ends in interval 2,
                        * where functions 2..5 live */
    for (int i = 0; i < N; i++)
        if (w[i] > 0) {
            long double sw = sqrtl((long double)w[i]);
            for (int j = 0; j < nlive; j++)
                S[nuse * nlive + j] = sw * m[i] * basis[i * P + col[j]];
            D[nuse++] = sw * f[i];
        }
    long double a[P], chi_ref, ld_ref;
    qr_lsq(nuse, nlive, S, D, a, &chi_ref, &ld_ref);
    double chi, ld, coef[P];
    CHECK(rvfit_marg_chisq(N, P, m, f, w, basis, &chi, &ld, coef) ==
          RVFIT_OK);
    CHECK_MSG(fabs(chi - (double)chi_ref) <= 1e-9 * (double)chi_ref,
              "dead rows: chisq %.15g vs %.15Lg", chi, chi_ref);
    CHECK_MSG(fabs(ld - (double)ld_ref) <= 1e-9 * fabsl(ld_ref),
              "dead rows: logdet %.15g vs %.15Lg", ld, ld_ref);
    for (int j = 0, k = 0; k < P; k++)
        CHECK_MSG(live[k] ? fabs(coef[k] - (double)a[j++]) < 1e-8
                          : coef[k] == 0.0,
                  "dead rows: coef %d = %.15g", k, coef[k]);
}

static void test_basis(void)
{
    double b[RVFIT_MAX_POLY];
    rvfit_basis(RVFIT_BASIS_GAUSS, 10, 0.5, b);
    CHECK_NEAR(b[0], 1.0, 0);
    CHECK_NEAR(b[1], 0.5, 0);
    CHECK_NEAR(b[2], 0.25, 0);
    /* 7 Gaussians, centres -1 + k/3, sigma 1/7: k = 4 at 1/3 */
    CHECK_NEAR(b[3 + 4], exp(-49.0 / 72.0), 1e-15);
    CHECK(b[3 + 0] == 0.0); /* 10.5 widths: beyond the cut, exactly 0 */
    CHECK_NEAR(b[3 + 6], exp(-0.5 * 3.5 * 3.5), 1e-15);
    /* the cut at 6 widths (6/7 from the centre -1): exp(-18) just inside,
     * 0 at and beyond it */
    rvfit_basis(RVFIT_BASIS_GAUSS, 10, -1.0 + 6.0 / 7.0 - 1e-9, b);
    CHECK_NEAR(b[3], exp(-18.0), 1e-15);
    CHECK(b[3] > 0.0);
    rvfit_basis(RVFIT_BASIS_GAUSS, 10, -1.0 + 6.0 / 7.0 + 1e-12, b);
    CHECK(b[3] == 0.0 && b[4] > 0.0);
    rvfit_basis(RVFIT_BASIS_GAUSS, 4, 0.0, b); /* one Gaussian at -1, s 1 */
    CHECK_NEAR(b[3], exp(-0.5), 1e-15);
    rvfit_basis(RVFIT_BASIS_CHEB, 6, 0.3, b);
    CHECK_NEAR(b[5], 16 * 0.00243 - 20 * 0.027 + 1.5, 1e-14);
    rvfit_basis(RVFIT_BASIS_CHEB, 32, cos(0.7), b);
    CHECK_NEAR(b[31], cos(31 * 0.7), 1e-12);
}

/* Clamped cubic B-splines against closed forms: the uniform cubic
 * B-spline's pieces in the middle interval, the clamped end functions
 * (Bernstein-like near -1) and exact zeros off each support. */
static void test_basis_bspline(void)
{
    double b[RVFIT_MAX_POLY];
    /* npoly 10: 7 intervals of width 2/7; the middle one, [-1/7, 1/7),
     * holds functions 3..6, all with distinct knots: at local u,
     * (1-u)^3/6, (3u^3 - 6u^2 + 4)/6, (-3u^3 + 3u^2 + 3u + 1)/6, u^3/6 */
    for (double u = 0.0; u < 1.0; u += 0.125) {
        rvfit_basis(RVFIT_BASIS_BSPLINE, 10, -1.0 / 7.0 + u * 2.0 / 7.0, b);
        double want[4] = {(1 - u) * (1 - u) * (1 - u) / 6,
                          (3 * u * u * u - 6 * u * u + 4) / 6,
                          (-3 * u * u * u + 3 * u * u + 3 * u + 1) / 6,
                          u * u * u / 6};
        for (int k = 0; k < 10; k++)
            CHECK_MSG(k >= 3 && k <= 6 ? fabs(b[k] - want[k - 3]) < 1e-14
                                       : b[k] == 0.0,
                      "u %g: B_%d = %.17g", u, k, b[k]);
    }
    /* ends: B_0(-1) = B_9(1) = 1, all others 0; the first interval's
     * B_0 = (1 - t)^3 in t = (x + 1) 7 / 2 */
    rvfit_basis(RVFIT_BASIS_BSPLINE, 10, -1.0, b);
    CHECK(b[0] == 1.0 && b[1] == 0.0 && b[2] == 0.0 && b[3] == 0.0);
    rvfit_basis(RVFIT_BASIS_BSPLINE, 10, 1.0, b);
    CHECK(b[9] == 1.0 && b[8] == 0.0 && b[0] == 0.0);
    rvfit_basis(RVFIT_BASIS_BSPLINE, 10, -1.0 + 0.3 * 2.0 / 7.0, b);
    CHECK_NEAR(b[0], 0.7 * 0.7 * 0.7, 1e-15);
    for (int k = 4; k < 10; k++)
        CHECK(b[k] == 0.0);
    /* partition of unity anywhere in [-1, 1]; nothing outside (padding) */
    for (int i = 0; i <= 1000; i++) {
        rvfit_basis(RVFIT_BASIS_BSPLINE, 13, -1.0 + 2.0 * i / 1000, b);
        double sum = 0.0;
        int nz = 0;
        for (int k = 0; k < 13; k++)
            sum += b[k], nz += b[k] != 0.0;
        CHECK_MSG(fabs(sum - 1.0) < 1e-14 && nz <= 4, "x %g: sum %.17g, %d",
                  -1.0 + 2.0 * i / 1000, sum, nz);
    }
    rvfit_basis(RVFIT_BASIS_BSPLINE, 10, 1.01, b);
    for (int k = 0; k < 10; k++)
        CHECK(b[k] == 0.0);
}

static void test_cubic(void)
{
    double w[4];
    rvfit_cubic_weights(0.0, w);
    CHECK(w[0] == 0 && w[1] == 1 && w[2] == 0 && w[3] == 0);
    for (int r = 0; r < 100; r++) {
        double t = urand();
        rvfit_cubic_weights(t, w);
        CHECK_NEAR(w[0] + w[1] + w[2] + w[3], 1.0, 1e-15);
        /* quadratic q(k) = 3 - 2k + 0.7k^2 sampled at k = -1..2 */
        double q[4], ex = 3 - 2 * t + 0.7 * t * t;
        for (int k = 0; k < 4; k++)
            q[k] = 3 - 2.0 * (k - 1) + 0.7 * (k - 1) * (k - 1);
        CHECK_NEAR(w[0] * q[0] + w[1] * q[1] + w[2] * q[2] + w[3] * q[3], ex,
                   1e-13);
    }
}

/* Integral of K(u/half) g(u) du over [-half, half] for g smooth between
 * integers: u = half sin(phi) removes the square-root edge, the range is
 * split at the integers, composite Simpson on each piece. */
static double kern_quad(double half, double (*g)(double u, void *ctx),
                        void *ctx)
{
    const double e = RVFIT_VSINI_EPS, pi = 3.14159265358979323846;
    double tot = 0;
    for (double lo = floor(-half); lo < half; lo += 1) {
        double u0 = fmax(lo, -half), u1 = fmin(lo + 1, half);
        if (u1 <= u0)
            continue;
        double p0 = asin(u0 / half), p1 = asin(u1 / half);
        int ns = 2000;
        double hs = (p1 - p0) / ns, s = 0;
        for (int k = 0; k <= ns; k++) {
            double ph = p0 + k * hs, cp = cos(ph), u = half * sin(ph);
            if (k == 0) u = u0; /* keep u inside the piece */
            if (k == ns) u = u1;
            double v = (2 * (1 - e) * cp + 0.5 * pi * e * cp * cp) * half *
                       cp * g(u, ctx);
            s += v * (k == 0 || k == ns ? 1 : (k % 2 ? 4 : 2));
        }
        tot += s * hs / 3;
    }
    return tot;
}

static double g_hat(double u, void *ctx)
{
    return fmax(0.0, 1 - fabs(u - *(int *)ctx));
}
static double g_one(double u, void *ctx) { (void)u, (void)ctx; return 1; }
/* sum_j j^2 hat(u-j) = u^2 + s(1-s), s = frac(u); the s(1-s) part: */
static double g_frac(double u, void *ctx)
{
    (void)ctx;
    double s = u - floor(u);
    return s * (1 - s);
}

static void test_vsini(void)
{
    const double e = RVFIT_VSINI_EPS, pi = 3.14159265358979323846;
    static double w[2 * RVFIT_MAX_VSINI_HALF + 1];
    CHECK(rvfit_vsini_kernel(0.0, w) == 0 && w[0] == 1.0);
    double halves[] = {0.4, 3.7, 10.0, 37.5};
    for (int t = 0; t < 4; t++) {
        double half = halves[t];
        int h = rvfit_vsini_kernel(half, w);
        CHECK(h == (int)ceil(half));
        double sum = 0, var = 0, bsum = 0, bw[2 * 64 + 1];
        for (int j = -h; j <= h; j++) {
            sum += w[j + h];
            var += (double)j * j * w[j + h];
            CHECK_NEAR(w[j + h], w[h - j], 1e-15);
            CHECK(w[j + h] > 0);
            bw[j + h] = kern_quad(half, g_hat, &j);
            bsum += bw[j + h];
        }
        CHECK_NEAR(sum, 1.0, 1e-14);
        for (int j = -h; j <= h; j++)
            CHECK_MSG(fabs(w[j + h] - bw[j + h] / bsum) < 1e-11,
                      "half %g j %d: %.15g vs %.15g", half, j, w[j + h],
                      bw[j + h] / bsum);
        /* Variance: analytic variance of K (pixels^2) plus the hat's
         * share, exactly E_K[s(1-s)] (-> 1/6 for a wide kernel). */
        double vk = half * half * (pi * (1 - e) / 4 + 2 * pi * e / 15) /
                    (pi * (1 - e) + 2 * pi * e / 3);
        double hat = kern_quad(half, g_frac, NULL) / kern_quad(half, g_one, NULL);
        CHECK_MSG(fabs(var - (vk + hat)) < 1e-9 * var,
                  "half %g: variance %.12g vs %.12g", half, var, vk + hat);
        if (half >= 10)
            CHECK_MSG(fabs(var - (vk + 1.0 / 6)) < 1e-5 * var,
                      "half %g: variance %.12g vs %.12g", half, var,
                      vk + 1.0 / 6);
    }
}

static void test_doppler(void)
{
    long double b = 100.0L / 299792.458L;
    long double ex = 0.5L * logl((1 - b) / (1 + b));
    CHECK_NEAR(rvfit_dlnl_doppler(100.0), (double)ex, 1e-18);
    CHECK(rvfit_dlnl_doppler(100.0) < 0);
    CHECK_NEAR(rvfit_dlnl_doppler(-100.0), -(double)ex, 1e-18);
    CHECK(rvfit_dlnl_doppler(0.0) == 0.0);
}

/* rvfit_row_support against the knots: npoly 7 clamped B-splines on 4
 * intervals of [-1, 1] sampled at x_i = -1 + i/200 (i < 401), knots at
 * x = -0.5, 0, 0.5.  B_0 lives on the first interval, 0 from x = -0.5 on;
 * B_6 on the last, 0 up to x = 0.5; B_3 everywhere but the ends, where
 * only B_0 and B_6 are 1.  A row of zeros has an empty range. */
static void test_row_support(void)
{
    enum { N = 401, P = 7 };
    static double B[P * N];
    double b[P];
    for (int i = 0; i < N; i++) {
        rvfit_basis(RVFIT_BASIS_BSPLINE, P, -1.0 + i / 200.0, b);
        for (int k = 0; k < P; k++)
            B[k * N + i] = b[k];
    }
    static const size_t want[3][3] = {{0, 0, 100}, {6, 301, 401},
                                      {3, 1, 400}};
    for (int q = 0; q < 3; q++) {
        size_t lo, hi;
        rvfit_row_support(B + want[q][0] * N, N, &lo, &hi);
        CHECK_MSG(lo == want[q][1] && hi == want[q][2],
                  "B_%zu lives on [%zu, %zu), want [%zu, %zu)", want[q][0],
                  lo, hi, want[q][1], want[q][2]);
    }
    double z[5] = {0};
    size_t lo, hi;
    rvfit_row_support(z, 5, &lo, &hi);
    CHECK(lo == hi);
}

/* rvfit_bspline_cheb against the uniform cubic B-spline's closed form
 * (de Boor): on an interior interval of npoly 10 (7 intervals; knots of
 * interval 3 all simple), at its coordinate t = (y + 1)/2 the four
 * non-zero splines are (1-t)^3/6, (3t^3 - 6t^2 + 4)/6,
 * (-3t^3 + 3t^2 + 3t + 1)/6 and t^3/6.  Then rvfit_pixel_cells on a row
 * with padding: intervals in order, -1 beyond the spectrum's own pixels,
 * and each pixel's rows of rvfit_pixel_tables equal to the Chebyshev
 * expansion of its interval at its coordinate. */
static void cheb_eval(const double *D, int r, double y, double *v)
{
    double T[4] = {1.0, y, 2 * y * y - 1, 4 * y * y * y - 3 * y};
    *v = 0.0;
    for (int p = 0; p < 4; p++)
        *v += D[4 * r + p] * T[p];
}

static void test_bspline_cells(void)
{
    enum { P = 10, N = 1200, NOWN = 1100 };
    double D[16], v;
    rvfit_bspline_cheb(P, 3, D);
    for (int q = 0; q <= 10; q++) {
        double t = q / 10.0, y = 2 * t - 1;
        double t3 = t * t * t, t2 = t * t;
        double want[4] = {pow(1 - t, 3) / 6, (3 * t3 - 6 * t2 + 4) / 6,
                          (-3 * t3 + 3 * t2 + 3 * t + 1) / 6, t3 / 6};
        for (int r = 0; r < 4; r++) {
            cheb_eval(D, r, y, &v);
            CHECK_MSG(fabs(v - want[r]) < 1e-15,
                      "B_%d at t %g: %.17g, want %.17g", 3 + r, t, v, want[r]);
        }
    }
    static double wave[N], u[N], B[P * N], y[N];
    static int cell[N];
    for (int i = 0; i < N; i++)
        wave[i] = 3600.0 + 0.8 * i;
    rvfit_pixel_tables(RVFIT_BASIS_BSPLINE, P, log(3500.0), 1e-4, N, NOWN,
                       wave, N, u, B);
    rvfit_pixel_cells(P, N, NOWN, wave, cell, y);
    /* npoly 0: the same u, and no table written (B NULL) */
    static double u0[N];
    rvfit_pixel_tables(RVFIT_BASIS_BSPLINE, 0, log(3500.0), 1e-4, N, NOWN,
                       wave, N, u0, NULL);
    CHECK(memcmp(u, u0, sizeof u) == 0);
    int prev = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        if (i >= NOWN) {
            bad += cell[i] != -1;
            continue;
        }
        bad += cell[i] < prev || cell[i] > P - 4 || fabs(y[i]) > 1.0;
        prev = cell[i];
        double all[P] = {0};
        rvfit_bspline_cheb(P, cell[i], D);
        for (int r = 0; r < 4; r++)
            cheb_eval(D, r, y[i], &all[cell[i] + r]);
        for (int k = 0; k < P; k++)
            bad += fabs(all[k] - B[k * N + i]) > 1e-14;
    }
    CHECK_MSG(bad == 0, "%d pixels off their interval or its expansion", bad);
    CHECK(cell[0] == 0 && cell[NOWN - 1] == P - 4);
}

int main(void)
{
    test_marg(RVFIT_BASIS_GAUSS, 10, 3000, 30);
    test_marg(RVFIT_BASIS_GAUSS, 10, 8000, 300);
    test_marg(RVFIT_BASIS_CHEB, 20, 2000, 5);
    test_marg(RVFIT_BASIS_GAUSS, 3, 500, 10);
    test_marg(RVFIT_BASIS_BSPLINE, 10, 3000, 50);
    test_basis();
    test_basis_bspline();
    test_row_support();
    test_bspline_cells();
    test_marg_dead();
    test_cubic();
    test_vsini();
    test_doppler();
    return tu_finish("test_physics");
}
