/* test_lamost_early.c — LAMOST LRS files of early releases, whose headers
 * real DR2 and DR3 files have: a DR3 file with OBSID = -28762; a DR2 file
 * with no OBSID, FIBERID = '126' (a string) and its [5][npix] image in
 * float64 (BITPIX = -64), without DATA_V.  The test makes such files from
 * DR1-DR7 mock spectra by rewriting them with CFITSIO: the mock's header
 * cards minus OBSID, DATA_V, FIBERID and DESIG, then the early-release
 * cards.
 *
 *  - Read: every variant reads the pixels of its mock bit for bit (a
 *    float64 image too); TARGETID is the OBSID when it is a positive
 *    integer, else the derived id of docs/lamost.md, whose expected
 *    values are literals computed outside rvfit with the Python lines
 *    given there; exactly one warning names the file, the reason and the
 *    id; the LAMOST table keeps OBSID, TID_DERIVED, LMJD, PLANID, SPID,
 *    FIBERID and DESIG.  A string FIBERID or a float64 image alone gives
 *    no warning.  --targetid selects by the derived id.
 *  - Refused: no usable OBSID and a key of the derivation missing or out
 *    of range (the error names it); a wavelength of 1e42 A in a float64
 *    row (found by the fuzz target: its float32 LSF overflowed).
 *  - Fitted: the files in one `rvfit fit` command (exit 0): the warnings
 *    in its log, the TARGETIDs in RVTAB (read as int64), TID_DERIVED, and
 *    every |VRAD - true| < 5 VRAD_ERR.
 * The library covers 4800-6800 A (lam_min, lam_max) to keep it short. */
#include <fitsio.h>
#include <string.h>
#include <sys/stat.h>

#include "rvfit/plugin.h"
#include "testutil.h"

#define NSTAR 5
#define TID0 1000000LL /* TARGETIDs of `rvfit mock spectra` */

/* One rewritten file: the cards that differ from its mock. */
typedef struct variant {
    const char *name;
    int f64;             /* image as float64                         */
    const char *obsid;   /* OBSID card value; NULL: none; "": mock's */
    const char *fiberid; /* FIBERID card value                       */
    int lmjd, spid;
    const char *planid, *desig;
    long long tid;    /* expected TARGETID; 0: the mock's OBSID        */
    const char *warn; /* the warning's reason; NULL: no warning        */
} variant;

/* Derived ids: -(2^62 + LMJD 2^45 + SPID 2^40 + FIBERID 2^32 +
 * FNV-1a-32(PLANID)), computed with the Python of docs/lamost.md. */
static const variant V[NSTAR] = {
    {"dr3", 0, "-28762", "126", 56650, 7, "HD041619N453442B01",
     "LAMOST J041615.64+451723.3", -6604888938905168493LL,
     "OBSID -28762 is not positive"},
    {"dr2", 1, NULL, "'126'", 56284, 3, "GAC060N26B1",
     "LAMOST J062345.12+261234.5", -6592007059420936763LL,
     "no OBSID keyword"},
    {"f64", 1, "", "17", 57001, 11, "F5_57001", "", 0, NULL},
    {"fibstr", 0, "", "'  42 '", 57002, 12, "F5_57002", "", 0, NULL},
    {"obstxt", 0, "'unknown'", "250", 56284, 16, "GAC060N26B1", "",
     -6592021885648042555LL, "OBSID is not an integer"},
};

static char dir[2048];
static const rvfit_instrument_ops *ops;

/* The mock file of star k and the rewritten one. */
static void mock_path(char *out, size_t n, int k)
{
    snprintf(out, n, "%s/stars/spec-%lld.fits", dir, TID0 + k);
}

static void early_path(char *out, size_t n, int k)
{
    snprintf(out, n, "%s/early/spec-%s.fits", dir, V[k].name);
}

static int keep_card(const char *card)
{
    /* DESIG too: the mock writes one from the position, but each variant
     * says whether its file has a DESIG and which. */
    static const char *const drop[] = {"SIMPLE", "BITPIX", "NAXIS", "EXTEND",
                                       "OBSID", "DATA_V", "FIBERID", "DESIG"};
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) {
        size_t n = strlen(drop[i]);
        if (!strncmp(card, drop[i], n) && (card[n] == ' ' ||
                                           (card[n] >= '0' && card[n] <= '9')))
            return 0;
    }
    return 1;
}

static void card(fitsfile *fp, const char *key, const char *value, int *st)
{
    char c[160];
    snprintf(c, sizeof c, "%-8s= %.60s", key, value);
    fits_write_record(fp, c, st);
}

static void early_cards(fitsfile *fp, const variant *v, int k, int *st)
{
    char buf[80];
    if (v->obsid) {
        snprintf(buf, sizeof buf, "%lld", TID0 + k);
        card(fp, "OBSID", v->obsid[0] ? v->obsid : buf, st);
    }
    card(fp, "FIBERID", v->fiberid, st);
    snprintf(buf, sizeof buf, "%d", v->lmjd);
    card(fp, "LMJD", buf, st);
    snprintf(buf, sizeof buf, "'%s'", v->planid);
    card(fp, "PLANID", buf, st);
    snprintf(buf, sizeof buf, "%d", v->spid);
    card(fp, "SPID", buf, st);
    if (v->desig[0]) {
        snprintf(buf, sizeof buf, "'%s'", v->desig);
        card(fp, "DESIG", buf, st);
    }
}

/* Star k's mock (DR1-DR7 layout) rewritten as variant k. */
static int rewrite(int k)
{
    char in[4400], out[4400], c[81];
    mock_path(in, sizeof in, k);
    early_path(out, sizeof out, k);
    fitsfile *fi = NULL, *fo = NULL;
    int st = 0, nkey = 0;
    long nax[2] = {0, 0};
    fits_open_file(&fi, in, READONLY, &st);
    fits_get_img_size(fi, 2, nax, &st);
    double *pix = malloc(5 * (size_t)nax[0] * sizeof *pix);
    fits_read_img(fi, TDOUBLE, 1, 5 * nax[0], NULL, pix, NULL, &st);
    remove(out);
    fits_create_file(&fo, out, &st);
    fits_create_img(fo, V[k].f64 ? DOUBLE_IMG : FLOAT_IMG, 2, nax, &st);
    fits_get_hdrspace(fi, &nkey, NULL, &st);
    for (int i = 1; i <= nkey && !st; i++)
        if (!fits_read_record(fi, i, c, &st) && keep_card(c))
            fits_write_record(fo, c, &st);
    early_cards(fo, &V[k], k, &st);
    fits_write_img(fo, TDOUBLE, 1, 5 * nax[0], pix, &st);
    fits_close_file(fo, &st);
    int cs = 0;
    fits_close_file(fi, &cs);
    free(pix);
    CHECK_MSG(st == 0 && nax[1] == 5, "rewriting %s: CFITSIO %d", in, st);
    return st;
}

typedef struct logbuf {
    char text[8192];
    int nwarn;
} logbuf;

static void cap_log(void *ctx, int level, const char *who, const char *msg)
{
    logbuf *b = ctx;
    size_t n = strlen(b->text);
    b->nwarn += level == RVFIT_LOG_WARN;
    snprintf(b->text + n, sizeof b->text - n, "%s: %s\n", who, msg);
}

static void *open_log(const char *path, const rvfit_select *sel, logbuf *b,
                      rvfit_file_info *I, rvfit_err *err)
{
    rvfit_host host = tu_host(RVFIT_LOG_DEBUG);
    host.log = cap_log;
    host.log_ctx = b;
    memset(b, 0, sizeof *b);
    void *h = NULL;
    if (ops->open(&host, NULL, 0, path, sel, &h, err))
        return NULL;
    ops->info(h, I);
    return h;
}

/* The pixels of one file through the plugin; NULL on failure. */
static rvfit_batch *pixels(const char *path, rvfit_batch *b)
{
    logbuf lb;
    rvfit_err err;
    rvfit_file_info I;
    void *h = open_log(path, NULL, &lb, &I, &err);
    CHECK_MSG(h != NULL, "%s", err.msg);
    int rc = h ? rvfit_batch_alloc(b, I.narm, I.arm, 1, &err) : -1;
    if (!rc && (rc = ops->read(h, 0, 1, b, &err)) != 0)
        rvfit_batch_free(b);
    CHECK_MSG(rc == 0, "%s: %s", path, err.msg);
    if (h)
        ops->close(h);
    return rc ? NULL : b;
}

static void check_same_pixels(int k)
{
    char a[4400], e[4400];
    mock_path(a, sizeof a, k);
    early_path(e, sizeof e, k);
    rvfit_batch ba, be;
    if (!pixels(a, &ba))
        return;
    if (pixels(e, &be)) {
        const rvfit_arm_batch *x = &ba.arm[0], *y = &be.arm[0];
        size_t n = x->npix;
        CHECK(n == y->npix && n > 3800);
        CHECK_MSG(n == y->npix &&
                      !memcmp(x->wave, y->wave, n * sizeof *x->wave) &&
                      !memcmp(x->flux, y->flux, n * sizeof *x->flux) &&
                      !memcmp(x->ivar, y->ivar, n * sizeof *x->ivar) &&
                      !memcmp(x->lsf, y->lsf, n * sizeof *x->lsf),
                  "%s: pixels differ from its mock's", V[k].name);
        rvfit_batch_free(&be);
    }
    rvfit_batch_free(&ba);
}

static long long expected_tid(int k)
{
    return V[k].tid ? V[k].tid : TID0 + k;
}

static void check_strcell(const rvfit_table_schema *s,
                          const rvfit_table_rows *r, const char *col,
                          const char *want, const char *name)
{
    int c = tu_find_col(s, col);
    long w = c >= 0 ? s->cols[c].repeat : 0;
    CHECK_MSG(c >= 0 && !strncmp((const char *)r->data[c], want, (size_t)w)
                  && (strlen(want) >= (size_t)w ||
                      ((const char *)r->data[c])[strlen(want)] == '\0'),
              "%s: column %s", name, col);
}

static void check_tables(void *h, const rvfit_file_info *I, int k)
{
    const variant *v = &V[k];
    rvfit_table_rows r;
    const rvfit_table_schema *rv = &I->table[0], *lm = &I->table[1];
    if (!tu_read_row0(ops, h, 0, rv, &r)) {
        int64_t tid = *(const int64_t *)r.data[tu_find_col(rv, "TARGETID")];
        CHECK_MSG(tid == expected_tid(k), "%s: TARGETID %lld, not %lld",
                  v->name, (long long)tid, expected_tid(k));
    }
    rvfit_rows_free(&r, rv);
    if (tu_read_row0(ops, h, 1, lm, &r))
        return;
    int co = tu_find_col(lm, "OBSID");
    long long obsid = co >= 0 ? *(const int64_t *)r.data[co] : -1;
    long long want = !v->obsid ? 0 : !v->obsid[0] ? TID0 + k
                     : v->obsid[0] == '\'' ? 0 : atoll(v->obsid);
    CHECK_MSG(obsid == want, "%s: OBSID %lld, not %lld", v->name, obsid,
              want);
    CHECK(tu_cell(lm, &r, "TID_DERIVED") == (v->tid != 0));
    CHECK(tu_cell(lm, &r, "LMJD") == v->lmjd);
    CHECK(tu_cell(lm, &r, "SPID") == v->spid);
    long fib = 0;
    sscanf(v->fiberid + (v->fiberid[0] == '\''), "%ld", &fib);
    CHECK_MSG(tu_cell(lm, &r, "FIBERID") == fib, "%s: FIBERID %g",
              v->name, tu_cell(lm, &r, "FIBERID"));
    check_strcell(lm, &r, "PLANID", v->planid, v->name);
    check_strcell(lm, &r, "DESIG", v->desig, v->name);
    rvfit_rows_free(&r, lm);
}

/* One variant through the reader: id, warning, tables, pixels. */
static void check_read(int k)
{
    char p[4400];
    early_path(p, sizeof p, k);
    logbuf lb;
    rvfit_err err;
    rvfit_file_info I;
    void *h = open_log(p, NULL, &lb, &I, &err);
    CHECK_MSG(h != NULL, "%s", err.msg);
    if (!h)
        return;
    char tid[64];
    snprintf(tid, sizeof tid, "TARGETID %lld derived", expected_tid(k));
    if (V[k].warn)
        CHECK_MSG(lb.nwarn == 1 && tu_contains(lb.text, p) &&
                      tu_contains(lb.text, V[k].warn) &&
                      tu_contains(lb.text, tid),
                  "%s: %d warnings: %s", V[k].name, lb.nwarn, lb.text);
    else
        CHECK_MSG(lb.nwarn == 0, "%s: %s", V[k].name, lb.text);
    check_tables(h, &I, k);
    ops->close(h);
    check_same_pixels(k);
    int64_t ids[1] = {expected_tid(k)};
    rvfit_select sel = {0, 1, ids};
    h = open_log(p, &sel, &lb, &I, &err);
    CHECK_MSG(h && I.nselect == 1, "%s: not selected by its TARGETID",
              V[k].name);
    if (h)
        ops->close(h);
}

/* No usable OBSID and no way to derive one: refused, naming the keys. */
static void check_refused(void)
{
    static const struct { const char *drop, *set, *setval, *msg; } c[] = {
        {"LMJD", NULL, NULL, "without LMJD (an integer 0-131071)"},
        {"PLANID", NULL, NULL, "without PLANID (a string)"},
        {NULL, "FIBERID", "256", "without FIBERID (an integer 0-255)"},
        {NULL, "SPID", "'x'", "without SPID (an integer 0-31)"},
    };
    char src[4400], p[4400];
    early_path(src, sizeof src, 0);
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        snprintf(p, sizeof p, "%s/early/refused%zu.fits", dir, i);
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, p);
        fitsfile *fp = NULL;
        int st = system(cmd) ? 1 : 0;
        fits_open_file(&fp, p, READWRITE, &st);
        fits_delete_key(fp, c[i].drop ? c[i].drop : c[i].set, &st);
        if (c[i].set)
            card(fp, c[i].set, c[i].setval, &st);
        fits_close_file(fp, &st);
        CHECK_MSG(st == 0, "making %s: %d", p, st);
        logbuf lb;
        rvfit_err err;
        rvfit_file_info I;
        void *h = open_log(p, NULL, &lb, &I, &err);
        CHECK_MSG(h == NULL && tu_contains(err.msg, p) &&
                      tu_contains(err.msg, "OBSID -28762 is not positive") &&
                      tu_contains(err.msg, c[i].msg),
                  "%s: %s", p, h ? "opened" : err.msg);
        if (h)
            ops->close(h);
    }
}

/* A float64 row can hold wavelengths no float32 row could: 1e42 A in the
 * last pixel (increasing, but its float32 LSF is infinite) is refused
 * when the pixels are read. */
static void check_huge_wave(void)
{
    char src[4400], p[4400], cmd[9000];
    early_path(src, sizeof src, 1);
    snprintf(p, sizeof p, "%s/early/hugewave.fits", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, p);
    fitsfile *fp = NULL;
    int st = system(cmd) ? 1 : 0;
    long nax[2] = {0, 0};
    double w = 1e42;
    fits_open_file(&fp, p, READWRITE, &st);
    fits_get_img_size(fp, 2, nax, &st);
    fits_write_img(fp, TDOUBLE, 3 * nax[0], 1, &w, &st); /* last pixel */
    fits_close_file(fp, &st);
    CHECK_MSG(st == 0, "making %s: %d", p, st);
    logbuf lb;
    rvfit_err err;
    rvfit_file_info I;
    rvfit_batch b;
    void *h = open_log(p, NULL, &lb, &I, &err);
    CHECK_MSG(h != NULL, "%s", err.msg);
    if (h && rvfit_batch_alloc(&b, I.narm, I.arm, 1, &err) == 0) {
        CHECK(ops->read(h, 0, 1, &b, &err) == RVFIT_ERR_FORMAT);
        char want[128];
        snprintf(want, sizeof want, "hugewave.fits: wavelength[%ld] = 1e+42"
                 " is not increasing and within", nax[0] - 1);
        CHECK_MSG(tu_contains(err.msg, want), "%s", err.msg);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
}

/* TARGETID of row 0 of rvtab `path`, exactly (int64). */
static long long rvtab_tid(const char *path)
{
    fitsfile *fp = NULL;
    int st = 0, col = 0;
    long long v = 0;
    fits_open_file(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "RVTAB", 0, &st);
    fits_get_colnum(fp, CASEINSEN, "TARGETID", &col, &st);
    fits_read_col(fp, TLONGLONG, col, 1, 1, 1, NULL, &v, NULL, &st);
    int cs = 0;
    fits_close_file(fp, &cs);
    CHECK_MSG(st == 0, "%s: CFITSIO %d", path, st);
    return v;
}

static double rvtab_value(const char *path, const char *ext,
                          const char *col)
{
    long n = 0;
    double *v = tu_read_col(path, ext, col, &n), x = NAN;
    if (v && n == 1)
        x = v[0];
    free(v);
    return x;
}

static void check_fit(const char *log)
{
    long nt = 0;
    char p[4400];
    snprintf(p, sizeof p, "%s/truth.fits", dir);
    double *tv = tu_read_col(p, "TRUTH", "VRAD", &nt);
    CHECK(tv && nt == NSTAR);
    for (int k = 0; tv && nt == NSTAR && k < NSTAR; k++) {
        early_path(p, sizeof p, k);
        char line[4600];
        snprintf(line, sizeof line, "%s: HDU PRIMARY: %s", p,
                 V[k].warn ? V[k].warn : "");
        CHECK_MSG(!V[k].warn == !tu_contains(log, line), "%s: warning %s",
                  V[k].name, V[k].warn ? "missing" : "unexpected");
        snprintf(p, sizeof p, "%s/out/rvtab_spec-%s.fits", dir, V[k].name);
        CHECK(rvtab_tid(p) == expected_tid(k));
        CHECK(rvtab_value(p, "LAMOST", "TID_DERIVED") == (V[k].tid != 0));
        double v = rvtab_value(p, "RVTAB", "VRAD");
        double e = rvtab_value(p, "RVTAB", "VRAD_ERR");
        printf("%-7s TARGETID %20lld  VRAD %8.2f +- %.2f  true %8.2f\n",
               V[k].name, rvtab_tid(p), v, e, tv[k]);
        CHECK_MSG(e > 0 && fabs(v - tv[k]) < 5.0 * e, "%s: VRAD %g +- %g, "
                  "true %g", V[k].name, v, e, tv[k]);
    }
    free(tv);
}

int main(void)
{
    tu_need_plugin("rvfit_instrument_lamost");
    ops = tu_plugin_ops("rvfit_instrument_lamost.so");
    const char *data = tu_env("RVFIT_TEST_DATA");
    char *log = NULL, ini[4200], files[NSTAR * 4400] = "", p[4400];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("lamost_early"));
    snprintf(ini, sizeof ini, "%s/lamost.ini", dir);
    FILE *f = fopen(ini, "w");
    fprintf(f, "[instrument.lamost]\nlam_min = 4800\nlam_max = 6800\n"
               "mock_layout = dr7\n[templates]\ncubic = TEFF, FEH\n"
               "log_flux = 1\n");
    fclose(f);
    snprintf(p, sizeof p, "%s/early", dir);
    mkdir(p, 0777);
    if (tu_rvfit(&log, "mock spectra -i lamost -n %d --seed 11 --snr-min 20 "
                 "--snr-max 40 -c %s -j 2 --out %s/stars --truth "
                 "%s/truth.fits", NSTAR, ini, dir, dir))
        return tu_finish("test_lamost_early");
    for (int k = 0; k < NSTAR; k++)
        if (!rewrite(k)) {
            check_read(k);
            early_path(p, sizeof p, k);
            snprintf(files + strlen(files), sizeof files - strlen(files),
                     " '%s'", p);
        }
    check_refused();
    check_huge_wave();
    if (!tu_rvfit(&log, "templates --grid %s/grid -i lamost -c %s -j 2 "
                  "--out %s/lib", data, ini, dir) &&
        !tu_rvfit(&log, "fit -t %s/lib -i lamost -c %s -b cpu -j 2 -o "
                  "%s/out%s", dir, ini, dir, files))
        check_fit(log);
    free(log);
    return tu_finish("test_lamost_early");
}
