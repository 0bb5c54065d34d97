/* stencil_buf.c — the stencil tables the fit sends to backends: filled
 * per call from an interpolator into reused buffers, and handed to the
 * backend entry that takes them (rvfit/interp.h). */
#include <stdlib.h>
#include <string.h>

#include "interp_internal.h"

/* Room for npts points, nent entries and nent * nw weights. */
static int buf_grow(rvfit_stencil_buf *b, size_t npts, size_t nent,
                    size_t nw)
{
    if (npts + 1 > b->cap_pts) {
        uint32_t *o = realloc(b->off, (npts + 1) * sizeof *o);
        if (o)
            b->off = o;
        double *p = realloc(b->pen, (npts + 1) * sizeof *p);
        if (p)
            b->pen = p;
        if (!o || !p)
            return -1;
        b->cap_pts = npts + 1;
    }
    if (nent > b->cap_ent) {
        nent = nent > 2 * b->cap_ent ? nent : 2 * b->cap_ent;
        uint32_t *i = realloc(b->idx, nent * sizeof *i);
        if (!i)
            return -1;
        b->idx = i;
        b->cap_ent = nent;
    }
    if (b->cap_ent * nw > b->cap_w) {
        double *w = realloc(b->w, b->cap_ent * nw * sizeof *w);
        if (!w)
            return -1;
        b->w = w;
        b->cap_w = b->cap_ent * nw;
    }
    return 0;
}

/* Stencil of point p into idx/w (w: nw weights per entry). */
static int one_stencil(const rvfit_interpolator *ip, const rvfit_point *p,
                       uint32_t *idx, double *w, double *pen)
{
    *pen = 0.0;
    if (p->flags & RVFIT_PT_CONTINUUM)
        return 0;
    return rvfit_interp_vec_stencil(ip, p->theta, idx, w, pen);
}

int rvfit_stencil_fill(const rvfit_interpolator *ip, size_t n,
                       const rvfit_point *pts, rvfit_stencil_buf *buf,
                       rvfit_err *err)
{
    size_t nw = (size_t)rvfit_interp_nweights(ip);
    uint32_t e = 0;
    for (size_t i = 0; i < n; i++) {
        /* The buffers are reused across calls: growth settles early. */
        if (buf_grow(buf, n, (size_t)e + RVFIT_MAX_STENCIL, nw) != 0)
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "stencils for %zu "
                                 "points: out of memory", n);
        buf->off[0] = 0;
        int k = one_stencil(ip, &pts[i], buf->idx + e, buf->w + e * nw,
                            &buf->pen[i]);
        e += (uint32_t)k;
        buf->off[i + 1] = e;
    }
    if (n == 0 && buf_grow(buf, 0, 1, nw) != 0)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "stencils: no memory");
    buf->off[0] = 0;
    buf->nw = (uint32_t)nw;
    buf->view = (rvfit_stencils){buf->off, buf->idx, buf->w, buf->pen,
                                 (uint32_t)nw, 0};
    return RVFIT_OK;
}

int rvfit_stencil_table(const rvfit_interpolator *ip, size_t n,
                        const rvfit_point *pts, rvfit_stencil_buf *buf,
                        const rvfit_stencils **st, rvfit_err *err)
{
    *st = NULL;
    if (!ip || !ip->host_stencils)
        return RVFIT_OK; /* the backend's, from theta */
    int rc = rvfit_stencil_fill(ip, n, pts, buf, err);
    if (!rc)
        *st = &buf->view;
    return rc;
}

int rvfit_interp_backend_check(const rvfit_interpolator *ip, uint32_t caps,
                               const char *backend, rvfit_err *err)
{
    uint32_t need = RVFIT_BACKEND_CAP_GRID;
    const char *what = "stencils from theta on the regular grid";
    if (ip && ip->host_stencils && rvfit_interp_nweights(ip) > 1) {
        need = RVFIT_BACKEND_CAP_ARM_WEIGHTS;
        what = "stencil tables with a weight per arm";
    } else if (ip && ip->host_stencils) {
        need = RVFIT_BACKEND_CAP_STENCILS;
        what = "stencil tables from the core";
    }
    if (caps & need)
        return RVFIT_OK;
    return rvfit_err_set(err, RVFIT_ERR_CONFIG, "backend '%s' does not take "
                         "%s (its caps 0x%x), which the %s interpolator "
                         "needs here: choose another backend", backend,
                         what, (unsigned)caps,
                         ip ? rvfit_interp_name(ip) : "multilinear");
}

void rvfit_stencil_buf_free(rvfit_stencil_buf *buf)
{
    if (!buf)
        return;
    free(buf->off);
    free(buf->idx);
    free(buf->w);
    free(buf->pen);
    memset(buf, 0, sizeof *buf);
}
