/* run_batch.c — one batch from the spectra of several files.  Files join a
 * batch when their arms match (names in order, resolution kind, band
 * width).  Arms may differ in length: the batch takes the longest, shorter
 * rows are padded (flux and ivar 0, wavelengths continued on their last
 * step, band columns 0, LSF its last value) and record their own length in
 * npix_own, which is all that prep and the backends look at.  A file whose
 * wavelength grid differs from the batch's shared grid turns that arm's
 * grid into per-spectrum rows.  Files whose arms have the batch's lengths
 * (the usual case: one survey's files) are read straight into the batch;
 * others through a copy laid out for the file.  The large arrays come
 * from and go back to the run's memory (run_mem.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

int rb_compatible(const run_batch *rb, const rvfit_file_info *info)
{
    if (!rb->have_b || rb->b.nspec == 0)
        return 1;
    const rvfit_batch *b = &rb->b;
    if (b->narm != info->narm)
        return 0;
    for (int a = 0; a < b->narm; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        const rvfit_arm_info *I = &info->arm[a];
        if (strncmp(A->name, I->name, sizeof A->name) ||
            A->res_kind != I->res_kind ||
            (A->res_kind == RVFIT_RES_BAND && A->ndiag != I->ndiag))
            return 0;
    }
    return 1;
}

/* Pixels [npix_own[s], npix) of row s: the padding of npix_own. */
static void pad_row(rvfit_arm_batch *A, size_t s)
{
    size_t N = A->npix, n = A->npix_own[s];
    if (n < 2 || n >= N)
        return; /* readers give >= 2 pixels; nothing to pad */
    float *f = A->flux + s * N, *iv = A->ivar + s * N;
    for (size_t i = n; i < N; i++)
        f[i] = iv[i] = 0.0f;
    if (A->wave_per_spec) {
        double *w = A->wave + s * N, step = w[n - 1] - w[n - 2];
        for (size_t i = n; i < N; i++)
            w[i] = w[n - 1] + step * (double)(i - n + 1);
    }
    if (A->res) {
        float *r = A->res + s * N * (size_t)A->ndiag;
        for (int k = 0; k < A->ndiag; k++)
            memset(r + (size_t)k * N + n, 0, (N - n) * sizeof *r);
    }
    if (A->lsf) {
        float *l = A->lsf + s * N;
        for (size_t i = n; i < N; i++)
            l[i] = l[n - 1];
    }
}

/* Per-row array of `rows` rows from stride `old` to stride `neu` (>= old),
 * `width` values per stride unit (ndiag for the band matrix). */
static void *restride(void *p, size_t esz, size_t cap, size_t rows,
                      size_t old, size_t neu, size_t width)
{
    char *q = malloc(cap * neu * width * esz);
    if (!q)
        return NULL;
    for (size_t s = 0; s < rows; s++)
        for (size_t k = 0; k < width; k++)
            memcpy(q + ((s * width + k) * neu) * esz,
                   (char *)p + ((s * width + k) * old) * esz, old * esz);
    free(p);
    return q;
}

/* Give arm A per-spectrum wavelengths (rows 0..rows-1 get the shared
 * grid). */
static int arm_perspec(rvfit_arm_batch *A, size_t cap, size_t rows)
{
    if (A->wave_per_spec)
        return RVFIT_OK;
    double *w = malloc(cap * A->npix * sizeof *w);
    if (!w)
        return RVFIT_ERR_NOMEM;
    for (size_t s = 0; s < rows; s++)
        memcpy(w + s * A->npix, A->wave, A->npix * sizeof *w);
    free(A->wave);
    A->wave = w;
    A->wave_per_spec = 1;
    return RVFIT_OK;
}

/* Widen arm A (rows 0..rows-1 filled) to n pixels per row. */
static int arm_widen(rvfit_arm_batch *A, size_t cap, size_t rows, size_t n)
{
    size_t o = A->npix, nd = (size_t)A->ndiag;
    if (arm_perspec(A, cap, rows))
        return RVFIT_ERR_NOMEM;
    double *w = restride(A->wave, sizeof *A->wave, cap, rows, o, n, 1);
    if (w)
        A->wave = w;
    float *f = w ? restride(A->flux, sizeof *f, cap, rows, o, n, 1) : NULL;
    if (f)
        A->flux = f;
    float *iv = f ? restride(A->ivar, sizeof *iv, cap, rows, o, n, 1) : NULL;
    if (iv)
        A->ivar = iv;
    int ok = iv != NULL;
    if (ok && A->res) {
        float *r = restride(A->res, sizeof *r, cap, rows, o, n, nd);
        ok = r != NULL;
        if (ok)
            A->res = r;
    }
    if (ok && A->lsf) {
        float *l = restride(A->lsf, sizeof *l, cap, rows, o, n, 1);
        ok = l != NULL;
        if (ok)
            A->lsf = l;
    }
    if (!ok)
        return RVFIT_ERR_NOMEM;
    A->npix = n;
    for (size_t s = 0; s < rows; s++)
        pad_row(A, s);
    return RVFIT_OK;
}

/* Row i of S (own pixels only) into row s of A, then padding. */
static void copy_row(rvfit_arm_batch *A, size_t s, const rvfit_arm_batch *S,
                     size_t i)
{
    size_t N = A->npix, M = S->npix, n = rvfit_arm_npix(S, i);
    memcpy(A->flux + s * N, S->flux + i * M, n * sizeof(float));
    memcpy(A->ivar + s * N, S->ivar + i * M, n * sizeof(float));
    if (A->wave_per_spec)
        memcpy(A->wave + s * N, S->wave + (S->wave_per_spec ? i * M : 0),
               n * sizeof(double));
    for (int k = 0; A->res && k < A->ndiag; k++)
        memcpy(A->res + (s * (size_t)A->ndiag + (size_t)k) * N,
               S->res + (i * (size_t)S->ndiag + (size_t)k) * M,
               n * sizeof(float));
    if (A->lsf)
        memcpy(A->lsf + s * N, S->lsf + i * M, n * sizeof(float));
    A->npix_own[s] = n;
    pad_row(A, s);
}

/* Sizes of an arm's large arrays (lower bounds after prep, whose band
 * matrices hold nspec spectra). */
static size_t pix_bytes(const rvfit_batch *b, const rvfit_arm_batch *A)
{
    return b->cap * A->npix * sizeof(float);
}

static size_t res_bytes(const rvfit_batch *b, const rvfit_arm_batch *A)
{
    return b->nspec * A->npix * (size_t)A->ndiag * sizeof(float);
}

/* The batch for cap spectra of arms `ai`: rvfit_batch_alloc's, with
 * the arrays that waited in c->mem in place of its new flux, ivar and
 * resolution arrays (untouched, they cost no pages). */
static int rb_alloc(run_ctx *c, run_batch *rb, int narm,
                    const rvfit_arm_info *ai, size_t cap, rvfit_err *err)
{
    int rc = rvfit_batch_alloc(&rb->b, narm, ai, cap, err);
    if (rc)
        return rc;
    rb->have_b = 1;
    for (int a = 0; a < narm; a++) {
        rvfit_arm_batch *A = &rb->b.arm[a];
        size_t n = pix_bytes(&rb->b, A);
        float **arr[4] = {&A->flux, &A->ivar, &A->res, &A->lsf};
        size_t size[4] = {n, n, n * (size_t)A->ndiag, n};
        for (int k = 0; k < 4; k++) {
            if (!*arr[k])
                continue;
            float *p = run_mem_take(&c->mem, size[k]);
            if (p) {
                free(*arr[k]);
                *arr[k] = p;
            }
        }
    }
    return RVFIT_OK;
}

void rb_drop_spectra(run_ctx *c, rvfit_batch *b, int ivar_too,
                     int keep_flux)
{
    for (int a = 0; a < b->narm; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        if (!keep_flux) {
            run_mem_put(&c->mem, A->flux, pix_bytes(b, A));
            A->flux = NULL;
        }
        run_mem_put(&c->mem, A->res, res_bytes(b, A));
        run_mem_put(&c->mem, A->lsf, pix_bytes(b, A));
        A->res = NULL, A->lsf = NULL;
        if (ivar_too) {
            run_mem_put(&c->mem, A->ivar, pix_bytes(b, A));
            A->ivar = NULL;
        }
    }
}

/* The first rows of a batch: allocated from S's layout. */
static int first_alloc(run_ctx *c, run_batch *rb, const rvfit_batch *sb,
                       size_t cap, rvfit_err *err)
{
    rvfit_arm_info ai[RVFIT_MAX_ARMS];
    memset(ai, 0, sizeof ai);
    for (int a = 0; a < sb->narm; a++) {
        const rvfit_arm_batch *S = &sb->arm[a];
        memcpy(ai[a].name, S->name, sizeof ai[a].name);
        ai[a].npix = S->npix;
        ai[a].res_kind = S->res_kind;
        ai[a].ndiag = S->ndiag;
        ai[a].wave_per_spec = S->wave_per_spec;
    }
    int rc = rb_alloc(c, rb, sb->narm, ai, cap, err);
    if (rc)
        return rc;
    for (int a = 0; a < sb->narm; a++)
        if (!sb->arm[a].wave_per_spec)
            memcpy(rb->b.arm[a].wave, sb->arm[a].wave,
                   sb->arm[a].npix * sizeof(double));
    return RVFIT_OK;
}

/* Make arm A able to take the rows of S (rows 0..off-1 filled). */
static int arm_fit_to(rvfit_arm_batch *A, const rvfit_arm_batch *S,
                      size_t cap, size_t off)
{
    if (S->npix > A->npix && arm_widen(A, cap, off, S->npix))
        return RVFIT_ERR_NOMEM;
    int same_grid = !S->wave_per_spec && S->npix == A->npix &&
                    !memcmp(A->wave, S->wave, A->npix * sizeof(double));
    if (!A->wave_per_spec && !same_grid)
        return arm_perspec(A, cap, off);
    return RVFIT_OK;
}

int rb_append(run_ctx *c, run_batch *rb, const rvfit_batch *sb, size_t cap,
              rvfit_err *err)
{
    if (!rb->have_b) {
        int rc = first_alloc(c, rb, sb, cap, err);
        if (rc)
            return rc;
    }
    rvfit_batch *b = &rb->b;
    size_t off = b->nspec, ns = sb->nspec;
    if (off + ns > b->cap || sb->narm != b->narm)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL, "batch: %zu + %zu "
                             "spectra for %zu places", off, ns, b->cap);
    for (int a = 0; a < b->narm; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        if (arm_fit_to(A, &sb->arm[a], b->cap, off))
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of "
                                 "memory");
        for (size_t i = 0; i < ns; i++)
            copy_row(A, off + i, &sb->arm[a], i);
    }
    memcpy(b->snr + off * (size_t)b->narm, sb->snr,
           ns * (size_t)b->narm * sizeof *b->snr);
    memcpy(b->flags + off, sb->flags, ns * sizeof *b->flags);
    memcpy(b->index + off, sb->index, ns * sizeof *b->index);
    b->nspec += ns;
    return RVFIT_OK;
}

/* Read through a copy laid out for the file, then append it. */
static int read_staged(run_ctx *c, run_batch *rb, void *h,
                       const rvfit_file_info *info, size_t first, size_t k,
                       const char *path, rvfit_err *err)
{
    const rvfit_instrument_ops *io = &c->r->inst->instrument;
    rvfit_batch sb;
    int rc = rvfit_batch_alloc(&sb, info->narm, info->arm, k, err);
    if (rc)
        return rc;
    rc = io->read(h, first, k, &sb, err);
    if (!rc && sb.nspec != k)
        rc = rvfit_err_set(err, RVFIT_ERR_INTERNAL, "%s: read %zu of %zu "
                           "spectra", path, sb.nspec, k);
    if (!rc)
        rc = rb_append(c, rb, &sb, c->cap, err);
    rvfit_batch_free(&sb);
    return rc;
}

/* Can the file's spectra be read straight into rb: every arm as long as
 * the batch's (rb_compatible checked the rest)? */
static int direct_ok(const run_batch *rb, const rvfit_file_info *info)
{
    for (int a = 0; rb->have_b && a < info->narm; a++)
        if (rb->b.arm[a].npix != info->arm[a].npix)
            return 0;
    return 1;
}

/* rb's rows [off, off+k) as a batch of their own, as rvfit_batch_alloc
 * would hand it to the reader (snr NaN, flags and index 0, npix_own
 * full); the file's grids go to c->grid[a] first (direct_settle). */
static int direct_view(run_ctx *c, rvfit_batch *b, size_t off, size_t k,
                       const rvfit_file_info *info, rvfit_batch *v)
{
    *v = *b;
    v->cap = k, v->nspec = 0;
    v->snr += off * (size_t)b->narm, v->flags += off, v->index += off;
    for (size_t i = 0; i < k * (size_t)b->narm; i++)
        v->snr[i] = NAN;
    memset(v->flags, 0, k * sizeof *v->flags);
    memset(v->index, 0, k * sizeof *v->index);
    for (int a = 0; a < b->narm; a++) {
        rvfit_arm_batch *A = &b->arm[a], *V = &v->arm[a];
        size_t N = A->npix, nd = (size_t)A->ndiag;
        size_t ng = (info->arm[a].wave_per_spec ? k : 1) * N;
        if (c->grid_n[a] < ng) {
            double *g = realloc(c->grid[a], ng * sizeof *g);
            if (!g)
                return RVFIT_ERR_NOMEM;
            c->grid[a] = g, c->grid_n[a] = ng;
        }
        V->wave_per_spec = info->arm[a].wave_per_spec;
        V->wave = c->grid[a];
        V->flux = A->flux + off * N, V->ivar = A->ivar + off * N;
        V->res = A->res ? A->res + off * N * nd : NULL;
        V->lsf = A->lsf ? A->lsf + off * N : NULL;
        V->npix_own = A->npix_own + off;
        for (size_t s = 0; s < k; s++)
            V->npix_own[s] = N;
    }
    return RVFIT_OK;
}

/* After a direct read: the file's grids into the batch (a shared grid
 * that differs from the batch's, or grids per spectrum, make the batch's
 * rows of their own), padding of short rows. */
static int direct_settle(run_ctx *c, rvfit_batch *b, size_t off, size_t k,
                         const rvfit_batch *v)
{
    for (int a = 0; a < b->narm; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        size_t N = A->npix;
        const double *g = c->grid[a];
        int per_spec = v->arm[a].wave_per_spec;
        if (!A->wave_per_spec && !per_spec && off == 0)
            memcpy(A->wave, g, N * sizeof *g);
        else if (!A->wave_per_spec &&
                 (per_spec || memcmp(A->wave, g, N * sizeof *g)) &&
                 arm_perspec(A, b->cap, off))
            return RVFIT_ERR_NOMEM;
        for (size_t s = 0; A->wave_per_spec && s < k; s++)
            memcpy(A->wave + (off + s) * N, g + (per_spec ? s * N : 0),
                   N * sizeof *g);
        for (size_t s = off; s < off + k; s++)
            pad_row(A, s);
    }
    return RVFIT_OK;
}

static int read_direct(run_ctx *c, run_batch *rb, void *h,
                       const rvfit_file_info *info, size_t first, size_t k,
                       const char *path, rvfit_err *err)
{
    const rvfit_instrument_ops *io = &c->r->inst->instrument;
    if (!rb->have_b) {
        int rc = rb_alloc(c, rb, info->narm, info->arm, c->cap, err);
        if (rc)
            return rc;
    }
    rvfit_batch *b = &rb->b, v;
    size_t off = b->nspec;
    if (off + k > b->cap || info->narm != b->narm)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL, "batch: %zu + %zu "
                             "spectra for %zu places", off, k, b->cap);
    if (direct_view(c, b, off, k, info, &v))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    int rc = io->read(h, first, k, &v, err);
    if (!rc && v.nspec != k)
        rc = rvfit_err_set(err, RVFIT_ERR_INTERNAL, "%s: read %zu of %zu "
                           "spectra", path, v.nspec, k);
    if (!rc && direct_settle(c, b, off, k, &v))
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    if (!rc)
        b->nspec += k;
    return rc;
}

size_t rb_read_max(const run_batch *rb, const rvfit_file_info *info)
{
    return direct_ok(rb, info) ? (size_t)-1 : RUN_READ_CHUNK;
}

int rb_read(run_ctx *c, run_batch *rb, void *h, const rvfit_file_info *info,
            size_t first, size_t k, const char *path, rvfit_err *err)
{
    if (direct_ok(rb, info))
        return read_direct(c, rb, h, info, first, k, path, err);
    return read_staged(c, rb, h, info, first, k, path, err);
}

int run_grow(void **p, size_t *cap, size_t need, size_t esz)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? 2 * *cap : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * esz);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

int rb_add_seg(run_batch *rb, run_seg **seg, rvfit_err *err)
{
    if (run_grow((void **)&rb->seg, &rb->segcap, rb->nseg + 1, sizeof *rb->seg))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    *seg = &rb->seg[rb->nseg++];
    memset(*seg, 0, sizeof **seg);
    return RVFIT_OK;
}

int rb_add_end(run_batch *rb, run_unit *u, rvfit_err *err)
{
    if (run_grow((void **)&rb->ends, &rb->endcap, rb->nend + 1,
             sizeof *rb->ends))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    rb->ends[rb->nend++] = u;
    return RVFIT_OK;
}

/* An arm's model buffer: a large array, kept in c->mem between batches
 * like the spectra's (the fit writes every row). */
static size_t model_bytes(const rvfit_batch *b, int a)
{
    return (b->nspec ? b->nspec : 1) * b->arm[a].npix * sizeof(float);
}

int rb_alloc_results(run_ctx *c, run_batch *rb, int models, rvfit_err *err)
{
    size_t ns = rb->b.nspec;
    rb->res = calloc(ns ? ns : 1, sizeof *rb->res);
    int ok = rb->res != NULL;
    for (int a = 0; models && ok && a < rb->b.narm; a++) {
        rb->models[a] = run_mem_get(&c->mem, model_bytes(&rb->b, a));
        ok = rb->models[a] != NULL;
    }
    return ok ? RVFIT_OK
              : rvfit_err_set(err, RVFIT_ERR_NOMEM, "results of %zu spectra",
                              ns);
}

void rb_clear(run_ctx *c, run_batch *rb)
{
    if (rb->have_b) {
        rb_drop_spectra(c, &rb->b, 1, 0);
        for (int a = 0; a < rb->b.narm; a++) {
            run_mem_put(&c->mem, rb->models[a], model_bytes(&rb->b, a));
            rb->models[a] = NULL;
        }
        rvfit_batch_free(&rb->b);
    }
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(rb->models[a]);
    free(rb->res);
    free(rb->seg);
    free(rb->ends);
    free(rb->j.obj_off);
    free(rb->j.jres);
    free(rb->j.id);
    free(rb->j.sb2);
    plot_clear(&rb->plot);
    memset(rb, 0, sizeof *rb);
}
