/* stage_optim.c — stage 2 of the fit: the stellar parameters and vsini at
 * the velocity of stage 1, from stage 1's starts.  A trust-region Newton
 * method (newton.c) from each start for the regular-grid interpolators,
 * the lowest result kept; Nelder-Mead (nelder_mead.c) from the lowest
 * start for the simplex one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"
#include "newton.h"
#include "nelder_mead.h"

/* ---- Nelder-Mead in normalised coordinates (simplex interpolator) ---- */

/* Stop when the simplex spans less than 0.02 in -2 ln L or 0.01 of its
 * initial size.  0.05/0.02 saved 10 % of the points on desi-1k with no
 * change in any scatter, but left vsini 0.12 sigma off a closed-form
 * optimum (test_fit_known). */
#define NM_FTOL 0.02
#define NM_XTOL 0.01

typedef struct optim_ctx {
    fit_ctx *f;
    int D;
    double *x0, *scale; /* [nact*D] physical start and unit per coordinate */
    rvfit_point *pts;
    double *excess;
} optim_ctx;

/* vsini is clamped to a margin around its range and the excess is
 * returned, so that the objective keeps growing outside and the simplex
 * cannot run away where the model no longer changes. */
#define CLAMP_MARGIN 100.0
static double clamp_excess(double *x, double lo, double hi)
{
    double e = 0;
    if (*x < lo)
        e = lo - *x, *x = lo;
    else if (*x > hi)
        e = *x - hi, *x = hi;
    return e;
}

static double to_point(const optim_ctx *c, size_t i, const double *u,
                       rvfit_point *p)
{
    const fit_ctx *f = c->f;
    const double *x0 = c->x0 + i * (size_t)c->D;
    const double *sc = c->scale + i * (size_t)c->D;
    *p = f->best[f->act[i]]; /* v stays where stage 1 put it */
    int k = 0;
    if (f->o->fit_vsini) {
        p->vsini = fabs(x0[k] + u[k] * sc[k]);
        k++;
    }
    for (int j = 0; j < f->nfree; j++, k++)
        p->theta[f->free_axis[j]] = x0[k] + u[k] * sc[k];
    return clamp_excess(&p->vsini, 0, f->o->vsini_max + CLAMP_MARGIN);
}

static int optim_eval(void *ctx, size_t m, const size_t *prob,
                      const double *u, double *fv)
{
    optim_ctx *c = ctx;
    for (size_t k = 0; k < m; k++)
        c->excess[k] = to_point(c, prob[k], u + k * (size_t)c->D, &c->pts[k]);
    int rc = fit_chisq_obj(c->f, m, c->pts, fv);
    for (size_t k = 0; k < m && !rc; k++)
        fv[k] += 1e4 * c->excess[k] * c->excess[k];
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) -
           (*(const int *)a < *(const int *)b);
}

/* Where the optimiser's points go: the spread of iterations per spectrum
 * says how long the batch keeps iterating for its slowest members. */
static void log_iterations(const fit_ctx *f, int *it, size_t n)
{
    if (!n || f->host->log_level < RVFIT_LOG_DEBUG)
        return;
    qsort(it, n, sizeof *it, cmp_int);
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += it[i];
    rvfit_log(f->host, RVFIT_LOG_DEBUG, "fit",
              "optimize: %zu spectra, iterations mean %.1f, p10 %d, p50 %d, "
              "p90 %d, max %d", n, mean / (double)n, it[n / 10], it[n / 2],
              it[n * 9 / 10], it[n - 1]);
}

static int optim_nm(fit_ctx *f)
{
    int D = (f->o->fit_vsini ? 1 : 0) + f->nfree;
    if (D == 0)
        return RVFIT_OK; /* one template, fixed vsini: nothing to search */
    size_t n = f->nact, nd = n * (size_t)D;
    optim_ctx c = {f, D, malloc(nd * sizeof(double)),
                   malloc(nd * sizeof(double)),
                   malloc(n * (size_t)(D + 1) * sizeof(rvfit_point)),
                   malloc(n * (size_t)(D + 1) * sizeof(double))};
    double *u = calloc(nd, sizeof *u), *step = calloc(nd, sizeof *step);
    double *fb = malloc(n * sizeof *fb);
    int *iters = malloc((n ? n : 1) * sizeof *iters);
    if (!c.x0 || !c.scale || !c.pts || !c.excess || !u || !step || !fb ||
        !iters) {
        free(c.x0), free(c.scale), free(c.pts), free(c.excess), free(u),
            free(step), free(fb), free(iters);
        return fit_nomem(f);
    }
    for (size_t i = 0; i < n; i++) {
        const rvfit_point *p = &f->best[f->act[i]];
        double *x0 = c.x0 + i * (size_t)D, *sc = c.scale + i * (size_t)D;
        int k = 0;
        if (f->o->fit_vsini)
            x0[k] = 5.0, sc[k] = 10.0, step[i * (size_t)D + (size_t)k] = 1,
            k++;
        for (int j = 0; j < f->nfree; j++, k++) {
            int a = f->free_axis[j];
            x0[k] = p->theta[a];
            sc[k] = 0.5 * f->step[a];
            /* Start the simplex toward the inside of the grid. */
            step[i * (size_t)D + (size_t)k] =
                x0[k] + sc[k] > f->hi[a] ? -1.0 : 1.0;
        }
    }
    nm_opts no = {f->o->max_iter, NM_FTOL, NM_XTOL};
    int rc = nm_minimize(n, D, u, step, &no, optim_eval, &c, fb, iters);
    if (rc == -1 && !f->err->msg[0])
        rc = fit_nomem(f);
    if (!rc)
        log_iterations(f, iters, n);
    for (size_t i = 0; i < n && !rc; i++) {
        rvfit_point p;
        to_point(&c, i, u + i * (size_t)D, &p);
        f->best[f->act[i]] = p;
        f->fbest[f->act[i]] = fb[i];
    }
    free(c.x0), free(c.scale), free(c.pts), free(c.excess), free(u),
        free(step), free(fb), free(iters);
    return rc;
}

/* ---- trust-region Newton (newton.c) ------------------------------ */

/* One Newton run per start of each item (stage_init.c): run r optimises
 * item item[r] (an act index) from its start k[r]; the runs of all items
 * go in the same backend calls, and each item keeps its lowest run. */
typedef struct nt_ctx {
    nt_prob P;
    size_t nrun;
    size_t *item;        /* [nrun] item of each run, runs of an item
                            adjacent                                  */
    int *k;              /* [nrun] its start                          */
    nt_star *st;         /* [nrun]                                    */
    double *nodes;       /* node positions in y, per free axis        */
    rvfit_point *pts;    /* [nrun * NT_MAXPTS] one round's points     */
    double *fv;
    size_t nr;           /* runs with points this round:             */
    size_t *rr, *off;    /* [nrun] each one and its first value       */
} nt_ctx;

/* A run from a later start whose best point comes within NT_MERGE node
 * spacings, on every grid axis, of a lower run's is in that basin and
 * stops there; the run from the lowest node always finishes, so that
 * with several starts stage 2 never ends above the single start's
 * optimum.
 * On 2,000 stars of the independent generator (docs/benchmarks.md,
 * "Wrong basins"), two starts: without stopping 1.42x the points of one
 * start and 9 wrong basins left of 55; NT_MERGE 0.3, 0.4, 0.5: 1.30x,
 * 1.28x, 1.27x and 9, 10, 12. */
#define NT_MERGE 0.4

static void nt_free(nt_ctx *c)
{
    free(c->item), free(c->k), free(c->st), free(c->nodes), free(c->pts),
        free(c->fv), free(c->rr), free(c->off);
}

/* Starts of item i: none (one run from best[]) without start tables. */
static int nt_nstart(const fit_ctx *f, size_t i)
{
    return f->nstart ? f->nstart[i] : 0;
}

/* Coordinates: vsini (when fitted) in units of nt_vs_unit() km/s over
 * [0, vsini_max], then each free axis in node spacings from its first
 * node.  One run per start (one for an item without starts). */
static int nt_setup(fit_ctx *f, nt_ctx *c)
{
    const rvfit_library *L = f->lib;
    size_t n = f->nact, tot = 0, R = 0;
    for (size_t i = 0; i < n; i++)
        R += nt_nstart(f, i) > 1 ? (size_t)nt_nstart(f, i) : 1;
    for (int j = 0; j < f->nfree; j++)
        tot += (size_t)L->axis[f->free_axis[j]].nnode;
    c->nrun = R;
    c->item = malloc((R ? R : 1) * sizeof *c->item);
    c->k = malloc((R ? R : 1) * sizeof *c->k);
    c->st = malloc((R ? R : 1) * sizeof *c->st);
    c->nodes = malloc((tot ? tot : 1) * sizeof *c->nodes);
    c->pts = malloc((R ? R : 1) * NT_MAXPTS * sizeof *c->pts);
    c->fv = malloc((R ? R : 1) * NT_MAXPTS * sizeof *c->fv);
    c->rr = malloc((R ? R : 1) * sizeof *c->rr);
    c->off = malloc((R ? R : 1) * sizeof *c->off);
    if (!c->item || !c->k || !c->st || !c->nodes || !c->pts || !c->fv ||
        !c->rr || !c->off)
        return fit_nomem(f);
    for (size_t i = 0, r = 0; i < n; i++)
        for (int k = 0; k < nt_nstart(f, i) || k == 0; k++, r++)
            c->item[r] = i, c->k[r] = k;
    nt_prob *P = &c->P;
    int k = 0;
    /* [fit] max_iter caps the models too; 40 is ample (desi-1k: p90 9,
     * max 30). */
    P->maxit = f->o->max_iter < NT_MAXIT ? f->o->max_iter : NT_MAXIT;
    if (f->o->fit_vsini) {
        P->lo[k] = 0, P->hi[k] = f->o->vsini_max / nt_vs_unit();
        P->h0[k] = nt_h0(1), P->node[k] = NULL, P->nnode[k] = 0;
        k++;
    }
    double *y = c->nodes;
    for (int j = 0; j < f->nfree; j++, k++) {
        const rvfit_axis *ax = &L->axis[f->free_axis[j]];
        int a = f->free_axis[j];
        for (int i = 0; i < ax->nnode; i++)
            y[i] = (ax->node[i] - f->lo[a]) / f->step[a];
        P->node[k] = y, P->nnode[k] = ax->nnode;
        P->lo[k] = y[0], P->hi[k] = y[ax->nnode - 1], P->h0[k] = nt_h0(0);
        y += ax->nnode;
    }
    P->D = k;
    return RVFIT_OK;
}

static void nt_to_point(const fit_ctx *f, size_t i, const double *y,
                        rvfit_point *p)
{
    *p = f->best[f->act[i]]; /* v stays where stage 1 put it */
    int k = 0;
    if (f->o->fit_vsini)
        p->vsini = nt_vs_unit() * y[k++];
    for (int j = 0; j < f->nfree; j++, k++) {
        int a = f->free_axis[j];
        p->theta[a] = f->lo[a] + y[k] * f->step[a];
    }
}

static void nt_from_point(const fit_ctx *f, const rvfit_point *p, double *y)
{
    int k = 0;
    if (f->o->fit_vsini)
        y[k++] = fmin(p->vsini, f->o->vsini_max) / nt_vs_unit();
    for (int j = 0; j < f->nfree; j++, k++) {
        int a = f->free_axis[j];
        y[k] = (p->theta[a] - f->lo[a]) / f->step[a];
    }
}

/* Whether two runs' best points lie within NT_MERGE on every grid axis. */
static int nt_near(const nt_prob *P, const nt_star *a, const nt_star *b)
{
    for (int k = 0; k < P->D; k++)
        if (P->nnode[k] >= 2 && fabs(a->best[k] - b->best[k]) > NT_MERGE)
            return 0;
    return 1;
}

/* Stop every unfinished run of a later start (not the item's first run)
 * that has come near a lower run of its item (ties: the later stops). */
static void nt_merge(nt_ctx *c, size_t *left)
{
    for (size_t r0 = 0, r1; r0 < c->nrun; r0 = r1) {
        for (r1 = r0 + 1; r1 < c->nrun && c->item[r1] == c->item[r0]; r1++)
            ;
        for (size_t a = r0 + 1; a < r1; a++)
            for (size_t b = r0; b < r1 && c->st[a].phase != NT_DONE; b++) {
                const nt_star *sa = &c->st[a], *sb = &c->st[b];
                int lower = sb->fbest < sa->fbest ||
                            (sb->fbest == sa->fbest && b < a);
                if (b != a && lower && nt_near(&c->P, sa, sb))
                    c->st[a].phase = NT_DONE, (*left)--;
            }
    }
}

/* The values of the round's j-th run, and its next requests: the runs
 * are independent (newton.h), so on the driver's threads. */
static void nt_receive_one(void *ctx, int tid, size_t j)
{
    nt_ctx *c = ctx;
    (void)tid;
    nt_receive(&c->P, &c->st[c->rr[j]], c->fv + c->off[j]);
}

/* One round: every unfinished run's requests in one backend call. */
static int nt_round(fit_ctx *f, nt_ctx *c, size_t *left)
{
    size_t np = 0;
    c->nr = 0;
    for (size_t r = 0; r < c->nrun; r++) {
        if (c->st[r].phase == NT_DONE || c->st[r].np == 0)
            continue;
        c->rr[c->nr] = r, c->off[c->nr++] = np;
        for (int q = 0; q < c->st[r].np; q++)
            nt_to_point(f, c->item[r], c->st[r].pts[q], &c->pts[np++]);
    }
    int rc = fit_chisq_obj(f, np, c->pts, c->fv);
    if (rc)
        return rc;
    fit_for(f, c->nr, nt_receive_one, c);
    *left = 0;
    for (size_t j = 0; j < c->nr; j++)
        *left += c->st[c->rr[j]].phase != NT_DONE;
    nt_merge(c, left);
    return rc;
}

/* Each item's lowest run into best[] and fbest[] (the first start wins a
 * tie), the iterations of all its runs into iters. */
static void nt_finish(fit_ctx *f, const nt_ctx *c, int *iters)
{
    for (size_t r0 = 0, r1; r0 < c->nrun; r0 = r1) {
        size_t i = c->item[r0], b = r0;
        iters[i] = 0;
        for (r1 = r0; r1 < c->nrun && c->item[r1] == i; r1++) {
            iters[i] += c->st[r1].iter;
            if (c->st[r1].fbest < c->st[b].fbest)
                b = r1;
        }
        rvfit_point p;
        nt_to_point(f, i, c->st[b].best, &p);
        f->best[f->act[i]] = p;
        f->fbest[f->act[i]] = c->st[b].fbest;
    }
}

static int optim_newton(fit_ctx *f)
{
    nt_ctx c = {0};
    int rc = nt_setup(f, &c);
    size_t n = f->nact, left = c.nrun;
    for (size_t r = 0; r < c.nrun && !rc; r++) {
        size_t i = c.item[r], q = i * RVFIT_MAX_STARTS + (size_t)c.k[r];
        int own = nt_nstart(f, i) > 0;
        double y0[FQ_MAX];
        nt_from_point(f, own ? &f->start[q] : &f->best[f->act[i]], y0);
        nt_start(&c.P, &c.st[r], y0, own ? f->fstart[q] : f->fbest[f->act[i]]);
    }
    while (!rc && left)
        rc = nt_round(f, &c, &left);
    int *iters = rc ? NULL : malloc((n ? n : 1) * sizeof *iters);
    if (!rc && !iters)
        rc = fit_nomem(f);
    if (!rc) {
        nt_finish(f, &c, iters);
        log_iterations(f, iters, n);
    }
    free(iters);
    nt_free(&c);
    return rc;
}

/* Nelder-Mead for an interpolator whose kinks lie on the faces of a
 * triangulation (simplex), not on the node planes the Newton method
 * steps around. */
int fit_stage_optim(fit_ctx *f)
{
    int D = (f->o->fit_vsini ? 1 : 0) + f->nfree;
    if (D == 0)
        return RVFIT_OK; /* one template, fixed vsini: nothing to search */
    int rc = rvfit_interp_kinks_on_nodes(f->o->interp) ? optim_newton(f)
                                                       : optim_nm(f);
    if (!rc)
        fit_group_sync(f);
    return rc;
}

int fit_stage_optim_warm(fit_ctx *f, size_t *sub, size_t nr, int max_iter)
{
    size_t *act = f->act, nact = f->nact;
    const rvfit_fit_opts *o = f->o;
    rvfit_fit_opts short_o = *o;
    /* Nelder-Mead starts a new simplex, vsini from its usual start: no
     * shorter cap for it */
    if (rvfit_interp_kinks_on_nodes(o->interp) && short_o.max_iter > max_iter)
        short_o.max_iter = max_iter;
    /* one run each, from best[]: stage 1's start tables are indexed by
     * position in the whole act[] */
    int *nstart = f->nstart;
    f->act = sub, f->nact = nr, f->o = &short_o, f->nstart = NULL;
    int rc = fit_stage_optim(f);
    f->act = act, f->nact = nact, f->o = o, f->nstart = nstart;
    return rc;
}
