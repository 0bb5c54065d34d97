/* nelder_mead.c — batched Nelder-Mead: all problems take a step together, with at
 * most three evaluation calls per iteration (reflect; expand/contract;
 * shrink). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nelder_mead.h"

enum { ST_DONE = 0, ST_ACTIVE, ST_EXPAND, ST_CONTRACT_OUT, ST_CONTRACT_IN,
       ST_SHRINK };

typedef struct nm_prob {
    double s[(NM_MAX_DIM + 1) * NM_MAX_DIM]; /* vertices                */
    double f[NM_MAX_DIM + 1];
    double c[NM_MAX_DIM];                    /* centroid of the best D  */
    double xr[NM_MAX_DIM], fr;
    double xt[NM_MAX_DIM];                   /* expansion/contraction   */
    int state, iter;
} nm_prob;

typedef struct nm_queue {
    size_t m;
    size_t *prob;
    double *x, *f;
} nm_queue;

static void sort_simplex(nm_prob *p, int D)
{
    for (int i = 1; i <= D; i++) { /* insertion sort, D is small */
        double fi = p->f[i], xi[NM_MAX_DIM];
        memcpy(xi, p->s + i * D, (size_t)D * sizeof *xi);
        int j = i - 1;
        while (j >= 0 && p->f[j] > fi) {
            p->f[j + 1] = p->f[j];
            memcpy(p->s + (j + 1) * D, p->s + j * D, (size_t)D * sizeof *xi);
            j--;
        }
        p->f[j + 1] = fi;
        memcpy(p->s + (j + 1) * D, xi, (size_t)D * sizeof *xi);
    }
}

static int converged(const nm_prob *p, int D, const nm_opts *o)
{
    if (p->iter >= o->max_iter)
        return 1;
    if (p->f[D] - p->f[0] < o->ftol)
        return 1;
    double size = 0;
    for (int i = 1; i <= D; i++)
        for (int k = 0; k < D; k++)
            size = fmax(size, fabs(p->s[i * D + k] - p->s[k]));
    return size < o->xtol;
}

static void push(nm_queue *q, int D, size_t prob, const double *x)
{
    q->prob[q->m] = prob;
    memcpy(q->x + q->m * (size_t)D, x, (size_t)D * sizeof *x);
    q->m++;
}

static void replace_worst(nm_prob *p, int D, const double *x, double f)
{
    memcpy(p->s + D * D, x, (size_t)D * sizeof *x);
    p->f[D] = f;
}

/* After the reflection values are known: accept, or queue phase 2. */
static void after_reflect(nm_prob *p, int D, size_t id, nm_queue *q)
{
    const double chi = 1.0 + 2.0 / D, gam = 0.75 - 0.5 / D;
    if (p->fr < p->f[0]) {
        p->state = ST_EXPAND;
        for (int k = 0; k < D; k++)
            p->xt[k] = p->c[k] + chi * (p->xr[k] - p->c[k]);
    } else if (p->fr < p->f[D - 1]) {
        replace_worst(p, D, p->xr, p->fr);
        p->state = ST_ACTIVE;
        return;
    } else if (p->fr < p->f[D]) {
        p->state = ST_CONTRACT_OUT;
        for (int k = 0; k < D; k++)
            p->xt[k] = p->c[k] + gam * (p->xr[k] - p->c[k]);
    } else {
        p->state = ST_CONTRACT_IN;
        for (int k = 0; k < D; k++)
            p->xt[k] = p->c[k] + gam * (p->s[D * D + k] - p->c[k]);
    }
    push(q, D, id, p->xt);
}

/* After phase 2: accept the trial point or mark for shrinking. */
static void after_trial(nm_prob *p, int D, double ft)
{
    if (p->state == ST_EXPAND) {
        if (ft < p->fr)
            replace_worst(p, D, p->xt, ft);
        else
            replace_worst(p, D, p->xr, p->fr);
        p->state = ST_ACTIVE;
    } else if ((p->state == ST_CONTRACT_OUT && ft <= p->fr) ||
               (p->state == ST_CONTRACT_IN && ft < p->f[D])) {
        replace_worst(p, D, p->xt, ft);
        p->state = ST_ACTIVE;
    } else {
        p->state = ST_SHRINK;
    }
}

static int run_queue(nm_queue *q, nm_eval_fn eval, void *ctx)
{
    return q->m ? eval(ctx, q->m, q->prob, q->x, q->f) : 0;
}

int nm_minimize(size_t n, int D, double *x0, const double *step,
                const nm_opts *o, nm_eval_fn eval, void *ctx, double *fbest,
                int *iters)
{
    if (D < 1 || D > NM_MAX_DIM)
        return -1;
    nm_prob *P = calloc(n ? n : 1, sizeof *P);
    nm_queue q = {0, malloc((n * (size_t)(D + 1) + 1) * sizeof(size_t)),
                  malloc((n * (size_t)(D + 1) + 1) * (size_t)D *
                         sizeof(double)),
                  malloc((n * (size_t)(D + 1) + 1) * sizeof(double))};
    int rc = (!P || !q.prob || !q.x || !q.f) ? -1 : 0;

    /* Initial simplex: x0 and x0 + step_k e_k. */
    for (size_t i = 0; i < n && !rc; i++) {
        for (int v = 0; v <= D; v++) {
            double *x = P[i].s + v * D;
            memcpy(x, x0 + i * (size_t)D, (size_t)D * sizeof *x);
            if (v > 0)
                x[v - 1] += step[i * (size_t)D + (size_t)(v - 1)];
            push(&q, D, i, x);
        }
        P[i].state = ST_ACTIVE;
    }
    rc = rc ? rc : run_queue(&q, eval, ctx);
    for (size_t k = 0; k < q.m && !rc; k++)
        P[q.prob[k]].f[k % (size_t)(D + 1)] = q.f[k];

    for (size_t active = n; active && !rc;) {
        q.m = 0;
        for (size_t i = 0; i < n; i++) {
            nm_prob *p = &P[i];
            if (p->state == ST_DONE)
                continue;
            sort_simplex(p, D);
            if (converged(p, D, o)) {
                p->state = ST_DONE;
                active--;
                continue;
            }
            p->iter++;
            for (int k = 0; k < D; k++) {
                double c = 0;
                for (int v = 0; v < D; v++)
                    c += p->s[v * D + k];
                p->c[k] = c / D;
                p->xr[k] = 2.0 * p->c[k] - p->s[D * D + k];
            }
            push(&q, D, i, p->xr);
        }
        if ((rc = run_queue(&q, eval, ctx)) != 0 || !active)
            break;
        nm_queue q2 = q;
        size_t m1 = q.m;
        q2.m = 0;
        for (size_t k = 0; k < m1; k++) {
            nm_prob *p = &P[q.prob[k]];
            p->fr = q.f[k];
        }
        /* Phase 2 reuses the queue storage: entries are consumed in
         * order before being overwritten (q2.m <= k at every push). */
        for (size_t k = 0; k < m1; k++)
            after_reflect(&P[q.prob[k]], D, q.prob[k], &q2);
        if ((rc = run_queue(&q2, eval, ctx)) != 0)
            break;
        for (size_t k = 0; k < q2.m; k++)
            after_trial(&P[q2.prob[k]], D, q2.f[k]);
        /* Shrink toward the best vertex where the trial failed. */
        q.m = 0;
        const double delta = 1.0 - 1.0 / D;
        for (size_t i = 0; i < n; i++) {
            if (P[i].state != ST_SHRINK)
                continue;
            for (int v = 1; v <= D; v++) {
                double *x = P[i].s + v * D;
                for (int k = 0; k < D; k++)
                    x[k] = P[i].s[k] + delta * (x[k] - P[i].s[k]);
                push(&q, D, i, x);
            }
        }
        if ((rc = run_queue(&q, eval, ctx)) != 0)
            break;
        for (size_t k = 0; k < q.m; k++) {
            nm_prob *p = &P[q.prob[k]];
            p->f[1 + k % (size_t)D] = q.f[k];
            p->state = ST_ACTIVE;
        }
    }
    for (size_t i = 0; i < n && !rc; i++) {
        sort_simplex(&P[i], D);
        memcpy(x0 + i * (size_t)D, P[i].s, (size_t)D * sizeof(double));
        fbest[i] = P[i].f[0];
        if (iters)
            iters[i] = P[i].iter;
    }
    free(P);
    free(q.prob);
    free(q.x);
    free(q.f);
    return rc;
}
