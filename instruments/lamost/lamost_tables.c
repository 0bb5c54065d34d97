/* lamost_tables.c — the pass-through tables: RVTAB ids (TARGETID = OBSID
 * or derived, TARGET_RA/DEC) and LAMOST, the pipeline's own results from
 * the primary header (CLASS, SUBCLASS, Z, Z_ERR, SNRU-SNRZ, HELIO_RV),
 * which is what a user compares rvfit with, then the keywords that
 * identify the spectrum (OBSID as the file has it, TID_DERIVED, LMJD,
 * PLANID, SPID, FIBERID, DESIG: what a derived TARGETID came from, and
 * what matches the survey's catalogues).  Values were read at open;
 * read_rows touches no file.  Absent keywords give NaN, "", -1 (LMJD,
 * SPID, FIBERID) or 0 (OBSID).  An MRS file's rows (one per coadd or
 * exposure, the header columns repeated) add LMJM (-1 for the coadd),
 * EXPTIME and SNR_B/SNR_R from the spectrum's tables and NEXP_B/NEXP_R
 * from the primary header (-1 when absent). */
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
    l += LAMOST_NCOL;
    rvfit_column_set(&l[0], "LMJM", RVFIT_COL_I64, 1, "min",
                     "local Julian minute of the exposure; -1: coadd");
    rvfit_column_set(&l[1], "EXPTIME", RVFIT_COL_F32, 1, "s",
                     "exposure time; NaN: coadd");
    rvfit_column_set(&l[2], "SNR_B", RVFIT_COL_F32, 1, "",
                     "SNR of the spectrum's B table");
    rvfit_column_set(&l[3], "SNR_R", RVFIT_COL_F32, 1, "",
                     "SNR of the spectrum's R table");
    rvfit_column_set(&l[4], "NEXP_B", RVFIT_COL_I32, 1, "",
                     "valid B exposures of the file");
    rvfit_column_set(&l[5], "NEXP_R", RVFIT_COL_I32, 1, "",
                     "valid R exposures of the file");
    snprintf(h->schema[0].extname, RVFIT_NAME_LEN, "RVTAB");
    h->schema[0].ncol = LAMOST_NCOL_ID;
    h->schema[0].cols = h->rvtab_cols;
    snprintf(h->schema[1].extname, RVFIT_NAME_LEN, "LAMOST");
    h->schema[1].ncol =
        LAMOST_NCOL + (h->layout == LAMOST_MRS ? LAMOST_NCOL_MRS : 0);
    h->schema[1].cols = h->lamost_cols;
}

/* String s into row i of a column of width w. */
static void lamost_str(void *col, size_t i, const char *s, size_t w)
{
    char *dst = (char *)col + i * w;
    memset(dst, 0, w);
    memcpy(dst, s, strnlen(s, w));
}

static void lamost_id_rows(const lamost_meta *m, void **d, size_t i)
{
    ((int64_t *)d[10])[i] = m->obsid;
    ((uint8_t *)d[11])[i] = (uint8_t)(m->derived != 0);
    ((int32_t *)d[12])[i] = m->lmjd;
    lamost_str(d[13], i, m->planid, LAMOST_PLANID_W);
    ((int32_t *)d[14])[i] = m->spid;
    ((int32_t *)d[15])[i] = m->fiberid;
    lamost_str(d[16], i, m->desig, LAMOST_DESIG_MAX);
}

/* Row i of table t from the header values. */
static void lamost_rows(const lamost_meta *m, int t, void **d, size_t i)
{
    if (t == LAMOST_T_RVTAB) {
        ((int64_t *)d[0])[i] = m->targetid;
        ((double *)d[1])[i] = m->ra;
        ((double *)d[2])[i] = m->dec;
        return;
    }
    lamost_str(d[0], i, m->cls, LAMOST_STR_W);
    lamost_str(d[1], i, m->subcls, LAMOST_STR_W);
    ((double *)d[2])[i] = m->z;
    ((double *)d[3])[i] = m->z_err;
    for (int k = 0; k < 5; k++)
        ((float *)d[4 + k])[i] = (float)m->snr[k];
    ((double *)d[9])[i] = m->helio_rv;
    lamost_id_rows(m, d, i);
}

/* The MRS columns of row i: spectrum p of file m. */
static void lamost_mrs_rows(const lamost_mrs *m, const lamost_mrs_spec *p,
                            void **d, size_t i)
{
    d += LAMOST_NCOL;
    ((int64_t *)d[0])[i] = p->lmjm;
    ((float *)d[1])[i] = (float)p->exptime;
    ((float *)d[2])[i] = (float)p->snr[0];
    ((float *)d[3])[i] = (float)p->snr[1];
    ((int32_t *)d[4])[i] = m->nexp[0];
    ((int32_t *)d[5])[i] = m->nexp[1];
}

int lamost_read_rows(void *handle, int t, size_t first, size_t count,
                     rvfit_table_rows *rows, rvfit_err *err)
{
    lamost_handle *h = handle;
    int rc = rvfit_rows_check(h->path, t, LAMOST_NTABLE, first, count,
                              h->nsel, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < count; i++) {
        lamost_rows(&h->meta, t, rows->data, i);
        if (h->layout == LAMOST_MRS && t == LAMOST_T_LAMOST)
            lamost_mrs_rows(&h->mrs, &h->mrs.spec[h->mrs.sel[first + i]],
                            rows->data, i);
    }
    rows->nrow = count;
    return RVFIT_OK;
}
