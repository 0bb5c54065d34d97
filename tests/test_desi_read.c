/* test_desi_read.c — the DESI plugin on the two real coadds (tiles and
 * healpix layouts): descriptor, arms, grids, real resolution values,
 * pass-through tables, S/N from SCORES, selection and template arms.
 * Truths were read independently from the files with plain CFITSIO. */
#include <dlfcn.h>
#include <string.h>

#include "rvfit/plugin.h"
#include "testutil.h"

static const rvfit_instrument_ops *load(void)
{
    return tu_plugin_ops("rvfit_instrument_desi.so");
}

typedef struct truth {
    const char *file;
    int64_t targetid;
    double ra;
    int fibermap_cols, rvtab_cols;
    double snr[3];   /* SCORES MEDIAN_COADD_SNR_B/R/Z */
    float res[11];   /* B arm pixel 1375, k = 0..10   */
} truth;

static const truth files[2] = {
    {"coadd-4-80613-thru20210324.fits", 39633345008634465LL, 105.48977452,
     81, 6, {3.944637, 6.981490, 6.892539},
     {-.0014f, .0029f, -.0005f, .0388f, .2410f, .4419f, .2400f, .0381f,
      -.0005f, .0028f, -.0014f}},
    {"coadd-special-dark-27247.fits", 39089837499744649LL, 149.46540425, 71,
     5, {0.689162, 0.833038, 0.784156},
     {-.0015f, .0034f, -.0021f, .0329f, .2356f, .4662f, .2350f, .0326f,
      -.0021f, .0034f, -.0016f}},
};

static void check_info(const rvfit_file_info *I, const truth *t)
{
    static const char *names[3] = {"B", "R", "Z"};
    static const size_t npix[3] = {2751, 2326, 2881};
    CHECK(I->narm == 3);
    for (int a = 0; a < 3 && a < I->narm; a++) {
        CHECK(!strcmp(I->arm[a].name, names[a]));
        CHECK(I->arm[a].npix == npix[a]);
        CHECK(I->arm[a].ndiag == 11);
        CHECK(I->arm[a].res_kind == RVFIT_RES_BAND);
        CHECK(I->arm[a].wave_per_spec == 0);
    }
    CHECK(I->ntotal == 1 && I->nselect == 1);
    CHECK(I->ntable == 3);
    CHECK(!strcmp(I->table[0].extname, "RVTAB"));
    CHECK(I->table[0].ncol == t->rvtab_cols);
    CHECK(!strcmp(I->table[1].extname, "FIBERMAP"));
    CHECK_MSG(I->table[1].ncol == t->fibermap_cols, "%d columns",
              I->table[1].ncol);
    CHECK(!strcmp(I->table[2].extname, "SCORES"));
    CHECK(I->table[2].ncol == 42);
    CHECK(tu_find_col(&I->table[2], "MEDIAN_COADD_SNR_R") >= 0);
    CHECK(tu_find_col(&I->table[0], "FIBER") == (t->rvtab_cols == 6 ? 3 : -1));
    int ra = tu_find_col(&I->table[0], "TARGET_RA");
    CHECK(ra == 1 && I->table[0].cols[ra].type == RVFIT_COL_F64 &&
          !strcmp(I->table[0].cols[ra].unit, "deg"));
    int ob = tu_find_col(&I->table[1], "OBJTYPE");
    CHECK(ob >= 0 && I->table[1].cols[ob].type == RVFIT_COL_STR &&
          I->table[1].cols[ob].repeat == 3);
}

static void check_batch(const rvfit_batch *b, const truth *t)
{
    static const double w0[3] = {3600.0, 5760.0, 7520.0};
    static const double w1[3] = {5800.0, 7620.0, 9824.0};
    CHECK(b->nspec == 1 && b->index[0] == 0 && b->flags[0] == 0);
    for (int a = 0; a < 3; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        CHECK_NEAR(A->wave[0], w0[a], 1e-6);
        CHECK_NEAR(A->wave[A->npix - 1], w1[a], 1e-6);
        CHECK_NEAR(A->wave[1] - A->wave[0], 0.8, 1e-9);
        size_t good = 0, finite = 0;
        for (size_t i = 0; i < A->npix; i++) {
            good += A->ivar[i] > 0.0f;
            finite += isfinite(A->flux[i]) && isfinite(A->ivar[i]);
        }
        /* neither file has masked or zero-ivar pixels */
        CHECK(good == A->npix && finite == A->npix);
        CHECK_NEAR(b->snr[a], t->snr[a], 1e-5);
        double lo = 1e9, hi = -1e9;
        for (size_t j = 20; j + 20 < A->npix; j++) {
            double s = 0;
            for (int k = 0; k < 11; k++)
                s += A->res[(size_t)k * A->npix + j];
            lo = s < lo ? s : lo;
            hi = s > hi ? s : hi;
        }
        CHECK_MSG(lo > 0.7 && hi < 1.3, "column sums %g..%g", lo, hi);
    }
    const rvfit_arm_batch *B = &b->arm[0];
    for (int k = 0; k < 11; k++)
        CHECK_NEAR(B->res[(size_t)k * B->npix + 1375], t->res[k], 6e-5);
}

static void check_rows(const rvfit_instrument_ops *ops, void *h,
                       const rvfit_file_info *I, const truth *t)
{
    rvfit_err err = {{0}};
    rvfit_table_rows r;
    CHECK(rvfit_rows_alloc(&r, &I->table[0], 1, &err) == RVFIT_OK);
    CHECK(ops->read_rows(h, 0, 0, 1, &r, &err) == RVFIT_OK);
    CHECK(((int64_t *)r.data[0])[0] == t->targetid);
    CHECK_NEAR(((double *)r.data[1])[0], t->ra, 1e-8);
    if (t->rvtab_cols == 6)
        CHECK(((int32_t *)r.data[3])[0] == 2233);
    rvfit_rows_free(&r, &I->table[0]);
    CHECK(rvfit_rows_alloc(&r, &I->table[1], 1, &err) == RVFIT_OK);
    CHECK(ops->read_rows(h, 1, 0, 1, &r, &err) == RVFIT_OK);
    int ob = tu_find_col(&I->table[1], "OBJTYPE");
    CHECK(ob >= 0 && !memcmp(r.data[ob], "TGT", 3));
    int tid = tu_find_col(&I->table[1], "TARGETID");
    CHECK(tid == 0 && ((int64_t *)r.data[0])[0] == t->targetid);
    rvfit_rows_free(&r, &I->table[1]);
    CHECK(rvfit_rows_alloc(&r, &I->table[2], 1, &err) == RVFIT_OK);
    CHECK(ops->read_rows(h, 2, 0, 1, &r, &err) == RVFIT_OK);
    int sn = tu_find_col(&I->table[2], "MEDIAN_COADD_SNR_B");
    CHECK(sn >= 0 && fabs(((float *)r.data[sn])[0] - t->snr[0]) < 1e-5);
    rvfit_rows_free(&r, &I->table[2]);
    CHECK(ops->read_rows(h, 3, 0, 1, &r, &err) != RVFIT_OK);
}

static void check_file(const rvfit_instrument_ops *ops, const truth *t)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err = {{0}};
    char path[4096];
    snprintf(path, sizeof path, "%s/desi/%s", tu_shared_data(),
             t->file);
    rvfit_select sel = {0};
    void *h = NULL;
    int rc = ops->open(&host, NULL, 0, path, &sel, &h, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s", err.msg);
    if (rc)
        return;
    rvfit_file_info I;
    ops->info(h, &I);
    check_info(&I, t);
    rvfit_batch b;
    CHECK(rvfit_batch_alloc(&b, I.narm, I.arm, 2, &err) == RVFIT_OK);
    rc = ops->read(h, 0, 1, &b, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s", err.msg);
    if (!rc)
        check_batch(&b, t);
    CHECK(ops->read(h, 0, 2, &b, &err) == RVFIT_ERR_INVALID);
    check_rows(ops, h, &I, t);
    rvfit_batch_free(&b);
    ops->close(h);
}

/* Number selected with the given selection and options. */
static long nsel(const rvfit_instrument_ops *ops, const char *file,
                 const rvfit_select *sel, const rvfit_kv *kv, int nkv)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err = {{0}};
    char path[4096];
    snprintf(path, sizeof path, "%s/desi/%s", tu_shared_data(),
             file);
    void *h = NULL;
    if (ops->open(&host, kv, nkv, path, sel, &h, &err) != RVFIT_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    rvfit_file_info I;
    ops->info(h, &I);
    ops->close(h);
    return (long)I.nselect;
}

static void check_selection(const rvfit_instrument_ops *ops)
{
    const char *f0 = files[0].file, *f1 = files[1].file;
    rvfit_select sel = {0};
    sel.minsn = 5.0; /* max S/N: 6.98 (tiles) and 0.83 (healpix) */
    CHECK(nsel(ops, f0, &sel, NULL, 0) == 1);
    CHECK(nsel(ops, f1, &sel, NULL, 0) == 0);
    sel.minsn = 0.0;
    int64_t ids[2] = {5, files[0].targetid};
    sel.ntargetid = 2;
    sel.targetid = ids;
    CHECK(nsel(ops, f0, &sel, NULL, 0) == 1);
    CHECK(nsel(ops, f1, &sel, NULL, 0) == 0);
    sel.ntargetid = 0;
    rvfit_kv sky = {"objtypes", "SKY, BAD", "test", 1};
    CHECK(nsel(ops, f0, &sel, &sky, 1) == 0);
    rvfit_kv tgt = {"objtypes", "sky,TGT", "test", 1};
    CHECK(nsel(ops, f0, &sel, &tgt, 1) == 1);
    rvfit_kv bad = {"fiberstatus_mask", "x1", "cfg.ini", 7};
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err = {{0}};
    void *h = NULL;
    CHECK(ops->open(&host, &bad, 1, "/nonexistent", &sel, &h, &err) ==
          RVFIT_ERR_CONFIG);
    CHECK(tu_contains(err.msg, "cfg.ini:7"));
}

static void check_template_arms(const rvfit_instrument_ops *ops)
{
    rvfit_template_arm arms[RVFIT_MAX_ARMS];
    int n = 0;
    rvfit_err err = {{0}};
    CHECK(ops->template_arms(NULL, 0, &n, arms, &err) == RVFIT_OK);
    CHECK(n == 3);
    CHECK(!strcmp(arms[0].name, "B") && arms[0].lam_min == 3500.0 &&
          arms[0].lam_max == 5900.0 && arms[0].step == 0.4);
    CHECK(!strcmp(arms[1].name, "R") && arms[1].lam_min == 5660.0 &&
          arms[1].lam_max == 7720.0);
    CHECK(!strcmp(arms[2].name, "Z") && arms[2].lam_min == 7420.0 &&
          arms[2].lam_max == 9924.0);
}

int main(void)
{
    const rvfit_instrument_ops *ops = load();
    for (int f = 0; f < 2; f++)
        check_file(ops, &files[f]);
    check_selection(ops);
    check_template_arms(ops);
    return tu_finish("test_desi_read");
}
