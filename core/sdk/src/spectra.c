/* spectra.c — allocation of spectra batches and pass-through table rows,
 * and the per-pixel S/N summary of a spectrum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/numeric.h"
#include "rvfit/spectra.h"

size_t rvfit_col_size(int type)
{
    switch (type) {
    case RVFIT_COL_U8: return 1;
    case RVFIT_COL_I16: return 2;
    case RVFIT_COL_I32: return 4;
    case RVFIT_COL_I64: return 8;
    case RVFIT_COL_F32: return 4;
    case RVFIT_COL_F64: return 8;
    case RVFIT_COL_STR: return 1;
    default: return 0;
    }
}

int rvfit_batch_alloc(rvfit_batch *b, int narm, const rvfit_arm_info *info,
                      size_t cap, rvfit_err *err)
{
    memset(b, 0, sizeof *b);
    if (narm < 1 || narm > RVFIT_MAX_ARMS || cap == 0)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "batch: %d arms, capacity %zu", narm, cap);
    b->cap = cap;
    b->narm = narm;
    b->snr = malloc(cap * (size_t)narm * sizeof *b->snr);
    b->flags = calloc(cap, sizeof *b->flags);
    b->index = calloc(cap, sizeof *b->index);
    int ok = b->snr && b->flags && b->index;
    for (int a = 0; a < narm && ok; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        const rvfit_arm_info *I = &info[a];
        memcpy(A->name, I->name, sizeof A->name);
        A->name[sizeof A->name - 1] = '\0';
        A->npix = I->npix;
        A->wave_per_spec = I->wave_per_spec;
        A->res_kind = I->res_kind;
        A->ndiag = I->res_kind == RVFIT_RES_BAND ? I->ndiag : 0;
        size_t n = cap * I->npix;
        A->wave = malloc((I->wave_per_spec ? n : I->npix) * sizeof(double));
        A->flux = malloc(n * sizeof(float));
        A->ivar = malloc(n * sizeof(float));
        A->npix_own = malloc(cap * sizeof *A->npix_own);
        ok = A->wave && A->flux && A->ivar && A->npix_own;
        for (size_t s = 0; ok && s < cap; s++)
            A->npix_own[s] = I->npix;
        if (ok && I->res_kind == RVFIT_RES_BAND) {
            if (I->ndiag < 1 || I->ndiag % 2 == 0) {
                rvfit_batch_free(b);
                return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                     "arm %s: ndiag %d must be odd",
                                     I->name, I->ndiag);
            }
            A->res = malloc(n * (size_t)I->ndiag * sizeof(float));
            ok = A->res != NULL;
        } else if (ok && I->res_kind == RVFIT_RES_LSF) {
            A->lsf = malloc(n * sizeof(float));
            ok = A->lsf != NULL;
        }
    }
    if (!ok) {
        rvfit_batch_free(b);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM,
                             "cannot allocate a batch of %zu spectra", cap);
    }
    for (size_t i = 0; i < cap * (size_t)narm; i++)
        b->snr[i] = NAN;
    return RVFIT_OK;
}

void rvfit_batch_free(rvfit_batch *b)
{
    if (!b)
        return;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        free(b->arm[a].wave);
        free(b->arm[a].flux);
        free(b->arm[a].ivar);
        free(b->arm[a].res);
        free(b->arm[a].lsf);
        free(b->arm[a].npix_own);
    }
    free(b->snr);
    free(b->flags);
    free(b->index);
    memset(b, 0, sizeof *b);
}

int rvfit_rows_alloc(rvfit_table_rows *r, const rvfit_table_schema *s,
                     size_t nrow, rvfit_err *err)
{
    r->nrow = nrow;
    r->data = calloc((size_t)(s->ncol > 0 ? s->ncol : 1), sizeof(void *));
    if (!r->data)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "table %s", s->extname);
    for (int c = 0; c < s->ncol; c++) {
        size_t n = (nrow ? nrow : 1) * (size_t)s->cols[c].repeat *
                   rvfit_col_size(s->cols[c].type);
        r->data[c] = calloc(n ? n : 1, 1);
        if (!r->data[c]) {
            rvfit_rows_free(r, s);
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "table %s column %s",
                                 s->extname, s->cols[c].name);
        }
    }
    return RVFIT_OK;
}

void rvfit_rows_free(rvfit_table_rows *r, const rvfit_table_schema *s)
{
    if (!r || !r->data)
        return;
    for (int c = 0; c < s->ncol; c++)
        free(r->data[c]);
    free(r->data);
    r->data = NULL;
    r->nrow = 0;
}

int rvfit_batch_check_lsf(const char *path, const rvfit_batch *b,
                          size_t count, size_t npix, rvfit_err *err)
{
    const rvfit_arm_batch *A = &b->arm[0];
    if (count > b->cap || b->narm != 1 || A->npix != npix ||
        !A->wave_per_spec || A->res_kind != RVFIT_RES_LSF || !A->lsf)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: batch (%zu spectra, %d arms, %zu pixels, "
                             "res kind %d) does not fit %zu spectra of one "
                             "LSF arm of %zu pixels with own wavelengths",
                             path, b->cap, b->narm, A->npix, A->res_kind,
                             count, npix);
    return RVFIT_OK;
}

void rvfit_column_set(rvfit_column *c, const char *name, int type,
                      long repeat, const char *unit, const char *comment)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->type = type;
    c->repeat = repeat;
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    snprintf(c->comment, sizeof c->comment, "%s", comment);
}

int rvfit_rows_check(const char *path, int t, int ntable, size_t first,
                     size_t count, size_t nsel, rvfit_err *err)
{
    if (t < 0 || t >= ntable || first > nsel || count > nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: rows [%zu, %zu) of table %d (%zu selected,"
                             " %d tables)", path, first, first + count, t,
                             nsel, ntable);
    return RVFIT_OK;
}

double rvfit_pixel_snr(const float *flux, const float *ivar, size_t n,
                       double *work)
{
    double *v = work ? work : malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ivar[i] > 0.0f)
            v[k++] = (double)flux[i] * sqrt((double)ivar[i]);
    double m = rvfit_median(v, k);
    if (!work)
        free(v);
    return m;
}
