/* run_plot.c — figures of a run ([output] plot_dir, rvfit/plot.h): which
 * spectra of a batch are drawn, their data kept past the backend's load,
 * their model and continuum evaluated after the fit, and the PNGs
 * <plot_dir>/<input stem>_<TARGETID>.png written by the writer thread;
 * and per whole input the summary <plot_dir>/<input stem>_summary.png. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/plot.h"
#include "run_internal.h"

/* The TARGETID column of a unit's RVTAB pass-through rows, or NULL. */
static const int64_t *seg_targetids(const run_seg *seg)
{
    int nt = 0;
    const rvfit_table_schema *t = rvfit_output_tables(seg->unit->out, &nt);
    for (int k = 0; k < nt; k++) {
        if (strcmp(t[k].extname, "RVTAB"))
            continue;
        for (int col = 0; col < t[k].ncol; col++)
            if (!strcmp(t[k].cols[col].name, "TARGETID") &&
                t[k].cols[col].type == RVFIT_COL_I64 &&
                t[k].cols[col].repeat == 1)
                return seg->rows[k].data[col];
    }
    return NULL;
}

static int wanted(const rvfit_run *r, int64_t tid)
{
    if (r->nplot_targetid == 0)
        return 1;
    for (size_t i = 0; i < r->nplot_targetid; i++)
        if (r->plot_targetid[i] == tid)
            return 1;
    return 0;
}

static int add(run_plot *p, size_t spec, int64_t tid, run_unit *u)
{
    size_t n = p->n + 1;
    size_t *s = realloc(p->spec, n * sizeof *s);
    if (s)
        p->spec = s;
    int64_t *t = realloc(p->tid, n * sizeof *t);
    if (t)
        p->tid = t;
    run_unit **uu = realloc(p->unit, n * sizeof *uu);
    if (uu)
        p->unit = uu;
    if (!s || !t || !uu)
        return RVFIT_ERR_NOMEM;
    p->spec[p->n] = spec, p->tid[p->n] = tid, p->unit[p->n] = u;
    p->n = n;
    return RVFIT_OK;
}

/* The best-fit models and continua of m points, with the stencils the
 * interpolator needs (a simplex or pca library's from the core). */
static int plot_eval(const rvfit_run *r, rvfit_backend *be, size_t m,
                     const rvfit_point *pt, float *const *mod,
                     float *const *con, rvfit_err *err)
{
    rvfit_stencil_buf sb;
    memset(&sb, 0, sizeof sb);
    const rvfit_stencils *st = NULL;
    int rc = rvfit_stencil_table(r->interp, m, pt, &sb, &st, err);
    if (!rc)
        rc = be->ops->models(be->state, m, pt, st, mod, con, err);
    rvfit_stencil_buf_free(&sb);
    return rc;
}

/* Copy the chosen spectra's flux and ivar (the backend load frees them). */
static int copy_data(run_plot *p, const rvfit_batch *b)
{
    for (int a = 0; a < b->narm; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        size_t np = A->npix;
        p->flux[a] = malloc(p->n * np * sizeof(float));
        p->ivar[a] = malloc(p->n * np * sizeof(float));
        if (!p->flux[a] || !p->ivar[a])
            return RVFIT_ERR_NOMEM;
        for (size_t i = 0; i < p->n; i++) {
            memcpy(p->flux[a] + i * np, A->flux + p->spec[i] * np,
                   np * sizeof(float));
            memcpy(p->ivar[a] + i * np, A->ivar + p->spec[i] * np,
                   np * sizeof(float));
        }
    }
    return RVFIT_OK;
}

int plot_select(run_ctx *c, run_batch *rb, rvfit_err *err)
{
    const rvfit_run *r = c->r;
    if (!r->cfg->plot_dir[0])
        return RVFIT_OK;
    int rc = RVFIT_OK;
    for (size_t k = 0; k < rb->nseg && !rc; k++) {
        const run_seg *seg = &rb->seg[k];
        const int64_t *ids = seg_targetids(seg);
        for (size_t i = 0; i < seg->n && !rc; i++) {
            size_t s = seg->off + i;
            int64_t tid = ids ? ids[i] : (int64_t)rb->b.index[s];
            if (wanted(r, tid))
                rc = add(&rb->plot, s, tid, seg->unit);
        }
    }
    if (!rc && rb->plot.n)
        rc = copy_data(&rb->plot, &rb->b);
    return rc ? rvfit_err_set(err, rc, "figures: out of memory") : RVFIT_OK;
}

int plot_models(run_ctx *c, run_batch *rb, rvfit_err *err)
{
    run_plot *p = &rb->plot;
    const rvfit_run *r = c->r;
    if (p->n == 0)
        return RVFIT_OK;
    rvfit_point *pt = calloc(p->n, sizeof *pt);
    size_t *row = calloc(p->n, sizeof *row);
    int rc = pt && row ? RVFIT_OK : RVFIT_ERR_NOMEM;
    size_t m = 0; /* spectra with a fit (a bad spectrum has none) */
    for (size_t i = 0; i < p->n && !rc; i++) {
        const rvfit_result *res = &rb->res[p->spec[i]];
        if (res->warn & RVFIT_WARN_BAD_SPECTRUM || !isfinite(res->vrad))
            continue;
        pt[m] = (rvfit_point){.spec = (uint32_t)p->spec[i], .v = res->vrad,
                              .vsini = res->vsini};
        for (int k = 0; k < r->lib->nparam; k++)
            pt[m].theta[k] = rvfit_axis_scale(&r->lib->axis[k],
                                              res->param[k]);
        row[m++] = i;
    }
    float *mod[RVFIT_MAX_ARMS] = {0}, *con[RVFIT_MAX_ARMS] = {0};
    for (int a = 0; a < rb->b.narm && !rc; a++) {
        size_t np = rb->b.arm[a].npix;
        mod[a] = p->model[a] = malloc(p->n * np * sizeof(float));
        con[a] = p->cont[a] = malloc(p->n * np * sizeof(float));
        if (!mod[a] || !con[a])
            rc = RVFIT_ERR_NOMEM;
        for (size_t i = 0; !rc && i < p->n * np; i++)
            mod[a][i] = con[a][i] = NAN;
    }
    if (rc)
        rc = rvfit_err_set(err, rc, "figures: out of memory");
    else if (m)
        rc = plot_eval(r, rb->be, m, pt, mod, con, err);
    /* models() fills rows 0..m-1; move each to the row of its spectrum
     * (row[j] >= j, so going backwards never overwrites a pending one) */
    for (size_t j = m; !rc && j-- > 0;)
        for (int a = 0; a < rb->b.narm; a++) {
            size_t np = rb->b.arm[a].npix;
            if (row[j] == j)
                continue;
            memcpy(mod[a] + row[j] * np, mod[a] + j * np, np * sizeof(float));
            memcpy(con[a] + row[j] * np, con[a] + j * np, np * sizeof(float));
            for (size_t i = 0; i < np; i++)
                mod[a][j * np + i] = con[a][j * np + i] = NAN;
        }
    p->have_models = !rc;
    free(pt);
    free(row);
    return rc;
}

static void draw_one(run_ctx *c, const run_batch *rb, size_t i)
{
    const run_plot *p = &rb->plot;
    const rvfit_batch *b = &rb->b;
    size_t s = p->spec[i];
    rvfit_plot_spec ps = {.targetid = p->tid[i], .res = &rb->res[s],
                          .lib = c->r->lib, .narm = b->narm};
    for (int a = 0; a < b->narm; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        size_t np = A->npix, off = i * np;
        ps.arm[a] = (rvfit_plot_arm){
            A->name, rvfit_arm_npix(A, s),
            A->wave + (A->wave_per_spec ? s * np : 0), p->flux[a] + off,
            p->ivar[a] + off, p->have_models ? p->model[a] + off : NULL,
            p->have_models ? p->cont[a] + off : NULL};
    }
    char stem[1024], path[RUN_PATH + 1100];
    out_stem(p->unit[i]->path, stem, sizeof stem);
    snprintf(path, sizeof path, "%s/%s_%lld.png", c->r->cfg->plot_dir, stem,
             (long long)p->tid[i]);
    rvfit_err e;
    rvfit_err_clear(&e);
    if (rvfit_plot_write(path, &ps, &e))
        rvfit_log(c->r->host, RVFIT_LOG_WARN, "rvfit", "figure: %s", e.msg);
    else
        c->r->nplots++;
}

void plot_draw_batch(run_ctx *c, run_batch *rb)
{
    for (size_t i = 0; i < rb->plot.n; i++) {
        const run_unit *U = rb->plot.unit[i];
        if (!atomic_load(&U->rfailed) && !U->wfailed)
            draw_one(c, rb, i);
    }
}

void plot_clear(run_plot *p)
{
    free(p->spec);
    free(p->tid);
    free(p->unit);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        free(p->flux[a]);
        free(p->ivar[a]);
        free(p->model[a]);
        free(p->cont[a]);
    }
    memset(p, 0, sizeof *p);
}

static int sum_alloc(run_sum *s, size_t cap, int np)
{
    s->cap = cap ? cap : 1;
    s->sn = malloc(s->cap * sizeof *s->sn);
    s->vrad = malloc(s->cap * sizeof *s->vrad);
    s->verr = malloc(s->cap * sizeof *s->verr);
    s->param = malloc(s->cap * (size_t)(np ? np : 1) * sizeof *s->param);
    s->warn = malloc(s->cap * sizeof *s->warn);
    return s->sn && s->vrad && s->verr && s->param && s->warn;
}

void plot_sum_add(run_ctx *c, run_unit *U, const rvfit_result *res,
                  size_t n)
{
    const rvfit_run *r = c->r;
    int np = r->lib->nparam;
    if (!r->cfg->plot_dir[0] || U->u.nparts > 1)
        return;
    if (!U->sum && (U->sum = calloc(1, sizeof *U->sum)) &&
        !sum_alloc(U->sum, U->count, np)) {
        plot_sum_free(U->sum);
        U->sum = NULL;
    }
    if (!U->sum || U->sum->n + n > U->sum->cap)
        return; /* no memory: plot_sum_draw says so */
    run_sum *s = U->sum;
    for (size_t i = 0; i < n; i++, s->n++) {
        double sn = NAN;
        for (int a = 0; a < RVFIT_MAX_ARMS; a++)
            if (isfinite(res[i].sn[a]) && !(res[i].sn[a] <= sn))
                sn = res[i].sn[a];
        s->sn[s->n] = sn;
        s->vrad[s->n] = res[i].vrad;
        s->verr[s->n] = res[i].vrad_err;
        s->warn[s->n] = res[i].warn;
        for (int k = 0; k < np; k++)
            s->param[s->n * (size_t)np + (size_t)k] = res[i].param[k];
    }
}

void plot_sum_draw(run_ctx *c, run_unit *U)
{
    const rvfit_run *r = c->r;
    if (!r->cfg->plot_dir[0] || U->u.nparts > 1 || U->count == 0)
        return;
    char stem[1024], path[RUN_PATH + 1100];
    out_stem(U->path, stem, sizeof stem);
    snprintf(path, sizeof path, "%s/%s_summary.png", r->cfg->plot_dir, stem);
    rvfit_err e;
    rvfit_err_clear(&e);
    const run_sum *s = U->sum;
    if (!s || s->n != U->count) {
        rvfit_log(r->host, RVFIT_LOG_WARN, "rvfit", "figure: %s: out of "
                  "memory for the summary of %zu spectra", path, U->count);
        return;
    }
    const char *base = strrchr(U->path, '/');
    rvfit_plot_summary ps = {base ? base + 1 : U->path, s->n, s->sn,
                             s->vrad, s->verr, s->param, s->warn, r->lib};
    if (rvfit_plot_summary_write(path, &ps, &e))
        rvfit_log(r->host, RVFIT_LOG_WARN, "rvfit", "figure: %s", e.msg);
}

void plot_sum_free(run_sum *s)
{
    if (!s)
        return;
    free(s->sn), free(s->vrad), free(s->verr), free(s->param), free(s->warn);
    free(s);
}
