/* newton.c — stage 2 for interpolators whose kinks lie on the node
 * planes (multilinear, cubic): a trust-region Newton method over
 * (vsini, free axes) at the velocity of stage 1, all spectra in lockstep.
 *
 * Why not Nelder-Mead: on desi-1k it spent 110 iterations (191 points) per
 * star, 70 of them travelling from the lattice node.  Within a cell of the
 * grid the model is a smooth (multilinear) function of theta, so -2 ln L
 * is smooth there and a quadratic model is accurate; across a node plane
 * it has a kink.  The method therefore builds its models from stencils
 * that stay inside one cell, steps across a face only onto the face, and
 * pins an axis at a node when the models on both sides point at it (a
 * kink minimum), checking the pin with one-sided differences at the end.
 *
 * Models: a full quadratic from an axis stencil (2m + m(m-1)/2 points for
 * m free coordinates) at the start and on entering a new cell near the
 * optimum; otherwise a one-sided gradient (m points, curvature-corrected)
 * and a BFGS update.  Far from the optimum (the model predicts more than
 * NT_TRAVEL) steps may cross cells, inside a trust region.  It stops when
 * the model of the current cell predicts less than NT_TOL decrease of
 * -2 ln L, far below the error scale (1).  docs/benchmarks.md, "Cost per
 * star", has the measurements that chose the constants. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"
#include "newton.h"
#include "rvfit/linalg.h"

#define NT_TOL 0.01     /* stop below this predicted decrease            */
#define NT_TRAVEL 10.0  /* above it, steps may leave the cell            */
#define NT_TPIN 1.0     /* below it, an axis held at a bound is pinned   */
#define NT_RMAX 2.0     /* trust radius, node spacings                   */
#define NT_RMIN 1e-3    /* ... at least                                  */
#define NT_GEPS 1e-3    /* one-sided gradient step, node spacings        */
#define NT_CEPS 0.02    /* pin check step, node spacings                 */
#define NT_H0 0.25      /* largest stencil step, node spacings           */
#define NT_HMIN 0.01    /* smallest cap on it after failed steps         */
#define NT_VS_UNIT 10.0 /* km/s per unit of the vsini coordinate         */
#define NT_VS_H0 0.2    /* largest vsini stencil step (2 km/s)           */
#define NT_ONNODE 1e-9  /* |y - node| below which y sits on the node     */

/* vsini probes before the search, in units of NT_VS_UNIT (25, 100 km/s):
 * -2 ln L grows linearly from vsini = 0 for a while even for a fast
 * rotator (test_e2e_vsini: 130 km/s found as 0 without them). */
static const double nt_ladder[] = {2.5, 10.0};
#define NT_NLADDER 2

void nt_cell(const nt_prob *P, const nt_star *s, double *L, double *U)
{
    for (int k = 0; k < P->D; k++) {
        const double *y = P->node[k];
        int nn = P->nnode[k], i = 0;
        if (nn < 2) { /* vsini: one cell */
            L[k] = P->lo[k], U[k] = P->hi[k];
            continue;
        }
        while (i + 2 < nn && s->c[k] >= y[i + 1])
            i++;
        if (i > 0 && fabs(s->c[k] - y[i]) < NT_ONNODE && s->side[k] < 0)
            i--;
        else if (i + 2 < nn && fabs(s->c[k] - y[i + 1]) < NT_ONNODE &&
                 s->side[k] > 0)
            i++;
        L[k] = y[i], U[k] = y[i + 1];
    }
}

/* Free coordinates (not pinned); returns their number. */
static int free_set(const nt_prob *P, const nt_star *s, int *F)
{
    int m = 0;
    for (int k = 0; k < P->D; k++)
        if (!s->pinned[k])
            F[m++] = k;
    return m;
}

static void add_point(nt_star *s, int D, const int *ax, const double *off,
                      int nax)
{
    double *y = s->pts[s->np++];
    memcpy(y, s->c, (size_t)D * sizeof *y);
    for (int q = 0; q < nax; q++)
        y[ax[q]] += off[q];
}

/* Full quadratic: offsets a, b per axis inside the cell (central if
 * there is room, else one-sided), and one cross point per pair. */
static void request_full(const nt_prob *P, nt_star *s, const int *F, int m)
{
    for (int q = 0; q < m; q++) {
        int k = F[q];
        double up = s->U[k] - s->c[k], dn = s->c[k] - s->L[k];
        double h = s->h[k];
        if (up >= h && dn >= h)
            s->a[k] = h, s->b[k] = -h;
        else if (up >= dn)
            h = fmin(h, 0.5 * up), s->a[k] = h, s->b[k] = 2 * h;
        else
            h = fmin(h, 0.5 * dn), s->a[k] = -h, s->b[k] = -2 * h;
    }
    s->np = 0;
    for (int q = 0; q < m; q++) {
        add_point(s, P->D, &F[q], &s->a[F[q]], 1);
        add_point(s, P->D, &F[q], &s->b[F[q]], 1);
    }
    for (int q = 0; q < m; q++)
        for (int r = q + 1; r < m; r++) {
            int ax[2] = {F[q], F[r]};
            double off[2] = {s->a[F[q]], s->a[F[r]]};
            add_point(s, P->D, ax, off, 2);
        }
    s->phase = NT_FULL;
}

/* One-sided gradient: a small step toward the larger room in the cell. */
static void request_grad(const nt_prob *P, nt_star *s, const int *F, int m)
{
    s->np = 0;
    for (int q = 0; q < m; q++) {
        int k = F[q];
        double up = s->U[k] - s->c[k], dn = s->c[k] - s->L[k];
        s->a[k] = up >= dn ? fmin(NT_GEPS, 0.5 * up) : -fmin(NT_GEPS, 0.5 * dn);
        add_point(s, P->D, &k, &s->a[k], 1);
    }
    s->phase = NT_GRAD;
}

static void request_check(const nt_prob *P, nt_star *s);

/* Next model: a full one without a Hessian, or near the optimum when the
 * last full model was far from it or in another cell (BFGS pairs from
 * other cells mix pieces of the surface, and a model from far away can
 * stop the search short of the optimum at high S/N). */
static void request_model(const nt_prob *P, nt_star *s)
{
    int F[FQ_MAX], m = free_set(P, s, F);
    if (!m) { /* every coordinate pinned: only the pins are left to check */
        request_check(P, s);
        return;
    }
    nt_cell(P, s, s->L, s->U);
    if (s->have_H && s->lastpred < NT_TRAVEL) {
        if (!s->full_near)
            s->have_H = 0;
        for (int k = 0; k < P->D; k++)
            if (s->L[k] != s->fullL[k])
                s->have_H = 0;
    }
    if (!s->have_H) {
        memcpy(s->fullL, s->L, sizeof s->fullL);
        request_full(P, s, F, m);
    } else {
        request_grad(P, s, F, m);
    }
}

static void see(nt_star *s, int D, const double *y, double fy)
{
    if (fy < s->fbest) {
        s->fbest = fy;
        memcpy(s->best, y, (size_t)D * sizeof *y);
    }
}

/* g and H on the free coordinates from a full stencil's values. */
static void model_full(const nt_prob *P, nt_star *s, const int *F, int m,
                       const double *fv)
{
    int D = P->D;
    memset(s->H, 0, sizeof s->H);
    for (int q = 0; q < m; q++) {
        int k = F[q];
        fq_axis(s->a[k], s->b[k], fv[2 * q], fv[2 * q + 1], s->fc, &s->g[k],
                &s->H[k * D + k]);
    }
    int t = 2 * m;
    for (int q = 0; q < m; q++)
        for (int r = q + 1; r < m; r++, t++) {
            int j = F[q], l = F[r];
            double aj = s->a[j], al = s->a[l];
            double res = fv[t] - s->fc - s->g[j] * aj -
                         0.5 * s->H[j * D + j] * aj * aj - s->g[l] * al -
                         0.5 * s->H[l * D + l] * al * al;
            s->H[j * D + l] = s->H[l * D + j] = res / (aj * al);
        }
    s->have_H = 1;
}

static void model_grad(const nt_prob *P, nt_star *s, const int *F, int m,
                       const double *fv)
{
    int D = P->D;
    double sv[FQ_MAX] = {0}, yv[FQ_MAX] = {0}, Hf[FQ_MAX * FQ_MAX];
    for (int q = 0; q < m; q++) {
        int k = F[q];
        s->g[k] = (fv[q] - s->fc) / s->a[k] - 0.5 * s->H[k * D + k] * s->a[k];
    }
    if (!s->have_gprev)
        return;
    for (int q = 0; q < m; q++) {
        sv[q] = s->c[F[q]] - s->cprev[F[q]];
        yv[q] = s->g[F[q]] - s->gprev[F[q]];
        for (int r = 0; r < m; r++)
            Hf[q * m + r] = s->H[F[q] * D + F[r]];
    }
    fq_bfgs(m, Hf, sv, yv);
    for (int q = 0; q < m; q++)
        for (int r = 0; r < m; r++)
            s->H[F[q] * D + F[r]] = Hf[q * m + r];
}

/* Stencil steps follow the error scale: sigma_k = sqrt(2 (H^-1)_kk) for
 * -2 ln L, between 5 % and 100 % of the largest step, and no longer than
 * hcap, which a failed step shrinks with the trust radius (a model from a
 * stencil wider than the region where -2 ln L is near quadratic can keep
 * predicting a decrease that is not there). */
static void adapt_steps(const nt_prob *P, nt_star *s, const int *F, int m,
                        const double *Hf)
{
    double inv[FQ_MAX * FQ_MAX];
    memcpy(inv, Hf, (size_t)(m * m) * sizeof *inv);
    if (rvfit_spd_inverse(m, inv) != RVFIT_OK)
        return;
    for (int q = 0; q < m; q++) {
        double h0 = P->h0[F[q]], sg = sqrt(fmax(2 * inv[q * m + q], 0));
        s->h[F[q]] = fmin(fmax(sg, 0.05 * h0), fmin(h0, s->hcap));
    }
}

/* The step of the current model: d (on F), its predicted decrease, and
 * which faces it would cross (wants) or which bounds pin an axis. */
static void plan_step(const nt_prob *P, nt_star *s, const int *F, int m,
                      const double *Hf, double *d)
{
    double gf[FQ_MAX], l[FQ_MAX], u[FQ_MAX], gr[FQ_MAX];
    int act[FQ_MAX];
    for (int q = 0; q < m; q++) {
        int k = F[q];
        gf[q] = s->g[k];
        l[q] = fmax(s->L[k] - s->c[k], -s->R);
        u[q] = fmin(s->U[k] - s->c[k], s->R);
        s->wants[k] = 0;
    }
    if (fq_boxqp(m, Hf, gf, l, u, d, act))
        memset(d, 0, (size_t)m * sizeof *d);
    s->pred = fq_decrease(m, Hf, gf, d);
    s->travel = s->pred > NT_TRAVEL;
    if (s->travel) {
        for (int q = 0; q < m; q++) {
            l[q] = fmax(P->lo[F[q]] - s->c[F[q]], -s->R);
            u[q] = fmin(P->hi[F[q]] - s->c[F[q]], s->R);
        }
        if (fq_boxqp(m, Hf, gf, l, u, d, act))
            memset(d, 0, (size_t)m * sizeof *d);
        s->pred = fq_decrease(m, Hf, gf, d);
        return;
    }
    for (int q = 0; q < m; q++) {
        gr[q] = gf[q];
        for (int r = 0; r < m; r++)
            gr[q] += Hf[q * m + r] * d[r];
    }
    for (int q = 0; q < m; q++) {
        int k = F[q];
        if (act[q] > 0 && gr[q] < 0 && s->U[k] < P->hi[k] &&
            s->U[k] - s->c[k] <= s->R)
            s->wants[k] = 1;
        else if (act[q] < 0 && gr[q] > 0 && s->L[k] > P->lo[k] &&
                 s->c[k] - s->L[k] <= s->R)
            s->wants[k] = -1;
        else if (act[q] && d[q] == 0 && s->pred < NT_TPIN)
            s->pinned[k] = 1, s->pin_at[k] = s->c[k]; /* held at a bound */
        /* Landed on this face from the other side, and this side's model
         * points back: a kink minimum. */
        if (s->wants[k] && s->land_dir[k] == -s->wants[k] &&
            s->c[k] == s->land_at[k])
            s->wants[k] = 0, s->pinned[k] = 1, s->pin_at[k] = s->c[k];
    }
}

/* Pinned axes: one-sided steps both ways (where inside the grid). */
static void request_check(const nt_prob *P, nt_star *s)
{
    s->np = 0;
    for (int k = 0; k < P->D; k++)
        for (int dir = 1; dir >= -1 && s->pinned[k]; dir -= 2) {
            double off = dir * NT_CEPS;
            if (s->c[k] + off < P->lo[k] || s->c[k] + off > P->hi[k])
                continue;
            s->chk_axis[s->np] = k;
            s->chk_dir[s->np] = dir;
            add_point(s, P->D, &k, &off, 1);
        }
    s->phase = s->np ? NT_CHECK : NT_DONE;
}

static void request_trial(const nt_prob *P, nt_star *s, const int *F, int m,
                          const double *d)
{
    s->np = 0;
    add_point(s, P->D, F, d, m);
    double *z = s->pts[0];
    for (int k = 0; k < P->D; k++)
        if (s->wants[k]) { /* onto the face, and into the next cell */
            z[k] = s->wants[k] > 0 ? s->U[k] : s->L[k];
            s->land_at[k] = z[k];
            s->land_dir[k] = s->wants[k];
            s->side[k] = s->wants[k];
        }
    memcpy(s->d, d, (size_t)m * sizeof *d);
    s->phase = NT_TRIAL;
    if (!memcmp(z, s->c, (size_t)P->D * sizeof *z)) { /* only onto faces it is on: */
        s->have_H = 0;                    /* a model in the next cell */
        request_model(P, s);
    }
}

static void got_model(const nt_prob *P, nt_star *s, const double *fv)
{
    int F[FQ_MAX], m = free_set(P, s, F), D = P->D;
    double Hf[FQ_MAX * FQ_MAX], d[FQ_MAX];
    int bad = 0;
    for (int q = 0; q < s->np; q++) {
        see(s, D, s->pts[q], fv[q]);
        bad |= !(fv[q] < 0.1 * RVFIT_M2LNL_FAIL);
    }
    if (bad) { /* a failed point: no model from it; smaller stencil */
        for (int k = 0; k < D; k++)
            s->h[k] *= 0.25;
        s->have_H = s->have_gprev = 0;
        if (++s->iter >= P->maxit)
            s->phase = NT_DONE;
        else
            request_model(P, s);
        return;
    }
    if (s->phase == NT_FULL)
        model_full(P, s, F, m, fv);
    else
        model_grad(P, s, F, m, fv);
    memcpy(s->gprev, s->g, sizeof s->g);
    memcpy(s->cprev, s->c, sizeof s->c);
    s->have_gprev = 1;
    for (int q = 0; q < m; q++)
        for (int r = 0; r < m; r++)
            Hf[q * m + r] = s->H[F[q] * D + F[r]];
    fq_make_pd(m, Hf);
    for (int q = 0; q < m; q++)
        for (int r = 0; r < m; r++)
            s->H[F[q] * D + F[r]] = Hf[q * m + r];
    plan_step(P, s, F, m, Hf, d);
    s->lastpred = s->pred;
    if (s->phase == NT_FULL)
        s->full_near = !s->travel;
    adapt_steps(P, s, F, m, Hf);
    int wants = 0;
    for (int k = 0; k < D; k++)
        wants |= s->wants[k];
    if (++s->iter >= P->maxit)
        s->phase = NT_DONE;
    else if (!s->travel && s->pred < NT_TOL && !wants)
        request_check(P, s);
    else
        request_trial(P, s, F, m, d);
}

static void got_trial(const nt_prob *P, nt_star *s, double fz)
{
    int F[FQ_MAX], m = free_set(P, s, F), D = P->D;
    see(s, D, s->pts[0], fz);
    double dmax = 0;
    for (int q = 0; q < m; q++)
        dmax = fmax(dmax, fabs(s->d[q]));
    if (fz < s->fc) {
        if (s->fc - fz > 0.5 * s->pred && dmax >= 0.99 * s->R)
            s->R = fmin(2 * s->R, NT_RMAX);
        s->hcap = fmin(2 * s->hcap, NT_RMAX);
        memcpy(s->c, s->pts[0], sizeof s->c);
        s->fc = fz;
    } else { /* back to the best point seen, with a fresh, more local
              * full model */
        memcpy(s->c, s->best, sizeof s->c);
        s->fc = s->fbest;
        if (dmax <= 2 * NT_RMIN) { /* no smaller step to try */
            request_check(P, s);
            return;
        }
        s->R = fmax(0.5 * dmax, NT_RMIN);
        s->hcap = fmax(s->R, NT_HMIN);
        for (int k = 0; k < D; k++)
            s->h[k] = fmin(s->h[k], fmax(s->hcap, 0.05 * P->h0[k]));
        s->have_H = s->have_gprev = 0;
        for (int k = 0; k < D; k++) {
            s->land_dir[k] = 0;
            if (s->pinned[k] && s->c[k] != s->pin_at[k])
                s->pinned[k] = 0;
        }
    }
    request_model(P, s);
}

static void got_check(const nt_prob *P, nt_star *s, const double *fv)
{
    int rel = -1;
    for (int q = 0; q < s->np; q++) {
        see(s, P->D, s->pts[q], fv[q]);
        /* Twice per axis at most: a model that pins the axis again at
         * once would otherwise loop. */
        if (fv[q] < s->fc - 1e-6 && s->nrel[s->chk_axis[q]] < 2 &&
            (rel < 0 || fv[q] < fv[rel]))
            rel = q;
    }
    if (rel < 0) {
        s->phase = NT_DONE;
        return;
    }
    int k = s->chk_axis[rel];
    s->nrel[k]++;
    s->pinned[k] = 0;
    s->side[k] = s->chk_dir[rel];
    s->land_dir[k] = 0;
    s->have_H = s->have_gprev = 0;
    s->R = NT_RMAX;
    request_model(P, s);
}

/* Rungs of the vsini ladder inside the range, at the start point. */
static void request_ladder(const nt_prob *P, nt_star *s, int k)
{
    s->np = 0;
    for (int q = 0; q < NT_NLADDER; q++) {
        double off = nt_ladder[q] - s->c[k];
        if (s->c[k] + off <= P->hi[k])
            add_point(s, P->D, &k, &off, 1);
    }
    s->phase = NT_LADDER;
    if (!s->np)
        request_model(P, s);
}

/* A rung below the start: begin there, vsini free. */
static void got_ladder(const nt_prob *P, nt_star *s, const double *fv)
{
    int b = -1;
    for (int q = 0; q < s->np; q++)
        if (fv[q] < s->fc && (b < 0 || fv[q] < fv[b]))
            b = q;
    for (int q = 0; q < s->np; q++)
        see(s, P->D, s->pts[q], fv[q]);
    if (b >= 0) {
        memcpy(s->c, s->pts[b], sizeof s->c);
        s->fc = fv[b];
        for (int k = 0; k < P->D; k++)
            if (P->nnode[k] < 2)
                s->pinned[k] = 0;
    }
    request_model(P, s);
}

void nt_start(const nt_prob *P, nt_star *s, const double *y0, double f0)
{
    memset(s, 0, sizeof *s);
    memcpy(s->c, y0, (size_t)P->D * sizeof *y0);
    memcpy(s->best, y0, (size_t)P->D * sizeof *y0);
    s->fc = s->fbest = f0;
    s->R = s->hcap = NT_RMAX;
    for (int k = 0; k < P->D; k++) {
        s->side[k] = 1;
        s->h[k] = P->h0[k];
        /* vsini starts at its bound 0, pinned: checked at the end. */
        s->pinned[k] = P->nnode[k] < 2 && y0[k] <= P->lo[k];
        s->pin_at[k] = y0[k];
    }
    for (int k = 0; k < P->D; k++)
        if (s->pinned[k]) {
            request_ladder(P, s, k);
            return;
        }
    request_model(P, s);
}

void nt_receive(const nt_prob *P, nt_star *s, const double *fv)
{
    switch (s->phase) {
    case NT_FULL:
    case NT_GRAD:
        got_model(P, s, fv);
        break;
    case NT_TRIAL:
        got_trial(P, s, fv[0]);
        break;
    case NT_CHECK:
        got_check(P, s, fv);
        break;
    case NT_LADDER:
        got_ladder(P, s, fv);
        break;
    default:
        break;
    }
}

double nt_vs_unit(void) { return NT_VS_UNIT; }
double nt_h0(int is_vsini) { return is_vsini ? NT_VS_H0 : NT_H0; }
