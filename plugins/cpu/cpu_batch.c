/* cpu_batch.c — resident copies of the library and of the spectra batch,
 * with what every evaluation reuses precomputed: template pixel
 * coordinates of the data pixels, basis tables, sanitised data in double,
 * usable pixel ranges, and per-thread scratch buffers.  A batch's arrays
 * live in one arena that the next batch reuses, and are filled on the
 * pool's threads, one spectrum (or wavelength grid) per item. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

void cpu_free_library(cpu_state *st)
{
    for (int a = 0; a < st->lib.narm; a++)
        free(st->lib.arm[a].flux);
    free(st->lib.exists);
    memset(&st->lib, 0, sizeof st->lib);
    st->have_lib = 0;
}

static void cpu_free_scratch(cpu_state *st)
{
    if (!st->scr)
        return;
    for (int t = 0; t < st->nthreads; t++) {
        cpu_scratch *w = &st->scr[t];
        free(w->text);
        free(w->trx);
        free(w->kc);
        free(w->t);
        free(w->m);
        free(w->g);
        free(w->c);
        free(w->gb);
        free(w->cont);
        free(w->acc);
        free(w->wrot);
        free(w->sk);
        free(w->sx);
        free(w->fcell);
        free(w->fy);
    }
    free(st->scr);
    st->scr = NULL;
}

void cpu_free_batch(cpu_state *st)
{
    memset(st->arm, 0, sizeof st->arm); /* the arrays live in the arena */
    cpu_free_scratch(st);
    st->narm = 0;
    st->nspec = 0;
    st->have_batch = 0;
}

void cpu_free_arena(cpu_state *st)
{
    free(st->arena);
    st->arena = NULL;
    st->arena_cap = 0;
}

int cpu_load_library(void *state, const rvfit_library *lib, rvfit_err *err)
{
    cpu_state *st = state;
    /* Data pixel coordinates depend on the library: a batch must be
     * reloaded after a new library. */
    cpu_free_batch(st);
    cpu_free_library(st);
    int rc = rvfit_library_check(lib, err);
    if (rc)
        return rc;
    size_t nm = lib->nmodel;
    st->lib = *lib;
    st->lib.exists = NULL;
    for (int a = 0; a < lib->narm; a++)
        st->lib.arm[a].flux = NULL;
    if (lib->exists) {
        st->lib.exists = malloc(nm);
        if (!st->lib.exists)
            goto nomem;
        memcpy(st->lib.exists, lib->exists, nm);
    }
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *la = &lib->arm[a];
        size_t nb = nm * la->npix * sizeof(float);
        st->lib.arm[a].flux = malloc(nb);
        if (!st->lib.arm[a].flux)
            goto nomem;
        memcpy(st->lib.arm[a].flux, la->flux, nb);
    }
    st->have_lib = 1;
    return RVFIT_OK;
nomem:
    cpu_free_library(st);
    return rvfit_err_set(err, RVFIT_ERR_NOMEM, "library: out of memory");
}

/* sup = [lo, hi): the pixels outside of which row b (npad long) is
 * exactly 0, widened to multiples of CPU_LANES so that a sum skipping
 * the rest keeps every lane's terms in order (cpu_normal.c). */
static void cpu_support(const double *b, size_t npad, uint32_t sup[2])
{
    size_t lo, hi;
    rvfit_row_support(b, npad, &lo, &hi);
    if (lo == hi) {
        sup[0] = sup[1] = 0;
        return;
    }
    sup[0] = (uint32_t)(lo / CPU_LANES * CPU_LANES);
    sup[1] = (uint32_t)((hi + CPU_LANES - 1) / CPU_LANES * CPU_LANES);
}

/* The next n bytes at *off of the arena base (64-byte aligned), or
 * NULL while only sizing (base NULL). */
static void *cpu_carve(char *base, size_t *off, size_t n)
{
    size_t o = (*off + 63) / 64 * 64;
    *off = o + n;
    return base ? base + o : NULL;
}

/* The arm's geometry (checked against the library) and its arrays for
 * ns spectra carved from base at *off (sizing only when base is NULL);
 * the fill tasks below write every element, pads included. */
static int cpu_arm_layout(cpu_state *st, const rvfit_arm_batch *ba,
                          cpu_arm *ca, char *base, size_t *off,
                          rvfit_err *err)
{
    size_t ns = st->nspec, n = ba->npix;
    memcpy(ca->name, ba->name, sizeof ca->name);
    int rc = rvfit_batch_arm_check(&st->lib, ba, ns, &ca->lib_arm, err);
    if (rc)
        return rc;
    ca->npix = n;
    ca->npad = (n + CPU_LANES - 1) / CPU_LANES * CPU_LANES;
    ca->wave_per_spec = ba->wave_per_spec;
    ca->res_kind = ba->res_kind == RVFIT_RES_BAND ? RVFIT_RES_BAND
                                                   : RVFIT_RES_NONE;
    ca->ndiag = ca->res_kind == RVFIT_RES_BAND ? ba->ndiag : 1;
    size_t nw = ba->wave_per_spec ? ns : 1, np = (size_t)st->mo.npoly;
    size_t npad = ca->npad, d = sizeof(double);
    ca->nmom = st->mo.basis == RVFIT_BASIS_CHEB &&
                       2 * st->mo.npoly - 1 <= RVFIT_MAX_POLY
                   ? 2 * st->mo.npoly - 1
                   : 0;
    /* B-splines keep no basis rows: their sums and the continuum come
     * from the interval tables below */
    int bsp = st->mo.basis == RVFIT_BASIS_BSPLINE && np >= 4;
    ca->u = cpu_carve(base, off, nw * npad * d);
    ca->basis = bsp ? NULL : cpu_carve(base, off, nw * np * npad * d);
    ca->sup = bsp ? NULL : cpu_carve(base, off, nw * np * 2 * sizeof(uint32_t));
    ca->mom = ca->nmom ? cpu_carve(base, off, nw * (size_t)ca->nmom * npad * d)
                       : NULL;
    ca->nint = bsp ? (int)np - 3 : 0;
    size_t ni = (size_t)ca->nint;
    ca->icap = ni ? CPU_IMOM * (npad + 2 * CPU_LANES * ni) : 0;
    ca->ilim = ni ? cpu_carve(base, off, nw * ni * 2 * sizeof(uint32_t))
                  : NULL;
    ca->ioff = ni ? cpu_carve(base, off, nw * ni * sizeof(size_t)) : NULL;
    ca->itab = ni ? cpu_carve(base, off, nw * ca->icap * d) : NULL;
    ca->icheb = ni ? cpu_carve(base, off, ni * 16 * d) : NULL;
    ca->fwf = cpu_carve(base, off, ns * d);
    ca->flux = cpu_carve(base, off, ns * npad * d);
    ca->ivar = cpu_carve(base, off, ns * npad * d);
    ca->first = cpu_carve(base, off, ns * sizeof(long));
    ca->last = cpu_carve(base, off, ns * sizeof(long));
    ca->nuse = cpu_carve(base, off, ns * sizeof(long));
    ca->res = ca->res_kind == RVFIT_RES_BAND
                  ? cpu_carve(base, off, ns * (size_t)ca->ndiag * n *
                                             sizeof(float))
                  : NULL;
    return RVFIT_OK;
}

/* One arm of the batch being copied, for the pool tasks. */
typedef struct cpu_fill {
    const cpu_state *st;
    const rvfit_arm_batch *ba;
    cpu_arm *ca;
    int data_only; /* update_data: the band matrices are in place already */
} cpu_fill;

/* The B-spline intervals' tables of grid w (cpu_arm.itab): each
 * interval's pixel range, then T_0 .. T_6 of the pixel's coordinate in
 * it, 0 at the pixels of its neighbours that the widening takes in. */
static void cpu_fill_cells(const rvfit_arm_batch *ba, cpu_arm *ca, size_t w,
                           int np, cpu_scratch *scr)
{
    size_t n = ba->npix, ni = (size_t)ca->nint;
    int *cell = scr->fcell;
    double *y = scr->fy;
    rvfit_pixel_cells(np, n, rvfit_arm_npix(ba, w), ba->wave + w * n, cell,
                      y);
    uint32_t *lim = ca->ilim + 2 * w * ni;
    size_t *ioff = ca->ioff + w * ni, o = 0;
    double *tab = ca->itab + w * ca->icap;
    for (size_t j = 0; j < ni; j++)
        lim[2 * j] = (uint32_t)n, lim[2 * j + 1] = 0;
    for (size_t i = 0; i < n; i++)
        if (cell[i] >= 0) {
            uint32_t *l = lim + 2 * cell[i];
            l[0] = (uint32_t)i < l[0] ? (uint32_t)i : l[0];
            l[1] = (uint32_t)i + 1;
        }
    for (size_t j = 0; j < ni; j++) {
        uint32_t *l = lim + 2 * j;
        if (l[1] <= l[0])
            l[0] = l[1] = 0;
        l[0] = l[0] / CPU_LANES * CPU_LANES;
        l[1] = (l[1] + CPU_LANES - 1) / CPU_LANES * CPU_LANES;
        size_t len = l[1] - l[0];
        ioff[j] = o;
        for (size_t i = l[0]; i < l[1]; i++) {
            double tv[CPU_IMOM] = {0.0};
            if (i < n && cell[i] == (int)j)
                rvfit_basis(RVFIT_BASIS_CHEB, CPU_IMOM, y[i], tv);
            for (int p = 0; p < CPU_IMOM; p++)
                tab[o + p * len + (i - l[0])] = tv[p];
        }
        o += CPU_IMOM * len;
    }
}

/* Pool task: the pixel tables of wavelength grid w (u, basis, supports,
 * Chebyshev moments' rows, B-spline intervals' tables). */
static void cpu_fill_tables(void *ctx, int tid, size_t w)
{
    const cpu_fill *f = ctx;
    const rvfit_arm_batch *ba = f->ba;
    cpu_arm *ca = f->ca;
    const rvfit_lib_arm *la = &f->st->lib.arm[ca->lib_arm];
    size_t n = ba->npix, np = (size_t)f->st->mo.npoly;
    double *u = ca->u + w * ca->npad;
    /* B-splines keep no rows: u only */
    size_t nb = ca->nint ? 0 : np;
    double *B = nb ? ca->basis + w * np * ca->npad : NULL;
    rvfit_pixel_tables(f->st->mo.basis, (int)nb, la->lnl0, la->dlnl, n,
                       rvfit_arm_npix(ba, w), ba->wave + w * n, ca->npad, u,
                       B);
    if (ca->nmom) /* writes the same u again */
        rvfit_pixel_tables(RVFIT_BASIS_CHEB, ca->nmom, la->lnl0, la->dlnl, n,
                           rvfit_arm_npix(ba, w), ba->wave + w * n, ca->npad,
                           u, ca->mom + w * (size_t)ca->nmom * ca->npad);
    /* pads: u and the rows beyond n are not written by the tables */
    size_t pad = (ca->npad - n) * sizeof(double);
    memset(u + n, 0, pad);
    for (size_t k = 0; k < nb; k++)
        memset(B + k * ca->npad + n, 0, pad);
    for (int k = 0; k < ca->nmom; k++)
        memset(ca->mom + (w * (size_t)ca->nmom + (size_t)k) * ca->npad + n,
               0, pad);
    for (size_t k = 0; k < nb; k++)
        cpu_support(B + k * ca->npad, ca->npad, ca->sup + 2 * (w * np + k));
    if (ca->nint)
        cpu_fill_cells(ba, ca, w, (int)np, &f->st->scr[tid]);
}

/* Pool task: spectrum s — usable pixels, f^T W f, the band matrix. */
static void cpu_fill_spec(void *ctx, int tid, size_t s)
{
    (void)tid;
    const cpu_fill *f = ctx;
    const rvfit_arm_batch *ba = f->ba;
    cpu_arm *ca = f->ca;
    size_t n = ba->npix;
    long first = -1, last = -2, nuse = 0;
    double fwf = 0.0;
    double *fo = ca->flux + s * ca->npad, *io = ca->ivar + s * ca->npad;
    memset(fo, 0, ca->npad * sizeof(double)); /* 0: unusable, and pads */
    memset(io, 0, ca->npad * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double fx = ba->flux[s * n + i], iv = ba->ivar[s * n + i];
        if (!(iv > 0.0) || !isfinite(iv) || !isfinite(fx))
            continue;
        fo[i] = fx;
        io[i] = iv;
        fwf += iv * fx * fx;
        if (first < 0)
            first = (long)i;
        last = (long)i;
        nuse++;
    }
    ca->fwf[s] = fwf;
    ca->first[s] = first < 0 ? 0 : first;
    ca->last[s] = last;
    ca->nuse[s] = nuse;
    size_t nr = (size_t)ca->ndiag * n;
    if (ca->res && !f->data_only)
        memcpy(ca->res + s * nr, ba->res + s * nr, nr * sizeof(float));
}

/* Fill one batch arm, the spectra and the grids spread over the pool's
 * threads (each item writes its own slices: the result does not depend
 * on the thread count). */
static void cpu_fill_arm(cpu_state *st, const rvfit_arm_batch *ba,
                         cpu_arm *ca)
{
    cpu_fill f = {.st = st, .ba = ba, .ca = ca};
    for (int j = 0; j < ca->nint; j++)
        rvfit_bspline_cheb(st->mo.npoly, j, ca->icheb + 16 * j);
    rvfit_pool_run(st->pool, ba->wave_per_spec ? st->nspec : 1,
                   cpu_fill_tables, &f);
    rvfit_pool_run(st->pool, st->nspec, cpu_fill_spec, &f);
}

/* Lay the batch's arms out in the arena, growing it when needed. */
static int cpu_batch_arena(cpu_state *st, const rvfit_batch *batch,
                           rvfit_err *err)
{
    size_t need = 0;
    for (int a = 0; a < batch->narm; a++) {
        int rc = cpu_arm_layout(st, &batch->arm[a], &st->arm[a], NULL, &need,
                                err);
        if (rc)
            return rc;
    }
    if (need > st->arena_cap) {
        cpu_free_arena(st);
        st->arena = malloc(need);
        if (!st->arena)
            return rvfit_err_set(err, RVFIT_ERR_NOMEM,
                                 "load_batch: out of memory for %zu MiB",
                                 need >> 20);
        st->arena_cap = need;
    }
    size_t off = 0;
    for (int a = 0; a < batch->narm; a++)
        cpu_arm_layout(st, &batch->arm[a], &st->arm[a], st->arena, &off,
                       err);
    return RVFIT_OK;
}

static int cpu_alloc_scratch(cpu_state *st)
{
    size_t nt = 0, nd = 0, np = (size_t)st->mo.npoly;
    for (int a = 0; a < st->lib.narm; a++)
        if (st->lib.arm[a].npix > nt)
            nt = st->lib.arm[a].npix;
    for (int a = 0; a < st->narm; a++)
        if (st->arm[a].npad > nd)
            nd = st->arm[a].npad;
    st->npad_max = nd;
    st->scr = calloc((size_t)st->nthreads, sizeof *st->scr);
    if (!st->scr)
        return -1;
    for (int t = 0; t < st->nthreads; t++) {
        cpu_scratch *w = &st->scr[t];
        w->text = calloc(nt + 2 * RVFIT_MAX_VSINI_HALF + 16, sizeof(double));
        w->trx = calloc(nt + 16, sizeof(double));
        w->kc = calloc(4 * (nt + 16), sizeof(double));
        w->t = calloc(nd, sizeof(double));
        w->m = calloc(nd, sizeof(double));
        w->g = calloc(nd, sizeof(double));
        w->c = calloc(nd, sizeof(double));
        w->gb = calloc(np * CPU_BLOCK, sizeof(double));
        w->cont = calloc(nd, sizeof(double));
        w->acc = calloc((CPU_NPAIR + RVFIT_MAX_POLY) * CPU_LANES,
                        sizeof(double));
        w->wrot = calloc(2 * RVFIT_MAX_VSINI_HALF + 1, sizeof(double));
        w->sk = calloc(RVFIT_MAX_ARMS * nd, sizeof(int));
        w->sx = calloc(RVFIT_MAX_ARMS * nd, sizeof(double));
        w->fcell = calloc(nd, sizeof(int));
        w->fy = calloc(nd, sizeof(double));
        if (!w->text || !w->trx || !w->kc || !w->t || !w->m || !w->g || !w->c ||
            !w->gb || !w->cont || !w->acc || !w->wrot || !w->sk || !w->sx ||
            !w->fcell || !w->fy)
            return -1;
    }
    return 0;
}

int cpu_load_batch(void *state, const rvfit_batch *batch,
                   const rvfit_model_opts *mo, rvfit_err *err)
{
    cpu_state *st = state;
    cpu_free_batch(st);
    if (!st->have_lib)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "load_batch: no library loaded");
    int rc0 = rvfit_batch_opts_check(batch, mo, err);
    if (rc0 != RVFIT_OK)
        return rc0;
    st->mo = *mo;
    st->nspec = batch->nspec;
    st->narm = batch->narm;
    int rc = cpu_batch_arena(st, batch, err);
    if (rc != RVFIT_OK) {
        cpu_free_batch(st);
        return rc;
    }
    /* the scratch first: filling the B-spline tables uses it */
    if (cpu_alloc_scratch(st) != 0) {
        cpu_free_batch(st);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM,
                             "load_batch: out of memory for scratch");
    }
    for (int a = 0; a < batch->narm; a++)
        cpu_fill_arm(st, &batch->arm[a], &st->arm[a]);
    st->have_batch = 1;
    return RVFIT_OK;
}

/* New flux and ivar: the per-spectrum data of every arm again (usable
 * pixels, their extent, sum w f^2), the pixel tables and band matrices
 * kept; the same numbers as load_batch of the changed batch. */
int cpu_update_data(void *state, const rvfit_batch *batch, rvfit_err *err)
{
    cpu_state *st = state;
    size_t npix[RVFIT_MAX_ARMS];
    for (int a = 0; a < st->narm && a < RVFIT_MAX_ARMS; a++)
        npix[a] = st->arm[a].npix;
    int rc = rvfit_batch_update_check(batch, st->have_batch, st->nspec,
                                      st->narm, npix, err);
    if (rc != RVFIT_OK)
        return rc;
    for (int a = 0; a < batch->narm; a++) {
        cpu_fill f = {.st = st, .ba = &batch->arm[a], .ca = &st->arm[a],
                      .data_only = 1};
        rvfit_pool_run(st->pool, st->nspec, cpu_fill_spec, &f);
    }
    return RVFIT_OK;
}
