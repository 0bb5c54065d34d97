/* fit_stages.c — stages 1 and 3 of the fit, each a few batched backend
 * calls: initial scan (templates x velocities, then a node lattice) and
 * velocity refinement with vscan.  Stage 2 (fit_optim.c) works at the
 * velocity of stage 1: stage 3 scans it anyway, and it is nearly
 * uncorrelated with theta (docs/benchmarks.md, "Cost per star"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"
#include "library/grid_index.h"

#define INIT_MAX_TEMPLATES 8
#define LATTICE_MAX 512

int fit_nomem(fit_ctx *f)
{
    return rvfit_err_set(f->err, RVFIT_ERR_NOMEM, "fit: out of memory");
}

static int axis_named(const rvfit_library *L, const char *name, int def)
{
    for (int i = 0; i < L->nparam; i++)
        if (!strcmp(L->axis[i].name, name))
            return i;
    return def < L->nparam ? def : -1;
}

static void node_theta(const rvfit_library *L, size_t m, double *theta)
{
    int n[RVFIT_MAX_PARAMS];
    grid_unravel(L, m, n);
    for (int i = 0; i < L->nparam; i++)
        theta[i] = L->axis[i].node[n[i]];
}

/* Nearest existing node (scaled distance in units of node spacing). */
static size_t nearest_existing(const fit_ctx *f, size_t m)
{
    const rvfit_library *L = f->lib;
    if (L->exists[m])
        return m;
    double t0[RVFIT_MAX_PARAMS], t[RVFIT_MAX_PARAMS], best = INFINITY;
    size_t bm = m;
    node_theta(L, m, t0);
    for (size_t k = 0; k < L->nmodel; k++) {
        if (!L->exists[k])
            continue;
        node_theta(L, k, t);
        double d = 0;
        for (int i = 0; i < L->nparam; i++)
            d += pow((t[i] - t0[i]) / f->step[i], 2);
        if (d < best)
            best = d, bm = k;
    }
    return bm;
}

/* Evenly spread node indices: count values of axis a. */
static int spread(int nnode, int count, int j)
{
    if (count <= 1)
        return (nnode - 1) / 2;
    return (int)lround((double)j * (nnode - 1) / (count - 1));
}

/* Lattice of library nodes: up to caps[] values per axis, holes replaced by
 * their nearest existing node.  Returns the number of nodes. */
static int lattice(const fit_ctx *f, const int *caps, size_t *out, int max)
{
    const rvfit_library *L = f->lib;
    int cnt[RVFIT_MAX_PARAMS], idx[RVFIT_MAX_PARAMS], j[RVFIT_MAX_PARAMS];
    int total = 1;
    for (int i = 0; i < L->nparam; i++) {
        cnt[i] = caps[i] < L->axis[i].nnode ? caps[i] : L->axis[i].nnode;
        total *= cnt[i];
        j[i] = 0;
    }
    int n = 0;
    for (int t = 0; t < total && n < max; t++) {
        int r = t;
        for (int i = L->nparam - 1; i >= 0; i--) {
            j[i] = r % cnt[i];
            r /= cnt[i];
            idx[i] = spread(L->axis[i].nnode, cnt[i], j[i]);
        }
        size_t m = nearest_existing(f, grid_ravel(L, idx));
        int dup = 0;
        for (int k = 0; k < n; k++)
            dup |= out[k] == m;
        if (!dup)
            out[n++] = m;
    }
    return n;
}

/* The fine velocity grid of stage 1: vmin + k ccf_vstep, k < nfine. */
static double init_vel(const fit_ctx *f, long k)
{
    return f->o->vmin + (double)k * f->o->ccf_vstep;
}

/* Parabolic vertex at the lowest of fine indices kf-1, kf, kf+1: the even
 * ones from the coarse scan mq (fine k = coarse k/2), kf -+ 1 in m2. */
static double init_vertex(const fit_ctx *f, const double *mq,
                          const double *m2, long kf, long nfine)
{
    double x[5], y[5];
    size_t cnt = 0, best = 0;
    int have = 0;
    for (long j = -2; j <= 2; j++) {
        long k = kf + j;
        if (k < 0 || k >= nfine)
            continue;
        x[cnt] = init_vel(f, k);
        y[cnt] = j % 2 ? m2[j > 0] : mq[k / 2];
        if (labs(j) <= 1 && (!have || y[cnt] < y[best]))
            best = cnt, have = 1;
        cnt++;
    }
    return fit_parabola_min(x, y, cnt, best);
}

/* Stage 1a, second step: the best template of each spectrum at the two
 * fine velocities beside its coarse minimum (coarse index kc = fine 2 kc),
 * then the parabola through the fine minimum and its neighbours. */
static int init_refine(fit_ctx *f, const rvfit_point *base, const double *m,
                       int K, size_t nc, long nfine, double *v0)
{
    size_t n = f->nact;
    rvfit_point *b2 = malloc((n ? n : 1) * sizeof *b2);
    double *vel = malloc(2 * (n ? n : 1) * sizeof *vel);
    double *m2 = malloc(2 * (n ? n : 1) * sizeof *m2);
    size_t *bq = malloc((n ? n : 1) * sizeof *bq);
    long *kf = malloc((n ? n : 1) * sizeof *kf);
    int rc = (!b2 || !vel || !m2 || !bq || !kf) ? fit_nomem(f) : RVFIT_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t bk = 0;
        bq[i] = i * (size_t)K;
        for (size_t q = i * (size_t)K; q < (i + 1) * (size_t)K; q++)
            for (size_t k = 0; k < nc; k++)
                if (m[q * nc + k] < m[bq[i] * nc + bk])
                    bq[i] = q, bk = k;
        kf[i] = 2 * (long)bk;
        b2[i] = base[bq[i]];
        /* off the grid's ends: any valid velocity, its value unused */
        vel[2 * i] = init_vel(f, kf[i] > 0 ? kf[i] - 1 : kf[i]);
        vel[2 * i + 1] = init_vel(f, kf[i] + 1 < nfine ? kf[i] + 1 : kf[i]);
    }
    if (!rc)
        rc = fit_vscan(f, n, b2, 2, vel, m2);
    for (size_t i = 0; i < n && !rc; i++)
        v0[i] = init_vertex(f, m + bq[i] * nc, m2 + 2 * i, kf[i], nfine);
    free(b2), free(vel), free(m2), free(bq), free(kf);
    return rc;
}

/* Stage 1a: a few templates x every other velocity of the ccf_vstep grid,
 * refined on the full grid around the minimum (init_refine): on desi-1k
 * this found the same velocities as scanning the full grid (|dv| < 1 km/s
 * for 97 % of the stars, none further from the truth) with 53 instead of
 * 102 points. */
static int init_vscan(fit_ctx *f, double *v0)
{
    const rvfit_library *L = f->lib;
    int caps[RVFIT_MAX_PARAMS];
    for (int i = 0; i < L->nparam; i++)
        caps[i] = 1;
    int it = axis_named(L, "TEFF", 0), ig = axis_named(L, "LOGG", 1);
    if (it >= 0)
        caps[it] = 3;
    if (ig >= 0 && ig != it)
        caps[ig] = 1; /* logg matters little for the velocity */
    size_t tm[INIT_MAX_TEMPLATES];
    int K = lattice(f, caps, tm, INIT_MAX_TEMPLATES);
    long nfine = (long)floor((f->o->vmax - f->o->vmin) / f->o->ccf_vstep) + 1;
    size_t nc = (size_t)(nfine + 1) / 2, nq = f->nact * (size_t)K;
    rvfit_point *base = calloc(nq ? nq : 1, sizeof *base);
    double *vel = malloc((nq ? nq : 1) * nc * sizeof *vel);
    double *m = malloc((nq ? nq : 1) * nc * sizeof *m);
    if (!base || !vel || !m) {
        free(base), free(vel), free(m);
        return fit_nomem(f);
    }
    for (size_t q = 0; q < nq; q++) {
        base[q].spec = (uint32_t)f->act[q / (size_t)K];
        node_theta(L, tm[q % (size_t)K], base[q].theta);
        for (size_t k = 0; k < nc; k++)
            vel[q * nc + k] = init_vel(f, 2 * (long)k);
    }
    int rc = fit_vscan(f, nq, base, nc, vel, m);
    if (!rc)
        rc = init_refine(f, base, m, K, nc, nfine, v0);
    free(base), free(vel), free(m);
    return rc;
}

/* Stage 1b: a lattice of nodes at the velocity found; the best node
 * starts stage 2. */
static int init_lattice(fit_ctx *f, const double *v0)
{
    const rvfit_library *L = f->lib;
    int caps[RVFIT_MAX_PARAMS] = {0};
    static const int caps_by_rank[] = {4, 3, 3};
    for (int i = 0, r = 0; i < L->nparam; i++)
        caps[i] = L->axis[i].nnode > 1 && r < 3 ? caps_by_rank[r++] : 1;
    size_t *nodes = malloc(LATTICE_MAX * sizeof *nodes);
    if (!nodes)
        return fit_nomem(f);
    int M = lattice(f, caps, nodes, LATTICE_MAX);
    size_t np = f->nact * (size_t)M;
    rvfit_point *p = calloc(np, sizeof *p);
    double *m = malloc(np * sizeof *m);
    if (!p || !m) {
        free(nodes), free(p), free(m);
        return fit_nomem(f);
    }
    for (size_t k = 0; k < np; k++) {
        p[k].spec = (uint32_t)f->act[k / (size_t)M];
        p[k].v = v0[k / (size_t)M];
        node_theta(L, nodes[k % (size_t)M], p[k].theta);
    }
    int rc = fit_chisq(f, np, p, m, NULL);
    for (size_t i = 0; i < f->nact && !rc; i++) {
        size_t first = i * (size_t)M, b = first;
        for (size_t k = first; k < first + (size_t)M; k++)
            if (m[k] < m[b])
                b = k;
        f->best[f->act[i]] = p[b];
        f->fbest[f->act[i]] = m[b];
    }
    free(nodes), free(p), free(m);
    return rc;
}

int fit_stage_init(fit_ctx *f)
{
    double *v0 = malloc((f->nact ? f->nact : 1) * sizeof *v0);
    int rc = !v0 ? fit_nomem(f) : init_vscan(f, v0);
    if (!rc)
        rc = init_lattice(f, v0);
    free(v0);
    return rc;
}

/* ---- stage 3: velocity refinement ------------------------------------ */

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
static void vr_moments(const double *v, const double *m, size_t n,
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
static double vr_mode(const double *v, const double *m, size_t n, size_t k)
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

/* One scan's verdict for spectrum sp: store the estimate, and either mark
 * the state done or set up the next scan. */
static void vr_update(fit_ctx *f, vr_state *s, size_t sp, const double *v,
                      const double *mq)
{
    size_t n = (size_t)s->n, kb = 0;
    for (size_t k = 1; k < n; k++)
        kb = mq[k] < mq[kb] ? k : kb;
    double step = v[1] - v[0], sigma;
    double vhat = vr_mode(v, mq, n, kb);
    int at_edge = kb == 0 || kb == n - 1;
    vr_moments(v, mq, n, vhat, &sigma, &f->vskew[sp], &f->vkurt[sp]);
    f->best[sp].v = vhat;
    f->fbest[sp] = mq[kb];
    f->verr[sp] = sigma;
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
        b->base[nq] = f->best[f->act[i]];
        for (size_t k = 0; k < L; k++)
            b->vel[nq * L + k] =
                st[i].center +
                st[i].half * (2.0 * (double)k / (double)(L - 1) - 1);
        nq++;
    }
    int rc = nq ? fit_vscan(f, nq, b->base, L, b->vel, b->m) : RVFIT_OK;
    for (size_t q = 0; q < nq && !rc; q++)
        vr_update(f, &st[b->idx[q]], f->act[b->idx[q]], b->vel + q * L,
                  b->m + q * L);
    return rc;
}

/* Parabola through the optimum and two probes: the first scan's centre
 * and width, or the coarse scan where it has no minimum within +-3
 * VR_PROBE. */
static int vr_probe(fit_ctx *f, vr_state *st, size_t n, const vr_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        b->base[i] = f->best[f->act[i]];
        b->vel[2 * i] = b->base[i].v - VR_PROBE;
        b->vel[2 * i + 1] = b->base[i].v + VR_PROBE;
    }
    int rc = fit_vscan(f, n, b->base, 2, b->vel, b->m);
    for (size_t i = 0; i < n && !rc; i++) {
        double fm = b->m[2 * i], fp = b->m[2 * i + 1];
        double f0 = f->fbest[f->act[i]], c = fm - 2 * f0 + fp;
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
    size_t n = f->nact;
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
