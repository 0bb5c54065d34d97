/* newton.h — the per-spectrum state machine of the Newton optimiser
 * (core-internal; newton.c).  The caller evaluates each spectrum's
 * requested points (s->pts[0 .. s->np-1], coordinates y) and hands the
 * values back with nt_receive until s->phase is NT_DONE; spectra are
 * independent, so any batching gives the same result.
 *
 * Coordinates: one per dimension k < D.  A library axis a maps to
 * y = (theta_a - lo_a) / step_a (node spacings), with its nodes at
 * node[k][0 .. nnode[k]-1]; vsini maps to y = vsini / nt_vs_unit() with
 * nnode[k] = 0 (one cell, [lo, hi]). */
#ifndef RVFIT_FIT_NEWTON_H
#define RVFIT_FIT_NEWTON_H

#include "quad.h"

#define NT_MAXIT 40 /* models per spectrum at most */
#define NT_MAXPTS (2 * FQ_MAX + FQ_MAX * (FQ_MAX - 1) / 2)

enum { NT_LADDER, NT_FULL, NT_GRAD, NT_TRIAL, NT_CHECK, NT_DONE };

typedef struct nt_prob {
    int D, maxit;               /* coordinates; models per spectrum   */
    double lo[FQ_MAX], hi[FQ_MAX], h0[FQ_MAX];
    const double *node[FQ_MAX]; /* borrowed; NULL for vsini */
    int nnode[FQ_MAX];
} nt_prob;

typedef struct nt_star {
    int phase, iter, np;
    double pts[NT_MAXPTS][FQ_MAX]; /* requested points                 */
    double c[FQ_MAX], fc;          /* current point and value          */
    double best[FQ_MAX], fbest;    /* lowest value seen                */
    double g[FQ_MAX], H[FQ_MAX * FQ_MAX];
    double gprev[FQ_MAX], cprev[FQ_MAX];
    int have_H, have_gprev, full_near; /* full_near: last full model not
                                        * in a travelling step           */
    double h[FQ_MAX], hcap, R, pred, lastpred;
    double L[FQ_MAX], U[FQ_MAX], fullL[FQ_MAX]; /* cell, cell of last full */
    double a[FQ_MAX], b[FQ_MAX], d[FQ_MAX];
    int travel, wants[FQ_MAX], side[FQ_MAX];
    int pinned[FQ_MAX], land_dir[FQ_MAX], nrel[FQ_MAX]; /* releases */
    double pin_at[FQ_MAX], land_at[FQ_MAX];
    int chk_axis[2 * FQ_MAX], chk_dir[2 * FQ_MAX];
} nt_star;

/* Start at y0 (value f0) and request the first points. */
void nt_start(const nt_prob *P, nt_star *s, const double *y0, double f0);
/* Values of the requested points; requests the next ones or ends. */
void nt_receive(const nt_prob *P, nt_star *s, const double *fv);
/* The grid cell [L, U] around s->c (on a node: on the side s->side). */
void nt_cell(const nt_prob *P, const nt_star *s, double *L, double *U);
double nt_vs_unit(void);
double nt_h0(int is_vsini);

#endif
