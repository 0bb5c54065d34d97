/* run_batch.c — one batch from the spectra of several files.  Files join a
 * batch when their arms match (names in order, resolution kind, band
 * width).  Arms may differ in length: the batch takes the longest, shorter
 * rows are padded (flux and ivar 0, wavelengths continued on their last
 * step, band columns 0, LSF its last value) and record their own length in
 * npix_own, which is all that prep and the backends look at.  A file whose
 * wavelength grid differs from the batch's shared grid turns that arm's
 * grid into per-spectrum rows. */
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

static int first_alloc(run_batch *rb, const rvfit_batch *sb, size_t cap,
                       rvfit_err *err)
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
    int rc = rvfit_batch_alloc(&rb->b, sb->narm, ai, cap, err);
    if (rc)
        return rc;
    rb->have_b = 1;
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

int rb_append(run_batch *rb, const rvfit_batch *sb, size_t cap,
              rvfit_err *err)
{
    if (!rb->have_b) {
        int rc = first_alloc(rb, sb, cap, err);
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

static int grow(void **p, size_t *cap, size_t need, size_t esz)
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
    if (grow((void **)&rb->seg, &rb->segcap, rb->nseg + 1, sizeof *rb->seg))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    *seg = &rb->seg[rb->nseg++];
    memset(*seg, 0, sizeof **seg);
    return RVFIT_OK;
}

int rb_add_end(run_batch *rb, run_unit *u, rvfit_err *err)
{
    if (grow((void **)&rb->ends, &rb->endcap, rb->nend + 1,
             sizeof *rb->ends))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    rb->ends[rb->nend++] = u;
    return RVFIT_OK;
}

int rb_alloc_results(run_batch *rb, int models, rvfit_err *err)
{
    size_t ns = rb->b.nspec;
    rb->res = calloc(ns ? ns : 1, sizeof *rb->res);
    int ok = rb->res != NULL;
    for (int a = 0; models && ok && a < rb->b.narm; a++) {
        rb->models[a] = malloc((ns ? ns : 1) * rb->b.arm[a].npix *
                               sizeof(float));
        ok = rb->models[a] != NULL;
    }
    return ok ? RVFIT_OK
              : rvfit_err_set(err, RVFIT_ERR_NOMEM, "results of %zu spectra",
                              ns);
}

void rb_clear(run_batch *rb)
{
    if (rb->have_b)
        rvfit_batch_free(&rb->b);
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
