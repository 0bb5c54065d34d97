/* quad.c — the small dense algebra of the Newton optimiser
 * (newton.c): a quadratic model from an axis stencil, the BFGS update,
 * the projection of a symmetric matrix onto positive definite ones, and the
 * box-constrained quadratic step.  n <= FQ_MAX; matrices row-major n x n. */
#include <math.h>
#include <string.h>

#include "quad.h"
#include "rvfit/linalg.h"

void fq_axis(double a, double b, double fa, double fb, double fc, double *g,
             double *h)
{
    /* fa - fc = g a + h a^2 / 2 and fb - fc = g b + h b^2 / 2 */
    double det = 0.5 * a * b * (b - a);
    *g = (0.5 * (fa - fc) * b * b - 0.5 * (fb - fc) * a * a) / det;
    *h = (a * (fb - fc) - b * (fa - fc)) / det;
}

void fq_bfgs(int n, double *H, const double *s, const double *y)
{
    double Hs[FQ_MAX], sHs = 0, sy = 0, ss = 0, yy = 0;
    for (int i = 0; i < n; i++) {
        Hs[i] = 0;
        for (int j = 0; j < n; j++)
            Hs[i] += H[i * n + j] * s[j];
        sHs += s[i] * Hs[i];
        sy += s[i] * y[i];
        ss += s[i] * s[i];
        yy += y[i] * y[i];
    }
    /* Skip pairs without positive curvature: the update would lose
     * definiteness (a kink crossed, or rounding). */
    if (!(sy > 1e-10 * sqrt(ss * yy)) || !(sHs > 0))
        return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            H[i * n + j] += y[i] * y[j] / sy - Hs[i] * Hs[j] / sHs;
}

/* Cyclic Jacobi: A = V diag(w) V^T for symmetric A (overwritten).  The
 * matrices are at most FQ_MAX = 9 wide, once per star and Newton step;
 * LAPACK stays out of fits on purpose: it is dlopen'ed only when a pca
 * library is built, because OpenBLAS starts worker threads with every
 * signal unblocked as soon as it is loaded (interp/pca/pca_build.c). */
static void jacobi(int n, double *A, double *V, double *w)
{
    for (int i = 0; i < n * n; i++)
        V[i] = (i % (n + 1)) == 0;
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = 0, tot = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double a2 = A[i * n + j] * A[i * n + j];
                if (i == j)
                    tot += a2;
                else
                    off += a2;
            }
        if (off <= 1e-30 * (tot + off))
            break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = A[p * n + q];
                if (apq == 0)
                    continue;
                double th = 0.5 * (A[q * n + q] - A[p * n + p]) / apq;
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) { /* columns p, q */
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q */
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double vkp = V[k * n + p], vkq = V[k * n + q];
                    V[k * n + p] = c * vkp - s * vkq;
                    V[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < n; i++)
        w[i] = A[i * n + i];
}

void fq_psd_plus(int n, double *H, const double *p)
{
    double A[FQ_MAX * FQ_MAX], V[FQ_MAX * FQ_MAX], w[FQ_MAX];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            A[i * n + j] = 0.5 * (H[i * n + j] + H[j * n + i]);
    jacobi(n, A, V, w);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = i == j ? p[i] : 0;
            for (int k = 0; k < n; k++)
                s += V[i * n + k] * fmax(w[k], 0) * V[j * n + k];
            H[i * n + j] = s;
        }
}

void fq_make_pd(int n, double *H)
{
    double A[FQ_MAX * FQ_MAX], V[FQ_MAX * FQ_MAX], w[FQ_MAX], big = 1.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) /* symmetrise */
            A[i * n + j] = 0.5 * (H[i * n + j] + H[j * n + i]);
    for (int i = 0; i < n; i++)
        big = fmax(big, fabs(A[i * n + i]));
    jacobi(n, A, V, w);
    /* Eigenvalues below 1e-3 of the largest diagonal are raised to it: a
     * direction of negative or no curvature then gets a long step, which
     * the trust region limits. */
    for (int i = 0; i < n; i++)
        w[i] = fmax(w[i], 1e-3 * big);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += V[i * n + k] * w[k] * V[j * n + k];
            H[i * n + j] = s;
        }
}

/* Solve H_FF x_F = -(g_F + H_FA d_A) for the free set; returns 0 or -1. */
static int solve_free(int n, const double *H, const double *g,
                      const int *act, const double *d, double *x)
{
    int F[FQ_MAX], m = 0;
    double A[FQ_MAX * FQ_MAX], r[FQ_MAX];
    for (int i = 0; i < n; i++)
        if (!act[i])
            F[m++] = i;
    for (int i = 0; i < n; i++)
        x[i] = d[i];
    if (!m)
        return 0;
    for (int p = 0; p < m; p++) {
        r[p] = -g[F[p]];
        for (int j = 0; j < n; j++)
            if (act[j])
                r[p] -= H[F[p] * n + j] * d[j];
        for (int q = 0; q < m; q++)
            A[p * m + q] = H[F[p] * n + F[q]];
    }
    if (rvfit_chol(m, A, 0.0) != RVFIT_OK)
        return -1;
    rvfit_chol_forward(m, A, r, r);
    rvfit_chol_backward(m, A, r, r);
    for (int p = 0; p < m; p++)
        x[F[p]] = r[p];
    return 0;
}

/* Move d toward x up to the first bound crossed; fix that coordinate.
 * Returns 1 if a bound was hit. */
static int step_to_bound(int n, const double *l, const double *u,
                         const double *x, double *d, int *act)
{
    double t = 1.0;
    int jb = -1;
    for (int j = 0; j < n; j++) {
        if (act[j] || (x[j] >= l[j] && x[j] <= u[j]))
            continue;
        double bound = x[j] < l[j] ? l[j] : u[j];
        double tj = x[j] != d[j] ? (bound - d[j]) / (x[j] - d[j]) : 0;
        if (tj < t)
            t = tj, jb = j;
    }
    if (jb < 0)
        return 0;
    for (int j = 0; j < n; j++)
        if (!act[j])
            d[j] += t * (x[j] - d[j]);
    act[jb] = x[jb] < l[jb] ? -1 : 1;
    d[jb] = act[jb] < 0 ? l[jb] : u[jb];
    return 1;
}

int fq_boxqp(int n, const double *H, const double *g, const double *l,
             const double *u, double *d, int *act)
{
    double x[FQ_MAX];
    for (int j = 0; j < n; j++)
        d[j] = 0, act[j] = 0; /* 0 lies in the box: l <= 0 <= u */
    for (int it = 0; it < 8 * n + 8; it++) {
        if (solve_free(n, H, g, act, d, x))
            return -1;
        if (step_to_bound(n, l, u, x, d, act))
            continue;
        memcpy(d, x, (size_t)n * sizeof *d);
        /* Release the bound whose multiplier has the wrong sign most. */
        int jr = -1;
        double worst = 0;
        for (int j = 0; j < n; j++) {
            double gr = g[j];
            for (int k = 0; k < n; k++)
                gr += H[j * n + k] * d[k];
            double bad = act[j] < 0 ? -gr : act[j] > 0 ? gr : 0;
            if (bad > worst)
                worst = bad, jr = j;
        }
        if (jr < 0)
            return 0;
        act[jr] = 0;
    }
    return 0;
}

double fq_decrease(int n, const double *H, const double *g, const double *d)
{
    double q = 0;
    for (int i = 0; i < n; i++) {
        double hd = 0;
        for (int j = 0; j < n; j++)
            hd += H[i * n + j] * d[j];
        q += g[i] * d[i] + 0.5 * d[i] * hd;
    }
    return -q;
}

double fit_parabola_min(const double *x, const double *y, size_t n,
                        size_t k)
{
    if (k == 0 || k + 1 >= n)
        return x[k];
    double y0 = y[k - 1], y1 = y[k], y2 = y[k + 1];
    double den = y0 - 2 * y1 + y2;
    if (!(den > 0))
        return x[k];
    double h = x[k + 1] - x[k];
    double t = 0.5 * (y0 - y2) / den;
    t = t < -1 ? -1 : t > 1 ? 1 : t;
    return x[k] + t * h;
}
