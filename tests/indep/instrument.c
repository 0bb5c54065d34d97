/* The spectrographs (see instrument.h).  DESI-like: arm grids follow the
 * DESI data model (B 3600-5800, R 5760-7620, Z 7520-9824 A, 0.8 A); the
 * LSF widths are close to those of real DESI resolution matrices (sigma
 * ~0.7 A, centre weight ~0.44 in the B arm).  LAMOST MRS-like: below. */
#include "instrument.h"

#include <math.h>

static const ind_arm ARMS[IND_NARM] = {
    {"B", 3600.0, 0.8, 2751, 0.70, 0.06, -0.03, 0.02, 0.03, 0.04, -0.02,
     4800.0, 1300.0, 0, 5.5, 20},
    {"R", 5760.0, 0.8, 2326, 0.68, 0.05, -0.02, 0.01, 0.03, 0.05, -0.02,
     6700.0, 1500.0, 0, 5.5, 20},
    {"Z", 7520.0, 0.8, 2881, 0.76, 0.06, -0.03, -0.01, 0.04, 0.05, -0.02,
     8500.0, 1500.0, 0, 5.5, 20},
};

/* LAMOST MRS (../shared/reference/formats.md): B about 4150 pixels over
 * 4950-5350 A, R about 3730 from 6300 A.  One step in log10 lambda,
 * 8.13e-6 dex (5.6 km/s), fits both (R then ends at 6755 A).  The LSF is
 * a Gaussian of FWHM lambda / 7500 (sigma_ln = 1 / (7500 2.3548), 3.0
 * pixels), 2 % wider at the arms' ends than at their centres; each fibre
 * scales it (ind_fibre).  Its reach is 20 pixels (6.6 sigma), sampled 8
 * times per pixel. */
#define MRS_DLN (8.13e-6 * IND_LN10)
#define MRS_SIG (1.0 / (7500.0 * 2.354820045030949))
static const ind_arm MRS_ARMS[IND_MRS_NARM] = {
    {"B", 8.50720 /* ln 4950 */, MRS_DLN, 4150, MRS_SIG, 0.0,
     0.02 * MRS_SIG, 0, 0, 0, 0, 5200.0, 900.0, 1, 20.0, 8},
    {"R", 8.74830 /* ln 6300 */, MRS_DLN, 3730, MRS_SIG, 0.0,
     0.02 * MRS_SIG, 0, 0, 0, 0, 6500.0, 1100.0, 1, 20.0, 8},
};

const ind_arm *ind_desi_arms(void) { return ARMS; }
const ind_arm *ind_mrs_arms(void) { return MRS_ARMS; }

double ind_arm_lam(const ind_arm *a, size_t i)
{
    double x = a->lo + a->step * (double)i;
    return a->logpix ? exp(x) : x;
}

double ind_arm_lam_at(const ind_arm *a, double p)
{
    double x = a->lo + a->step * p;
    return a->logpix ? exp(x) : x;
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

/* The detector integral is a midpoint rule in x on `sub` sub-steps per
 * pixel with exact integrals of the piecewise-linear spectrum over each
 * sub-step.  The sub-step boundaries are shared by all pixels of the arm,
 * so those integrals are computed once: interval k spans
 * [x_0 - (M + 1/2) h + k h, ... + h], M = reach * sub, and pixel i at
 * offset m (u = m h) uses k = i sub - m + M.  In a log arm a sub-step's
 * mean is over its wavelengths and the kernel acts in ln lambda. */
static int arm_mreach(const ind_arm *a)
{
    return (int)lround(a->reach * a->sub);
}

size_t ind_arm_observe_scratch(const ind_arm *a)
{
    size_t sub = (size_t)a->sub, m = (size_t)arm_mreach(a);
    return (a->n - 1) * sub + 2 * m + 1 + 2 * (m + sub) + 1;
}

void ind_arm_observe(const ind_arm *a, const ind_fibre *fib,
                     const ind_hgrid *g, const double *f, const double *cum,
                     double *out, double *scratch)
{
    const int sub = a->sub, mreach = arm_mreach(a);
    double h = a->step / sub, lo = a->lo - (mreach + 0.5) * h;
    size_t nk = (a->n - 1) * (size_t)sub + 2 * (size_t)mreach + 1;
    double *in = scratch, *cdf = scratch + nk + mreach + sub;
    for (size_t k = 0; k < nk; k++) {
        double b0 = lo + (double)k * h;
        if (a->logpix)
            in[k] = ind_bin_mean(g, f, cum, exp(b0), exp(b0 + h)) * h;
        else
            in[k] = ind_bin_mean(g, f, cum, b0, b0 + h) * h;
    }
    for (size_t i = 0; i < a->n; i++) {
        double s, h3, h4, sum = 0.0, wsum = 0.0;
        ind_arm_lsf(a, i, fib, &s, &h3, &h4);
        for (int p = -(mreach + sub / 2); p <= mreach + sub / 2; p++)
            cdf[p] = ind_lsf_cdf(p * h / s, h3, h4);
        for (int m = -mreach; m <= mreach; m++) {
            double k = cdf[m + sub / 2] - cdf[m - sub / 2]; /* K(m h) dpix */
            sum += k * in[i * (size_t)sub + (size_t)(mreach - m)];
            wsum += k;
        }
        /* the kernel's weights sum to sub (= dpix / h); normalising makes
         * a flat spectrum exactly flat, as the rows of R are */
        out[i] = sum / (wsum * h);
    }
}
