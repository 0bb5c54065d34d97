/* interp.c — the template interpolators registered in the core (table
 * below) and the stencil tables the fit sends to backends
 * (rvfit/interp.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "interp_internal.h"
#include "rvfit/library_io.h"

typedef struct interp_kind {
    const char *name;  /* [templates] interpolator */
    const char *fits;  /* INTERP keyword           */
    int device;        /* backends can compute its stencil themselves */
} interp_kind;

static const interp_kind kinds[RVFIT_IKIND_NKIND] = {
    [RVFIT_IKIND_MULTILINEAR] = {"multilinear", "MULTILIN", 1},
    [RVFIT_IKIND_CUBIC] = {"cubic", "CUBIC", 1},
    [RVFIT_IKIND_SIMPLEX] = {"simplex", "SIMPLEX", 0},
};

int rvfit_interp_kind_parse(const char *name)
{
    for (int k = 0; k < RVFIT_IKIND_NKIND; k++)
        if (!strcasecmp(name, kinds[k].name) ||
            !strcasecmp(name, kinds[k].fits))
            return k;
    return -1;
}

const char *rvfit_interp_kind_name(int kind)
{
    return kind >= 0 && kind < RVFIT_IKIND_NKIND ? kinds[kind].name : "?";
}

const char *rvfit_interp_kind_fits(int kind)
{
    return kind >= 0 && kind < RVFIT_IKIND_NKIND ? kinds[kind].fits : "?";
}

int rvfit_interp_kind_of(const rvfit_library *lib)
{
    for (int p = 0; p < lib->nparam; p++)
        if (lib->axis[p].interp == RVFIT_INTERP_CUBIC)
            return RVFIT_IKIND_CUBIC;
    return RVFIT_IKIND_MULTILINEAR;
}

int rvfit_interp_open(rvfit_interpolator *ip, const rvfit_library *lib,
                      int kind, const char *path, int host_stencils,
                      rvfit_err *err)
{
    memset(ip, 0, sizeof *ip);
    int rc = rvfit_library_check(lib, err);
    if (rc)
        return rc;
    if (kind < 0)
        kind = rvfit_interp_kind_of(lib);
    if (kind >= RVFIT_IKIND_NKIND)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "interpolator kind %d",
                             kind);
    if (kind == RVFIT_IKIND_SIMPLEX) {
        uint32_t *vert = NULL;
        size_t ns = 0;
        int nv = 0;
        sx_data *sd = NULL;
        for (int p = 0; p < lib->nparam; p++)
            if (lib->axis[p].interp != RVFIT_INTERP_LINEAR)
                return rvfit_err_set(err, RVFIT_ERR_CONFIG, "the simplex "
                                     "interpolator has no cubic axes (%s "
                                     "asked for): leave [templates] cubic "
                                     "empty", lib->axis[p].name);
        rc = path ? rvfit_library_read_simplices(path, &vert, &ns, &nv, err)
                  : RVFIT_OK;
        if (!rc)
            rc = sx_open(lib, vert, ns, nv, &sd, err);
        free(vert);
        if (rc)
            return rc;
        ip->data = sd;
    }
    ip->lib = lib;
    ip->kind = kind;
    ip->host_stencils = host_stencils || !kinds[kind].device;
    return RVFIT_OK;
}

void rvfit_interp_close(rvfit_interpolator *ip)
{
    if (!ip)
        return;
    if (ip->kind == RVFIT_IKIND_SIMPLEX)
        sx_free(ip->data);
    memset(ip, 0, sizeof *ip);
}

int rvfit_interp_simplices(const rvfit_interpolator *ip,
                           const uint32_t **vert, size_t *ns, int *nvert)
{
    const sx_data *sd = ip->kind == RVFIT_IKIND_SIMPLEX ? ip->data : NULL;
    if (!sd)
        return -1;
    *vert = sd->vert;
    *ns = sd->ns;
    *nvert = sd->d + 1;
    return 0;
}

int rvfit_interp_stencil(const rvfit_interpolator *ip, const double *theta,
                         uint32_t *idx, double *w, double *pen)
{
    if (ip->kind == RVFIT_IKIND_SIMPLEX)
        return sx_stencil(ip->lib, ip->data, theta, idx, w, pen);
    size_t corner[RVFIT_MAX_CORNERS];
    int n = rvfit_library_stencil(ip->lib, theta, corner, w, pen);
    for (int k = 0; k < n; k++)
        idx[k] = (uint32_t)corner[k];
    return n;
}

static int buf_grow(rvfit_stencil_buf *b, size_t npts, size_t nent)
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
        if (i)
            b->idx = i;
        double *w = realloc(b->w, nent * sizeof *w);
        if (w)
            b->w = w;
        if (!i || !w)
            return -1;
        b->cap_ent = nent;
    }
    return 0;
}

int rvfit_stencil_fill(const rvfit_interpolator *ip, size_t n,
                       const rvfit_point *pts, rvfit_stencil_buf *buf,
                       rvfit_err *err)
{
    uint32_t e = 0;
    for (size_t i = 0; i < n; i++) {
        /* The buffers are reused across calls: growth settles early. */
        if (buf_grow(buf, n, (size_t)e + RVFIT_MAX_STENCIL) != 0)
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "stencils for %zu "
                                 "points: out of memory", n);
        buf->off[0] = 0;
        int k = 0;
        buf->pen[i] = 0.0;
        if (!(pts[i].flags & RVFIT_PT_CONTINUUM))
            k = rvfit_interp_stencil(ip, pts[i].theta, buf->idx + e,
                                     buf->w + e, &buf->pen[i]);
        e += (uint32_t)k;
        buf->off[i + 1] = e;
    }
    if (n == 0 && buf_grow(buf, 0, 1) != 0)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "stencils: no memory");
    buf->off[0] = 0;
    buf->view.off = buf->off;
    buf->view.idx = buf->idx;
    buf->view.w = buf->w;
    buf->view.pen = buf->pen;
    return RVFIT_OK;
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
