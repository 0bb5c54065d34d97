/* Presets, star draws and the high-resolution observed-frame spectrum. */
#include "mock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const ind_preset PRESETS[] = {
    {"small", 4000, 7000, 500, 1.0, 5.0, 1.0, -2.0, 0.5, 0.5, 0.0, 0.4, 0.4,
     1e-5, 3450.0, 10000.0},
    {"std", 4000, 7000, 250, 1.0, 5.0, 0.5, -2.0, 0.5, 0.5, 0.0, 0.4, 0.4,
     6e-6, 3450.0, 10000.0},
    /* small with [Fe/H] and [alpha/Fe] twice as dense: separates those
     * axes' interpolation error from the rest (1,155 models) */
    {"small-fa", 4000, 7000, 500, 1.0, 5.0, 1.0, -2.0, 0.5, 0.25, 0.0, 0.4,
     0.2, 1e-5, 3450.0, 10000.0},
    /* PHOENIX's own steps below 7000 K (Teff 100 K, logg 0.5, [Fe/H]
     * 0.5, [alpha/Fe] 0.2): how far the interpolation error falls on a
     * grid as dense as the real library's (5,022 models, ~3.5 GB) */
    {"dense", 4000, 7000, 100, 1.0, 5.0, 0.5, -2.0, 0.5, 0.5, 0.0, 0.4, 0.2,
     6e-6, 3450.0, 10000.0},
    /* dense with [Fe/H] twice as fine (0.25 dex, 9,207 models, ~6.2 GB):
     * at S/N > 15 the 0.5-dex [Fe/H] step is what keeps line-rich stars
     * from the bound on the dense grid (docs/benchmarks.md) */
    {"dense-fe", 4000, 7000, 100, 1.0, 5.0, 0.5, -2.0, 0.5, 0.25, 0.0, 0.4,
     0.2, 6e-6, 3450.0, 10000.0},
    /* dense's steps over a box of dwarfs (Teff 5200-5800, logg 3.5-5,
     * [Fe/H] -1.5-0, 336 models, ~230 MB): the interpolation error at
     * PHOENIX's density in the time of a test (test_indep_bound_ratio) */
    {"dense-box", 5200, 5800, 100, 3.5, 5.0, 0.5, -1.5, 0.0, 0.5, 0.0, 0.4,
     0.2, 6e-6, 3450.0, 10000.0},
    /* for the LAMOST MRS arms (R ~ 7500, 5.6 km/s pixels): 0.9 km/s
     * sampling, as the observation's own grid, over the arms and a
     * velocity padding of 1000 km/s only; small's steps over a narrower
     * range (200 models, ~100 MB) */
    {"mrs", 4500, 6500, 500, 2.0, 5.0, 1.0, -1.5, 0.5, 0.5, 0.0, 0.4, 0.4,
     3e-6, 4800.0, 6950.0},
};

const ind_preset *ind_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (strcmp(PRESETS[i].name, name) == 0)
            return &PRESETS[i];
    return NULL;
}

/* Uniform inside [lo, hi] kept half a grid step from both edges, so every
 * star is off the grid nodes and interpolated, never extrapolated. */
static double inside(ind_rng *r, double lo, double hi, double step)
{
    return lo + 0.5 * step + (hi - lo - step) * ind_rng_uniform(r);
}

/* The nearest grid node, but never an edge node: a star on the edge of the
 * grid cannot be fitted beyond it and would look better than it is. */
static double snap(double x, double lo, double hi, double step)
{
    double k = round((x - lo) / step), kmax = round((hi - lo) / step);
    k = k < 1 ? 1 : (k > kmax - 1 ? kmax - 1 : k);
    return lo + step * k;
}

/* Applied after all draws, so an ablated set keeps every other number. */
static void ablate(const ind_preset *ps, unsigned ab, ind_draw *d)
{
    if (ab & IND_NO_COSMICS)
        d->cosmic_rate = 0.0;
    if (ab & IND_NO_SKYRES)
        memset(d->skyres, 0, sizeof d->skyres);
    if (ab & IND_NO_DISTORTION)
        memset(d->dist, 0, sizeof d->dist);
    if (ab & IND_GAUSS_LSF)
        d->fib.shape = 0.0;
    if (ab & IND_NO_ROTATION)
        d->vsini = 0.0;
    if (ab & IND_ON_NODES) {
        d->p.teff = snap(d->p.teff, ps->t0, ps->t1, ps->tstep);
        d->p.logg = snap(d->p.logg, ps->g0, ps->g1, ps->gstep);
        d->p.feh = snap(d->p.feh, ps->f0, ps->f1, ps->fstep);
        /* [alpha/Fe] has edge nodes only */
        d->p.alpha = ps->a0 + ps->astep * round((d->p.alpha - ps->a0) / ps->astep);
    }
}

void ind_draw_star(uint64_t seed, size_t i, const ind_preset *ps,
                   const ind_mockopts *o, ind_draw *d)
{
    ind_rng r;
    ind_rng_seed(&r, seed, i, 1);
    memset(d, 0, sizeof *d);
    d->p.teff = inside(&r, ps->t0, ps->t1, ps->tstep);
    d->p.logg = inside(&r, ps->g0, ps->g1, ps->gstep);
    d->p.feh = inside(&r, ps->f0, ps->f1, ps->fstep);
    /* only two alpha nodes: half a step in would pin every star to the
     * middle, so a quarter step in from each */
    d->p.alpha = ps->a0 + 0.25 * ps->astep +
                 (ps->a1 - ps->a0 - 0.5 * ps->astep) * ind_rng_uniform(&r);
    d->vrad = o->vmax * (2.0 * ind_rng_uniform(&r) - 1.0);
    d->vsini = o->vsini_max * ind_rng_uniform(&r);
    d->snr = o->snr_min * pow(o->snr_max / o->snr_min, ind_rng_uniform(&r));
    d->fmed = 2.0 * pow(20.0, ind_rng_uniform(&r));
    d->fib.scale = 0.93 + 0.14 * ind_rng_uniform(&r);
    d->fib.dh3 = 0.01 * ind_rng_normal(&r);
    d->fib.shape = 1.0;
    for (int a = 0; a < IND_NARM; a++) {
        for (int k = 0; k < 4; k++)
            d->dist[a][k] = 0.015 * ind_rng_normal(&r);
        d->skyres[a] = 0.01 * ind_rng_normal(&r);
    }
    d->ra = 150.0 + 3.0 * (ind_rng_uniform(&r) - 0.5);
    d->dec = 30.0 + 3.0 * (ind_rng_uniform(&r) - 0.5);
    d->cosmic_rate = 1.5;
    ablate(ps, o->ablate, d);
}

int ind_obsctx_make(ind_obsctx *c, const ind_linelist *ll, double vsini_max,
                    ind_err *e)
{
    return ind_obsctx_make_arms(c, ll, vsini_max, ind_desi_arms(), IND_NARM,
                                0.0, e);
}

int ind_obsctx_make_arms(ind_obsctx *c, const ind_linelist *ll,
                         double vsini_max, const ind_arm *arms, int narm,
                         double margin, ind_err *e)
{
    memset(c, 0, sizeof *c);
    c->ll = ll;
    c->rn2 = 100.0; /* 4 exposures x (5 e-)^2 */
    c->arms = arms;
    c->narm = narm;
    /* cover the reach of every pixel's kernel plus the rotation kernel of
     * the fastest star */
    double pad = exp(vsini_max / IND_C_KMS), lo = 1e30, hi = 0;
    for (int a = 0; a < narm; a++) {
        const ind_arm *A = &arms[a];
        double r = A->reach + 0.5;
        if (A->logpix) {
            lo = fmin(lo, ind_arm_lam_at(A, -r - margin));
            hi = fmax(hi, ind_arm_lam_at(A, (double)(A->n - 1) + r + margin));
        } else {
            lo = fmin(lo, A->lo - r * A->step);
            hi = fmax(hi, ind_arm_lam(A, A->n - 1) + r * A->step);
        }
    }
    return ind_hgrid_make(&c->g, lo / pad - 1.0, hi * pad + 1.0, 3e-6, e);
}

void ind_obsctx_free(ind_obsctx *c)
{
    ind_hgrid_free(&c->g);
}

int ind_work_make(ind_work *w, const ind_obsctx *c, ind_err *e)
{
    const ind_arm *arms = c->arms;
    size_t npix = 0, n = c->g.n, ns = 0;
    for (int a = 0; a < c->narm; a++) {
        npix += arms[a].n;
        size_t q = ind_arm_observe_scratch(&arms[a]);
        ns = q > ns ? q : ns;
    }
    memset(w, 0, sizeof *w);
    w->buf = malloc((6 * n + 5 * npix + ns) * sizeof(double));
    if (!w->buf)
        return ind_fail(e, "work space: out of memory");
    w->hires = w->buf;
    w->spec = w->hires + 4 * n;
    w->cum = w->spec + n;
    double *p = w->cum + n;
    for (int a = 0; a < c->narm; a++) {
        w->model[a] = p;
        w->sky[a] = p + npix;
        w->skyl[a] = p + 2 * npix;
        w->resp[a] = p + 3 * npix;
        p += arms[a].n;
    }
    w->all = w->buf + 6 * n + 4 * npix;
    w->scratch = w->all + npix;
    w->n1 = arms[1].n;
    return 0;
}

void ind_work_free(ind_work *w)
{
    free(w->buf);
    w->buf = NULL;
}

#define ROT_MAX 4096
int ind_hires_observed(const ind_hgrid *obs, double v, double vsini,
                       ind_source_fn fn, void *ctx, double *out,
                       double *work)
{
    size_t n = obs->n;
    double s = ind_doppler_lnshift(v), f = exp(-s);
    ind_hgrid rest = {obs->lnl0 - s, obs->dlnl, n, work};
    for (size_t k = 0; k < n; k++)
        rest.lam[k] = obs->lam[k] * f; /* lambda_emit = lambda_obs / D */
    double *tmp = work + n;
    fn(ctx, &rest, tmp, work + 2 * n);
    double w[2 * ROT_MAX + 1];
    int half;
    /* the same limb darkening (0.6) as rvspecfit's kernel */
    if (ind_rot_weights(vsini, 0.6, obs->dlnl, w, ROT_MAX, &half))
        return -1;
    ind_convolve(tmp, out, n, w, half);
    return 0;
}

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

double ind_median(double *x, size_t n)
{
    /* quickselect (Hoare), lower median for even n averaged with the
     * smallest element above it */
    size_t lo = 0, hi = n - 1, k = (n - 1) / 2;
    while (lo < hi) {
        double p = x[(lo + hi) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < p)
                i++;
            while (x[j] > p)
                j--;
            if (i <= j) {
                swap(&x[i], &x[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    double m = x[k];
    if (n % 2)
        return m;
    double up = INFINITY;
    for (size_t i = k + 1; i < n; i++)
        up = fmin(up, x[i]);
    return 0.5 * (m + up);
}
