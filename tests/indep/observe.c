/* Observation physics that does not depend on the instrument: Doppler
 * shift, rotational broadening, exact pixel integration of a piecewise-
 * linear spectrum, and the Gram-Charlier line-spread function. */
#include "indep.h"

#include <math.h>
#include <string.h>

double ind_doppler_lnshift(double v)
{
    /* lambda_obs = lambda_emit sqrt((1 + b)/(1 - b)): ln ratio = atanh(b) */
    return atanh(v / IND_C_KMS);
}

double ind_rot_kernel(double x, double eps)
{
    if (fabs(x) >= 1.0)
        return 0.0;
    double q = 1.0 - x * x;
    return (2.0 * (1.0 - eps) * sqrt(q) + 0.5 * IND_PI * eps * q) /
           (IND_PI * (1.0 - eps / 3.0));
}

int ind_rot_weights(double vsini, double eps, double dlnl, double *w,
                    int maxhalf, int *half)
{
    double r = vsini / IND_C_KMS / dlnl; /* kernel half width in samples */
    int h = (int)ceil(r) + 1;
    if (h > maxhalf)
        return -1;
    memset(w, 0, (size_t)(2 * h + 1) * sizeof *w);
    *half = h;
    if (r < 1e-9) {
        w[h] = 1.0;
        return 0;
    }
    /* x = sin(phi) removes the square-root edge of the kernel, so a plain
     * midpoint rule in phi converges fast; each node is shared between
     * its two neighbouring samples with the hat weights of a
     * piecewise-linear signal. */
    const int m = 8192;
    double sum = 0.0, dphi = IND_PI / m;
    for (int q = 0; q < m; q++) {
        double phi = -0.5 * IND_PI + (q + 0.5) * dphi;
        double x = sin(phi), g = ind_rot_kernel(x, eps) * cos(phi) * dphi;
        double u = r * x + h;
        int j = (int)floor(u);
        double f = u - j;
        w[j] += g * (1.0 - f);
        w[j + 1] += g * f;
        sum += g;
    }
    for (int j = 0; j <= 2 * h; j++)
        w[j] /= sum;
    return 0;
}

void ind_convolve(const double *in, double *out, size_t n, const double *w,
                  int half)
{
    for (size_t k = 0; k < n; k++) {
        double s = 0.0;
        for (int m = -half; m <= half; m++) {
            long j = (long)k - m;
            j = j < 0 ? 0 : (j >= (long)n ? (long)n - 1 : j);
            s += w[m + half] * in[j];
        }
        out[k] = s;
    }
}

void ind_cumulate(const ind_hgrid *g, const double *f, double *cum)
{
    cum[0] = 0.0;
    for (size_t k = 1; k < g->n; k++)
        cum[k] = cum[k - 1] +
                 0.5 * (f[k - 1] + f[k]) * (g->lam[k] - g->lam[k - 1]);
}

/* Integral of the piecewise-linear f from lam[0] to x. */
static double integral_to(const ind_hgrid *g, const double *f,
                          const double *cum, double x)
{
    double u = floor((log(x) - g->lnl0) / g->dlnl);
    size_t k = u < 0 ? 0 : (u > (double)g->n - 2 ? g->n - 2 : (size_t)u);
    while (k > 0 && g->lam[k] > x)
        k--;
    while (k + 2 < g->n && g->lam[k + 1] < x)
        k++;
    double t = x - g->lam[k], h = g->lam[k + 1] - g->lam[k];
    return cum[k] + t * (f[k] + 0.5 * (f[k + 1] - f[k]) * t / h);
}

double ind_bin_mean(const ind_hgrid *g, const double *f, const double *cum,
                    double a, double b)
{
    return (integral_to(g, f, cum, b) - integral_to(g, f, cum, a)) / (b - a);
}

#define SQRT6 2.449489742783178
#define SQRT24 4.898979485566356

double ind_lsf(double u, double s, double h3, double h4)
{
    double y = u / s, y2 = y * y;
    double he3 = y * (y2 - 3.0), he4 = y2 * y2 - 6.0 * y2 + 3.0;
    return exp(-0.5 * y2) / (sqrt(2.0 * IND_PI) * s) *
           (1.0 + h3 / SQRT6 * he3 + h4 / SQRT24 * he4);
}

double ind_lsf_cdf(double y, double h3, double h4)
{
    /* d/dy [phi He_{n-1}] = -phi He_n, so the Hermite terms integrate in
     * closed form */
    double phi = exp(-0.5 * y * y) / sqrt(2.0 * IND_PI);
    double he2 = y * y - 1.0, he3 = y * (y * y - 3.0);
    return 0.5 * erfc(-y / IND_SQRT2) -
           phi * (h3 / SQRT6 * he2 + h4 / SQRT24 * he3);
}

void ind_lsf_row(double s, double h3, double h4, double dpix,
                 double row[IND_NDIAG])
{
    /* source pixel i + d lies at u = lambda_i - lambda_src in
     * [(-d - 1/2) dpix, (-d + 1/2) dpix] */
    for (int d = -5; d <= 5; d++)
        row[d + 5] = ind_lsf_cdf((-d + 0.5) * dpix / s, h3, h4) -
                     ind_lsf_cdf((-d - 0.5) * dpix / s, h3, h4);
}
