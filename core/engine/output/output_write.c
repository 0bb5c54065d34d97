/* output_write.c — filling rows of the output HDUs batch by batch, and the
 * commit (rename) / abort (unlink) at the end. */
#include <errno.h>
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output_internal.h"
#include "rvfit/fits.h"

/* Write one pass-through column of n rows starting at row first (0-based)
 * into column number colnum of the current HDU. */
static void write_col(fitsfile *f, int colnum, const rvfit_column *col,
                      const void *data, size_t first, size_t n, int *st)
{
    LONGLONG nel = (LONGLONG)n * col->repeat;
    if (col->type != RVFIT_COL_STR) {
        fits_write_col(f, out_fits_type(col->type), colnum,
                       (LONGLONG)first + 1, 1, nel, (void *)data, st);
        return;
    }
    /* Fixed-width, not terminated -> array of C strings. */
    size_t w = (size_t)col->repeat;
    char *buf = calloc(n ? n : 1, w + 1);
    char **ptr = malloc((n ? n : 1) * sizeof *ptr);
    if (!buf || !ptr) {
        *st = MEMORY_ALLOCATION;
    } else {
        for (size_t i = 0; i < n; i++) {
            memcpy(buf + i * (w + 1), (const char *)data + i * w, w);
            ptr[i] = buf + i * (w + 1);
        }
        fits_write_col(f, TSTRING, colnum, (LONGLONG)first + 1, 1,
                       (LONGLONG)n, ptr, st);
    }
    free(buf);
    free(ptr);
}

static void write_rvtab(rvfit_output *o, size_t first, size_t n,
                        const rvfit_result *res,
                        const rvfit_table_rows *rows, int *st)
{
    fits_movnam_hdu(o->tab, BINARY_TBL, "RVTAB", 0, st);
    double *d = malloc((n ? n : 1) * sizeof *d);
    int *iv = malloc((n ? n : 1) * sizeof *iv);
    char *lv = malloc(n ? n : 1);
    if (!d || !iv || !lv)
        *st = MEMORY_ALLOCATION;
    for (int c = 0; c < o->cols.n && *st == 0; c++) {
        const out_col *col = &o->cols.col[c];
        LONGLONG r0 = (LONGLONG)first + 1;
        if (col->form[0] == 'J') { /* counts and RVS_WARN */
            for (size_t i = 0; i < n; i++)
                iv[i] = (int)out_value(col, &res[i]);
            fits_write_col(o->tab, TINT, c + 1, r0, 1, (LONGLONG)n, iv, st);
        } else if (col->kind == OC_SUCCESS) {
            for (size_t i = 0; i < n; i++)
                lv[i] = res[i].warn == 0;
            fits_write_col(o->tab, TLOGICAL, c + 1, r0, 1, (LONGLONG)n, lv,
                           st);
        } else {
            for (size_t i = 0; i < n; i++)
                d[i] = out_value(col, &res[i]);
            /* NaN becomes the FITS null for floating columns. */
            fits_write_col(o->tab, TDOUBLE, c + 1, r0, 1, (LONGLONG)n, d, st);
        }
    }
    if (o->id_table >= 0 && *st == 0) {
        const rvfit_table_schema *s = &o->table[o->id_table];
        for (int c = 0; c < s->ncol && *st == 0; c++)
            write_col(o->tab, o->cols.n + c + 1, &s->cols[c],
                      rows[o->id_table].data[c], first, n, st);
    }
    free(d), free(iv), free(lv);
}

static void write_passthrough(fitsfile *f, const rvfit_table_schema *s,
                              const rvfit_table_rows *r, size_t first,
                              size_t n, int *st)
{
    fits_movnam_hdu(f, BINARY_TBL, (char *)s->extname, 0, st);
    for (int c = 0; c < s->ncol && *st == 0; c++)
        write_col(f, c + 1, &s->cols[c], r->data[c], first, n, st);
}

/* Wavelengths and models of rows [first, first+n): each row's own pixels
 * (the output's npix) out of the batch's possibly longer rows. */
static void write_models(rvfit_output *o, size_t first,
                         const rvfit_output_rows *r, int *st)
{
    const rvfit_batch *b = r->b;
    size_t n = r->n;
    for (int a = 0; a < o->narm && *st == 0; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        size_t np = o->arm[a].npix, bn = A->npix;
        float *m = malloc((n ? n : 1) * np * sizeof *m);
        double *w = malloc((n ? n : 1) * np * sizeof *w);
        if (!m || !w) {
            free(m), free(w);
            *st = MEMORY_ALLOCATION;
            return;
        }
        for (size_t i = 0; i < n; i++) {
            size_t s = r->off + i;
            memcpy(m + i * np, r->models[a] + s * bn, np * sizeof *m);
            memcpy(w + i * np, A->wave + (A->wave_per_spec ? s * bn : 0),
                   np * sizeof *w);
        }
        char ext[80];
        long fp[2] = {1, (long)first + 1};
        snprintf(ext, sizeof ext, "%s_WAVELENGTH", o->arm[a].name);
        if (o->wave_per_spec[a] || !o->wave_written) {
            fits_movnam_hdu(o->mod, IMAGE_HDU, ext, 0, st);
            if (o->wave_per_spec[a])
                fits_write_pix(o->mod, TDOUBLE, fp, (LONGLONG)(n * np), w,
                               st);
            else if (n)
                fits_write_img(o->mod, TDOUBLE, 1, (LONGLONG)np, w, st);
        }
        snprintf(ext, sizeof ext, "%s_MODEL", o->arm[a].name);
        fits_movnam_hdu(o->mod, IMAGE_HDU, ext, 0, st);
        fits_write_pixnull(o->mod, TFLOAT, fp, (LONGLONG)(n * np), m, NULL,
                           st);
        free(m), free(w);
    }
    o->wave_written = *st == 0 && n > 0;
}

/* The final velocity scans of rows [first, first + n) into CHISQ_V. */
static void write_chisq_v(rvfit_output *o, size_t first, size_t n,
                          const rvfit_result *res, int *st)
{
    size_t k = RVFIT_VSCAN_MAX;
    double *v = malloc((n ? n : 1) * k * sizeof *v);
    double *m = malloc((n ? n : 1) * k * sizeof *m);
    int *nv = malloc((n ? n : 1) * sizeof *nv);
    if (!v || !m || !nv)
        *st = MEMORY_ALLOCATION;
    for (size_t i = 0; i < n && *st == 0; i++) {
        int c = res[i].vscan_n;
        nv[i] = c > 0 && c <= RVFIT_VSCAN_MAX ? c : 0;
        for (size_t j = 0; j < k; j++) {
            v[i * k + j] = (int)j < nv[i] ? res[i].vscan_v[j] : NAN;
            m[i * k + j] = (int)j < nv[i] ? res[i].vscan_m2lnl[j] : NAN;
        }
    }
    LONGLONG r0 = (LONGLONG)first + 1;
    fits_movnam_hdu(o->mod, BINARY_TBL, "CHISQ_V", 0, st);
    fits_write_col(o->mod, TDOUBLE, 1, r0, 1, (LONGLONG)(n * k), v, st);
    fits_write_col(o->mod, TDOUBLE, 2, r0, 1, (LONGLONG)(n * k), m, st);
    fits_write_col(o->mod, TINT, 3, r0, 1, (LONGLONG)n, nv, st);
    free(v), free(m), free(nv);
}

static int write_error(const char *path, const char *what, int st,
                       rvfit_err *err)
{
    rvfit_fits_error(err, st, path, NULL, what);
    return RVFIT_ERR_IO;
}

int rvfit_output_write(rvfit_output *o, size_t first,
                       const rvfit_output_rows *r, rvfit_err *err)
{
    int st = 0;
    size_t n = r->n;
    errno = 0; /* what CFITSIO's calls leave is the OS's reason */
    if (first + n > o->nrow || r->off + n > r->b->nspec ||
        r->b->narm != o->narm)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL,
                             "%s: rows %zu..%zu (batch rows %zu.., %d arms) "
                             "beyond the %zu announced", o->tab_final, first,
                             first + n, r->off, r->b->narm, o->nrow);
    write_rvtab(o, first, n, r->res, r->rows, &st);
    for (int t = 0; t < o->ntable && !st; t++)
        if (t != o->id_table)
            write_passthrough(o->tab, &o->table[t], &r->rows[t], first, n,
                              &st);
    if (st)
        return write_error(o->tab_final, "writing rows", st, err);
    if (o->mod && r->models) {
        write_models(o, first, r, &st);
        for (int t = 0; t < o->ntable && !st; t++)
            if (!strcmp(o->table[t].extname, "FIBERMAP"))
                write_passthrough(o->mod, &o->table[t], &r->rows[t], first, n,
                                  &st);
        if (o->chisq_v && !st)
            write_chisq_v(o, first, n, r->res, &st);
        if (st)
            return write_error(o->mod_final, "writing models", st, err);
    }
    return RVFIT_OK;
}

const rvfit_table_schema *rvfit_output_tables(const rvfit_output *o,
                                              int *ntable)
{
    *ntable = o->ntable;
    return o->table;
}

int rvfit_output_key(rvfit_output *o, const char *key, long long value,
                     const char *comment, rvfit_err *err)
{
    fitsfile *files[2] = {o->tab, o->mod};
    for (int i = 0; i < 2; i++) {
        int st = 0;
        if (!files[i])
            continue;
        errno = 0;
        fits_movabs_hdu(files[i], 1, NULL, &st);
        fits_update_key_lng(files[i], (char *)key, value, (char *)comment,
                            &st);
        if (st) {
            char what[96];
            snprintf(what, sizeof what, "keyword %s", key);
            return write_error(i ? o->mod_final : o->tab_final, what, st,
                               err);
        }
    }
    return RVFIT_OK;
}

int rvfit_output_commit(rvfit_output *o, rvfit_err *err)
{
    int st = 0, st2 = 0, rc = RVFIT_OK;
    /* Buffered rows reach the disk here: a full disk shows up now. */
    errno = 0;
    fits_close_file(o->tab, &st);
    o->tab = NULL;
    if (st)
        rc = write_error(o->tab_final, "closing", st, err);
    errno = 0;
    if (o->mod)
        fits_close_file(o->mod, &st2);
    o->mod = NULL;
    if (st2 && !rc)
        rc = write_error(o->mod_final, "closing", st2, err);
    if (rc) {
        /* reported above */
    } else if (o->mod_tmp[0] && rename(o->mod_tmp, o->mod_final) != 0) {
        rc = rvfit_err_set(err, RVFIT_ERR_IO, "%s: rename from %s failed: "
                           "%s", o->mod_final, o->mod_tmp, strerror(errno));
    } else if (rename(o->tab_tmp, o->tab_final) != 0) {
        rc = rvfit_err_set(err, RVFIT_ERR_IO, "%s: rename from %s failed: "
                           "%s", o->tab_final, o->tab_tmp, strerror(errno));
        if (o->mod_tmp[0])
            unlink(o->mod_final);
    } else {
        o->tab_tmp[0] = o->mod_tmp[0] = '\0';
    }
    rvfit_output_abort(o);
    return rc;
}

void rvfit_output_abort(rvfit_output *o)
{
    if (!o)
        return;
    int st = 0;
    if (o->tab)
        fits_close_file(o->tab, &st);
    st = 0;
    if (o->mod)
        fits_close_file(o->mod, &st);
    if (o->tab_tmp[0])
        unlink(o->tab_tmp);
    if (o->mod_tmp[0])
        unlink(o->mod_tmp);
    out_schemas_free(o->table, o->ntable);
    free(o);
}
