/* lamost_tables.c — the pass-through tables: RVTAB ids (TARGETID = OBSID
 * or derived, TARGET_RA/DEC) and LAMOST, the pipeline's own results from
 * the primary header (CLASS, SUBCLASS, Z, Z_ERR, SNRU-SNRZ, HELIO_RV),
 * which is what a user compares rvfit with, then the keywords that
 * identify the spectrum (OBSID as the file has it, TID_DERIVED, LMJD,
 * PLANID, SPID, FIBERID, DESIG: what a derived TARGETID came from, and
 * what matches the survey's catalogues).  Values were read at open;
 * read_rows touches no file.  Absent keywords give NaN, "", -1 (LMJD,
 * SPID, FIBERID) or 0 (OBSID). */
#include <math.h>
#include <string.h>

#include "lamost_internal.h"

enum { LAMOST_T_RVTAB = 0, LAMOST_T_LAMOST = 1 };
#define LAMOST_STR_W 16    /* CLASS, SUBCLASS output width */
#define LAMOST_PLANID_W 24 /* PLANID output width          */

void lamost_tables_init(lamost_handle *h)
{
    static const char *const snr[5] = {"SNRU", "SNRG", "SNRR", "SNRI",
                                       "SNRZ"};
    rvfit_column *r = h->rvtab_cols, *l = h->lamost_cols;
    rvfit_column_set(&r[0], "TARGETID", RVFIT_COL_I64, 1, "",
                     "LAMOST OBSID, or derived if none (docs/lamost.md)");
    rvfit_column_set(&r[1], "TARGET_RA", RVFIT_COL_F64, 1, "deg", "RA");
    rvfit_column_set(&r[2], "TARGET_DEC", RVFIT_COL_F64, 1, "deg", "DEC");
    rvfit_column_set(&l[0], "CLASS", RVFIT_COL_STR, LAMOST_STR_W, "", "");
    rvfit_column_set(&l[1], "SUBCLASS", RVFIT_COL_STR, LAMOST_STR_W, "",
                     "");
    rvfit_column_set(&l[2], "Z", RVFIT_COL_F64, 1, "", "LAMOST pipeline");
    rvfit_column_set(&l[3], "Z_ERR", RVFIT_COL_F64, 1, "", "");
    for (int i = 0; i < 5; i++)
        rvfit_column_set(&l[4 + i], snr[i], RVFIT_COL_F32, 1, "", "");
    rvfit_column_set(&l[9], "HELIO_RV", RVFIT_COL_F64, 1, "km/s",
                     "heliocentric correction of the file");
    rvfit_column_set(&l[10], "OBSID", RVFIT_COL_I64, 1, "",
                     "OBSID keyword; 0: absent or not an integer");
    rvfit_column_set(&l[11], "TID_DERIVED", RVFIT_COL_U8, 1, "",
                     "1: TARGETID derived, OBSID not usable");
    rvfit_column_set(&l[12], "LMJD", RVFIT_COL_I32, 1, "d", "local MJD");
    rvfit_column_set(&l[13], "PLANID", RVFIT_COL_STR, LAMOST_PLANID_W, "",
                     "");
    rvfit_column_set(&l[14], "SPID", RVFIT_COL_I32, 1, "", "spectrograph");
    rvfit_column_set(&l[15], "FIBERID", RVFIT_COL_I32, 1, "", "");
    rvfit_column_set(&l[16], "DESIG", RVFIT_COL_STR, LAMOST_DESIG_MAX, "",
                     "designation");
    snprintf(h->schema[0].extname, RVFIT_NAME_LEN, "RVTAB");
    h->schema[0].ncol = LAMOST_NCOL_ID;
    h->schema[0].cols = h->rvtab_cols;
    snprintf(h->schema[1].extname, RVFIT_NAME_LEN, "LAMOST");
    h->schema[1].ncol = LAMOST_NCOL;
    h->schema[1].cols = h->lamost_cols;
}

static void lamost_str(void *col, const char *s, size_t w)
{
    char *dst = col;
    memset(dst, 0, w);
    memcpy(dst, s, strnlen(s, w));
}

static void lamost_id_rows(const lamost_meta *m, void **d)
{
    ((int64_t *)d[10])[0] = m->obsid;
    ((uint8_t *)d[11])[0] = (uint8_t)(m->derived != 0);
    ((int32_t *)d[12])[0] = m->lmjd;
    lamost_str(d[13], m->planid, LAMOST_PLANID_W);
    ((int32_t *)d[14])[0] = m->spid;
    ((int32_t *)d[15])[0] = m->fiberid;
    lamost_str(d[16], m->desig, LAMOST_DESIG_MAX);
}

static void lamost_rows(const lamost_meta *m, int t, void **d)
{
    if (t == LAMOST_T_RVTAB) {
        ((int64_t *)d[0])[0] = m->targetid;
        ((double *)d[1])[0] = m->ra;
        ((double *)d[2])[0] = m->dec;
        return;
    }
    lamost_str(d[0], m->cls, LAMOST_STR_W);
    lamost_str(d[1], m->subcls, LAMOST_STR_W);
    ((double *)d[2])[0] = m->z;
    ((double *)d[3])[0] = m->z_err;
    for (int i = 0; i < 5; i++)
        ((float *)d[4 + i])[0] = (float)m->snr[i];
    ((double *)d[9])[0] = m->helio_rv;
    lamost_id_rows(m, d);
}

int lamost_read_rows(void *handle, int t, size_t first, size_t count,
                     rvfit_table_rows *rows, rvfit_err *err)
{
    lamost_handle *h = handle;
    int rc = rvfit_rows_check(h->path, t, LAMOST_NTABLE, first, count,
                              h->nsel, err);
    if (rc)
        return rc;
    if (count)
        lamost_rows(&h->meta, t, rows->data);
    rows->nrow = count;
    return RVFIT_OK;
}
