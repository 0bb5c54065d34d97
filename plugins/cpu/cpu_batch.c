/* cpu_batch.c — resident copies of the library and of the spectra batch,
 * with what every evaluation reuses precomputed: template pixel
 * coordinates of the data pixels, basis tables, sanitised data in double,
 * usable pixel ranges, and per-thread scratch buffers. */
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
    }
    free(st->scr);
    st->scr = NULL;
}

void cpu_free_batch(cpu_state *st)
{
    for (int a = 0; a < st->narm; a++) {
        cpu_arm *ca = &st->arm[a];
        free(ca->u);
        free(ca->basis);
        free(ca->mom);
        free(ca->fwf);
        free(ca->sup);
        free(ca->flux);
        free(ca->ivar);
        free(ca->res);
        free(ca->first);
        free(ca->last);
        free(ca->nuse);
    }
    memset(st->arm, 0, sizeof st->arm);
    cpu_free_scratch(st);
    st->narm = 0;
    st->nspec = 0;
    st->have_batch = 0;
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

/* Copy one batch arm; returns a status. */
/* sup = [lo, hi): the pixels outside of which row b (npad long) is
 * exactly 0, widened to multiples of CPU_LANES so that a sum skipping
 * the rest keeps every lane's terms in order (cpu_normal.c). */
static void cpu_support(const double *b, size_t npad, uint32_t sup[2])
{
    size_t lo = 0, hi = npad;
    while (lo < npad && b[lo] == 0.0)
        lo++;
    while (hi > lo && b[hi - 1] == 0.0)
        hi--;
    if (lo == hi) {
        sup[0] = sup[1] = 0;
        return;
    }
    sup[0] = (uint32_t)(lo / CPU_LANES * CPU_LANES);
    sup[1] = (uint32_t)((hi + CPU_LANES - 1) / CPU_LANES * CPU_LANES);
}

static int cpu_copy_arm(cpu_state *st, const rvfit_arm_batch *ba, cpu_arm *ca,
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
    ca->u = calloc(nw * ca->npad, sizeof(double));
    ca->basis = calloc(nw * np * ca->npad, sizeof(double));
    ca->sup = calloc(nw * np * 2, sizeof(uint32_t));
    ca->nmom = st->mo.basis == RVFIT_BASIS_CHEB &&
                       2 * st->mo.npoly - 1 <= RVFIT_MAX_POLY
                   ? 2 * st->mo.npoly - 1
                   : 0;
    ca->mom = ca->nmom ? calloc(nw * (size_t)ca->nmom * ca->npad,
                                sizeof(double))
                       : NULL;
    ca->fwf = calloc(ns ? ns : 1, sizeof(double));
    ca->flux = calloc(ns * ca->npad, sizeof(double));
    ca->ivar = calloc(ns * ca->npad, sizeof(double));
    ca->first = calloc(ns, sizeof(long));
    ca->last = calloc(ns, sizeof(long));
    ca->nuse = calloc(ns, sizeof(long));
    if (ca->res_kind == RVFIT_RES_BAND)
        ca->res = malloc(ns * (size_t)ca->ndiag * n * sizeof(double) + 1);
    if (!ca->u || !ca->basis || !ca->sup || !ca->flux || !ca->ivar ||
        !ca->first || !ca->last || !ca->nuse || !ca->fwf ||
        (ca->nmom && !ca->mom) ||
        (ca->res_kind == RVFIT_RES_BAND && !ca->res))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "arm %.16s: out of memory",
                             ba->name);
    for (size_t k = 0; ca->res && k < ns * (size_t)ca->ndiag * n; k++)
        ca->res[k] = (double)ba->res[k];
    const rvfit_lib_arm *la = &st->lib.arm[ca->lib_arm];
    for (size_t w = 0; w < nw; w++)
        rvfit_pixel_tables(st->mo.basis, st->mo.npoly, la->lnl0, la->dlnl, n,
                           rvfit_arm_npix(ba, w), ba->wave + w * n, ca->npad,
                           ca->u + w * ca->npad,
                           ca->basis + w * np * ca->npad);
    for (size_t w = 0; w < nw && ca->nmom; w++) {
        double *ut = ca->u + w * ca->npad; /* the same u again */
        rvfit_pixel_tables(RVFIT_BASIS_CHEB, ca->nmom, la->lnl0, la->dlnl,
                           n, rvfit_arm_npix(ba, w), ba->wave + w * n,
                           ca->npad, ut,
                           ca->mom + w * (size_t)ca->nmom * ca->npad);
    }
    for (size_t k = 0; k < nw * np; k++)
        cpu_support(ca->basis + k * ca->npad, ca->npad, ca->sup + 2 * k);
    for (size_t s = 0; s < ns; s++) {
        long first = -1, last = -2, nuse = 0;
        for (size_t i = 0; i < n; i++) {
            double f = ba->flux[s * n + i], iv = ba->ivar[s * n + i];
            if (!(iv > 0.0) || !isfinite(iv) || !isfinite(f))
                continue; /* stays 0: unusable */
            ca->flux[s * ca->npad + i] = f;
            ca->ivar[s * ca->npad + i] = iv;
            ca->fwf[s] += iv * f * f;
            if (first < 0)
                first = (long)i;
            last = (long)i;
            nuse++;
        }
        ca->first[s] = first < 0 ? 0 : first;
        ca->last[s] = last;
        ca->nuse[s] = nuse;
    }
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
        if (!w->text || !w->trx || !w->kc || !w->t || !w->m || !w->g || !w->c ||
            !w->gb || !w->cont || !w->acc || !w->wrot)
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
    for (int a = 0; a < batch->narm; a++) {
        int rc = cpu_copy_arm(st, &batch->arm[a], &st->arm[a], err);
        if (rc != RVFIT_OK) {
            cpu_free_batch(st);
            return rc;
        }
    }
    if (cpu_alloc_scratch(st) != 0) {
        cpu_free_batch(st);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM,
                             "load_batch: out of memory for scratch");
    }
    st->have_batch = 1;
    return RVFIT_OK;
}
