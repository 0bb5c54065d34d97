/* test_lamost_fit.c — end to end with the CLI on synthetic LAMOST LRS
 * files: a library for lamost from the demo grid, 24 mock stars (S/N
 * 10-60, one file each, DR1-DR7 and DR8+ layouts alternating) fitted in
 * one command.
 *
 *  - Velocities: every |VRAD - true| < 5 VRAD_ERR, the rms of the pulls
 *    below 2, and the error-weighted mean of VRAD - true within 3 of its
 *    standard errors of 0.  TARGETID is the star's (OBSID), and the LAMOST
 *    HDU carries the file's Z (= true v/c in the mocks).
 *  - Batches across files (the pattern of test_e2e_sdss_batch): the 24
 *    files in one command must take fewer backend calls than twice those
 *    of 4 of them fitted one spectrum per batch (--batch-size 1).  One
 *    file per batch would cost ~6 times those; batches spanning files
 *    cost about one spectrum's (measured: 521 against 1255).  The 4 give
 *    bitwise the results of the 24-file run, so that padding a shorter
 *    file to a batch's longest never changes a result.
 *
 *  - Joint fits (--epochs joint): a second epoch of the first NJ stars,
 *    written through the mock extension with new OBSIDs (the DESIG, which
 *    the mock derives from the star's position, stays), three of them
 *    moved by 25 km/s: the files of one designation make one object
 *    (NEPOCH 2, OBJKEY the designation), the moved stars have
 *    VRAD_PVALUE < 1e-6, the others do not, and every exposure's VRAD is
 *    within 5 VRAD_ERR of its truth.
 *
 * The library covers 3900-6800 A only ([instrument.lamost] lam_min,
 * lam_max, which also bound the pixels fitted) to keep the test short;
 * templates are interpolated in ln flux, cubically in Teff and [Fe/H], as
 * test_sdss_fit.c does at the same resolution (it says why). */
#include <string.h>

#include "rvfit/synth.h"
#include "testutil.h"

#define NSTAR 24
#define NJ 6      /* stars observed twice (joint fits)      */
#define DV 25.0   /* velocity change of the first NJ/2, km/s */
#define NSUB 4
#define C_KMS 299792.458

static char dir[2048];

static void spec_path(char *out, size_t n, long k)
{
    snprintf(out, n, "%s/stars/spec-%ld.fits", dir, 1000000 + k);
}

/* Column `col` of HDU `ext` of star k's rvtab in `out`; NaN if unread. */
static double value(const char *out, long k, const char *ext,
                    const char *col)
{
    char tab[4400];
    long n = 0;
    snprintf(tab, sizeof tab, "%s/%s/rvtab_spec-%ld.fits", dir, out,
             1000000 + k);
    double *v = tu_read_col(tab, ext, col, &n), x = NAN;
    if (v && n == 1)
        x = v[0];
    free(v);
    return x;
}

static void check_recovery(void)
{
    char truth[4200];
    long nt = 0, nid = 0;
    snprintf(truth, sizeof truth, "%s/truth.fits", dir);
    double *tv = tu_read_col(truth, "TRUTH", "VRAD", &nt);
    double *tid = tu_read_col(truth, "TRUTH", "TARGETID", &nid);
    CHECK(tv && tid && nt == NSTAR && nid == NSTAR);
    if (!(tv && tid && nt == NSTAR && nid == NSTAR)) {
        free(tv), free(tid);
        return;
    }
    double sw = 0, swd = 0, sp2 = 0, worst = 0;
    long m = 0;
    for (long k = 0; k < NSTAR; k++) {
        double v = value("all", k, "RVTAB", "VRAD");
        double e = value("all", k, "RVTAB", "VRAD_ERR");
        CHECK(value("all", k, "RVTAB", "TARGETID") == tid[k]);
        CHECK_NEAR(value("all", k, "LAMOST", "Z"), tv[k] / C_KMS, 1e-12);
        if (!(e > 0) || !isfinite(v))
            continue;
        double d = v - tv[k], w = 1.0 / (e * e);
        sw += w, swd += w * d, sp2 += d * d * w;
        worst = fmax(worst, fabs(d) / e);
        m++;
    }
    CHECK(m == NSTAR);
    double wmean = swd / sw, werr = 1.0 / sqrt(sw);
    double rms = sqrt(sp2 / (double)(m ? m : 1));
    printf("%ld LAMOST mocks: weighted mean dV = %.3f +- %.3f km/s, rms "
           "pull %.2f, largest |pull| %.2f\n", m, wmean, werr, rms, worst);
    CHECK_MSG(fabs(wmean) < 3.0 * werr, "bias %.3f +- %.3f", wmean, werr);
    CHECK(rms < 2.0);
    CHECK(worst < 5.0);
    free(tv), free(tid);
}

/* The first NSUB stars fitted one per batch: results as in the 24-file
 * run, bit for bit. */
static void check_same(void)
{
    static const char *const cols[] = {"VRAD", "VRAD_ERR", "TEFF", "LOGG",
                                       "FEH", "CHISQ_TOT", "RVS_WARN"};
    long bad = 0;
    for (long k = 0; k < NSUB; k++)
        for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
            double a = value("all", k, "RVTAB", cols[c]);
            double b = value("one", k, "RVTAB", cols[c]);
            if (memcmp(&a, &b, sizeof a) != 0 && bad++ == 0)
                fprintf(stderr, "star %ld, %s: %.17g in the 24-file run, "
                        "%.17g alone\n", k, cols[c], a, b);
        }
    CHECK_MSG(bad == 0, "%ld values differ", bad);
}

/* The second epoch of stars 0..NJ-1 (OBSID 2000000 + k) in dir/epoch2. */
static int second_epoch(rvfit_mock_star *st)
{
    char truth[4200], out[4200];
    snprintf(truth, sizeof truth, "%s/truth.fits", dir);
    snprintf(out, sizeof out, "%s/epoch2", dir);
    static const char *const cols[] = {"TARGETID", "TEFF", "LOGG", "FEH",
                                       "ALPHAFE", "VRAD", "VSINI", "SNR"};
    double *c[8];
    long n = 0;
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= (c[i] = tu_read_col(truth, "TRUTH", cols[i], &n)) && n >= NJ;
    for (long k = 0; ok && k < NJ; k++)
        st[k] = (rvfit_mock_star){2000000 + k, c[1][k], c[2][k], c[3][k],
                                  c[4][k], c[5][k] + (k < NJ / 2 ? DV : 0),
                                  c[6][k], c[7][k]};
    for (int i = 0; i < 8; i++)
        free(c[i]);
    CHECK(ok);
    const rvfit_kv kv[] = {{"lam_min", "3900", "test", 0},
                           {"lam_max", "6800", "test", 0},
                           {"mock_layout", "both", "test", 0}};
    rvfit_host host = tu_host(1);
    rvfit_err err;
    rvfit_err_clear(&err);
    int rc = ok ? tu_mock_ops("lamost")->write_mock(&host, kv, 3, out, NJ,
                                                    st, rvfit_synth_truth,
                                                    st, 6, &err)
                : -1;
    CHECK_MSG(rc == 0, "second epoch: %s", err.msg);
    return rc;
}

static void check_joint(const char *ini)
{
    rvfit_mock_star st[NJ];
    char files[NJ * 2 * 4500] = "", p[4400], *log = NULL;
    if (second_epoch(st))
        return;
    for (long k = 0; k < NJ; k++) {
        spec_path(p, sizeof p, k);
        snprintf(files + strlen(files), sizeof files - strlen(files),
                 " '%s' '%s/epoch2/spec-%ld.fits'", p, dir, 2000000 + k);
    }
    if (tu_rvfit(&log, "fit -t %s/lib -i lamost -c %s -b cpu -j 2 --epochs "
                 "joint -o %s/joint%s", dir, ini, dir, files)) {
        free(log);
        return;
    }
    free(log);
    char tab[4400];
    snprintf(tab, sizeof tab, "%s/joint/rvtab_joint.fits", dir);
    long n = 0, ne = 0;
    double *tid = tu_read_col(tab, "RVTAB", "TARGETID", &n);
    double *nep = tu_read_col(tab, "RVTAB", "NEPOCH", &n);
    double *pv = tu_read_col(tab, "RVTAB", "VRAD_PVALUE", &n);
    double *ev = tu_read_col(tab, "RVEPOCH", "VRAD", &ne);
    double *ee = tu_read_col(tab, "RVEPOCH", "VRAD_ERR", &ne);
    double *ex = tu_read_col(tab, "RVEPOCH", "EXPID", &ne);
    CHECK_MSG(n == NJ && ne == 2 * NJ && tid && nep && pv && ev && ee && ex,
              "joint: %ld objects, %ld exposures", n, ne);
    for (long i = 0; n == NJ && ne == 2 * NJ && tid && nep && pv && i < n;
         i++) {
        long k = (long)tid[i] - 1000000; /* the earliest: first epoch */
        CHECK_MSG(k >= 0 && k < NJ && nep[i] == 2, "object %ld: TARGETID "
                  "%.0f, NEPOCH %.0f", i, tid[i], nep[i]);
        if (k < 0 || k >= NJ)
            continue;
        int moved = k < NJ / 2;
        printf("LAMOST joint: star %ld (%s): VRAD_PVALUE %.3g\n", k,
               moved ? "moved" : "constant", pv[i]);
        CHECK(moved ? pv[i] < 1e-6 : pv[i] > 1e-6);
        for (long e = 2 * i; e < 2 * i + 2; e++) {
            double t = st[k].vrad - (ex[e] < 2000000 && moved ? DV : 0);
            CHECK_MSG(fabs(ev[e] - t) < 5 * ee[e], "star %ld, OBSID %.0f: "
                      "VRAD %.3f +- %.3f, true %.3f", k, ex[e], ev[e], ee[e],
                      t);
        }
    }
    free(tid), free(nep), free(pv), free(ev), free(ee), free(ex);
}

int main(void)
{
    tu_need_plugin("rvfit_instrument_lamost");
    const char *data = tu_env("RVFIT_TEST_DATA");
    char *log = NULL, ini[4200], list[4200], p[4400], sub[4 * 4400] = "";
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("lamost_fit"));
    snprintf(ini, sizeof ini, "%s/lamost.ini", dir);
    FILE *f = fopen(ini, "w");
    fprintf(f, "[instrument.lamost]\nlam_min = 3900\nlam_max = 6800\n"
               "mock_layout = both\n[templates]\ncubic = TEFF, FEH\n"
               "log_flux = 1\n");
    fclose(f);
    if (tu_rvfit(&log, "templates --grid %s/grid -i lamost -c %s -j 2 --out "
            "%s/lib", data, ini, dir) ||
        tu_rvfit(&log, "mock spectra -i lamost -n %d --seed 5 --snr-min 10 "
            "--snr-max 60 -c %s -j 2 --out %s/stars --truth %s/truth.fits",
            NSTAR, ini, dir, dir))
        return tu_finish("test_lamost_fit");
    snprintf(list, sizeof list, "%s/all.list", dir);
    f = fopen(list, "w");
    for (long k = 0; k < NSTAR; k++) {
        spec_path(p, sizeof p, k);
        fprintf(f, "%s\n", p);
        if (k < NSUB)
            snprintf(sub + strlen(sub), sizeof sub - strlen(sub), " '%s'",
                     p);
    }
    fclose(f);
    if (tu_rvfit(&log, "fit -t %s/lib -i lamost -c %s -b cpu -j 2 -o "
                 "%s/all @%s", dir, ini, dir, list))
        return tu_finish("test_lamost_fit");
    long call_all = tu_backend_calls(log);
    if (!tu_rvfit(&log, "fit -t %s/lib -i lamost -c %s -b cpu -j 2 "
                  "--batch-size 1 -o %s/one%s", dir, ini, dir, sub)) {
        long call_one = tu_backend_calls(log);
        printf("backend calls: %d files in one command %ld, %d of them one "
               "per batch %ld\n", NSTAR, call_all, NSUB, call_one);
        CHECK_MSG(call_all > 0 && call_one > 0 && call_all < 2 * call_one,
                  "%ld calls for %d files, %ld for %d one by one", call_all,
                  NSTAR, call_one, NSUB);
        check_same();
    }
    check_recovery();
    check_joint(ini);
    free(log);
    return tu_finish("test_lamost_fit");
}
