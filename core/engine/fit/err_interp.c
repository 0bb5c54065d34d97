/* err_interp.c — the template-interpolation part of the parameter
 * covariance (docs/output-format.md, "Interpolation error").
 *
 * The interpolated template is off the true spectrum by a smooth,
 * pixel-to-pixel correlated error; its leading term is the sum over the
 * free axes a of the templates e_a of rvfit_interp_error_stencil.  With
 * amplitudes z_a the fitted parameters move by dtheta = -H^-1 B z, H the
 * Hessian of -ln L and B_ja = d2(-ln L)/dtheta_j dz_a.  The error is one
 * vector, all axes' terms present at once with their signs, so the
 * variance is that of one common amplitude z ~ N(0, 1): (H^-1 B 1)_j^2.
 * Where those signed shifts cancel, the quadrature sum over axes
 * (independent z_a), sum_a (H^-1 B)_ja^2, is kept as a floor: each
 * template is an estimate, and a cancellation at first order is not one
 * in the spectrum.  (Measured: docs/benchmarks.md, "Issue 14: the error
 * model completed".)
 * B comes from the same backend chisq as everything else, with the
 * stencil of each point extended by e_a:
 *   B_ja = [m(c+h_j, z_a=1) - m(c, z_a=1) - m(c+h_j) + m(c)] / (2 h_j),
 * m = -2 ln L, the z = 0 values being those of the Hessian stencil.  The
 * z^2 term of m cancels in the difference (e_a is fixed at the centre),
 * and the continuum is refitted at every point as in the fit itself.
 * A forward difference suffices because the Hessian stencil lies inside
 * one grid cell (stage_hessian.c), where m is smooth: on desi-1k it gives
 * <AXIS>_ERR_INTERP within 0.6-2.9 % (median) of the central difference,
 * which costs d - 1 more points per axis.  (Across a node it did not: the
 * two differed by a median 1.2-1.4x before the stencil kept to a cell.)
 * Cost: d + 1 points per free axis with a curvature estimate (d = free
 * axes), e.g. 20 for TEFF, LOGG, FEH and ALPHAFE.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"

/* A growable stencil table (CSR, as rvfit_stencils), nw weights per
 * entry. */
typedef struct csr {
    uint32_t *off, *idx;
    double *w, *pen;
    size_t npt, cap_pt, nent, cap_ent;
    int nw;
} csr;

static int csr_room(csr *t, size_t more)
{
    if (t->npt + 2 > t->cap_pt) {
        size_t c = 2 * t->cap_pt + 64;
        uint32_t *o = realloc(t->off, c * sizeof *o);
        t->off = o ? o : t->off;
        double *p = realloc(t->pen, c * sizeof *p);
        t->pen = p ? p : t->pen;
        if (!o || !p)
            return -1;
        t->cap_pt = c;
    }
    if (t->nent + more > t->cap_ent) {
        size_t c = 2 * t->cap_ent + more;
        uint32_t *i = realloc(t->idx, c * sizeof *i);
        t->idx = i ? i : t->idx;
        double *w = realloc(t->w, c * (size_t)t->nw * sizeof *w);
        t->w = w ? w : t->w;
        if (!i || !w)
            return -1;
        t->cap_ent = c;
    }
    return 0;
}

static void csr_free(csr *t)
{
    free(t->off), free(t->idx), free(t->w), free(t->pen);
}

/* Append the stencil of theta plus the error template (ei, ew)[0..ne),
 * both over the models, as a stencil over the backend's vectors: -1
 * without memory, 1 when the sum exceeds RVFIT_MAX_STENCIL. */
static int csr_add(csr *t, const rvfit_interpolator *ip, const double *theta,
                   const uint32_t *ei, const double *ew, int ne)
{
    if (csr_room(t, RVFIT_MAX_STENCIL))
        return -1;
    uint32_t idx[RVFIT_MAX_STENCIL];
    double w[RVFIT_MAX_STENCIL], pen = 0;
    int n = rvfit_interp_stencil(ip, theta, idx, w, &pen);
    n = n < 0 ? 0 : n;
    for (int e = 0; e < ne; e++) {
        int k = 0;
        while (k < n && idx[k] != ei[e])
            k++;
        if (k == n && n == RVFIT_MAX_STENCIL)
            return 1;
        if (k == n)
            idx[n] = ei[e], w[n++] = 0;
        w[k] += ew[e];
    }
    n = rvfit_interp_to_vectors(ip, idx, w, n, t->idx + t->nent,
                                t->w + t->nent * (size_t)t->nw);
    t->off[0] = 0;
    t->pen[t->npt] = pen;
    t->nent += (size_t)n;
    t->off[++t->npt] = (uint32_t)t->nent;
    return 0;
}

/* The error templates of spectrum i at its centre, one per free axis:
 * entries into ei/ew (room for d * RVFIT_MAX_STENCIL), counts ne[d]. */
static void templates(const fit_ctx *f, size_t i, const double *c,
                      uint32_t *ei, double *ew, int *ne)
{
    double th[RVFIT_MAX_PARAMS];
    memcpy(th, f->best[f->act[i]].theta, sizeof th);
    for (int j = 0; j < f->nfree; j++)
        th[f->free_axis[j]] = c[j];
    for (int a = 0; a < f->nfree; a++)
        ne[a] = rvfit_interp_error_stencil(
            f->o->interp, th, f->free_axis[a], ei + a * RVFIT_MAX_STENCIL,
            ew + a * RVFIT_MAX_STENCIL);
}

/* Points and their stencil table, of a run of spectra. */
typedef struct part {
    csr t;
    rvfit_point *pts;
    size_t npts, cap;
} part;

typedef struct sys_ctx {
    fit_ctx *f;
    const double *c, *h;
    const int *ok;
    int *ne;        /* [nact*d] error-template entries (0: no column) */
    part all;       /* every spectrum's, in order                     */
    part *parts;    /* [nparts] those of chunk spectra each            */
    size_t nparts, chunk;
    int *prc;       /* [nparts] each one's status (-1: out of memory)  */
    uint32_t *ei;   /* [threads * d * RVFIT_MAX_STENCIL] scratch       */
    double *ew;
} sys_ctx;

/* Spectra per part when the driver has threads: parts are built on them
 * and joined in order, so the table does not depend on the threads.  On
 * one thread the whole table is one part, used as it is. */
#define SYS_CHUNK 4

/* Points per column: the centre and c + h_j for each free axis j. */
static int col_points(int d) { return d + 1; }

/* Points (c, z_a = 1) and (c + h_j, z_a = 1) of spectrum i for every
 * column a it has, into part p. */
static int add_points(sys_ctx *s, part *P, size_t i, const uint32_t *ei,
                      const double *ew)
{
    fit_ctx *f = s->f;
    int d = f->nfree;
    int *ne = s->ne + i * (size_t)d;
    const double *c = s->c + i * (size_t)d, *h = s->h + i * (size_t)d;
    for (int a = 0; a < d; a++) {
        if (!ne[a])
            continue;
        if (P->npts + (size_t)col_points(d) > P->cap) {
            size_t cap = 2 * P->cap + (size_t)col_points(d) * 64;
            rvfit_point *p = realloc(P->pts, cap * sizeof *p);
            if (!p)
                return -1;
            P->pts = p, P->cap = cap;
        }
        size_t first = P->npts, ent = P->t.nent, pt = P->t.npt;
        int rc = 0;
        for (int k = 0; k < col_points(d) && !rc; k++) {
            rvfit_point *p = &P->pts[P->npts++];
            *p = f->best[f->act[i]];
            for (int l = 0; l < d; l++)
                p->theta[f->free_axis[l]] = c[l];
            if (k > 0)
                p->theta[f->free_axis[k - 1]] += h[k - 1];
            rc = csr_add(&P->t, f->o->interp, p->theta,
                         ei + a * RVFIT_MAX_STENCIL,
                         ew + a * RVFIT_MAX_STENCIL, ne[a]);
        }
        if (rc < 0)
            return -1;
        if (rc > 0) { /* wider than a stencil may be: drop the column */
            P->npts = first, P->t.nent = ent, P->t.npt = pt;
            ne[a] = 0;
        }
    }
    return 0;
}

/* var_j = max((sum_a G_ja)^2, sum_a G_ja^2), G = H^-1 B, for spectrum i
 * from its points m. */
static void project(const sys_ctx *s, size_t i, const double *m,
                    const double *m0, const double *hinv, double *var)
{
    int d = s->f->nfree;
    const int *ne = s->ne + i * (size_t)d;
    const double *h = s->h + i * (size_t)d;
    double B[RVFIT_MAX_PARAMS * RVFIT_MAX_PARAMS] = {0};
    for (int a = 0, k = 0; a < d; a++) {
        if (!ne[a])
            continue;
        /* m0[0]: centre, m0[1 + 2j]: c + h_j (stage_hessian.c's order) */
        for (int j = 0; j < d; j++)
            B[j * d + a] = (m[k + 1 + j] - m[k] - m0[1 + 2 * j] + m0[0]) /
                           (2 * h[j]);
        k += col_points(d);
    }
    for (int j = 0; j < d; j++) {
        double sum = 0, sq = 0;
        for (int a = 0; a < d; a++) {
            double g = 0;
            for (int l = 0; l < d; l++)
                g += hinv[j * d + l] * B[l * d + a];
            sum += g, sq += g * g;
        }
        var[j] = fmax(sum * sum, sq);
    }
}

/* Error templates and points of part j's spectra that have an inverse
 * Hessian. */
static void build_part(void *ctx, int tid, size_t j)
{
    sys_ctx *s = ctx;
    fit_ctx *f = s->f;
    int d = f->nfree;
    size_t scr = (size_t)tid * (size_t)d * RVFIT_MAX_STENCIL;
    uint32_t *ei = s->ei + scr;
    double *ew = s->ew + scr;
    size_t i0 = j * s->chunk, i1 = i0 + s->chunk < f->nact ? i0 + s->chunk
                                                            : f->nact;
    int rc = 0;
    for (size_t i = i0; i < i1 && !rc; i++) {
        int *ne = s->ne + i * (size_t)d;
        memset(ne, 0, (size_t)d * sizeof *ne);
        if (!s->ok[i])
            continue;
        templates(f, i, s->c + i * (size_t)d, ei, ew, ne);
        rc = add_points(s, &s->parts[j], i, ei, ew);
    }
    s->prc[j] = rc;
}

/* The parts joined, in order, into s->all (one part: moved there). */
static int join_parts(sys_ctx *s)
{
    if (s->nparts == 1) {
        s->all = s->parts[0];
        memset(&s->parts[0], 0, sizeof s->parts[0]);
        return 0;
    }
    size_t npts = 0, nent = 0;
    int nw = s->all.t.nw;
    for (size_t j = 0; j < s->nparts; j++)
        npts += s->parts[j].npts, nent += s->parts[j].t.nent;
    part *A = &s->all;
    A->pts = malloc((npts ? npts : 1) * sizeof *A->pts);
    A->t.off = malloc((npts + 1) * sizeof *A->t.off);
    A->t.pen = malloc((npts ? npts : 1) * sizeof *A->t.pen);
    A->t.idx = malloc((nent ? nent : 1) * sizeof *A->t.idx);
    A->t.w = malloc((nent ? nent : 1) * (size_t)nw * sizeof *A->t.w);
    if (!A->pts || !A->t.off || !A->t.pen || !A->t.idx || !A->t.w)
        return -1;
    A->t.off[0] = 0;
    for (size_t j = 0; j < s->nparts; j++) {
        const part *P = &s->parts[j];
        memcpy(A->pts + A->npts, P->pts, P->npts * sizeof *P->pts);
        memcpy(A->t.pen + A->t.npt, P->t.pen, P->t.npt * sizeof *P->t.pen);
        for (size_t q = 0; q < P->t.npt; q++)
            A->t.off[A->t.npt + 1 + q] =
                (uint32_t)A->t.nent + P->t.off[1 + q];
        memcpy(A->t.idx + A->t.nent, P->t.idx, P->t.nent * sizeof *P->t.idx);
        memcpy(A->t.w + A->t.nent * (size_t)nw, P->t.w,
               P->t.nent * (size_t)nw * sizeof *P->t.w);
        A->npts += P->npts, A->t.npt += P->t.npt, A->t.nent += P->t.nent;
    }
    return 0;
}

/* Error templates and points of every spectrum with an inverse Hessian:
 * the parts on the driver's threads, then joined. */
static int build(sys_ctx *s)
{
    fit_ctx *f = s->f;
    size_t d = (size_t)f->nfree, nt = (size_t)fit_nthreads(f);
    s->chunk = nt > 1 ? SYS_CHUNK : f->nact ? f->nact : 1;
    s->nparts = (f->nact + s->chunk - 1) / s->chunk;
    s->parts = calloc(s->nparts ? s->nparts : 1, sizeof *s->parts);
    s->prc = calloc(s->nparts ? s->nparts : 1, sizeof *s->prc);
    s->ei = malloc(nt * d * RVFIT_MAX_STENCIL * sizeof *s->ei);
    s->ew = malloc(nt * d * RVFIT_MAX_STENCIL * sizeof *s->ew);
    if (!s->parts || !s->prc || !s->ei || !s->ew)
        return -1;
    for (size_t j = 0; j < s->nparts; j++)
        s->parts[j].t.nw = s->all.t.nw;
    fit_for(f, s->nparts, build_part, s);
    for (size_t j = 0; j < s->nparts; j++)
        if (s->prc[j])
            return -1;
    return join_parts(s);
}

static void sys_free(sys_ctx *s)
{
    for (size_t j = 0; s->parts && j < s->nparts; j++)
        free(s->parts[j].pts), csr_free(&s->parts[j].t);
    free(s->parts), free(s->prc), free(s->ei), free(s->ew), free(s->ne);
    free(s->all.pts);
    csr_free(&s->all.t);
}

/* The backend takes no stencil tables of nw weights per entry (it
 * declares no RVFIT_BACKEND_CAP_STENCILS, or for pca no
 * RVFIT_BACKEND_CAP_ARM_WEIGHTS): no term, said once per batch. */
static int no_tables(fit_ctx *f)
{
    rvfit_log(f->host, RVFIT_LOG_WARN, "fit",
              "backend '%s' takes no stencil tables from the core (caps "
              "0x%x): parameter errors without the interpolation term",
              f->be->name, (unsigned)f->be->ops->caps);
    return RVFIT_OK;
}

int fit_interp_var(fit_ctx *f, const double *c, const double *h,
                   const double *m0, int ns, const double *hinv,
                   const int *ok, double *var)
{
    int d = f->nfree;
    size_t n = f->nact;
    for (size_t k = 0; k < n * (size_t)d; k++)
        var[k] = NAN;
    if (!f->o->interp_errors || !f->o->interp)
        return RVFIT_OK;
    int nw = rvfit_interp_nweights(f->o->interp);
    if (!(f->be->ops->caps & (nw > 1 ? RVFIT_BACKEND_CAP_ARM_WEIGHTS
                                     : RVFIT_BACKEND_CAP_STENCILS)))
        return no_tables(f);
    sys_ctx s = {.f = f, .c = c, .h = h, .ok = ok};
    s.all.t.nw = nw;
    s.ne = malloc((n ? n : 1) * (size_t)d * sizeof *s.ne);
    int rc = s.ne ? build(&s) : -1;
    if (rc)
        rc = rvfit_err_set(f->err, RVFIT_ERR_NOMEM, "fit: out of memory");
    double *m = rc ? NULL : malloc((s.all.npts ? s.all.npts : 1) * sizeof *m);
    if (!rc && !m)
        rc = rvfit_err_set(f->err, RVFIT_ERR_NOMEM, "fit: out of memory");
    rvfit_stencils st = {s.all.t.off, s.all.t.idx, s.all.t.w, s.all.t.pen,
                         (uint32_t)nw, 0};
    if (!rc)
        rc = fit_chisq_obj_st(f, s.all.npts, s.all.pts, &st, m);
    const double *mi = m;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!ok[i])
            continue;
        const int *ne = s.ne + i * (size_t)d;
        project(&s, i, mi, m0 + i * (size_t)ns, hinv + i * (size_t)d * d,
                var + i * (size_t)d);
        for (int a = 0; a < d; a++)
            mi += ne[a] ? col_points(d) : 0;
    }
    free(m);
    sys_free(&s);
    return rc;
}
