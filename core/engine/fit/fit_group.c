/* fit_group.c — the spectra of one object fitted together (several
 * exposures of a star, rvfit_fit_joint): which spectra make an object,
 * the expansion of an object's point into one point per usable spectrum
 * at that spectrum's own velocity (-2 ln L of independent exposures
 * adds), and keeping the object's parameters on every spectrum.  Without
 * groups every function here is the identity, so single fits take exactly
 * the calls and values they always did. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"

int fit_group_setup(fit_ctx *f, size_t nobj, const size_t *obj_off)
{
    const rvfit_batch *b = f->b;
    size_t ns = b->nspec;
    fit_group *g = &f->grp_store;
    g->obj = malloc((ns ? ns : 1) * sizeof *g->obj);
    g->off = malloc((nobj + 1) * sizeof *g->off);
    g->mem = malloc((ns ? ns : 1) * sizeof *g->mem);
    f->xact = malloc((ns ? ns : 1) * sizeof *f->xact);
    if (!g->obj || !g->off || !g->mem || !f->xact)
        return fit_nomem(f);
    if (obj_off[0] != 0 || obj_off[nobj] != ns)
        return rvfit_err_set(f->err, RVFIT_ERR_INTERNAL, "fit: objects "
                             "cover rows %zu..%zu of %zu", obj_off[0],
                             obj_off[nobj], ns);
    size_t m = 0;
    f->nact = f->nxact = 0;
    for (size_t o = 0; o < nobj; o++) {
        g->off[o] = m;
        if (obj_off[o + 1] < obj_off[o])
            return rvfit_err_set(f->err, RVFIT_ERR_INTERNAL, "fit: object "
                                 "%zu has rows %zu..%zu", o, obj_off[o],
                                 obj_off[o + 1]);
        for (size_t s = obj_off[o]; s < obj_off[o + 1]; s++) {
            g->obj[s] = o;
            if (b->flags[s] & RVFIT_SPEC_BAD)
                continue;
            g->mem[m++] = s;
            f->xact[f->nxact++] = s;
        }
        if (m > g->off[o])
            f->act[f->nact++] = g->mem[g->off[o]];
    }
    g->off[nobj] = m;
    g->nobj = nobj;
    f->grp = g;
    return RVFIT_OK;
}

void fit_group_free(fit_ctx *f)
{
    fit_group *g = &f->grp_store;
    free(g->obj), free(g->off), free(g->mem);
    free(g->pts), free(g->m);
    free(g->st_off), free(g->st_idx), free(g->st_w), free(g->st_pen);
    if (f->xact != f->act)
        free(f->xact);
    memset(g, 0, sizeof *g);
}

/* Usable spectra of the object that spectrum s belongs to. */
static size_t members(const fit_ctx *f, size_t s, const size_t **mem)
{
    const fit_group *g = f->grp;
    size_t o = g->obj[s];
    *mem = g->mem + g->off[o];
    return g->off[o + 1] - g->off[o];
}

size_t fit_group_size(const fit_ctx *f, size_t s)
{
    const size_t *mem;
    return f->grp ? members(f, s, &mem) : 1;
}

size_t fit_group_members(const fit_ctx *f, const size_t *s,
                         const size_t **mem)
{
    if (f->grp)
        return members(f, *s, mem);
    *mem = s;
    return 1;
}

static int grow(void **p, size_t *cap, size_t need, size_t esz)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * esz);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* The n object points as one point per usable spectrum into g->pts
 * (each keeps theta, vsini and flags, takes the spectrum and its
 * velocity); returns the count, or -1 without memory. */
static long expand(fit_ctx *f, size_t n, const rvfit_point *pts)
{
    fit_group *g = &f->grp_store;
    size_t tot = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t *mem;
        tot += members(f, pts[i].spec, &mem);
    }
    if (grow((void **)&g->pts, &g->cap_pts, tot, sizeof *g->pts) ||
        grow((void **)&g->m, &g->cap_m, tot, sizeof *g->m))
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t *mem;
        size_t nm = members(f, pts[i].spec, &mem);
        for (size_t j = 0; j < nm; j++, k++) {
            g->pts[k] = pts[i];
            g->pts[k].spec = (uint32_t)mem[j];
            g->pts[k].v = f->best[mem[j]].v;
        }
    }
    return (long)tot;
}

/* m2lnl[i] = the sum of point i's expanded values, in member order. */
static void gather(fit_ctx *f, size_t n, const rvfit_point *pts,
                   double *m2lnl)
{
    const double *m = f->grp_store.m;
    for (size_t i = 0; i < n; i++) {
        const size_t *mem;
        size_t nm = members(f, pts[i].spec, &mem);
        double s = m[0];
        for (size_t j = 1; j < nm; j++)
            s += m[j];
        m2lnl[i] = s;
        m += nm;
    }
}

int fit_chisq_obj(fit_ctx *f, size_t n, const rvfit_point *pts,
                  double *m2lnl)
{
    if (!f->grp || n == 0)
        return fit_chisq(f, n, pts, m2lnl, NULL);
    long tot = expand(f, n, pts);
    if (tot < 0)
        return fit_nomem(f);
    int rc = fit_chisq(f, (size_t)tot, f->grp_store.pts, f->grp_store.m,
                       NULL);
    if (!rc)
        gather(f, n, pts, m2lnl);
    return rc;
}

/* st's stencils repeated for every member of each point's object. */
static int expand_st(fit_ctx *f, size_t n, const rvfit_point *pts,
                     const rvfit_stencils *st, size_t tot,
                     rvfit_stencils *out)
{
    fit_group *g = &f->grp_store;
    size_t nw = st->nw, ne = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t *mem;
        ne += (st->off[i + 1] - st->off[i]) * members(f, pts[i].spec, &mem);
    }
    if (grow((void **)&g->st_off, &g->cap_off, tot + 1, sizeof *g->st_off) ||
        grow((void **)&g->st_pen, &g->cap_pen, tot, sizeof *g->st_pen) ||
        grow((void **)&g->st_idx, &g->cap_idx, ne, sizeof *g->st_idx) ||
        grow((void **)&g->st_w, &g->cap_w, ne * nw, sizeof *g->st_w))
        return -1;
    size_t k = 0, e = 0;
    g->st_off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t *mem;
        size_t nm = members(f, pts[i].spec, &mem);
        size_t a = st->off[i], len = st->off[i + 1] - a;
        for (size_t j = 0; j < nm; j++, k++) {
            memcpy(g->st_idx + e, st->idx + a, len * sizeof *g->st_idx);
            memcpy(g->st_w + e * nw, st->w + a * nw,
                   len * nw * sizeof *g->st_w);
            e += len;
            g->st_off[k + 1] = (uint32_t)e;
            g->st_pen[k] = st->pen[i];
        }
    }
    *out = (rvfit_stencils){g->st_off, g->st_idx, g->st_w, g->st_pen,
                            st->nw, 0};
    return 0;
}

int fit_chisq_obj_st(fit_ctx *f, size_t n, const rvfit_point *pts,
                     const rvfit_stencils *st, double *m2lnl)
{
    if (!f->grp || n == 0)
        return fit_chisq_st(f, n, pts, st, m2lnl);
    long tot = expand(f, n, pts);
    rvfit_stencils xs;
    if (tot < 0 || expand_st(f, n, pts, st, (size_t)tot, &xs))
        return fit_nomem(f);
    int rc = fit_chisq_st(f, (size_t)tot, f->grp_store.pts, &xs,
                          f->grp_store.m);
    if (!rc)
        gather(f, n, pts, m2lnl);
    return rc;
}

void fit_group_sync(fit_ctx *f)
{
    if (!f->grp)
        return;
    for (size_t i = 0; i < f->nact; i++) {
        const rvfit_point *r = &f->best[f->act[i]];
        const size_t *mem;
        size_t nm = members(f, f->act[i], &mem);
        for (size_t j = 0; j < nm; j++) {
            rvfit_point *p = &f->best[mem[j]];
            p->vsini = r->vsini;
            memcpy(p->theta, r->theta, sizeof p->theta);
        }
    }
}

void fit_group_sync_errors(fit_ctx *f)
{
    if (!f->grp)
        return;
    for (size_t i = 0; i < f->nact; i++) {
        const rvfit_result *r = &f->res[f->act[i]];
        const size_t *mem;
        size_t nm = members(f, f->act[i], &mem);
        for (size_t j = 0; j < nm; j++) {
            rvfit_result *q = &f->res[mem[j]];
            memcpy(q->param_err, r->param_err, sizeof q->param_err);
            memcpy(q->param_err_interp, r->param_err_interp,
                   sizeof q->param_err_interp);
            q->warn |= r->warn & RVFIT_WARN_BAD_HESSIAN;
        }
    }
}
