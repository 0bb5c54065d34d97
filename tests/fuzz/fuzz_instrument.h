/* fuzz_instrument.h — one input through an instrument plugin as the run
 * uses it: open (with a selection for odd-sized inputs), info, read the
 * first spectra, read every pass-through table, the epochs (when the
 * plugin has the extension), close.  Checked: a
 * failure names the file; what a reader hands over has finite, positive,
 * increasing wavelengths over the spectrum's own pixels, finite flux,
 * finite ivar >= 0 and finite band or LSF values (the engine and backends
 * rely on all of these). */
#ifndef RVFIT_FUZZ_INSTRUMENT_H
#define RVFIT_FUZZ_INSTRUMENT_H

#include <math.h>

#include "fuzz_util.h"
#include "rvfit/instrument_epochs.h"
#include "rvfit/plugin.h"

#define FZ_MAX_SPEC 4 /* spectra read per input: enough to cover runs */

static inline void fz_check_arm(const rvfit_arm_batch *A, size_t s)
{
    size_t n = rvfit_arm_npix(A, s), ld = A->npix;
    const double *w = A->wave + (A->wave_per_spec ? s * ld : 0);
    FZ_REQUIRE(n <= ld, "arm %s: %zu own pixels of %zu", A->name, n, ld);
    for (size_t i = 0; i < n; i++) {
        FZ_REQUIRE(isfinite(w[i]) && w[i] > 0 && (!i || w[i] > w[i - 1]),
                   "arm %s spectrum %zu: wave[%zu] = %g", A->name, s, i,
                   w[i]);
        float f = A->flux[s * ld + i], iv = A->ivar[s * ld + i];
        FZ_REQUIRE(isfinite(f) && isfinite(iv) && iv >= 0,
                   "arm %s spectrum %zu pixel %zu: flux %g ivar %g", A->name,
                   s, i, f, iv);
        if (A->lsf)
            FZ_REQUIRE(isfinite(A->lsf[s * ld + i]), "lsf[%zu]", i);
    }
    if (A->res)
        for (size_t i = 0; i < ld * (size_t)A->ndiag; i++)
            FZ_REQUIRE(isfinite(A->res[s * ld * (size_t)A->ndiag + i]),
                       "res[%zu]", i);
}

/* The epochs of the first n spectra: an error names the file; keys and
 * reasons are terminated. */
static inline void fz_epochs(const rvfit_plugin *p, void *h, size_t n,
                             const char *path)
{
    for (const rvfit_ext *x = p->ext; x && x->name; x++) {
        if (strcmp(x->name, RVFIT_EXT_EPOCHS))
            continue;
        const rvfit_instrument_epochs_ops *e = x->table;
        rvfit_epoch ep[FZ_MAX_SPEC];
        rvfit_err err;
        rvfit_err_clear(&err);
        if (e->epochs(h, 0, n, ep, &err) != RVFIT_OK) {
            fz_check_error(&err, path);
            continue;
        }
        for (size_t i = 0; i < n; i++)
            FZ_REQUIRE(memchr(ep[i].key, 0, sizeof ep[i].key) &&
                           memchr(ep[i].why, 0, sizeof ep[i].why),
                       "epoch %zu: key or why not terminated", i);
    }
}

static inline void fz_read_all(const rvfit_plugin *p, void *h,
                               const char *path)
{
    const rvfit_instrument_ops *ops = p->ops;
    rvfit_file_info I;
    rvfit_err err;
    rvfit_err_clear(&err);
    ops->info(h, &I);
    FZ_REQUIRE(I.nselect <= I.ntotal && I.narm >= 1 &&
                   I.narm <= RVFIT_MAX_ARMS,
               "info: %zu of %zu selected, %d arms", I.nselect, I.ntotal,
               I.narm);
    size_t n = I.nselect < FZ_MAX_SPEC ? I.nselect : FZ_MAX_SPEC;
    if (n == 0)
        return;
    fz_epochs(p, h, n, path);
    rvfit_batch b;
    if (rvfit_batch_alloc(&b, I.narm, I.arm, n, &err) == RVFIT_OK) {
        if (ops->read(h, 0, n, &b, &err) == RVFIT_OK) {
            FZ_REQUIRE(b.nspec == n, "read %zu of %zu", b.nspec, n);
            for (int a = 0; a < b.narm; a++)
                for (size_t s = 0; s < n; s++)
                    fz_check_arm(&b.arm[a], s);
        } else {
            fz_check_error(&err, path);
        }
        rvfit_batch_free(&b);
    }
    for (int t = 0; t < I.ntable; t++) {
        rvfit_table_rows r;
        rvfit_err_clear(&err);
        if (rvfit_rows_alloc(&r, &I.table[t], n, &err) != RVFIT_OK)
            continue;
        if (ops->read_rows(h, t, 0, n, &r, &err) != RVFIT_OK)
            fz_check_error(&err, path);
        rvfit_rows_free(&r, &I.table[t]);
    }
}

/* Run one input with the plugin options kv[0..nkv); FITS only (a gzip
 * header would have CFITSIO inflate it in memory, and an SDSS text list
 * names other files). */
static inline int fz_instrument_kv(const rvfit_plugin *p, const char *tag,
                                   const rvfit_kv *kv, int nkv,
                                   const uint8_t *data, size_t size)
{
    if (size < 9 || memcmp(data, "SIMPLE  =", 9) != 0)
        return 0;
    char path[512];
    if (fz_write(tag, "fits", data, size, path, sizeof path) != 0)
        return 0;
    const rvfit_instrument_ops *ops = p->ops;
    rvfit_host host = fz_host();
    /* odd-sized inputs also go through the selection paths: a minimum
     * S/N (computed from the pixels when the file has none) and a
     * TARGETID list (one id of the tiny seeds, one of no file) */
    static const int64_t ids[2] = {39627000000002LL, 7};
    rvfit_select sel;
    memset(&sel, 0, sizeof sel);
    if (size & 1) {
        sel.minsn = 1.0;
        sel.ntargetid = 2;
        sel.targetid = ids;
    }
    rvfit_err err;
    rvfit_err_clear(&err);
    void *h = NULL;
    if (ops->open(&host, kv, nkv, path, &sel, &h, &err) == RVFIT_OK) {
        fz_read_all(p, h, path);
        ops->close(h);
    } else {
        FZ_REQUIRE(h == NULL, "open failed but left a handle");
        fz_check_error(&err, path);
    }
    remove(path);
    return 0;
}

static inline int fz_instrument(const rvfit_plugin *p, const char *tag,
                                const uint8_t *data, size_t size)
{
    return fz_instrument_kv(p, tag, NULL, 0, data, size);
}

#endif
