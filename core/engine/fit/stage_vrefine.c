/* stage_vrefine.c — stage 3 of the fit: velocity refinement with vscan
 * around the optimiser's velocity; VRAD, VRAD_ERR, VRAD_SKEW and VRAD_KURT
 * from the posterior exp(-chi^2/2) on the final scan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"
#include "quad.h"

/* Two points at +-VR_PROBE km/s around the optimiser's velocity give,
 * with the optimum's own value, a parabola: its vertex and curvature
 * place the scan.  (On desi-1k the vertex was within 0.35 sigma of the
 * final VRAD and the curvature's sigma within 7 % of VRAD_ERR for every
 * star; this replaced a 15-point coarse scan.)  Where the parabola has no
 * minimum near, a coarse scan finds the minimum and the curvature there
 * instead.  A scan of VR_N points at +-VR_NSIGMA sigma
 * (step 0.5 sigma) then resolves the posterior, wide enough for the tail
 * of a skewed one.  Moments of a smooth
 * posterior sampled every 0.5 sigma are exact to far below 1e-6 (the
 * trapezoid rule on a Gaussian errs by ~exp(-2 pi^2 sigma^2/step^2)), so
 * finer steps would buy nothing; a scan is accepted once its step is at
 * most VR_MAX_STEP sigma and it reaches VR_MIN_HALF sigma each side. */
#define VR_PROBE 4.0      /* half distance of the two probes, km/s      */
#define VR_N1 15          /* points of the fallback coarse scan          */
#define VR_HALF1 15.0     /* its half range, km/s                        */
#define VR_N 25           /* points of every later scan                  */
#define VR_NSIGMA 6.0     /* half range of a later scan, in sigma        */
#define VR_MAX_STEP 0.6   /* accepted step, in sigma                     */
#define VR_MIN_HALF 5.5   /* accepted half range, in sigma: skewed tails */
#define VR_MAX_IT 6
#define VR_NMAX (VR_N1 > VR_N ? VR_N1 : VR_N)

typedef struct vr_state {
    double center, half;
    int n, done;
} vr_state;

/* Moments of p ~ exp(-chi2/2) about vhat from one scan. */
void fit_vscan_moments(const double *v, const double *m, size_t n,
                       double vhat, double *sig, double *skew, double *kurt)
{
    double mmin = m[0];
    for (size_t k = 1; k < n; k++)
        mmin = fmin(mmin, m[k]);
    double s0 = 0, s2 = 0, s3 = 0, s4 = 0;
    for (size_t k = 0; k < n; k++) {
        double p = exp(-0.5 * (m[k] - mmin)), d = v[k] - vhat;
        s0 += p, s2 += p * d * d, s3 += p * d * d * d, s4 += p * d * d * d * d;
    }
    double var = s2 / s0;
    *sig = sqrt(var);
    *skew = var > 0 ? s3 / s0 / pow(var, 1.5) : 0;
    *kurt = var > 0 ? s4 / s0 / (var * var) - 3.0 : 0;
}

/* Sigma of exp(-m/2) from the curvature of m at scan index k (not at an
 * edge); infinity where the scan shows no curvature. */
static double vr_curv_sigma(const double *v, const double *m, size_t k)
{
    double h = v[1] - v[0];
    double c = (m[k - 1] - 2 * m[k] + m[k + 1]) / (h * h);
    return c > 0 ? sqrt(2.0 / c) : INFINITY;
}

/* Minimum of the cubic through four scan points around index k: the
 * three nearest plus the next on the lower side.  A parabola through
 * three points puts the mode of a skewed posterior ~0.03 sigma off at a
 * step of 0.5 sigma, which shifts its skewness by ~0.06; the cubic's
 * error is an order higher.  Falls back to the parabola. */
double fit_vscan_mode(const double *v, const double *m, size_t n, size_t k)
{
    double vp = fit_parabola_min(v, m, n, k);
    if (k < 2 || k + 2 >= n)
        return vp;
    int lo = m[k - 1] < m[k + 1]; /* the extra point on the lower side */
    double fm = m[k - 1], f0 = m[k], fp = m[k + 1], h = v[1] - v[0];
    double c3 = lo ? (fp - 3 * f0 + 3 * fm - m[k - 2]) / 6
                   : (m[k + 2] - 3 * fp + 3 * f0 - fm) / 6;
    double c2 = 0.5 * (fp - 2 * f0 + fm), c1 = 0.5 * (fp - fm) - c3;
    double disc = c2 * c2 - 3 * c1 * c3;
    if (c2 <= 0 || disc < 0)
        return vp;
    /* Root of c1 + 2 c2 t + 3 c3 t^2 where the curvature is positive,
     * in the stable form of the quadratic formula. */
    double t = -c1 / (c2 + sqrt(disc));
    return fabs(t) <= 1 ? v[k] + t * h : vp;
}

/* The scan in the result; the last one kept is the final scan. */
static void vr_keep(rvfit_result *r, const double *v, const double *m,
                    size_t n)
{
    _Static_assert(VR_NMAX <= RVFIT_VSCAN_MAX, "rvfit_result keeps a scan");
    r->vscan_n = (int)n;
    memcpy(r->vscan_v, v, n * sizeof *v);
    memcpy(r->vscan_m2lnl, m, n * sizeof *m);
}

/* One scan's verdict for spectrum sp: store the estimate, and either mark
 * the state done or set up the next scan. */
static void vr_update(fit_ctx *f, vr_state *s, size_t sp, const double *v,
                      const double *mq)
{
    size_t n = (size_t)s->n, kb = 0;
    for (size_t k = 1; k < n; k++)
        kb = mq[k] < mq[kb] ? k : kb;
    double step = v[1] - v[0], sigma;
    double vhat = fit_vscan_mode(v, mq, n, kb);
    int at_edge = kb == 0 || kb == n - 1;
    fit_vscan_moments(v, mq, n, vhat, &sigma, &f->vskew[sp], &f->vkurt[sp]);
    f->best[sp].v = vhat;
    f->fbest[sp] = mq[kb];
    f->verr[sp] = sigma;
    vr_keep(&f->res[sp], v, mq, n);
    if (!at_edge && step <= VR_MAX_STEP * sigma &&
        s->half >= VR_MIN_HALF * sigma) {
        s->done = 1;
        return;
    }
    s->center = vhat;
    if (at_edge)
        return; /* same scan, moved: the minimum lies beyond it */
    /* An under-resolved scan's moments mostly measure its step: the
     * curvature at the minimum tells the width better. */
    double sc = vr_curv_sigma(v, mq, kb);
    if (step > VR_MAX_STEP * sigma && isfinite(sc))
        sigma = fmax(sigma, sc);
    s->half = fmax(VR_NSIGMA * sigma, 0.05);
    s->n = VR_N;
}

typedef struct vr_buf {
    rvfit_point *base;
    double *vel, *m;
    size_t *idx;
} vr_buf;

/* One backend call scanning every unfinished spectrum whose next scan has
 * L points (one call per scan length keeps vscan's rectangle). */
static int vr_scan(fit_ctx *f, vr_state *st, size_t n, size_t L,
                   const vr_buf *b)
{
    size_t nq = 0;
    for (size_t i = 0; i < n; i++) {
        if (st[i].done || (size_t)st[i].n != L)
            continue;
        b->idx[nq] = i;
        b->base[nq] = f->best[f->xact[i]];
        for (size_t k = 0; k < L; k++)
            b->vel[nq * L + k] =
                st[i].center +
                st[i].half * (2.0 * (double)k / (double)(L - 1) - 1);
        nq++;
    }
    int rc = nq ? fit_vscan(f, nq, b->base, L, b->vel, b->m) : RVFIT_OK;
    for (size_t q = 0; q < nq && !rc; q++)
        vr_update(f, &st[b->idx[q]], f->xact[b->idx[q]], b->vel + q * L,
                  b->m + q * L);
    return rc;
}

/* Parabola through the optimum and two probes: the first scan's centre
 * and width, or the coarse scan where it has no minimum within +-3
 * VR_PROBE.  A spectrum of an object fitted with others has no -2 ln L
 * of its own at the optimum (the optimiser saw the object's sum): with
 * groups every spectrum is scanned at the optimum too (np = 3, the
 * middle point), whose value those of objects of several spectra take;
 * an object of one keeps the optimiser's, so that it gets exactly a
 * single fit's numbers. */
static int vr_probe(fit_ctx *f, vr_state *st, size_t n, const vr_buf *b)
{
    size_t np = f->grp ? 3 : 2;
    for (size_t i = 0; i < n; i++) {
        b->base[i] = f->best[f->xact[i]];
        b->vel[np * i] = b->base[i].v - VR_PROBE;
        b->vel[np * i + np - 1] = b->base[i].v + VR_PROBE;
        if (np == 3)
            b->vel[np * i + 1] = b->base[i].v;
    }
    int rc = fit_vscan(f, n, b->base, np, b->vel, b->m);
    for (size_t i = 0; i < n && !rc; i++) {
        double fm = b->m[np * i], fp = b->m[np * i + np - 1];
        if (np == 3 && fit_group_size(f, f->xact[i]) > 1)
            f->fbest[f->xact[i]] = b->m[np * i + 1];
        double f0 = f->fbest[f->xact[i]], c = fm - 2 * f0 + fp;
        double t = c > 0 ? 0.5 * (fm - fp) / c : INFINITY;
        double v0 = b->base[i].v;
        if (fabs(t) <= 3)
            st[i] = (vr_state){v0 + t * VR_PROBE,
                               fmax(VR_NSIGMA * VR_PROBE * sqrt(2 / c), 0.05),
                               VR_N, 0};
        else
            st[i] = (vr_state){v0, VR_HALF1, VR_N1, 0};
    }
    return rc;
}

int fit_stage_vrefine(fit_ctx *f)
{
    size_t n = f->nxact;
    vr_state *st = calloc(n, sizeof *st);
    vr_buf b = {malloc(n * sizeof *b.base),
                malloc(n * VR_NMAX * sizeof *b.vel),
                malloc(n * VR_NMAX * sizeof *b.m), malloc(n * sizeof *b.idx)};
    int rc = (!st || !b.base || !b.vel || !b.m || !b.idx) ? fit_nomem(f)
                                                         : RVFIT_OK;
    if (!rc)
        rc = vr_probe(f, st, n, &b);
    for (int it = 0; it < VR_MAX_IT && !rc; it++) {
        rc = vr_scan(f, st, n, VR_N1, &b);
        if (!rc)
            rc = vr_scan(f, st, n, VR_N, &b);
    }
    free(st), free(b.base), free(b.vel), free(b.m), free(b.idx);
    return rc;
}
