/* physics.c — the scalar double-precision reference formulas of
 * rvfit/physics.h: Doppler shift, continuum basis, Keys cubic weights,
 * rotation kernel and the marginalised continuum solve.
 *
 * Numerical choices (backends must follow them):
 *  - rvfit_marg_chisq solves with rvfit_chol_eq_solve (rvfit/linalg.h):
 *    the normal matrix is equilibrated (unit diagonal) before Cholesky,
 *    and an equilibrated pivot <= RVFIT_CHOL_MIN_PIVOT (1e-14: rank
 *    deficient to double precision) or not finite is a failure, and a
 *    basis function without a usable pixel (its row and b exactly 0) is
 *    left out, coefficient 0;
 *  - chisq is the explicit residual sum sum_i w_i (f_i - m_i sum_k a_k
 *    B_ik)^2, not sum w f^2 - b^T a: the residual is stationary in a, so
 *    errors in a enter only at second order, while b^T a cancels
 *    catastrophically at high S/N and large condition numbers.
 */
#include <math.h>
#include <string.h>

#include "rvfit/linalg.h"
#include "rvfit/physics.h"

_Static_assert(RVFIT_MAX_POLY <= RVFIT_LINALG_MAX, "continuum too large");

/* M_PI is not ISO C. */
#define PHYS_PI 3.14159265358979323846

double rvfit_dlnl_doppler(double v_kms)
{
    /* 0.5 ln((1-b)/(1+b)) == -atanh(b), without the cancellation of the
     * quotient at small b. */
    return -atanh(v_kms / RVFIT_C_KMS);
}

/* Clamped cubic B-splines on npoly - 3 equal intervals of [-1, 1]: the
 * four that are non-zero at x by the Cox-de Boor triangle (Piegl and
 * Tiller, The NURBS Book, A2.2), every other one exactly 0. */
/* The interval j of x and x's coordinate t in interval units (j <= t <=
 * j + 1); -1 in padding, where every B-spline is 0. */
static int bspline_interval(int npoly, double x, double *t)
{
    int m = npoly - 3;
    if (!(x >= -1.0 - 1e-9 && x <= 1.0 + 1e-9)) /* padding: no support */
        return -1;
    *t = (fmin(fmax(x, -1.0), 1.0) + 1.0) * 0.5 * m;
    int j = (int)floor(*t);
    return j > m - 1 ? m - 1 : j;
}

static void basis_bspline(int npoly, double x, double *b)
{
    int m = npoly - 3;
    for (int k = 0; k < npoly; k++)
        b[k] = 0.0;
    double t;
    int j = bspline_interval(npoly, x, &t);
    if (j < 0)
        return;
    /* knot i of the clamped vector, in interval units */
#define BSP_KNOT(i) ((double)((i) < 3 ? 0 : (i) > m + 3 ? m : (i) - 3))
    int s = j + 3;
    double n[4] = {1.0, 0.0, 0.0, 0.0}, left[4], right[4];
    for (int d = 1; d <= 3; d++) {
        left[d] = t - BSP_KNOT(s + 1 - d);
        right[d] = BSP_KNOT(s + d) - t;
        double saved = 0.0;
        for (int r = 0; r < d; r++) {
            double tmp = n[r] / (right[r + 1] + left[d - r]);
            n[r] = saved + right[r + 1] * tmp;
            saved = left[d - r] * tmp;
        }
        n[d] = saved;
    }
#undef BSP_KNOT
    for (int r = 0; r < 4; r++)
        b[j + r] = n[r];
}

int rvfit_bspline_cell(int npoly, double x, double *y)
{
    double t;
    int j = npoly >= 4 && npoly <= RVFIT_MAX_POLY
                ? bspline_interval(npoly, x, &t)
                : -1;
    if (j >= 0)
        *y = 2.0 * (t - j) - 1.0;
    return j;
}

void rvfit_bspline_cheb(int npoly, int j, double D[16])
{
    /* A cubic is interpolated exactly at the 4 Chebyshev nodes; the
     * discrete Chebyshev transform there gives its coefficients. */
    int m = npoly - 3;
    double val[4][4], T[4][4];
    for (int q = 0; q < 4; q++) {
        double y = cos(PHYS_PI * (q + 0.5) / 4.0), b[RVFIT_MAX_POLY];
        rvfit_basis(RVFIT_BASIS_BSPLINE, npoly,
                    2.0 * (j + 0.5 * (y + 1.0)) / m - 1.0, b);
        for (int r = 0; r < 4; r++)
            val[q][r] = b[j + r];
        rvfit_basis(RVFIT_BASIS_CHEB, 4, y, T[q]);
    }
    for (int r = 0; r < 4; r++)
        for (int p = 0; p < 4; p++) {
            double s = 0.0;
            for (int q = 0; q < 4; q++)
                s += val[q][r] * T[q][p];
            D[4 * r + p] = (p ? 0.5 : 0.25) * s;
        }
}

void rvfit_basis(int kind, int npoly, double x, double *b)
{
    if (npoly < 1)
        return;
    if (npoly > RVFIT_MAX_POLY)
        npoly = RVFIT_MAX_POLY;
    if (kind == RVFIT_BASIS_BSPLINE) {
        if (npoly >= 4)
            basis_bspline(npoly, x, b);
        return;
    }
    b[0] = 1.0;
    if (npoly > 1)
        b[1] = x;
    if (kind == RVFIT_BASIS_CHEB) {
        for (int k = 2; k < npoly; k++)
            b[k] = 2.0 * x * b[k - 1] - b[k - 2];
        return;
    }
    if (npoly > 2)
        b[2] = x * x;
    int ng = npoly - 3;
    if (ng < 1)
        return;
    double s = 1.0 / ng;
    for (int k = 0; k < ng; k++) {
        double c = ng == 1 ? -1.0 : -1.0 + 2.0 * k / (double)(ng - 1);
        double z = (x - c) / s;
        /* exactly 0 beyond the cut, so that backends may skip the pixels
         * where a Gaussian (or a product of two) vanishes */
        b[3 + k] = fabs(z) < RVFIT_GAUSS_CUT ? exp(-0.5 * z * z) : 0.0;
    }
}

void rvfit_cubic_weights(double t, double w[4])
{
    /* Keys (1981) with a = -1/2: exact for quadratics, C1 continuous. */
    double t2 = t * t, t3 = t2 * t;
    w[0] = 0.5 * (-t3 + 2.0 * t2 - t);
    w[1] = 0.5 * (3.0 * t3 - 5.0 * t2 + 2.0);
    w[2] = 0.5 * (-3.0 * t3 + 4.0 * t2 + t);
    w[3] = 0.5 * (t3 - t2);
}

/* Primitives in x = u/half of K(x) = 2(1-e)sqrt(1-x^2) + (pi e/2)(1-x^2)
 * (P0) and of x K(x) (P1), valid on [-1, 1]. */
static double kern_p0(double x)
{
    const double e = RVFIT_VSINI_EPS;
    double r = sqrt(fmax(0.0, 1.0 - x * x));
    return (1.0 - e) * (x * r + asin(x)) +
           0.5 * PHYS_PI * e * (x - x * x * x / 3.0);
}

static double kern_p1(double x)
{
    const double e = RVFIT_VSINI_EPS;
    double q = fmax(0.0, 1.0 - x * x);
    return -2.0 * (1.0 - e) * q * sqrt(q) / 3.0 +
           0.5 * PHYS_PI * e * (0.5 * x * x - 0.25 * x * x * x * x);
}

int rvfit_vsini_kernel(double half, double *w)
{
    if (!(half >= RVFIT_VSINI_MIN_HALF)) {
        w[0] = 1.0;
        return 0;
    }
    if (half > RVFIT_MAX_VSINI_HALF)
        half = RVFIT_MAX_VSINI_HALF;
    int h = (int)ceil(half);
    for (int j = 0; j <= 2 * h; j++)
        w[j] = 0.0;
    /* Segment [k, k+1] (pixels): the hat of node k weighs it by 1-s, the
     * hat of node k+1 by s, s = u - k.  Moments are exact primitives. */
    for (int k = -h; k < h; k++) {
        double u0 = fmax((double)k, -half), u1 = fmin((double)k + 1, half);
        if (!(u1 > u0))
            continue;
        double x0 = u0 / half, x1 = u1 / half;
        double m0 = half * (kern_p0(x1) - kern_p0(x0));
        double m1 = half * half * (kern_p1(x1) - kern_p1(x0)) - k * m0;
        w[k + h] += m0 - m1;
        w[k + 1 + h] += m1;
    }
    double sum = 0.0;
    for (int j = 0; j <= 2 * h; j++)
        sum += w[j];
    for (int j = 0; j <= 2 * h; j++)
        w[j] /= sum;
    return h;
}

int rvfit_marg_chisq(int n, int npoly, const double *m, const float *f,
                     const float *w, const double *basis, double *chisq,
                     double *logdet, double *coef)
{
    enum { P = RVFIT_MAX_POLY };
    double a[P * P], b[P], y[P];
    if (npoly < 1 || npoly > P)
        return RVFIT_ERR_INVALID;
    memset(a, 0, sizeof(double) * (size_t)(npoly * npoly));
    memset(b, 0, sizeof(double) * (size_t)npoly);
    for (int i = 0; i < n; i++) {
        if (!(w[i] > 0.0f))
            continue;
        const double *bi = basis + (size_t)i * (size_t)npoly;
        double g = (double)w[i] * m[i] * m[i];
        double c = (double)w[i] * (double)f[i] * m[i];
        for (int k = 0; k < npoly; k++) {
            b[k] += c * bi[k];
            for (int l = 0; l <= k; l++)
                a[k * npoly + l] += g * bi[k] * bi[l];
        }
    }
    double ld;
    if (rvfit_chol_eq_solve(npoly, a, b, y, &ld) != RVFIT_OK)
        return RVFIT_ERR_NUMERIC;
    double chi = 0.0;
    for (int i = 0; i < n; i++) {
        if (!(w[i] > 0.0f))
            continue;
        const double *bi = basis + (size_t)i * (size_t)npoly;
        double cont = 0.0;
        for (int k = 0; k < npoly; k++)
            cont += y[k] * bi[k];
        double r = (double)f[i] - cont * m[i];
        chi += (double)w[i] * r * r;
    }
    *chisq = chi;
    *logdet = ld;
    if (coef)
        memcpy(coef, y, sizeof(double) * (size_t)npoly);
    return RVFIT_OK;
}
