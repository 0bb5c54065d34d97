/* A DESI-like spectrograph (see instrument.h).  Arm grids follow the DESI
 * data model (B 3600-5800, R 5760-7620, Z 7520-9824 A, 0.8 A); the LSF
 * widths are close to those of real DESI resolution matrices (sigma ~0.7 A,
 * centre weight ~0.44 in the B arm). */
#include "instrument.h"

#include <math.h>

static const ind_arm ARMS[IND_NARM] = {
    {"B", 3600.0, 0.8, 2751, 0.70, 0.06, -0.03, 0.02, 0.03, 0.04, -0.02,
     4800.0, 1300.0},
    {"R", 5760.0, 0.8, 2326, 0.68, 0.05, -0.02, 0.01, 0.03, 0.05, -0.02,
     6700.0, 1500.0},
    {"Z", 7520.0, 0.8, 2881, 0.76, 0.06, -0.03, -0.01, 0.04, 0.05, -0.02,
     8500.0, 1500.0},
};

const ind_arm *ind_desi_arms(void) { return ARMS; }

double ind_arm_lam(const ind_arm *a, size_t i)
{
    return a->lo + a->step * (double)i;
}

static double arm_x(const ind_arm *a, size_t i)
{
    return 2.0 * (double)i / (double)(a->n - 1) - 1.0;
}

void ind_arm_lsf(const ind_arm *a, size_t i, const ind_fibre *f, double *s,
                 double *h3, double *h4)
{
    double x = arm_x(a, i);
    *s = f->scale * (a->s0 + a->s1 * x + a->s2 * x * x);
    *h3 = f->shape * (a->h3a + a->h3b * x + f->dh3);
    *h4 = f->shape * (a->h4a + a->h4b * x * x);
}

void ind_arm_resolution(const ind_arm *a, const ind_fibre *f, float *res)
{
    size_t n = a->n;
    for (size_t k = 0; k < IND_NDIAG * n; k++)
        res[k] = 0.0f;
    for (size_t i = 0; i < n; i++) {
        double s, h3, h4, row[IND_NDIAG], sum = 0.0;
        ind_arm_lsf(a, i, f, &s, &h3, &h4);
        ind_lsf_row(s, h3, h4, a->step, row);
        for (int d = -5; d <= 5; d++) {
            long j = (long)i + d;
            if (j < 0 || j >= (long)n)
                row[d + 5] = 0.0; /* no source pixel beyond the arm */
            sum += row[d + 5];
        }
        for (int d = -5; d <= 5; d++) {
            long j = (long)i + d;
            if (j >= 0 && j < (long)n)
                res[(size_t)(5 - d) * n + (size_t)j] = (float)(row[d + 5] / sum);
        }
    }
}

void ind_arm_apply(const ind_arm *a, const float *res, const double *in,
                   double *out)
{
    size_t n = a->n;
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int d = -5; d <= 5; d++) {
            long j = (long)i + d;
            if (j >= 0 && j < (long)n)
                s += (double)res[(size_t)(5 - d) * n + (size_t)j] * in[j];
        }
        out[i] = s;
    }
}

void ind_arm_bin(const ind_arm *a, const ind_hgrid *g, const double *f,
                 const double *cum, double *out)
{
    for (size_t i = 0; i < a->n; i++) {
        double c = ind_arm_lam(a, i);
        out[i] = ind_bin_mean(g, f, cum, c - 0.5 * a->step, c + 0.5 * a->step);
    }
}

double ind_arm_response(const ind_arm *a, double lam)
{
    /* throughput (a broad bump per arm) times photons per erg ~ lambda */
    double q = (lam - a->tc) / a->tw;
    return 0.85 * exp(-0.5 * q * q) * lam / 5000.0;
}

double ind_pixel_kernel(double u, double s, double h3, double h4, double dpix)
{
    return (ind_lsf_cdf((u + 0.5 * dpix) / s, h3, h4) -
            ind_lsf_cdf((u - 0.5 * dpix) / s, h3, h4)) / dpix;
}

/* The detector integral is a midpoint rule in u on SUB sub-steps per pixel
 * with exact integrals of the piecewise-linear spectrum over each sub-step.
 * The sub-step boundaries are shared by all pixels of the arm, so those
 * integrals are computed once: interval k spans
 * [lambda_0 - (M + 1/2) h + k h, ... + h], and pixel i at offset m
 * (u = m h) uses k = i SUB - m + M. */
#define SUB 20
#define MREACH 110 /* 5.5 pixels */

size_t ind_arm_observe_scratch(const ind_arm *a)
{
    return (a->n - 1) * SUB + 2 * MREACH + 1 + 2 * (MREACH + SUB) + 1;
}

void ind_arm_observe(const ind_arm *a, const ind_fibre *fib,
                     const ind_hgrid *g, const double *f, const double *cum,
                     double *out, double *scratch)
{
    double h = a->step / SUB, lo = a->lo - (MREACH + 0.5) * h;
    size_t nk = (a->n - 1) * SUB + 2 * MREACH + 1;
    double *in = scratch, *cdf = scratch + nk + MREACH + SUB;
    for (size_t k = 0; k < nk; k++) {
        double b0 = lo + (double)k * h;
        in[k] = ind_bin_mean(g, f, cum, b0, b0 + h) * h;
    }
    for (size_t i = 0; i < a->n; i++) {
        double s, h3, h4, sum = 0.0, wsum = 0.0;
        ind_arm_lsf(a, i, fib, &s, &h3, &h4);
        for (int p = -(MREACH + SUB / 2); p <= MREACH + SUB / 2; p++)
            cdf[p] = ind_lsf_cdf(p * h / s, h3, h4);
        for (int m = -MREACH; m <= MREACH; m++) {
            double k = cdf[m + SUB / 2] - cdf[m - SUB / 2]; /* K(m h) dpix */
            sum += k * in[i * SUB + (size_t)(MREACH - m)];
            wsum += k;
        }
        /* the kernel's weights sum to SUB (= dpix / h); normalising makes a
         * flat spectrum exactly flat, as the rows of R are */
        out[i] = sum / (wsum * h);
    }
}
