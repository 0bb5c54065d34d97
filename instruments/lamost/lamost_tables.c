/* lamost_tables.c — the pass-through tables: RVTAB ids (TARGETID = OBSID,
 * TARGET_RA/DEC) and LAMOST, the pipeline's own results from the primary
 * header (CLASS, SUBCLASS, Z, Z_ERR, SNRU-SNRZ, HELIO_RV), which is what a
 * user compares rvfit with.  Values were read at open; read_rows touches
 * no file.  Absent keywords give NaN or "". */
#include <math.h>
#include <string.h>

#include "lamost_internal.h"

enum { LAMOST_T_RVTAB = 0, LAMOST_T_LAMOST = 1 };
#define LAMOST_STR_W 16 /* CLASS, SUBCLASS output width */

static void lamost_col(rvfit_column *c, const char *name, int type,
                       long rep, const char *unit, const char *comment)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->type = type;
    c->repeat = rep;
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    snprintf(c->comment, sizeof c->comment, "%s", comment);
}

void lamost_tables_init(lamost_handle *h)
{
    static const char *const snr[5] = {"SNRU", "SNRG", "SNRR", "SNRI",
                                       "SNRZ"};
    rvfit_column *r = h->rvtab_cols, *l = h->lamost_cols;
    lamost_col(&r[0], "TARGETID", RVFIT_COL_I64, 1, "", "LAMOST OBSID");
    lamost_col(&r[1], "TARGET_RA", RVFIT_COL_F64, 1, "deg", "RA");
    lamost_col(&r[2], "TARGET_DEC", RVFIT_COL_F64, 1, "deg", "DEC");
    lamost_col(&l[0], "CLASS", RVFIT_COL_STR, LAMOST_STR_W, "", "");
    lamost_col(&l[1], "SUBCLASS", RVFIT_COL_STR, LAMOST_STR_W, "", "");
    lamost_col(&l[2], "Z", RVFIT_COL_F64, 1, "", "LAMOST pipeline");
    lamost_col(&l[3], "Z_ERR", RVFIT_COL_F64, 1, "", "");
    for (int i = 0; i < 5; i++)
        lamost_col(&l[4 + i], snr[i], RVFIT_COL_F32, 1, "", "");
    lamost_col(&l[9], "HELIO_RV", RVFIT_COL_F64, 1, "km/s",
               "heliocentric correction of the file");
    snprintf(h->schema[0].extname, RVFIT_NAME_LEN, "RVTAB");
    h->schema[0].ncol = LAMOST_NCOL_ID;
    h->schema[0].cols = h->rvtab_cols;
    snprintf(h->schema[1].extname, RVFIT_NAME_LEN, "LAMOST");
    h->schema[1].ncol = LAMOST_NCOL;
    h->schema[1].cols = h->lamost_cols;
}

static void lamost_str(void *col, const char *s)
{
    char *dst = col;
    memset(dst, 0, LAMOST_STR_W);
    memcpy(dst, s, strnlen(s, LAMOST_STR_W));
}

static void lamost_rows(const lamost_meta *m, int t, void **d)
{
    if (t == LAMOST_T_RVTAB) {
        ((int64_t *)d[0])[0] = m->obsid;
        ((double *)d[1])[0] = m->ra;
        ((double *)d[2])[0] = m->dec;
        return;
    }
    lamost_str(d[0], m->cls);
    lamost_str(d[1], m->subcls);
    ((double *)d[2])[0] = m->z;
    ((double *)d[3])[0] = m->z_err;
    for (int i = 0; i < 5; i++)
        ((float *)d[4 + i])[0] = (float)m->snr[i];
    ((double *)d[9])[0] = m->helio_rv;
}

int lamost_read_rows(void *handle, int t, size_t first, size_t count,
                     rvfit_table_rows *rows, rvfit_err *err)
{
    lamost_handle *h = handle;
    if (t < 0 || t >= LAMOST_NTABLE || first > h->nsel ||
        count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: rows [%zu, %zu) of table %d (%zu selected,"
                             " %d tables)", h->path, first, first + count, t,
                             h->nsel, LAMOST_NTABLE);
    if (count)
        lamost_rows(&h->meta, t, rows->data);
    rows->nrow = count;
    return RVFIT_OK;
}
