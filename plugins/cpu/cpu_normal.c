/* cpu_normal.c — the continuum solve of one arm (physics.h step e), the
 * hot loop of the backend: the normal equations sum_i w m^2 B_k B_l,
 * with CPU_LANES independent partial sums (vectorizable without
 * reassociating) — for the Chebyshev basis from the 2 npoly - 1 weighted
 * moments of T_j (T_k T_l = (T_{k+l} + T_{|k-l|}) / 2: 29 sums per pixel
 * instead of 65 for npoly = 10), for the B-splines from 7 such moments
 * per interval (11 sums per pixel), for the Gaussian one pair by pair
 * over cache blocks — then the equilibrated Cholesky (rvfit_chol_eq_quad)
 * and chi^2 = f^T W f - b^T A^-1 b, without forming the continuum: f^T W f is
 * the spectrum's, computed once (cpu_batch.c), and b^T A^-1 b a sum of
 * squares from the forward solve.  In double precision the cancellation
 * costs log10(f^T W f / chi^2) digits: 3-4 at S/N 50 per pixel, 6 at
 * S/N 1000, against the 16 available; test_cpu_backend holds the result
 * to the explicit residual of rvfit_marg_chisq. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"
#include "rvfit/linalg.h"

/* Lane j of every sum accumulates x_i y_i over i = j mod CPU_LANES, in
 * the vector and in the portable version alike. */
#if defined(CPU_VEC)
/* n <= 4 dot products sharing x: acc[8r + j] += lane j of x . y_r,
 * y_r = y + r*stride.  Called with a literal n so that it unrolls. */
static inline void cpu_dotn(const double *restrict x, const double *y,
                            size_t stride, int n, long len,
                            double *restrict acc)
{
    cpu_v4 a[8], x0, x1, yv;
    for (int q = 0; q < 2 * n; q++)
        CPU_LD(a[q], acc + 4 * q);
    for (long i = 0; i < len; i += 8) {
        CPU_LD(x0, x + i);
        CPU_LD(x1, x + i + 4);
        for (int r = 0; r < n; r++) {
            CPU_LD(yv, y + r * stride + i);
            a[2 * r] += x0 * yv;
            CPU_LD(yv, y + r * stride + i + 4);
            a[2 * r + 1] += x1 * yv;
        }
    }
    for (int q = 0; q < 2 * n; q++)
        CPU_ST(acc + 4 * q, a[q]);
}
#else
static inline void cpu_dot_acc(const double *restrict x,
                               const double *restrict y, long len,
                               double *restrict acc)
{
    double s[CPU_LANES];
    for (int j = 0; j < CPU_LANES; j++)
        s[j] = acc[j];
    for (long i = 0; i < len; i += CPU_LANES)
        for (int j = 0; j < CPU_LANES; j++)
            s[j] += x[i + j] * y[i + j];
    for (int j = 0; j < CPU_LANES; j++)
        acc[j] = s[j];
}

static inline void cpu_dotn(const double *restrict x, const double *y,
                            size_t stride, int n, long len,
                            double *restrict acc)
{
    for (int r = 0; r < n; r++)
        cpu_dot_acc(x, y + r * stride, len, acc + r * CPU_LANES);
}
#endif

/* 1..4 dot products, dispatched to literal-n copies. */
CPU_INLINE void cpu_dotn_any(const double *restrict x, const double *y,
                             size_t stride, int n, long len,
                             double *restrict acc)
{
    switch (n) {
    case 4: cpu_dotn(x, y, stride, 4, len, acc); break;
    case 3: cpu_dotn(x, y, stride, 3, len, acc); break;
    case 2: cpu_dotn(x, y, stride, 2, len, acc); break;
    case 1: cpu_dotn(x, y, stride, 1, len, acc); break;
    default: break;
    }
}

/* Fixed-order reduction of the lanes. */
static inline double cpu_lanes_sum(const double *a)
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* [*r0, *r1) = [r0, r1) cut to the hull of the supports of basis rows
 * l..l+n-1 (cpu_arm.sup); empty when they all vanish there. */
CPU_INLINE void cpu_cut(const uint32_t *sup, int l, int n, long *r0,
                        long *r1)
{
    long h0 = *r1, h1 = *r0;
    for (int j = l; j < l + n; j++) {
        if (sup[2 * j + 1] <= sup[2 * j])
            continue;
        if ((long)sup[2 * j] < h0)
            h0 = (long)sup[2 * j];
        if ((long)sup[2 * j + 1] > h1)
            h1 = (long)sup[2 * j + 1];
    }
    if (h0 > *r0)
        *r0 = h0;
    if (h1 < *r1)
        *r1 = h1;
}

/* acc += x . B_l .. B_{l+n-1} over [r0, r1) where any of those rows is
 * non-zero; x[i - x0] is pixel i.  Every bound is a multiple of
 * CPU_LANES, so each lane sums the same pixels in the same order as over
 * the whole range, less terms that are exactly 0: bit-identical. */
CPU_INLINE void cpu_dot_sup(const double *x, long x0, const double *B,
                            size_t npad, const uint32_t *sup, int l, int n,
                            long r0, long r1, double *acc)
{
    cpu_cut(sup, l, n, &r0, &r1);
    if (r1 > r0)
        cpu_dotn_any(x + (r0 - x0), B + l * npad + r0, npad, n, r1 - r0,
                     acc);
}

/* A (lower triangle) and b from the lane sums: the npair products, then
 * the np right-hand sides. */
CPU_INLINE void cpu_normal_reduce(int np, const double *acc, double *A,
                                  double *b)
{
    int npair = np * (np + 1) / 2, pr = 0;
    for (int k = 0; k < np; k++)
        for (int l = 0; l <= k; l++, pr++)
            A[k * np + l] = cpu_lanes_sum(acc + pr * CPU_LANES);
    for (int k = 0; k < np; k++)
        b[k] = cpu_lanes_sum(acc + (npair + k) * CPU_LANES);
}

/* Normal matrix (lower triangle, row-major np x np) and right-hand side
 * over pixels [a0, a1), skipping the pixels where a product vanishes
 * (Gaussians of the basis are 0 beyond RVFIT_GAUSS_CUT widths). */
CPU_HOT static void cpu_normal(int np, long a0, long a1, const double *g,
                       const double *c, const double *B, size_t npad,
                       const uint32_t *sup, double *gb, double *acc,
                       double *A, double *b)
{
    int npair = np * (np + 1) / 2;
    memset(acc, 0, sizeof(double) * (size_t)((npair + np) * CPU_LANES));
    for (long b0 = a0; b0 < a1; b0 += CPU_BLOCK) {
        long e0 = a1 - b0 < CPU_BLOCK ? a1 : b0 + CPU_BLOCK;
        int pr = 0;
        for (int k = 0; k < np; k++) {
            long k0 = b0, k1 = e0;
            cpu_cut(sup, k, 1, &k0, &k1);
            if (k1 <= k0) {
                pr += k + 1;
                continue;
            }
            double *gk = gb + k * CPU_BLOCK;
            const double *bk = B + k * npad;
            for (long i = k0; i < k1; i++)
                gk[i - b0] = g[i] * bk[i];
            /* rows in fours share the loads of x; each four is cut to
             * the hull of its supports (cheaper, in instructions, than
             * exact overlaps one row at a time) */
            for (int l = 0, n; l <= k; l += n, pr += n) {
                n = k + 1 - l < 4 ? k + 1 - l : 4;
                cpu_dot_sup(gk, b0, B, npad, sup, l, n, k0, k1,
                            acc + pr * CPU_LANES);
            }
        }
        for (int k = 0, n; k < np; k += n) {
            n = np - k < 4 ? np - k : 4;
            cpu_dot_sup(c + b0, b0, B, npad, sup, k, n, b0, e0,
                        acc + (npair + k) * CPU_LANES);
        }
    }
    cpu_normal_reduce(np, acc, A, b);
}

/* cont[i] = sum_k coef_k B_k[i] over [a0, a1) (multiples of CPU_LANES).
 * Skipping the rows that vanish on a chunk measured more instructions
 * (the branches) than it saved. */
CPU_HOT static void cpu_cont(int np, long a0, long a1, const double *coef,
                             const double *B, size_t npad, double *cont)
{
    long i = a0;
#if defined(CPU_VEC)
    for (; i + 16 <= a1; i += 16) { /* four chains hide the add latency */
        cpu_v4 a[4], b;
        for (int q = 0; q < 4; q++) {
            CPU_LD(b, B + i + 4 * q);
            a[q] = coef[0] * b;
        }
        for (int k = 1; k < np; k++)
            for (int q = 0; q < 4; q++) {
                CPU_LD(b, B + k * npad + i + 4 * q);
                a[q] += coef[k] * b;
            }
        for (int q = 0; q < 4; q++)
            CPU_ST(cont + i + 4 * q, a[q]);
    }
    for (; i < a1; i += 4) {
        cpu_v4 acc, b;
        CPU_LD(b, B + i);
        acc = coef[0] * b;
        for (int k = 1; k < np; k++) {
            CPU_LD(b, B + k * npad + i);
            acc += coef[k] * b;
        }
        CPU_ST(cont + i, acc);
    }
#endif
    for (; i < a1; i++) {
        double acc = coef[0] * B[i];
        for (int k = 1; k < np; k++)
            acc += coef[k] * B[k * npad + i];
        cont[i] = acc;
    }
}

/* Normal matrix and right-hand side from the Chebyshev moments over
 * pixels [a0, a1): mu_j = sum g T_j (j < nmom), b_k = sum c T_k, and
 * A_kl = (mu_{k+l} + mu_{k-l}) / 2. */
CPU_HOT static void cpu_normal_cheb(int np, int nmom, long a0, long a1,
                                    const double *g, const double *c,
                                    const double *T, size_t npad,
                                    double *acc, double *A, double *b)
{
    memset(acc, 0, sizeof(double) * (size_t)((nmom + np) * CPU_LANES));
    for (int j = 0, n; j < nmom; j += n) {
        n = nmom - j < 4 ? nmom - j : 4;
        cpu_dotn_any(g + a0, T + j * npad + a0, npad, n, a1 - a0,
                     acc + j * CPU_LANES);
    }
    for (int k = 0, n; k < np; k += n) {
        n = np - k < 4 ? np - k : 4;
        cpu_dotn_any(c + a0, T + k * npad + a0, npad, n, a1 - a0,
                     acc + (nmom + k) * CPU_LANES);
    }
    double mu[2 * RVFIT_MAX_POLY];
    for (int j = 0; j < nmom; j++)
        mu[j] = cpu_lanes_sum(acc + j * CPU_LANES);
    for (int k = 0; k < np; k++) {
        for (int l = 0; l <= k; l++)
            A[k * np + l] = 0.5 * (mu[k + l] + mu[k - l]);
        b[k] = cpu_lanes_sum(acc + (nmom + k) * CPU_LANES);
    }
}

/* Normal matrix and right-hand side for the B-spline basis from moments,
 * interval by interval: on interval j the rows j..j+3 are cubics,
 * B_{j+r} = sum_p D_rp T_p(y) (D = icheb), so with mu_p = sum g T_p
 * (p < 7) and nu_p = sum c T_p (p < 4) over the interval's pixels,
 * A_{j+r, j+s} += sum_pq D_rp D_sq (mu_{p+q} + mu_{|p-q|}) / 2 and
 * b_{j+r} += sum_p D_rp nu_p: 11 sums per pixel, where summing the
 * products B_k B_l of the live rows took 14 and 4 products to form. */
CPU_HOT static void cpu_normal_bsm(const cpu_arm *ca, size_t w, int np,
                                   long a0, long a1, const double *g,
                                   const double *c, double *acc, double *A,
                                   double *b)
{
    int ni = ca->nint;
    const uint32_t *lim = ca->ilim + 2 * w * (size_t)ni;
    const size_t *ioff = ca->ioff + w * (size_t)ni;
    const double *tab = ca->itab + w * ca->icap;
    for (int k = 0; k < np; k++) {
        b[k] = 0.0;
        for (int l = 0; l <= k; l++)
            A[k * np + l] = 0.0;
    }
    for (int j = 0; j < ni; j++) {
        long lo = (long)lim[2 * j], hi = (long)lim[2 * j + 1];
        long r0 = lo > a0 ? lo : a0, r1 = hi < a1 ? hi : a1;
        if (r1 <= r0)
            continue;
        size_t len = (size_t)(hi - lo);
        const double *T = tab + ioff[j] + (r0 - lo);
        memset(acc, 0, sizeof(double) * (CPU_IMOM + 4) * CPU_LANES);
        cpu_dotn_any(g + r0, T, len, 4, r1 - r0, acc);
        cpu_dotn_any(g + r0, T + 4 * len, len, 3, r1 - r0,
                     acc + 4 * CPU_LANES);
        cpu_dotn_any(c + r0, T, len, 4, r1 - r0, acc + CPU_IMOM * CPU_LANES);
        double mu[CPU_IMOM], nu[4], G[4][4];
        for (int p = 0; p < CPU_IMOM; p++)
            mu[p] = cpu_lanes_sum(acc + p * CPU_LANES);
        for (int p = 0; p < 4; p++)
            nu[p] = cpu_lanes_sum(acc + (CPU_IMOM + p) * CPU_LANES);
        for (int p = 0; p < 4; p++)
            for (int q = 0; q < 4; q++)
                G[p][q] = 0.5 * (mu[p + q] + mu[p > q ? p - q : q - p]);
        const double *D = ca->icheb + 16 * j;
        for (int r = 0; r < 4; r++) {
            double e[4], br = 0.0; /* e = G D_r */
            for (int p = 0; p < 4; p++) {
                e[p] = 0.0;
                for (int q = 0; q < 4; q++)
                    e[p] += G[p][q] * D[4 * r + q];
                br += D[4 * r + p] * nu[p];
            }
            b[j + r] += br;
            for (int s = 0; s <= r; s++) {
                double v = 0.0;
                for (int p = 0; p < 4; p++)
                    v += D[4 * s + p] * e[p];
                A[(j + r) * np + j + s] += v;
            }
        }
    }
}

CPU_HOT int cpu_solve(const cpu_state *st, int a, size_t s, const cpu_range *r,
              cpu_scratch *w, double *chisq, double *logdet, double *coef)
{
    const cpu_arm *ca = &st->arm[a];
    int np = st->mo.npoly;
    size_t npad = ca->npad;
    size_t w0 = ca->wave_per_spec ? s : 0;
    const double *f = ca->flux + s * npad, *iv = ca->ivar + s * npad;
    long a0 = r->i0 / CPU_LANES * CPU_LANES;
    long a1 = (r->i1 / CPU_LANES + 1) * CPU_LANES;
    const double *m = w->m;
    double *g = w->g, *c = w->c;
    for (long i = a0; i < a1; i++) {
        double wm = iv[i] * m[i];
        g[i] = wm * m[i];
        c[i] = wm * f[i];
    }
    double A[RVFIT_MAX_POLY * RVFIT_MAX_POLY], b[RVFIT_MAX_POLY], q;
    if (ca->nmom)
        cpu_normal_cheb(np, ca->nmom, a0, a1, g, c,
                        ca->mom + w0 * (size_t)ca->nmom * npad, npad,
                        w->acc, A, b);
    else if (ca->nint)
        cpu_normal_bsm(ca, w0, np, a0, a1, g, c, w->acc, A, b);
    else
        cpu_normal(np, a0, a1, g, c, ca->basis + w0 * (size_t)np * npad,
                   npad, ca->sup + w0 * (size_t)np * 2, w->gb, w->acc, A,
                   b);
    if (rvfit_chol_eq_quad(np, A, b, coef, logdet, &q) != RVFIT_OK)
        return -1;
    double chi = ca->fwf[s] - q;
    *chisq = chi > 0.0 ? chi : 0.0; /* rounding of an exact model */
    return 0;
}

/* The B-spline continuum from the interval tables: on interval j,
 * sum_r coef_{j+r} B_{j+r} = sum_p e_p T_p(y) with e = D^T coef; the
 * widened ranges add exact zeros at their neighbours' pixels. */
static void cpu_cont_cells(const cpu_arm *ca, size_t w, const double *coef,
                           double *cont)
{
    int ni = ca->nint;
    const uint32_t *lim = ca->ilim + 2 * w * (size_t)ni;
    const size_t *ioff = ca->ioff + w * (size_t)ni;
    const double *tab = ca->itab + w * ca->icap;
    memset(cont, 0, ca->npad * sizeof(double));
    for (int j = 0; j < ni; j++) {
        const double *D = ca->icheb + 16 * j, *T = tab + ioff[j];
        size_t lo = lim[2 * j], len = lim[2 * j + 1] - lo;
        double e[4];
        for (int p = 0; p < 4; p++) {
            e[p] = 0.0;
            for (int r = 0; r < 4; r++)
                e[p] += coef[j + r] * D[4 * r + p];
        }
        for (size_t i = 0; i < len; i++)
            cont[lo + i] += e[0] * T[i] + e[1] * T[len + i] +
                            e[2] * T[2 * len + i] + e[3] * T[3 * len + i];
    }
}

void cpu_continuum(const cpu_state *st, int a, size_t s, const double *coef,
                   cpu_scratch *w)
{
    const cpu_arm *ca = &st->arm[a];
    int np = st->mo.npoly;
    size_t w0 = ca->wave_per_spec ? s : 0;
    if (ca->nint) {
        cpu_cont_cells(ca, w0, coef, w->cont);
        return;
    }
    const double *B = ca->basis + w0 * (size_t)np * ca->npad;
    cpu_cont(np, 0, (long)ca->npad, coef, B, ca->npad, w->cont);
}
