/* ocl_eval.c — chisq, vscan and models on the device.  Per call only the
 * points go in (flags, vsini, theta, spectrum, velocity) and -2 ln L, the
 * per-arm chisq or the models come out.  Points are processed in chunks
 * whose template slots fit the scratch budget; each chunk is one
 * rvk_template launch (a slot per point, or per vscan base point) and one
 * rvk_like launch (a work-group per point). */
#include <math.h>
#include <string.h>

#include "ocl_internal.h"

void ocl_free_call_buffers(ocl_state *st)
{
    cl_mem *m[] = {&st->b_tflags, &st->b_tvsini, &st->b_ttheta, &st->b_tspec,
                   &st->b_tpen, &st->b_pv, &st->b_tr, &st->b_tint,
                   &st->b_scr, &st->b_m2lnl, &st->b_achi, &st->b_mout,
                   &st->b_cout, &st->b_soff, &st->b_sidx, &st->b_sw,
                   &st->b_spen};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        ocl_release(m[i]);
    st->n_tflags = st->n_tvsini = st->n_ttheta = st->n_tspec = 0;
    st->n_tpen = st->n_pv = st->n_tr = st->n_tint = st->n_scr = 0;
    st->n_m2lnl = st->n_achi = st->n_mout = st->n_cout = 0;
    st->n_soff = st->n_sidx = st->n_sw = st->n_spen = 0;
}

static int ocl_ready(const ocl_state *st, size_t n,
                     const rvfit_stencils *sn, rvfit_err *err)
{
    if (!st->lib.have || !st->bat.have)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "opencl: evaluation before load_library and "
                             "load_batch");
    return sn ? rvfit_stencils_check(&st->lib.meta, n, sn, err)
              : RVFIT_OK;
}

/* Upload the stencils of slots i0 .. i0+c-1 (offsets rebased to the
 * chunk), or, without stencils, keep placeholder buffers so that every
 * kernel argument is set. */
static int ocl_put_stencils(ocl_state *st, const rvfit_stencils *sn,
                            size_t i0, size_t c, rvfit_err *err)
{
    st->use_st = sn != NULL;
    st->st_nw = 1;
    size_t e0 = sn ? sn->off[i0] : 0, ne = sn ? sn->off[i0 + c] - e0 : 0;
    size_t no = sn ? c + 1 : 1, r = st->rsz;
    size_t nw = sn && sn->nw > 1 ? (size_t)st->bat.narm : 1, nwe = ne * nw;
    int rc = ocl_grow(st, &st->b_soff, &st->n_soff, no * 4, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_sidx, &st->n_sidx, ne * 4, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_sw, &st->n_sw, nwe * r, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_spen, &st->n_spen, c * r, err);
    if (rc != RVFIT_OK || !sn)
        return rc;
    size_t ob = (no + ne) * 4 + 8 - ((no + ne) * 4) % 8;
    char *h = ocl_stage(st, ob + (nwe + c) * sizeof(double));
    if (!h)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "opencl: out of memory");
    cl_uint *off = (cl_uint *)h, *idx = off + no;
    double *w = (double *)(h + ob), *pen = w + nwe;
    for (size_t i = 0; i < no; i++)
        off[i] = (cl_uint)(sn->off[i0 + i] - e0);
    st->st_nw = rvk_stencil_nw(sn, &st->bat);
    for (size_t e = 0; e < ne; e++) {
        idx[e] = sn->idx[e0 + e];
        for (size_t a = 0; a < nw; a++)
            w[e * nw + a] = rvk_stencil_w(sn, &st->bat, e0 + e, (int)a);
    }
    memcpy(pen, sn->pen + i0, c * sizeof(double));
    rvk_to_real(st->fp64, w, nwe + c, w);
    pen = (double *)((char *)w + nwe * r); /* reals packed after w */
    cl_int e = clEnqueueWriteBuffer(st->q, st->b_soff, CL_TRUE, 0, no * 4,
                                    off, 0, NULL, NULL);
    if (e == CL_SUCCESS && ne)
        e = clEnqueueWriteBuffer(st->q, st->b_sidx, CL_TRUE, 0, ne * 4, idx,
                                 0, NULL, NULL);
    if (e == CL_SUCCESS && ne)
        e = clEnqueueWriteBuffer(st->q, st->b_sw, CL_TRUE, 0, nwe * r, w, 0,
                                 NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(st->q, st->b_spen, CL_TRUE, 0, c * r, pen,
                                 0, NULL, NULL);
    return e == CL_SUCCESS ? RVFIT_OK
                           : ocl_fail(err, "clEnqueueWriteBuffer(stencils)",
                                      e);
}

/* Slots per launch: template slots, like scratch and model outputs of a
 * chunk within the scratch budget (at least one). */
static size_t ocl_chunk(const ocl_state *st, size_t per_slot_extra)
{
    size_t per = st->bat.slot_len * st->rsz + per_slot_extra + 64;
    size_t c = st->scratch_bytes / per;
    return c < 1 ? 1 : c;
}

/* Upload the template-slot inputs of pts[0..n-1] (validated). */
static int ocl_put_slots(ocl_state *st, size_t n, const rvfit_point *pts,
                         rvfit_err *err)
{
    size_t np = (size_t)(st->lib.nparam > 0 ? st->lib.nparam : 1), r = st->rsz;
    /* Staging: flags and spectra (2n uints), then vsini and theta as
     * doubles (converted in place to reals before upload). */
    size_t bytes = (2 * n * sizeof(cl_uint) + 7) / 8 * 8;
    char *h = ocl_stage(st, bytes + n * (1 + np) * sizeof(double));
    if (!h)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "opencl: out of memory");
    cl_uint *fl = (cl_uint *)h, *sp = fl + n;
    double *dv = (double *)(h + bytes), *dt = dv + n;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].spec >= st->bat.nspec)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "point %zu: spectrum %u not in the batch of "
                                 "%zu", i, pts[i].spec, st->bat.nspec);
        if (!rvk_velocity_ok(pts[i].v) || !isfinite(pts[i].vsini))
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "point %zu: v = %g, vsini = %g", i, pts[i].v,
                                 pts[i].vsini);
        fl[i] = pts[i].flags;
        sp[i] = pts[i].spec;
        dv[i] = pts[i].vsini;
        for (size_t k = 0; k < np; k++)
            dt[i * np + k] =
                k < (size_t)st->lib.nparam ? pts[i].theta[k] : 0.0;
    }
    int rc = ocl_grow(st, &st->b_tflags, &st->n_tflags, n * 4, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_tspec, &st->n_tspec, n * 4, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_tvsini, &st->n_tvsini, n * r, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_ttheta, &st->n_ttheta, n * np * r, err);
    if (rc != RVFIT_OK)
        return rc;
    /* Convert in place; then non-blocking writes, all finished before the
     * staging area is reused (the reads below are blocking). */
    rvk_to_real(st->fp64, dv, n, dv);
    rvk_to_real(st->fp64, dt, n * np, dt);
    cl_int e = clEnqueueWriteBuffer(st->q, st->b_tflags, CL_TRUE, 0, n * 4, fl,
                                    0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(st->q, st->b_tspec, CL_TRUE, 0, n * 4, sp, 0,
                                 NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(st->q, st->b_tvsini, CL_TRUE, 0, n * r, dv,
                                 0, NULL, NULL);
    if (e == CL_SUCCESS)
        e = clEnqueueWriteBuffer(st->q, st->b_ttheta, CL_TRUE, 0, n * np * r,
                                 dt, 0, NULL, NULL);
    return e == CL_SUCCESS ? RVFIT_OK
                           : ocl_fail(err, "clEnqueueWriteBuffer(points)", e);
}

/* Upload n velocities (km/s): pts[i].v, or v[i] when pts is NULL. */
static int ocl_put_vel(ocl_state *st, size_t n, const rvfit_point *pts,
                       const double *v, rvfit_err *err)
{
    double *h = ocl_stage(st, n * sizeof(double) + 8);
    if (!h)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "opencl: out of memory");
    for (size_t i = 0; i < n; i++) {
        h[i] = pts ? pts[i].v : v[i];
        if (!rvk_velocity_ok(h[i]))
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "velocity %zu is %g km/s", i, h[i]);
    }
    rvk_to_real(st->fp64, h, n, h);
    int rc = ocl_grow(st, &st->b_pv, &st->n_pv, n * st->rsz, err);
    if (rc != RVFIT_OK)
        return rc;
    cl_int e = clEnqueueWriteBuffer(st->q, st->b_pv, CL_TRUE, 0, n * st->rsz,
                                    h, 0, NULL, NULL);
    return e == CL_SUCCESS ? RVFIT_OK
                           : ocl_fail(err, "clEnqueueWriteBuffer(v)", e);
}

/* Arguments of the kernels (rvfit_kargs.h): scalars in their device
 * widths, every buffer a cl_mem.  Filled by field name. */
#define OCL_FIELD(kind, type, name) OCL_FIELD_##kind(type, name);
#define OCL_FIELD_VAL(type, name) RVK_H_##type name
#define OCL_FIELD_IN(type, name) cl_mem name
#define OCL_FIELD_OUT(type, name) cl_mem name
typedef struct ocl_tpl_args {
    RVK_TEMPLATE_ARGS(OCL_FIELD)
} ocl_tpl_args;
typedef struct ocl_like_args {
    RVK_LIKE_ARGS(OCL_FIELD)
} ocl_like_args;

static const char *ocl_tpl_missing(const ocl_tpl_args *a)
{
    RVK_TEMPLATE_ARGS(RVK_MISSING)
    return NULL;
}

static const char *ocl_like_missing(const ocl_like_args *a)
{
    RVK_LIKE_ARGS(RVK_MISSING)
    return NULL;
}

/* clSetKernelArg of every argument in list order; *bad names the
 * argument that failed. */
#define OCL_SET(kind, type, name)                                          \
    if (e == CL_SUCCESS) {                                                 \
        e = clSetKernelArg(k, i++, sizeof a->name, &a->name);              \
        *bad = #name;                                                      \
    }

static cl_int ocl_set_tpl(cl_kernel k, const ocl_tpl_args *a,
                          const char **bad)
{
    cl_int e = CL_SUCCESS;
    cl_uint i = 0;
    RVK_TEMPLATE_ARGS(OCL_SET)
    return e;
}

static cl_int ocl_set_like(cl_kernel k, const ocl_like_args *a,
                           const char **bad)
{
    cl_int e = CL_SUCCESS;
    cl_uint i = 0;
    RVK_LIKE_ARGS(OCL_SET)
    return e;
}

/* Status of setting kernel `name`'s arguments: `missing` from the
 * ocl_*_missing check, else e and bad from the ocl_set_* call. */
static int ocl_args_status(const char *name, const char *missing, cl_int e,
                           const char *bad, rvfit_err *err)
{
    if (missing)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL,
                             "%s: buffer argument %s not set", name, missing);
    if (e != CL_SUCCESS) {
        ocl_fail(err, "clSetKernelArg", e);
        rvfit_err_prefix(err, "%s(%s)", name, bad);
        return RVFIT_ERR_DEVICE;
    }
    return RVFIT_OK;
}

static int ocl_launch(ocl_state *st, cl_kernel k, size_t groups,
                      const char *name, rvfit_err *err)
{
    size_t gl = groups * st->wg;
    cl_int e = clEnqueueNDRangeKernel(st->q, k, 1, NULL, &gl, &st->wg, 0,
                                      NULL, NULL);
    if (e != CL_SUCCESS)
        return ocl_fail(err, name, e);
    return RVFIT_OK;
}

/* Templates of ntpl slots (inputs already uploaded). */
static int ocl_run_template(ocl_state *st, size_t ntpl, rvfit_err *err)
{
    size_t groups = ntpl < st->maxgroups ? ntpl : st->maxgroups;
    int rc = ocl_grow(st, &st->b_tr, &st->n_tr,
                      ntpl * st->bat.slot_len * st->rsz, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_tint, &st->n_tint,
                      groups * st->bat.lnpix_max * st->rsz, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_tpen, &st->n_tpen, ntpl * st->rsz, err);
    if (rc != RVFIT_OK)
        return rc;
    ocl_tpl_args a = {
        .ntpl = (int32_t)ntpl, .nparam = st->lib.nparam,
        .narm = st->bat.narm, .slot_len = (int64_t)st->bat.slot_len,
        .tint_len = (int64_t)st->bat.lnpix_max, .ax_n = st->ax_n,
        .ax_node = st->ax_node, .exists = st->exists,
        .lib_flux = st->lib_flux, .ai = st->ai, .ad = st->ad,
        .tflags = st->b_tflags, .tvsini = st->b_tvsini,
        .ttheta = st->b_ttheta, .use_st = st->use_st, .st_off = st->b_soff,
        .st_idx = st->b_sidx, .st_w = st->b_sw, .st_nw = st->st_nw,
        .st_pen = st->b_spen,
        .tr = st->b_tr, .tpen = st->b_tpen,
        .tint = st->b_tint};
    const char *missing = ocl_tpl_missing(&a), *bad = "";
    cl_int e = missing ? CL_SUCCESS : ocl_set_tpl(st->k_tpl, &a, &bad);
    rc = ocl_args_status("rvk_template", missing, e, bad, err);
    return rc ? rc : ocl_launch(st, st->k_tpl, groups, "rvk_template", err);
}

/* Likelihood of np points (point p uses slot p / nrep); mode 1 = models. */
static int ocl_run_like(ocl_state *st, size_t np, size_t nrep, int mode,
                        rvfit_err *err)
{
    size_t groups = np < st->maxgroups ? np : st->maxgroups;
    size_t mo = mode ? np * st->bat.npix_sum * sizeof(float) : 4;
    int rc = ocl_grow(st, &st->b_scr, &st->n_scr,
                      groups * 2 * st->bat.npix_max * st->rsz, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_m2lnl, &st->n_m2lnl, np * st->rsz, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_achi, &st->n_achi,
                      np * (size_t)st->bat.narm * st->rsz, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_mout, &st->n_mout, mo, err);
    if (rc == RVFIT_OK)
        rc = ocl_grow(st, &st->b_cout, &st->n_cout, mo, err);
    if (rc != RVFIT_OK)
        return rc;
    ocl_like_args a = {
        .npt = (int32_t)np, .nrep = (int32_t)nrep, .narm = st->bat.narm,
        .npoly = st->bat.npoly, .mode = mode,
        .slot_len = (int64_t)st->bat.slot_len,
        .scr_len = (int64_t)st->bat.npix_max, .tspec = st->b_tspec,
        .tpen = st->b_tpen, .pv = st->b_pv, .tr = st->b_tr, .ai = st->ai,
        .ad = st->ad, .pos = st->pos, .flux = st->flux, .ivar = st->ivar,
        .res = st->res, .basis = st->basis, .bplan = st->bplan,
        .nuse = st->nuse, .fwf = st->fwf,
        .m2lnl = st->b_m2lnl, .achi = st->b_achi, .mout = st->b_mout,
        .cout = st->b_cout, .scratch = st->b_scr};
    const char *missing = ocl_like_missing(&a), *bad = "";
    cl_int e = missing ? CL_SUCCESS : ocl_set_like(st->k_like, &a, &bad);
    rc = ocl_args_status("rvk_like", missing, e, bad, err);
    return rc ? rc : ocl_launch(st, st->k_like, groups, "rvk_like", err);
}

/* Blocking read of n reals from buf into dst[i*stride] as doubles. */
static int ocl_get_reals(ocl_state *st, cl_mem buf, size_t n, double *dst,
                         rvfit_err *err)
{
    void *h = ocl_stage(st, n * st->rsz + 8);
    if (!h)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "opencl: out of memory");
    cl_int e = clEnqueueReadBuffer(st->q, buf, CL_TRUE, 0, n * st->rsz, h, 0,
                                   NULL, NULL);
    if (e != CL_SUCCESS)
        return ocl_fail(err, "clEnqueueReadBuffer", e);
    for (size_t i = 0; i < n; i++)
        dst[i] = rvk_result_at(st->fp64, h, i);
    return RVFIT_OK;
}

/* One chunk of chisq or models: pts[p0..p0+n-1]. */
static int ocl_chunk_points(ocl_state *st, size_t p0, size_t n,
                            const rvfit_point *pts,
                            const rvfit_stencils *sn, int mode,
                            rvfit_err *err)
{
    int rc = ocl_put_slots(st, n, pts + p0, err);
    if (rc == RVFIT_OK)
        rc = ocl_put_stencils(st, sn, p0, n, err);
    if (rc == RVFIT_OK)
        rc = ocl_put_vel(st, n, pts + p0, NULL, err);
    if (rc == RVFIT_OK)
        rc = ocl_run_template(st, n, err);
    if (rc == RVFIT_OK)
        rc = ocl_run_like(st, n, 1, mode, err);
    return rc;
}

int ocl_chisq(void *state, size_t n, const rvfit_point *pts,
              const rvfit_stencils *sn, rvfit_chisq_out *out,
              rvfit_err *err)
{
    ocl_state *st = state;
    int rc = ocl_ready(st, n, sn, err);
    double t0 = rvfit_now();
    size_t cap = ocl_chunk(st, 0);
    for (size_t p0 = 0; p0 < n && rc == RVFIT_OK; p0 += cap) {
        size_t c = n - p0 < cap ? n - p0 : cap;
        rc = ocl_chunk_points(st, p0, c, pts, sn, 0, err);
        if (rc == RVFIT_OK)
            rc = ocl_get_reals(st, st->b_m2lnl, c, out->m2lnl + p0, err);
        if (rc == RVFIT_OK && out->chisq)
            rc = ocl_get_reals(st, st->b_achi, c * (size_t)st->bat.narm,
                               out->chisq + p0 * (size_t)st->bat.narm, err);
    }
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(err, "opencl chisq(%zu points)", n);
        return rc;
    }
    st->cnt.points += n;
    st->cnt.calls++;
    st->cnt.seconds += rvfit_now() - t0;
    return RVFIT_OK;
}

int ocl_vscan(void *state, size_t nq, const rvfit_point *base,
              const rvfit_stencils *sn, size_t nvel,
              const double *vel, double *m2lnl, rvfit_err *err)
{
    ocl_state *st = state;
    int rc = ocl_ready(st, nq, sn, err);
    double t0 = rvfit_now();
    size_t cap = ocl_chunk(st, nvel * st->rsz);
    for (size_t q0 = 0; q0 < nq && nvel > 0 && rc == RVFIT_OK; q0 += cap) {
        size_t c = nq - q0 < cap ? nq - q0 : cap;
        rc = ocl_put_slots(st, c, base + q0, err);
        if (rc == RVFIT_OK)
            rc = ocl_put_stencils(st, sn, q0, c, err);
        if (rc == RVFIT_OK)
            rc = ocl_put_vel(st, c * nvel, NULL, vel + q0 * nvel, err);
        if (rc == RVFIT_OK)
            rc = ocl_run_template(st, c, err);
        if (rc == RVFIT_OK)
            rc = ocl_run_like(st, c * nvel, nvel, 0, err);
        if (rc == RVFIT_OK)
            rc = ocl_get_reals(st, st->b_m2lnl, c * nvel, m2lnl + q0 * nvel,
                               err);
    }
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(err, "opencl vscan(%zu x %zu)", nq, nvel);
        return rc;
    }
    st->cnt.points += nq * nvel;
    st->cnt.calls++;
    st->cnt.seconds += rvfit_now() - t0;
    return RVFIT_OK;
}

/* Copy the chunk's models (arm blocks of c*npix floats) to the caller. */
static int ocl_get_models(ocl_state *st, size_t p0, size_t c, cl_mem buf,
                          float *const *dst, rvfit_err *err)
{
    size_t off = 0;
    for (int a = 0; a < st->bat.narm; a++) {
        size_t n = c * st->bat.npix[a];
        if (!dst[a]) { /* cont[a] may be NULL */
            off += n;
            continue;
        }
        cl_int e = clEnqueueReadBuffer(st->q, buf, CL_TRUE, off * sizeof(float),
                                       n * sizeof(float),
                                       dst[a] + p0 * st->bat.npix[a], 0, NULL,
                                       NULL);
        if (e != CL_SUCCESS)
            return ocl_fail(err, "clEnqueueReadBuffer(models)", e);
        off += n;
    }
    return RVFIT_OK;
}

int ocl_models(void *state, size_t n, const rvfit_point *pts,
               const rvfit_stencils *sn, float *const *model,
               float *const *cont, rvfit_err *err)
{
    ocl_state *st = state;
    int rc = ocl_ready(st, n, sn, err);
    for (int a = 0; a < st->bat.narm && rc == RVFIT_OK; a++)
        if (!model || !model[a])
            rc = rvfit_err_set(err, RVFIT_ERR_INVALID,
                               "no output array for arm %d", a);
    double t0 = rvfit_now();
    size_t cap = ocl_chunk(st, 2 * st->bat.npix_sum * sizeof(float));
    for (size_t p0 = 0; p0 < n && rc == RVFIT_OK; p0 += cap) {
        size_t c = n - p0 < cap ? n - p0 : cap;
        rc = ocl_chunk_points(st, p0, c, pts, sn, 1, err);
        if (rc == RVFIT_OK)
            rc = ocl_get_models(st, p0, c, st->b_mout, model, err);
        if (rc == RVFIT_OK && cont)
            rc = ocl_get_models(st, p0, c, st->b_cout, cont, err);
    }
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(err, "opencl models(%zu points)", n);
        return rc;
    }
    st->cnt.points += n;
    st->cnt.calls++;
    st->cnt.seconds += rvfit_now() - t0;
    return RVFIT_OK;
}
