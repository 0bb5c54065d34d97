/* rvk_host.c — see rvk_host.h.  The batch layout mirrors the cpu backend's
 * (plugins/cpu/cpu_batch.c): the same per-pixel tables (rvfit_pixel_tables)
 * and the same usable-pixel rule, without the cpu's lane padding. */
#include "rvk_host.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/physics.h"

/* The kernels' restated core values (rvfit_klayout.h).  Floating
 * constants cannot be compared here portably; the kernels take those from
 * rvfit/limits.h itself. */
_Static_assert(RVK_PT_CONTINUUM == RVFIT_PT_CONTINUUM,
               "rvfit_klayout.h: RVK_PT_CONTINUUM");
_Static_assert(RVK_INTERP_CUBIC == RVFIT_INTERP_CUBIC,
               "rvfit_klayout.h: RVK_INTERP_CUBIC");
_Static_assert(RVFIT_INTERP_LINEAR != RVK_INTERP_CUBIC,
               "rvfit_klayout.h: linear must not read as cubic");

/* ---- library --------------------------------------------------------- */

static int rvk_lib_check(const rvfit_library *lib, rvfit_err *err)
{
    int rc = rvfit_library_check(lib, err);
    if (rc)
        return rc;
    /* The kernels index models and pixels with 32-bit ints. */
    if (lib->nmodel > 0x7fffffff)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "library: %zu models exceed the kernels' 32-bit "
                             "indices", lib->nmodel);
    for (int a = 0; a < lib->narm; a++)
        if (lib->arm[a].npix > 0x7fffffff)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "library arm %s: %zu pixels exceed the "
                                 "kernels' 32-bit indices",
                                 lib->arm[a].name, lib->arm[a].npix);
    return RVFIT_OK;
}

void rvk_lib_img_free(rvk_lib_img *im)
{
    free(im->nodes);
    free(im->ex);
    im->nodes = NULL;
    im->ex = NULL;
}

int rvk_lib_prepare(const rvfit_library *lib, int fp64, rvk_lib *L,
                    rvk_lib_img *im, rvfit_err *err)
{
    memset(im, 0, sizeof *im);
    int rc = rvk_lib_check(lib, err);
    if (rc != RVFIT_OK)
        return rc;
    im->na = lib->nparam > 0 ? (size_t)lib->nparam : 1;
    double *nodes = calloc(im->na * RVFIT_MAX_NODES, sizeof(double));
    im->ex = malloc(lib->nmodel);
    im->nodes = nodes;
    if (!nodes || !im->ex) {
        rvk_lib_img_free(im);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "library: out of memory");
    }
    for (int p = 0; p < lib->nparam; p++) {
        im->nn[RVK_NN_NNODE(lib->nparam, p)] = lib->axis[p].nnode;
        im->nn[RVK_NN_INTERP(lib->nparam, p)] = lib->axis[p].interp;
        memcpy(nodes + p * RVFIT_MAX_NODES, lib->axis[p].node,
               (size_t)lib->axis[p].nnode * sizeof(double));
    }
    im->nn[RVK_NN_LOGFLUX(lib->nparam)] = lib->log_flux != 0;
    rvk_to_real(fp64, nodes, im->na * RVFIT_MAX_NODES, nodes);
    for (size_t m = 0; m < lib->nmodel; m++)
        im->ex[m] = lib->exists ? (lib->exists[m] != 0) : 1;

    memset(L, 0, sizeof *L);
    for (int a = 0; a < lib->narm; a++) {
        L->lfoff[a] = L->nflux;
        L->nflux += lib->nmodel * lib->arm[a].npix;
    }
    L->meta = *lib;
    L->meta.exists = NULL;
    for (int a = 0; a < lib->narm; a++)
        L->meta.arm[a].flux = NULL;
    L->nparam = lib->nparam;
    L->nmodel = lib->nmodel;
    return RVFIT_OK;
}

/* ---- batch ------------------------------------------------------------ */

static int rvk_check_opts(const rvk_lib *L, const rvfit_batch *bt,
                          const rvfit_model_opts *mo, rvfit_err *err)
{
    if (!L->have)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "load_batch: no library loaded");
    return rvfit_batch_opts_check(bt, mo, err);
}

/* Library arm of batch arm ba in *la, and ba usable by the kernels. */
static int rvk_check_arm(const rvk_lib *L, const rvfit_arm_batch *ba,
                         size_t nspec, int *la, rvfit_err *err)
{
    int rc = rvfit_batch_arm_check(&L->meta, ba, nspec, la, err);
    if (rc)
        return rc;
    if (ba->npix > 0x7fffffff) /* the kernels' 32-bit pixel indices */
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "arm %.16s: %zu pixels exceed the kernels' 32-bit "
                             "indices", ba->name, ba->npix);
    return RVFIT_OK;
}

/* Rows of the basis tables: the moments' 2 npoly - 1 for Chebyshev
 * (rvfit_klayout.h, RVK_AI_NBROW), else npoly. */
static size_t rvk_basis_rows(int basis, int np)
{
    return basis == RVFIT_BASIS_CHEB && 2 * np - 1 <= RVFIT_MAX_POLY
               ? (size_t)(2 * np - 1)
               : (size_t)np;
}

/* Offsets of every arm in the images (RVK_AI_*) and the geometry *B;
 * lam[a] receives the library arm of batch arm a. */
static int rvk_layout(const rvk_lib *L, const rvfit_batch *bt, int *lam,
                      rvk_batch *B, rvk_batch_img *im, rvfit_err *err)
{
    size_t ns = bt->nspec, np = (size_t)B->npoly, tr = 0;
    for (int a = 0; a < bt->narm; a++) {
        const rvfit_arm_batch *ba = &bt->arm[a];
        int rc = rvk_check_arm(L, ba, ns, &lam[a], err);
        if (rc != RVFIT_OK)
            return rc;
        size_t n = ba->npix, nw = ba->wave_per_spec ? ns : 1;
        size_t nl = L->meta.arm[lam[a]].npix;
        int nd = ba->res_kind == RVFIT_RES_BAND ? ba->ndiag : 0;
        size_t nb = rvk_basis_rows(B->basis, (int)np);
        int64_t *ai = im->ai + a * RVK_AI_N;
        ai[RVK_AI_NPIX] = (int64_t)n;
        ai[RVK_AI_PERSPEC] = ba->wave_per_spec ? 1 : 0;
        ai[RVK_AI_NDIAG] = nd;
        ai[RVK_AI_DOFF] = (int64_t)im->ndata;
        ai[RVK_AI_ROFF] = (int64_t)im->nres;
        ai[RVK_AI_BOFF] = (int64_t)im->nbas;
        ai[RVK_AI_PLOFF] = (int64_t)im->nplan;
        ai[RVK_AI_POFF] = (int64_t)im->npos;
        ai[RVK_AI_LNPIX] = (int64_t)nl;
        ai[RVK_AI_LFOFF] = (int64_t)L->lfoff[lam[a]];
        ai[RVK_AI_TROFF] = (int64_t)tr;
        ai[RVK_AI_NBROW] = (int64_t)nb;
        im->ndata += ns * n;
        im->nres += ns * (size_t)nd * n;
        im->nbas += nw * nb * n;
        im->nplan += nw * RVK_PLAN_N;
        im->npos += nw * n;
        tr += nl;
        B->npix[a] = n;
        B->npix_sum += n;
        if (n > B->npix_max)
            B->npix_max = n;
        if (nl > B->lnpix_max)
            B->lnpix_max = nl;
    }
    im->nnuse = ns * (size_t)bt->narm;
    B->slot_len = tr;
    return RVFIT_OK;
}

typedef struct rvk_psum {
    size_t lo, hi;
    int idx, k, l;
} rvk_psum;

static int rvk_psum_cmp(const void *a, const void *b)
{
    const rvk_psum *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The normal-sum plan (rvfit_klayout.h, RVK_PLAN_*) of the np rows of
 * basis table B (n pixels each) into plan. */
static void rvk_sum_plan(const double *B, size_t n, int np, int32_t *plan)
{
    size_t lo[RVFIT_MAX_POLY], hi[RVFIT_MAX_POLY];
    rvk_psum ps[RVK_MAX_SUMS];
    int npair = np * (np + 1) / 2, nl = 0;
    for (int k = 0; k < np; k++)
        rvfit_row_support(B + (size_t)k * n, n, &lo[k], &hi[k]);
    for (int k = 0; k < np; k++) {
        for (int l = 0; l <= k; l++) {
            size_t a = lo[k] > lo[l] ? lo[k] : lo[l];
            size_t e = hi[k] < hi[l] ? hi[k] : hi[l];
            if (a < e)
                ps[nl++] = (rvk_psum){a, e, k * (k + 1) / 2 + l, k, l};
        }
        if (lo[k] < hi[k])
            ps[nl++] = (rvk_psum){lo[k], hi[k], npair + k, k, -1};
    }
    qsort(ps, (size_t)nl, sizeof *ps, rvk_psum_cmp);
    memset(plan, 0, RVK_PLAN_N * sizeof *plan);
    plan[0] = nl;
    plan[1] = (nl + RVK_PC - 1) / RVK_PC;
    size_t hi_pass = 0;
    for (int j = 0; j < nl; j++) {
        int32_t *e = plan + RVK_PLAN_SUM(j);
        e[0] = ps[j].idx, e[1] = ps[j].k, e[2] = ps[j].l;
        /* sorted by lo: a pass starts at its first sum's lo */
        int32_t *r = plan + RVK_PLAN_PASS(j / RVK_PC);
        hi_pass = j % RVK_PC == 0 || ps[j].hi > hi_pass ? ps[j].hi : hi_pass;
        if (j % RVK_PC == 0)
            r[0] = (int32_t)ps[j].lo;
        r[1] = (int32_t)hi_pass;
    }
}

/* Arm a's flux and ivar, sanitised by the cpu backend's rule, their
 * usable pixels and sum w f^2 (in doubles) into the images: one pool item
 * per spectrum, each writing its own slices. */
typedef struct rvk_data_task {
    const rvfit_batch *bt;
    int a;
    rvk_batch_img *im;
} rvk_data_task;

static void rvk_data_spec(void *ctx, int tid, size_t s)
{
    (void)tid;
    const rvk_data_task *t = ctx;
    const rvfit_arm_batch *ba = &t->bt->arm[t->a];
    rvk_batch_img *im = t->im;
    size_t n = ba->npix, off = (size_t)im->ai[t->a * RVK_AI_N + RVK_AI_DOFF];
    size_t k = s * (size_t)t->bt->narm + (size_t)t->a;
    int32_t nuse = 0;
    double fwf = 0.0;
    for (size_t i = 0; i < n; i++) {
        float f = ba->flux[s * n + i], iv = ba->ivar[s * n + i];
        int ok = iv > 0.0f && isfinite(iv) && isfinite(f);
        im->flux[off + s * n + i] = ok ? f : 0.0f;
        im->ivar[off + s * n + i] = ok ? iv : 0.0f;
        nuse += ok;
        fwf += ok ? (double)iv * (double)f * (double)f : 0.0;
    }
    im->nuse[k] = nuse;
    im->fwf[k] = fwf;
}

static void rvk_fill_data(const rvfit_batch *bt, int a, rvk_batch_img *im)
{
    rvk_data_task t = {bt, a, im};
    rvfit_pool_run(im->pool, bt->nspec, rvk_data_spec, &t);
}

/* Fill arm a of the images (arrays already sized): pixel tables, data
 * sanitised by the cpu backend's rule, band matrices, arm reals. */
static void rvk_fill_arm(const rvk_lib *L, const rvfit_batch *bt, int a,
                         int la, const rvfit_model_opts *mo,
                         rvk_batch_img *im)
{
    const rvfit_arm_batch *ba = &bt->arm[a];
    const rvfit_lib_arm *lar = &L->meta.arm[la];
    const int64_t *ai = im->ai + a * RVK_AI_N;
    size_t n = ba->npix, ns = bt->nspec, nw = ba->wave_per_spec ? ns : 1;
    size_t nb = (size_t)ai[RVK_AI_NBROW];
    for (size_t w = 0; w < nw; w++)
        rvfit_pixel_tables(mo->basis, (int)nb, lar->lnl0, lar->dlnl, n,
                           rvfit_arm_npix(ba, w), ba->wave + w * n, n,
                           im->pos + ai[RVK_AI_POFF] + w * n,
                           im->basis + ai[RVK_AI_BOFF] + w * nb * n);
    /* Chebyshev tables hold the moments' rows (nb > npoly): no plan */
    for (size_t w = 0; w < nw; w++) {
        int32_t *plan = im->bplan + ai[RVK_AI_PLOFF] + w * RVK_PLAN_N;
        if (nb == (size_t)mo->npoly)
            rvk_sum_plan(im->basis + ai[RVK_AI_BOFF] + w * nb * n, n,
                         mo->npoly, plan);
        else
            memset(plan, 0, RVK_PLAN_N * sizeof *plan);
    }
    rvk_fill_data(bt, a, im);
    im->res[a] = ai[RVK_AI_NDIAG] > 0 ? ba->res : NULL;
    im->ad[a * RVK_AD_N + RVK_AD_INVDLNL] = 1.0 / lar->dlnl;
}

void rvk_batch_img_free(rvk_batch_img *im)
{
    free(im->pos);
    free(im->basis);
    free(im->flux);
    free(im->ivar);
    free(im->nuse);
    free(im->bplan);
    free(im->fwf);
    rvfit_pool_destroy(im->pool);
    memset(im, 0, sizeof *im);
}

/* p grown to at least n elements of `size` bytes (+1: malloc(0) may
 * return NULL), contents not kept: p itself when it is large enough, else
 * a new block (p freed), or NULL when out of memory. */
static void *rvk_grow(void *p, size_t *cap, size_t n, size_t size)
{
    size_t bytes = (n + 1) * size;
    if (p && *cap >= bytes)
        return p;
    free(p);
    p = malloc(bytes);
    *cap = p ? bytes : 0;
    return p;
}

int rvk_batch_prepare(const rvk_lib *L, const rvfit_batch *bt,
                      const rvfit_model_opts *mo, int fp64, int nthreads,
                      rvk_batch *B, rvk_batch_img *im, rvfit_err *err)
{
    memset(im->ai, 0, sizeof im->ai);
    memset(im->ad, 0, sizeof im->ad);
    memset(im->res, 0, sizeof im->res);
    im->npos = im->nbas = im->ndata = im->nres = im->nnuse = im->nplan = 0;
    memset(B, 0, sizeof *B);
    int rc = rvk_check_opts(L, bt, mo, err);
    if (rc == RVFIT_OK && !im->pool)
        rc = rvfit_pool_create(nthreads, &im->pool, err);
    if (rc != RVFIT_OK)
        return rc;
    B->npoly = mo->npoly;
    B->basis = mo->basis;
    B->nspec = bt->nspec;
    B->narm = bt->narm;
    int lam[RVFIT_MAX_ARMS];
    rc = rvk_layout(L, bt, lam, B, im, err);
    if (rc != RVFIT_OK)
        return rc;
    im->pos = rvk_grow(im->pos, &im->cap_pos, im->npos, sizeof(double));
    im->basis = rvk_grow(im->basis, &im->cap_basis, im->nbas, sizeof(double));
    im->flux = rvk_grow(im->flux, &im->cap_flux, im->ndata, sizeof(float));
    im->ivar = rvk_grow(im->ivar, &im->cap_ivar, im->ndata, sizeof(float));
    im->nuse = rvk_grow(im->nuse, &im->cap_nuse, im->nnuse, sizeof(int32_t));
    im->fwf = rvk_grow(im->fwf, &im->cap_fwf, im->nnuse, sizeof(double));
    im->bplan = rvk_grow(im->bplan, &im->cap_bplan, im->nplan,
                         sizeof(int32_t));
    if (!im->pos || !im->basis || !im->flux || !im->ivar || !im->nuse ||
        !im->fwf || !im->bplan) {
        rvk_batch_img_free(im);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    }
    for (int a = 0; a < bt->narm; a++) {
        rvk_fill_arm(L, bt, a, lam[a], mo, im);
        B->larm[a] = lam[a];
    }
    rvk_to_real(fp64, im->pos, im->npos, im->pos);
    rvk_to_real(fp64, im->basis, im->nbas, im->basis);
    rvk_to_real(fp64, im->fwf, im->nnuse, im->fwf);
    rvk_to_real(fp64, im->ad, (size_t)bt->narm * RVK_AD_N, im->ad);
    return RVFIT_OK;
}

size_t rvk_res_bytes(const rvk_batch_img *im, const rvk_batch *B, int a)
{
    const int64_t *ai = im->ai + a * RVK_AI_N;
    return im->res[a] ? B->nspec * (size_t)ai[RVK_AI_NDIAG] *
                            (size_t)ai[RVK_AI_NPIX] * sizeof(float)
                      : 0;
}

int rvk_batch_update(const rvk_batch *B, const rvfit_batch *bt, int fp64,
                     rvk_batch_img *im, rvfit_err *err)
{
    int rc = rvfit_batch_update_check(bt, B->have, B->nspec, B->narm,
                                      B->npix, err);
    if (rc != RVFIT_OK)
        return rc;
    for (int a = 0; a < bt->narm; a++)
        rvk_fill_data(bt, a, im);
    rvk_to_real(fp64, im->fwf, im->nnuse, im->fwf);
    return RVFIT_OK;
}

int rvk_stencil_nw(const rvfit_stencils *sn, const rvk_batch *B)
{
    return sn->nw > 1 ? B->narm : 1;
}

double rvk_stencil_w(const rvfit_stencils *sn, const rvk_batch *B,
                     size_t e, int a)
{
    return sn->nw > 1 ? sn->w[e * sn->nw + (size_t)B->larm[a]] : sn->w[e];
}

/* ---- host <-> device reals ------------------------------------------- */

void rvk_to_real(int fp64, const double *src, size_t n, void *dst)
{
    if (fp64) {
        if (dst != (const void *)src)
            memmove(dst, src, n * sizeof(double));
        return;
    }
    /* In place is safe: element i is read before bytes [4i, 4i+4) are
     * written, and those belong to doubles already read; byte copies keep
     * the compiler from reordering across the two types. */
    const char *in = (const char *)src;
    char *out = dst;
    for (size_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, in + i * sizeof v, sizeof v);
        float f = (float)v;
        memcpy(out + i * sizeof f, &f, sizeof f);
    }
}

double rvk_real_at(int fp64, const void *src, size_t i)
{
    return fp64 ? ((const double *)src)[i] : (double)((const float *)src)[i];
}

void rvk_put_real(int fp64, void *base, size_t i, double v)
{
    char *b = base;
    if (fp64) {
        memcpy(b + i * sizeof(double), &v, sizeof v);
    } else {
        float f = (float)v;
        memcpy(b + i * sizeof f, &f, sizeof f);
    }
}

double rvk_result_at(int fp64, const void *src, size_t i)
{
    double v = rvk_real_at(fp64, src, i);
    /* Float devices return the failure value rounded to float. */
    return v == (double)(float)RVFIT_M2LNL_FAIL ? RVFIT_M2LNL_FAIL : v;
}

/* ---- shared by the evaluation code ------------------------------------ */

int rvk_velocity_ok(double v)
{
    return isfinite(v) && fabs(v) < 0.5 * RVFIT_C_KMS;
}

size_t rvk_maxgroups(size_t units)
{
    size_t g = units * 16;
    return g < 32 ? 32 : (g > 8192 ? 8192 : g);
}

int rvk_options(const rvfit_kv *opts, int nopt, long wg_def, long wg_min,
                long mb_def, size_t *wg, size_t *scratch_bytes, long *fp64,
                rvfit_err *err)
{
    long w = wg_def, mb = mb_def;
    int rc = rvfit_kv_int(opts, nopt, "wgsize", 1, RVK_WG_MAX, &w, err);
    if (rc == RVFIT_OK)
        rc = rvfit_kv_int(opts, nopt, "scratch_mb", 1, 1 << 20, &mb, err);
    if (rc == RVFIT_OK)
        rc = rvfit_kv_int(opts, nopt, "fp64", -1, 1, fp64, err);
    if (rc != RVFIT_OK)
        return rc;
    if ((w & (w - 1)) || w < wg_min)
        return wg_min > 1 ? rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                          "wgsize %ld is not a power of two "
                                          ">= %ld", w, wg_min)
                          : rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                          "wgsize %ld is not a power of two",
                                          w);
    *wg = (size_t)w;
    *scratch_bytes = (size_t)mb << 20;
    return RVFIT_OK;
}
