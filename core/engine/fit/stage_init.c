/* stage_init.c — stage 1 of the fit, a few batched backend calls: an
 * initial scan of templates x velocities, then a lattice of library nodes
 * at the best velocity.  Stage 2 (stage_optim.c) works at the velocity of
 * stage 1: stage 3 scans it anyway, and it is nearly uncorrelated with
 * theta. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"
#include "quad.h"
#include "library/library_internal.h"

#define INIT_MAX_TEMPLATES 8
#define LATTICE_MAX 512

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
    size_t n = f->nxact;
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
    size_t nc = (size_t)(nfine + 1) / 2, nq = f->nxact * (size_t)K;
    rvfit_point *base = calloc(nq ? nq : 1, sizeof *base);
    double *vel = malloc((nq ? nq : 1) * nc * sizeof *vel);
    double *m = malloc((nq ? nq : 1) * nc * sizeof *m);
    if (!base || !vel || !m) {
        free(base), free(vel), free(m);
        return fit_nomem(f);
    }
    for (size_t q = 0; q < nq; q++) {
        base[q].spec = (uint32_t)f->xact[q / (size_t)K];
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

/* The lowest n distinct nodes of one item's lattice values m[M] into
 * out, lowest first (ties to the earlier node). */
static int lowest(const double *m, int M, int n, int *out)
{
    int k = 0;
    for (; k < n && k < M; k++) {
        int b = -1;
        for (int a = 0; a < M; a++) {
            int taken = 0;
            for (int j = 0; j < k; j++)
                taken |= out[j] == a;
            if (!taken && (b < 0 || m[a] < m[b]))
                b = a;
        }
        out[k] = b;
    }
    return k;
}

/* Stage 1b: a lattice of nodes at the velocity found (best[].v; an
 * object's at each of its spectra's own); its [fit] starts lowest nodes
 * are the starts of stage 2 (stage_optim.c), the lowest also best[].
 * Several starts because a single one, at the lowest node, ends in a
 * wrong basin along the Teff-logg-[Fe/H] degeneracy for a few per cent
 * of the stars (cool giants most): the lattice is coarse, and between
 * nodes -2 ln L carries the interpolation's error, which walls the
 * basins off from each other (docs/benchmarks.md, "Wrong basins"). */
static int init_lattice(fit_ctx *f)
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
        p[k].v = f->best[p[k].spec].v;
        node_theta(L, nodes[k % (size_t)M], p[k].theta);
    }
    int rc = fit_chisq_obj(f, np, p, m);
    int ns = f->o->starts > 0 ? f->o->starts : RVFIT_STARTS;
    ns = ns < RVFIT_MAX_STARTS ? ns : RVFIT_MAX_STARTS;
    for (size_t i = 0; i < f->nact && !rc; i++) {
        size_t first = i * (size_t)M;
        int idx[RVFIT_MAX_STARTS];
        f->nstart[i] = lowest(m + first, M, ns, idx);
        for (int k = 0; k < f->nstart[i]; k++) {
            size_t q = i * RVFIT_MAX_STARTS + (size_t)k;
            f->start[q] = p[first + (size_t)idx[k]];
            f->fstart[q] = m[first + (size_t)idx[k]];
        }
        f->best[f->act[i]] = f->start[i * RVFIT_MAX_STARTS];
        f->fbest[f->act[i]] = f->fstart[i * RVFIT_MAX_STARTS];
    }
    free(nodes), free(p), free(m);
    return rc;
}

int fit_stage_init(fit_ctx *f)
{
    double *v0 = malloc((f->nxact ? f->nxact : 1) * sizeof *v0);
    int rc = !v0 ? fit_nomem(f) : init_vscan(f, v0);
    for (size_t i = 0; i < f->nxact && !rc; i++)
        f->best[f->xact[i]].v = v0[i];
    if (!rc)
        rc = init_lattice(f);
    if (!rc)
        fit_group_sync(f);
    free(v0);
    return rc;
}
