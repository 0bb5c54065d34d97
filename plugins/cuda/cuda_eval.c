/* cuda_eval.c — chisq, vscan and models on one or several devices.
 *
 * A call is a job of `nslot` template slots with `nrep` points each (chisq
 * and models: one point per slot; vscan: one slot per base point and one
 * point per velocity).  The slots are split into contiguous parts, one per
 * device; each device works through its part in chunks that fit its
 * scratch budget.  In every round each device with work left gets one
 * chunk queued on its stream (inputs packed into pinned memory, one
 * asynchronous upload, rvk_template, rvk_like, asynchronous downloads);
 * then the round's streams are synchronised and the results gathered, so
 * the devices run concurrently from one host thread.  Per call only the
 * points go in and -2 ln L, chisq per arm or models come out. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

typedef struct cuda_job {
    size_t nslot, nrep;
    int mode;                   /* 0: likelihood, 1: models              */
    const rvfit_point *pts;     /* slot s uses pts[s]                     */
    const double *vel;          /* vscan: v of point p; NULL: pts[p].v   */
    double *m2lnl, *chisq;      /* [nslot*nrep], [nslot*narm] or NULL    */
    float *const *model, *const *cont;
    const rvfit_stencils *sn; /* stencils from the core, or NULL     */
} cuda_job;

/* Byte layout of one chunk of c slots (from d->s0) in the input, output and scratch
 * buffers (regions aligned for any element type). */
typedef struct cuda_geom {
    size_t c, P, gt, gl;
    size_t o_fl, o_sp, o_vs, o_th, o_pv, n_in;
    size_t ne, nw, o_so, o_si, o_sw, o_spn; /* stencils of the chunk   */
    size_t o_m2, o_ach, o_mo, o_co, n_out;
    size_t n_tr, n_tint, n_tpen, n_scr;
} cuda_geom;

#define CUDA_ALIGN 256

static size_t cuda_al(size_t x)
{
    return (x + CUDA_ALIGN - 1) / CUDA_ALIGN * CUDA_ALIGN;
}

static size_t cuda_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

static void cuda_geometry(const cuda_state *st, const cuda_dev *d,
                          const cuda_job *job, size_t c, cuda_geom *g)
{
    size_t r = st->rsz, np = (size_t)(st->lib.nparam > 0 ? st->lib.nparam : 1);
    g->c = c;
    g->P = c * job->nrep;
    g->gt = cuda_min(c, d->maxgroups);
    g->gl = cuda_min(g->P, d->maxgroups);
    g->o_fl = 0;
    g->o_sp = g->o_fl + cuda_al(c * 4);
    g->o_vs = g->o_sp + cuda_al(c * 4);
    g->o_th = g->o_vs + cuda_al(c * r);
    g->o_pv = g->o_th + cuda_al(c * np * r);
    /* stencils: offsets rebased to the chunk, indices, weights, penalty
     * (placeholders without stencils, so every kernel pointer is set) */
    const rvfit_stencils *sn = job->sn;
    size_t s1 = sn ? cuda_min(d->s0 + c, job->nslot) : 0;
    g->ne = sn ? sn->off[s1] - sn->off[d->s0] : 0;
    g->nw = sn ? (size_t)rvk_stencil_nw(sn, &st->bat) : 1;
    g->o_so = g->o_pv + cuda_al(g->P * r);
    g->o_si = g->o_so + cuda_al((c + 1) * 4);
    g->o_sw = g->o_si + cuda_al(g->ne * 4);
    g->o_spn = g->o_sw + cuda_al(g->ne * g->nw * r);
    g->n_in = g->o_spn + cuda_al(c * r);
    size_t mo = job->mode ? g->P * st->bat.npix_sum * sizeof(float) : 0;
    g->o_m2 = 0;
    g->o_ach = cuda_al(g->P * r);
    g->o_mo = g->o_ach + cuda_al(g->P * (size_t)st->bat.narm * r);
    g->o_co = g->o_mo + cuda_al(mo);
    g->n_out = g->o_co + cuda_al(mo);
    g->n_tr = c * st->bat.slot_len * r;
    g->n_tint = g->gt * st->bat.lnpix_max * r;
    g->n_tpen = c * r;
    g->n_scr = g->gl * 2 * st->bat.npix_max * r;
}

static size_t cuda_bytes(const cuda_geom *g)
{
    return g->n_in + g->n_out + g->n_tr + g->n_tint + g->n_tpen + g->n_scr;
}

/* Slots per chunk on device d, at most `want`: the largest chunk whose
 * device buffers fit d->budget (block scratch grows with the chunk only
 * up to maxgroups, so bisect on the exact size); at least one slot, and
 * the points of a chunk fit an int. */
static size_t cuda_cap(const cuda_state *st, const cuda_dev *d,
                       const cuda_job *job, size_t want)
{
    size_t hi = cuda_min(want, (size_t)INT_MAX / (job->nrep ? job->nrep : 1));
    size_t lo = 1;
    cuda_geom g;
    cuda_geometry(st, d, job, hi, &g);
    if (cuda_bytes(&g) <= d->budget)
        return hi < 1 ? 1 : hi;
    while (lo + 1 < hi) { /* invariant: fits(lo) or lo == 1; !fits(hi) */
        size_t mid = lo + (hi - lo) / 2;
        cuda_geometry(st, d, job, mid, &g);
        if (cuda_bytes(&g) <= d->budget)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Grow the device buffers of a chunk of g->c slots.  Returns cudaSuccess,
 * cudaErrorMemoryAllocation (caller shrinks) or another error. */
static cudaError_t cuda_chunk_alloc(cuda_dev *d, const cuda_geom *g)
{
    cudaError_t e = cuda_grow(&d->d_in, g->n_in);
    if (e == cudaSuccess)
        e = cuda_grow(&d->d_out, g->n_out);
    if (e == cudaSuccess)
        e = cuda_grow(&d->d_tr, g->n_tr);
    if (e == cudaSuccess)
        e = cuda_grow(&d->d_tint, g->n_tint);
    if (e == cudaSuccess)
        e = cuda_grow(&d->d_tpen, g->n_tpen);
    if (e == cudaSuccess)
        e = cuda_grow(&d->d_scr, g->n_scr);
    if (e == cudaSuccess)
        e = cuda_grow_host(&d->h_in, g->n_in);
    if (e == cudaSuccess)
        e = cuda_grow_host(&d->h_out, g->n_out);
    return e;
}

/* Chunk of up to `want` slots on device d with its buffers allocated; on
 * cudaErrorMemoryAllocation the budget is halved and the chunk shrunk. */
static int cuda_chunk_fit(cuda_state *st, cuda_dev *d, const cuda_job *job,
                          size_t want, cuda_geom *g, rvfit_err *err)
{
    for (;;) {
        size_t c = cuda_cap(st, d, job, want);
        cuda_geometry(st, d, job, c, g);
        cudaError_t e = cuda_chunk_alloc(d, g);
        if (e == cudaSuccess)
            return RVFIT_OK;
        if (e != cudaErrorMemoryAllocation || c <= 1)
            return cuda_fail(err, d, "allocating per-call buffers", e);
        /* Free what the larger chunk grew, so that the retry starts clean. */
        cuda_buf *b[] = {&d->d_in, &d->d_out, &d->d_tr, &d->d_tint,
                         &d->d_tpen, &d->d_scr};
        for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
            cuda_buf_free(b[i]);
        d->budget /= 2;
        rvfit_log(st->host, RVFIT_LOG_WARN, "cuda",
                  "device %d (%s): out of memory for %zu slots; scratch "
                  "budget halved to %zu MiB", d->ord, d->name, c,
                  d->budget >> 20);
    }
}

/* Inputs of slots [s0, s0+c) into the pinned staging buffer. */
static void cuda_pack(const cuda_state *st, cuda_dev *d, const cuda_job *job,
                      const cuda_geom *g, size_t s0)
{
    char *h = d->h_in.p;
    size_t np = (size_t)(st->lib.nparam > 0 ? st->lib.nparam : 1);
    uint32_t *fl = (uint32_t *)(h + g->o_fl), *sp = (uint32_t *)(h + g->o_sp);
    for (size_t i = 0; i < g->c; i++) {
        const rvfit_point *p = &job->pts[s0 + i];
        fl[i] = p->flags;
        sp[i] = p->spec;
        rvk_put_real(st->fp64, h + g->o_vs, i, p->vsini);
        for (size_t k = 0; k < np; k++)
            rvk_put_real(st->fp64, h + g->o_th, i * np + k,
                          k < (size_t)st->lib.nparam ? p->theta[k] : 0.0);
    }
    size_t p0 = s0 * job->nrep;
    for (size_t i = 0; i < g->P; i++)
        rvk_put_real(st->fp64, h + g->o_pv, i,
                      job->vel ? job->vel[p0 + i] : job->pts[p0 + i].v);
    const rvfit_stencils *sn = job->sn;
    if (!sn)
        return;
    uint32_t e0 = sn->off[s0], *so = (uint32_t *)(h + g->o_so);
    uint32_t *si = (uint32_t *)(h + g->o_si);
    for (size_t i = 0; i <= g->c; i++)
        so[i] = sn->off[s0 + i] - e0;
    for (size_t e = 0; e < g->ne; e++) {
        si[e] = sn->idx[e0 + e];
        for (size_t a = 0; a < g->nw; a++)
            rvk_put_real(st->fp64, h + g->o_sw, e * g->nw + a,
                         rvk_stencil_w(sn, &st->bat, e0 + e, (int)a));
    }
    for (size_t i = 0; i < g->c; i++)
        rvk_put_real(st->fp64, h + g->o_spn, i, sn->pen[s0 + i]);
}

static const char *cuda_tpl_missing(const cuda_tpl_args *a)
{
    RVK_TEMPLATE_ARGS(RVK_MISSING)
    return NULL;
}

static const char *cuda_like_missing(const cuda_like_args *a)
{
    RVK_LIKE_ARGS(RVK_MISSING)
    return NULL;
}

/* Both kernels of one chunk on d's stream. */
static int cuda_launch(const cuda_state *st, cuda_dev *d, const cuda_job *job,
                       const cuda_geom *g, rvfit_err *err)
{
    char *in = d->d_in.p, *out = d->d_out.p;
    cuda_tpl_args t = {
        .ntpl = (int32_t)g->c, .nparam = st->lib.nparam,
        .narm = st->bat.narm, .slot_len = (int64_t)st->bat.slot_len,
        .tint_len = (int64_t)st->bat.lnpix_max, .ax_n = d->ax_n,
        .ax_node = d->ax_node, .exists = d->exists, .lib_flux = d->lib_flux,
        .ai = d->ai, .ad = d->ad, .tflags = in + g->o_fl,
        .tvsini = in + g->o_vs, .ttheta = in + g->o_th,
        .use_st = job->sn != NULL, .st_off = in + g->o_so,
        .st_idx = in + g->o_si, .st_w = in + g->o_sw,
        .st_nw = (int32_t)g->nw, .st_pen = in + g->o_spn, .tr = d->d_tr.p,
        .tpen = d->d_tpen.p, .tint = d->d_tint.p};
    /* (Likelihood mode writes no models: any valid pointer will do.) */
    cuda_like_args l = {
        .npt = (int32_t)g->P, .nrep = (int32_t)job->nrep,
        .narm = st->bat.narm, .npoly = st->bat.npoly, .mode = job->mode,
        .slot_len = (int64_t)st->bat.slot_len,
        .scr_len = (int64_t)st->bat.npix_max, .tspec = in + g->o_sp,
        .tpen = d->d_tpen.p, .pv = in + g->o_pv, .tr = d->d_tr.p,
        .ai = d->ai, .ad = d->ad, .pos = d->pos, .flux = d->flux,
        .ivar = d->ivar, .res = d->res, .basis = d->basis, .bplan = d->bplan,
        .nuse = d->nuse,
        .fwf = d->fwf,
        .m2lnl = out + g->o_m2, .achi = out + g->o_ach,
        .mout = out + (job->mode ? g->o_mo : 0),
        .cout = out + (job->mode ? g->o_co : 0), .scratch = d->d_scr.p};
    const char *miss = cuda_tpl_missing(&t);
    if (miss || (miss = cuda_like_missing(&l)) != NULL)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL,
                             "cuda: kernel buffer argument %s not set", miss);
    int e = (st->fp64 ? cuda_launch_template_d : cuda_launch_template_f)(
        &t, (unsigned)g->gt, (unsigned)st->wg, d->stream);
    if (e != 0)
        return cuda_fail(err, d, "launch rvk_template", (cudaError_t)e);
    e = (st->fp64 ? cuda_launch_like_d : cuda_launch_like_f)(
        &l, (unsigned)g->gl, (unsigned)st->wg, d->stream);
    if (e != 0)
        return cuda_fail(err, d, "launch rvk_like", (cudaError_t)e);
    return RVFIT_OK;
}

/* Queue the next chunk of device d: upload, kernels, downloads. */
static int cuda_enqueue(cuda_state *st, cuda_dev *d, const cuda_job *job,
                        size_t want, rvfit_err *err)
{
    cuda_geom g;
    int rc = cuda_use(d, err);
    if (rc == RVFIT_OK)
        rc = cuda_chunk_fit(st, d, job, want, &g, err);
    if (rc != RVFIT_OK)
        return rc;
    d->ns = g.c;
    cuda_pack(st, d, job, &g, d->s0);
    cudaError_t e = cudaMemcpyAsync(d->d_in.p, d->h_in.p, g.n_in,
                                    cudaMemcpyHostToDevice, d->stream);
    if (e != cudaSuccess)
        return cuda_fail(err, d, "cudaMemcpyAsync(points)", e);
    rc = cuda_launch(st, d, job, &g, err);
    if (rc != RVFIT_OK)
        return rc;
    /* Only the regions this job reads come back. */
    size_t lo = job->mode ? g.o_mo : g.o_m2;
    size_t hi = job->mode ? (job->cont ? g.n_out : g.o_co)
                          : (job->chisq ? g.o_mo : g.o_ach);
    e = cudaMemcpyAsync((char *)d->h_out.p + lo, (char *)d->d_out.p + lo,
                        hi - lo, cudaMemcpyDeviceToHost, d->stream);
    return e == cudaSuccess ? RVFIT_OK
                            : cuda_fail(err, d, "cudaMemcpyAsync(results)", e);
}

/* Results of d's finished chunk into the job's outputs. */
static void cuda_gather(const cuda_state *st, cuda_dev *d,
                        const cuda_job *job)
{
    cuda_geom g;
    cuda_geometry(st, d, job, d->ns, &g);
    const char *h = d->h_out.p;
    size_t p0 = d->s0 * job->nrep, narm = (size_t)st->bat.narm;
    if (job->mode == 0) {
        for (size_t i = 0; i < g.P; i++)
            job->m2lnl[p0 + i] = rvk_result_at(st->fp64, h + g.o_m2, i);
        for (size_t i = 0; job->chisq && i < g.P * narm; i++)
            job->chisq[p0 * narm + i] = rvk_result_at(st->fp64, h + g.o_ach, i);
        return;
    }
    size_t off = 0; /* arm blocks of P * npix floats */
    for (size_t a = 0; a < narm; a++) {
        size_t n = g.P * st->bat.npix[a], o = p0 * st->bat.npix[a];
        memcpy(job->model[a] + o, h + g.o_mo + off * sizeof(float),
               n * sizeof(float));
        if (job->cont && job->cont[a])
            memcpy(job->cont[a] + o, h + g.o_co + off * sizeof(float),
                   n * sizeof(float));
        off += n;
    }
}

/* Wait for every device with a chunk in flight (flags in busy[]); the
 * first error wins, but every stream is drained so that no copy into the
 * pinned buffers outlives the call. */
static int cuda_drain(cuda_state *st, const cuda_job *job, const int *busy,
                      int gather, rvfit_err *err)
{
    int rc = RVFIT_OK;
    for (int k = 0; k < st->ndev; k++) {
        cuda_dev *d = &st->dev[k];
        if (!busy[k])
            continue;
        cudaError_t e = cudaSetDevice(d->ord);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(d->stream);
        if (e != cudaSuccess && rc == RVFIT_OK)
            rc = cuda_fail(err, d, "cudaStreamSynchronize", e);
        if (e == cudaSuccess && gather && rc == RVFIT_OK) {
            cuda_gather(st, d, job);
            d->points += d->ns * job->nrep;
        }
    }
    return rc;
}

/* The whole job, in rounds of one chunk per device. */
static int cuda_run(cuda_state *st, const cuda_job *job, rvfit_err *err)
{
    size_t end[CUDA_MAX_DEV];
    int busy[CUDA_MAX_DEV];
    for (int k = 0; k < st->ndev; k++) {
        st->dev[k].s0 = job->nslot * (size_t)k / (size_t)st->ndev;
        st->dev[k].ns = 0;
        end[k] = job->nslot * (size_t)(k + 1) / (size_t)st->ndev;
    }
    int rc = RVFIT_OK, any = job->nrep > 0;
    while (rc == RVFIT_OK && any) {
        any = 0;
        for (int k = 0; k < st->ndev; k++) {
            cuda_dev *d = &st->dev[k];
            busy[k] = 0;
            if (rc != RVFIT_OK || d->s0 >= end[k])
                continue;
            rc = cuda_enqueue(st, d, job, end[k] - d->s0, err);
            busy[k] = 1; /* drain even a partly queued chunk */
        }
        int rc2 = cuda_drain(st, job, busy, rc == RVFIT_OK, err);
        rc = rc != RVFIT_OK ? rc : rc2;
        for (int k = 0; k < st->ndev && rc == RVFIT_OK; k++)
            if (busy[k]) {
                st->dev[k].s0 += st->dev[k].ns;
                any |= st->dev[k].s0 < end[k];
            }
    }
    return rc;
}

/* Ready to evaluate, and every input valid (before any device work, so
 * that a bad point costs nothing and counts nothing). */
static int cuda_validate(const cuda_state *st, const cuda_job *job,
                         rvfit_err *err)
{
    if (!st->lib.have || !st->bat.have)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "cuda: evaluation before load_library and "
                             "load_batch");
    if (job->sn &&
        rvfit_stencils_check(&st->lib.meta, job->nslot, job->sn, err))
        return RVFIT_ERR_INVALID;
    for (size_t i = 0; i < job->nslot; i++) {
        const rvfit_point *p = &job->pts[i];
        if (p->spec >= st->bat.nspec)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "point %zu: spectrum %u not in the batch of "
                                 "%zu", i, p->spec, st->bat.nspec);
        if ((!job->vel && !rvk_velocity_ok(p->v)) || !isfinite(p->vsini))
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "point %zu: v = %g, vsini = %g", i, p->v,
                                 p->vsini);
    }
    for (size_t i = 0; job->vel && i < job->nslot * job->nrep; i++)
        if (!rvk_velocity_ok(job->vel[i]))
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "velocity %zu is %g km/s", i, job->vel[i]);
    return RVFIT_OK;
}

/* Validate, run, count; `what` names the call in error messages. */
static int cuda_call(cuda_state *st, const cuda_job *job, const char *what,
                     rvfit_err *err)
{
    double t0 = rvfit_now();
    int rc = cuda_validate(st, job, err);
    if (rc == RVFIT_OK)
        rc = cuda_run(st, job, err);
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(err, "cuda %s", what);
        return rc;
    }
    st->cnt.points += job->nslot * job->nrep;
    st->cnt.calls++;
    st->cnt.seconds += rvfit_now() - t0;
    return RVFIT_OK;
}

int cuda_chisq(void *state, size_t n, const rvfit_point *pts,
               const rvfit_stencils *sn, rvfit_chisq_out *out,
               rvfit_err *err)
{
    cuda_job job = {.nslot = n, .nrep = 1, .pts = pts, .m2lnl = out->m2lnl,
                    .chisq = out->chisq, .sn = sn};
    char what[64];
    snprintf(what, sizeof what, "chisq(%zu points)", n);
    return cuda_call(state, &job, what, err);
}

int cuda_vscan(void *state, size_t nq, const rvfit_point *base,
               const rvfit_stencils *sn, size_t nvel,
               const double *vel, double *m2lnl, rvfit_err *err)
{
    cuda_job job = {.nslot = nq, .nrep = nvel, .pts = base, .vel = vel,
                    .m2lnl = m2lnl, .sn = sn};
    char what[64];
    snprintf(what, sizeof what, "vscan(%zu x %zu)", nq, nvel);
    return cuda_call(state, &job, what, err);
}

int cuda_models(void *state, size_t n, const rvfit_point *pts,
                const rvfit_stencils *sn, float *const *model,
                float *const *cont, rvfit_err *err)
{
    cuda_state *st = state;
    for (int a = 0; a < st->bat.narm; a++)
        if (!model || !model[a])
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "cuda models: no output array for arm %d", a);
    cuda_job job = {.nslot = n, .nrep = 1, .mode = 1, .pts = pts,
                    .model = model, .cont = cont, .sn = sn};
    char what[64];
    snprintf(what, sizeof what, "models(%zu points)", n);
    return cuda_call(state, &job, what, err);
}

void cuda_free_call_buffers(cuda_state *st)
{
    for (int k = 0; k < st->ndev; k++) {
        cuda_dev *d = &st->dev[k];
        if (cudaSetDevice(d->ord) != cudaSuccess)
            continue;
        cuda_buf *b[] = {&d->d_in, &d->d_out, &d->d_tr, &d->d_tint,
                         &d->d_tpen, &d->d_scr};
        for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
            cuda_buf_free(b[i]);
        cuda_buf_free_host(&d->h_in);
        cuda_buf_free_host(&d->h_out);
    }
}
