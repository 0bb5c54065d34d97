/* desi_tables.c — pass-through tables: identifiers for RVTAB, the whole
 * FIBERMAP and SCORES rows of the selected spectra (rows align with the
 * spectra by index in coadd and spectra files). */
#include <stdlib.h>
#include <string.h>

#include "desi_internal.h"

enum { DESI_T_RVTAB = 0, DESI_T_FIBERMAP = 1, DESI_T_SCORES = 2 };

/* FITS column type (after TZERO) -> our type and the CFITSIO read type. */
static int desi_map_type(int eqtype, int *coltype, int *readtype)
{
    switch (eqtype) {
    case TLOGICAL: *coltype = RVFIT_COL_U8; *readtype = TLOGICAL; return 1;
    case TBYTE: *coltype = RVFIT_COL_U8; *readtype = TBYTE; return 1;
    case TSBYTE:
    case TSHORT: *coltype = RVFIT_COL_I16; *readtype = TSHORT; return 1;
    case TUSHORT:
    case TINT:
    case TLONG: *coltype = RVFIT_COL_I32; *readtype = TINT; return 1;
    case TULONG:
    case TLONGLONG: *coltype = RVFIT_COL_I64; *readtype = TLONGLONG; return 1;
    case TFLOAT: *coltype = RVFIT_COL_F32; *readtype = TFLOAT; return 1;
    case TDOUBLE: *coltype = RVFIT_COL_F64; *readtype = TDOUBLE; return 1;
    case TSTRING: *coltype = RVFIT_COL_STR; *readtype = TSTRING; return 1;
    default: return 0; /* bits, complex, variable-length: not copied */
    }
}

static void desi_col_key(fitsfile *fp, const char *root, int col, char *out,
                         size_t len)
{
    char key[FLEN_KEYWORD], val[FLEN_VALUE] = "";
    int st = 0;
    snprintf(key, sizeof key, "%s%d", root, col);
    if (fits_read_key(fp, TSTRING, key, val, NULL, &st))
        fits_clear_errmsg();
    snprintf(out, len, "%s", val);
}

/* Describe column cn of the current HDU into t's next slot; 0 if skipped. */
static int desi_add_col(desi_handle *h, desi_table *t, int *ncol, int cn,
                        const char *hdu, rvfit_err *err)
{
    int st = 0, eq = 0, ct, rt;
    long rep = 0, w = 0;
    char name[FLEN_VALUE];
    desi_col_key(h->fp, "TTYPE", cn, name, sizeof name);
    fits_get_eqcoltype(h->fp, cn, &eq, &rep, &w, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, hdu, "reading column types");
    if (!desi_map_type(eq, &ct, &rt) || rep < 1) {
        rvfit_log(h->host, RVFIT_LOG_DEBUG, DESI_WHO,
                  "%s: HDU %s: column %s (type %d) not copied", h->path, hdu,
                  name, eq);
        return RVFIT_OK;
    }
    rvfit_column *c = &t->cols[*ncol];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->type = ct;
    c->repeat = rep;
    desi_col_key(h->fp, "TUNIT", cn, c->unit, sizeof c->unit);
    desi_col_key(h->fp, "TCOMM", cn, c->comment, sizeof c->comment);
    t->src_col[*ncol] = cn;
    t->fits_type[*ncol] = rt;
    (*ncol)++;
    return RVFIT_OK;
}

/* RVTAB identifiers get fixed types whatever the production used, and
 * coordinates a unit even where the file has none. */
static void desi_rvtab_fix(rvfit_column *c, int *readtype)
{
    if (strcmp(c->name, "TARGET_RA") == 0 ||
        strcmp(c->name, "TARGET_DEC") == 0) {
        c->type = RVFIT_COL_F64;
        *readtype = TDOUBLE;
        if (!c->unit[0])
            snprintf(c->unit, sizeof c->unit, "deg");
    } else if (strcmp(c->name, "FIBER") == 0) {
        c->type = RVFIT_COL_I32;
        *readtype = TINT;
    } else if (c->type != RVFIT_COL_STR) { /* TARGETID, REF_ID */
        c->type = RVFIT_COL_I64;
        *readtype = TLONGLONG;
    }
}

static int desi_table_alloc(desi_table *t, int n)
{
    int m = n > 0 ? n : 1;
    t->cols = calloc((size_t)m, sizeof *t->cols);
    t->src_col = calloc((size_t)m, sizeof *t->src_col);
    t->fits_type = calloc((size_t)m, sizeof *t->fits_type);
    return t->cols && t->src_col && t->fits_type;
}

/* All columns of HDU `hdu` (or the identifier subset for RVTAB). */
static int desi_table_build(desi_handle *h, int ti, int hdu,
                            const char *extname, const char *src,
                            rvfit_err *err)
{
    static const char *const ids[] = {"TARGETID", "TARGET_RA", "TARGET_DEC",
                                      "FIBER", "REF_ID", "REF_CAT"};
    desi_table *t = &h->table[ti];
    int st = 0, type = 0, nc = 0, ncol = 0, rc = RVFIT_OK;
    fits_movabs_hdu(h->fp, hdu, &type, &st);
    fits_get_num_cols(h->fp, &nc, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, src, "reading columns");
    if (!desi_table_alloc(t, nc))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: HDU %s", h->path,
                             src);
    t->hdu = hdu;
    if (ti == DESI_T_RVTAB) {
        for (size_t k = 0; k < sizeof ids / sizeof ids[0] && !rc; k++) {
            int cn = rvfit_fits_colnum(h->fp, ids[k]);
            int before = ncol;
            if (cn)
                rc = desi_add_col(h, t, &ncol, cn, src, err);
            if (ncol > before)
                desi_rvtab_fix(&t->cols[before], &t->fits_type[before]);
        }
    } else {
        for (int cn = 1; cn <= nc && !rc; cn++)
            rc = desi_add_col(h, t, &ncol, cn, src, err);
    }
    rvfit_table_schema *s = &h->schema[ti];
    snprintf(s->extname, sizeof s->extname, "%s", extname);
    s->ncol = ncol;
    s->cols = t->cols;
    return rc;
}

int desi_tables_init(desi_handle *h, rvfit_err *err)
{
    int rc = desi_table_build(h, DESI_T_RVTAB, h->hdu_fibermap, "RVTAB",
                              "FIBERMAP", err);
    if (!rc)
        rc = desi_table_build(h, DESI_T_FIBERMAP, h->hdu_fibermap,
                              "FIBERMAP", "FIBERMAP", err);
    if (!rc && h->hdu_scores)
        rc = desi_table_build(h, DESI_T_SCORES, h->hdu_scores, "SCORES",
                              "SCORES", err);
    h->info.ntable = h->hdu_scores ? 3 : 2;
    return rc;
}

void desi_tables_free(desi_handle *h)
{
    for (int t = 0; t < DESI_NTABLE; t++) {
        free(h->table[t].cols);
        free(h->table[t].src_col);
        free(h->table[t].fits_type);
    }
}

/* Strings: CFITSIO returns blank-trimmed C strings; store NUL padded. */
static int desi_read_str(desi_handle *h, int cn, size_t row0, size_t n,
                         long width, char *dst, int *st)
{
    char *buf = calloc(n, (size_t)width + 1);
    char **ptr = malloc(n * sizeof *ptr);
    if (!buf || !ptr) {
        free(buf);
        free(ptr);
        return RVFIT_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        ptr[i] = buf + i * ((size_t)width + 1);
    fits_read_col(h->fp, TSTRING, cn, (LONGLONG)row0 + 1, 1, (LONGLONG)n,
                  NULL, ptr, NULL, st);
    for (size_t i = 0; i < n && *st == 0; i++)
        strncpy(dst + i * (size_t)width, ptr[i], (size_t)width);
    free(buf);
    free(ptr);
    return RVFIT_OK;
}

/* Column k of table t for file rows [row0, row0+n) into dst. */
static int desi_read_cells(desi_handle *h, const desi_table *t, int k,
                           size_t row0, size_t n, void *dst, rvfit_err *err)
{
    const rvfit_column *c = &t->cols[k];
    int st = 0;
    if (c->type == RVFIT_COL_STR) {
        if (desi_read_str(h, t->src_col[k], row0, n, c->repeat, dst, &st))
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: column %s",
                                 h->path, c->name);
    } else {
        fits_read_col(h->fp, t->fits_type[k], t->src_col[k],
                      (LONGLONG)row0 + 1, 1, (LONGLONG)(n * (size_t)c->repeat),
                      NULL, dst, NULL, &st);
    }
    if (st) {
        char what[FLEN_VALUE + 32], hdu[FLEN_VALUE];
        desi_hdu_name(h->fp, t->hdu, hdu, sizeof hdu);
        snprintf(what, sizeof what, "reading column %s", c->name);
        return rvfit_fits_error(err, st, h->path, hdu, what);
    }
    return RVFIT_OK;
}

int desi_read_rows(void *handle, int t, size_t first, size_t count,
                   rvfit_table_rows *rows, rvfit_err *err)
{
    desi_handle *h = handle;
    if (t < 0 || t >= h->info.ntable || first > h->nsel ||
        count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: rows [%zu, %zu) of table %d (%zu selected, "
                             "%d tables)",
                             h->path, first, first + count, t, h->nsel,
                             h->info.ntable);
    const desi_table *T = &h->table[t];
    const rvfit_table_schema *S = &h->schema[t];
    int st = 0, type = 0, rc = RVFIT_OK;
    if (fits_movabs_hdu(h->fp, T->hdu, &type, &st))
        return rvfit_fits_error(err, st, h->path, S->extname, "moving to HDU");
    size_t i = 0;
    while (i < count && !rc) {
        size_t n = 1, r0 = h->rows[first + i];
        while (i + n < count && h->rows[first + i + n] == r0 + n)
            n++;
        for (int k = 0; k < S->ncol && !rc; k++) {
            size_t esz = rvfit_col_size(S->cols[k].type) *
                         (size_t)S->cols[k].repeat;
            rc = desi_read_cells(h, T, k, r0, n,
                                 (char *)rows->data[k] + i * esz, err);
        }
        i += n;
    }
    if (!rc)
        rows->nrow = count;
    return rc;
}
