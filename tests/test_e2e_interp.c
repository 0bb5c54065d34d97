/* test_e2e_interp.c — `rvfit fit` end to end with the interpolators that
 * send stencils from the core: simplex and pca libraries made from the
 * fixture's multilinear library (the same models; rvfit templates' own
 * path to them is test_templates'), the same 40 stars of the fixture's
 * coadd fitted with each, recovered values against the truth table:
 *   - simplex on the full grid and pca (rms 1e-3): every |VRAD - true| <
 *     5 VRAD_ERR, and the robust scatter of VRAD, TEFF, LOGG, FEH within
 *     the stated factor of multilinear's on the same stars (pca: 1.1,
 *     simplex: 1.5 for the parameters; piecewise linear on simplices is
 *     coarser than multilinear in a cell);
 *   - simplex on an irregular grid (30% of the models removed, seed 13,
 *     and the corner TEFF >= 6500 K, LOGG <= 2): the star whose truth lies
 *     in that corner is flagged PARAM_WARN (beyond the hull), VRAD still
 *     within 5 sigma for every star;
 *   - the pca and simplex libraries give the same results on opencl as on
 *     the cpu (rvfit compare's tolerances, 8 stars), which exercises the
 *     stencil tables with weights per arm (backend ops 1.2) on a device
 *     backend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/fit.h"
#include "rvfit/interp.h"
#include "rvfit/library_io.h"
#include "testutil.h"

#define NSTAR 40
#define CORNER_ID 1000125 /* truth TEFF 6616 K, LOGG 1.63 (seed 42) */

static const char *COLS[4] = {"VRAD", "TEFF", "LOGG", "FEH"};

/* lib at dir re-saved with interpolator `kind` in out; irregular: 30% of
 * the models and the corner removed first. */
static int convert(const char *dir, const char *out, const char *kind,
                   int irregular)
{
    rvfit_library lib;
    rvfit_interpolator ip;
    rvfit_err err;
    int rc = rvfit_library_load(&lib, dir, &err);
    if (!rc && irregular) {
        uint64_t s = 13;
        int n0 = lib.axis[1].nnode * lib.axis[2].nnode * lib.axis[3].nnode;
        int n1 = lib.axis[2].nnode * lib.axis[3].nnode;
        for (size_t m = 0; m < lib.nmodel; m++) {
            double teff = pow(10.0, lib.axis[0].node[m / (size_t)n0]);
            double logg = lib.axis[1].node[m / (size_t)n1 %
                                           (size_t)lib.axis[1].nnode];
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(s >> 11) / 9007199254740992.0;
            if ((teff >= 6499 && logg <= 2.01) || u < 0.3)
                lib.exists[m] = 0;
        }
    }
    if (!rc)
        rc = !strcmp(kind, "pca")
                 ? rvfit_interp_open_pca(&ip, &lib, 0, 1e-3, &err)
                 : rvfit_interp_open(&ip, &lib, kind, 0, &err);
    if (!rc) {
        rc = rvfit_library_save_interp(&lib, &ip, out, &err);
        if (!strcmp(kind, "pca"))
            printf("pca: %d components\n", rvfit_interp_pca_k(&ip));
        rvfit_interp_close(&ip);
    }
    CHECK_MSG(rc == RVFIT_OK, "%s: %s", out, err.msg);
    rvfit_library_free(&lib);
    return rc;
}

typedef struct result {
    long n;
    double *col[4], *err, *id, *warn, *tru[5];
} result;

static void result_free(result *r)
{
    for (int c = 0; c < 4; c++)
        free(r->col[c]);
    for (int c = 0; c < 5; c++)
        free(r->tru[c]);
    free(r->err), free(r->id), free(r->warn);
}

/* Fit the stars with library lib (and options) into out; read the
 * results and the truth of the same rows. */
static int fit(const char *data, const char *lib, const char *out,
               const char *ids, const char *opts, const char *want_log,
               result *r)
{
    char *log = NULL;
    memset(r, 0, sizeof *r);
    int rc = tu_rvfit(&log, "fit --templates '%s' --output-dir '%s' "
                            "--targetid %s --threads 2 --no-models %s "
                            "'%s/coadd-mock.fits'",
                      lib, out, ids, opts, data);
    CHECK_MSG(!rc && tu_contains(log, want_log), "%s: no '%s' in\n%s", lib,
              want_log, log);
    free(log);
    if (rc)
        return rc;
    char tab[4200], truth[4200];
    snprintf(tab, sizeof tab, "%s/rvtab_coadd-mock.fits", out);
    snprintf(truth, sizeof truth, "%s/truth.fits", data);
    long n = 0, nt = 0;
    for (int c = 0; c < 4; c++)
        r->col[c] = tu_read_col(tab, "RVTAB", COLS[c], &r->n);
    r->err = tu_read_col(tab, "RVTAB", "VRAD_ERR", &n);
    r->warn = tu_read_col(tab, "RVTAB", "RVS_WARN", &n);
    r->id = tu_read_col(tab, "RVTAB", "TARGETID", &n);
    r->tru[4] = tu_read_col(truth, "TRUTH", "TARGETID", &nt);
    for (int c = 0; c < 4; c++)
        r->tru[c] = tu_read_col(truth, "TRUTH", COLS[c], &nt);
    CHECK(r->n == NSTAR && r->err && r->id && r->tru[3] && r->tru[4]);
    if (r->n != NSTAR || !r->tru[4])
        return -1;
    /* truth rows in the order of the output */
    double *t[4];
    for (int c = 0; c < 4; c++)
        t[c] = malloc((size_t)r->n * sizeof(double));
    for (long i = 0; i < r->n; i++) {
        long j = 0;
        while (j < nt && r->tru[4][j] != r->id[i])
            j++;
        CHECK(j < nt);
        for (int c = 0; c < 4; c++)
            t[c][i] = j < nt ? r->tru[c][j] : NAN;
    }
    for (int c = 0; c < 4; c++) {
        free(r->tru[c]);
        r->tru[c] = t[c];
    }
    return 0;
}

/* Robust scatter of recovered - true for column c; every |dV| < 5 sigma. */
static double scatter(const result *r, int c)
{
    double d[NSTAR];
    for (long i = 0; i < r->n; i++)
        d[i] = r->col[c][i] - r->tru[c][i];
    return tu_rstd(d, r->n);
}

static long vrad_outliers(const result *r)
{
    long bad = 0;
    for (long i = 0; i < r->n; i++)
        bad += !(fabs(r->col[0][i] - r->tru[0][i]) < 5 * r->err[i]);
    return bad;
}

static void compare(const char *name, const result *r, const result *ref,
                    double vfac, double pfac)
{
    printf("%-22s", name);
    for (int c = 0; c < 4; c++) {
        double s = scatter(r, c), s0 = scatter(ref, c);
        double fac = c ? pfac : vfac;
        printf("  %s %.3g (%.2fx)", COLS[c], s, s / s0);
        CHECK_MSG(s <= fac * s0, "%s: %s scatter %.4g > %.2f x %.4g", name,
                  COLS[c], s, fac, s0);
    }
    long bad = vrad_outliers(r);
    printf("  >5 sigma %ld\n", bad);
    CHECK_MSG(bad == 0, "%s: %ld stars beyond 5 sigma in VRAD", name, bad);
}

static void opencl_same(const char *data, const char *lib, const char *out,
                        const char *ids)
{
    char *log = NULL;
    int rc = tu_rvfit(&log, "compare --backends cpu,opencl --templates '%s' "
                        "--output-dir '%s' --targetid %s --threads 2 "
                        "'%s/coadd-mock.fits'",
                  lib, out, ids, data);
    CHECK_MSG(rc == 0, "opencl vs cpu with %s:\n%s", lib, log);
    free(log);
}

int main(void)
{
    const char *data = tu_env("RVFIT_TEST_DATA");
    char dir[4096], lib[4200], sx[4200], pca[4200], irr[4200], out[4300];
    char ids[1024] = "", ids8[256] = "";
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("e2e_interp"));
    snprintf(lib, sizeof lib, "%s/lib", data);
    snprintf(sx, sizeof sx, "%s/libsx", dir);
    snprintf(pca, sizeof pca, "%s/libpca", dir);
    snprintf(irr, sizeof irr, "%s/libirr", dir);
    for (int i = 0; i < NSTAR; i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d",
                 i ? "," : "", 1000100 + i);
    for (int i = 0; i < 8; i++)
        snprintf(ids8 + strlen(ids8), sizeof ids8 - strlen(ids8), "%s%d",
                 i ? "," : "", 1000100 + i);
    if (convert(lib, sx, "simplex", 0) ||
        convert(lib, pca, "pca", 0) ||
        convert(lib, irr, "simplex", 1))
        return tu_finish("test_e2e_interp");
    result ml, rs, rp, ri;
    snprintf(out, sizeof out, "%s/out_ml", dir);
    int rc = fit(data, lib, out, ids, "", "interpolator multilinear", &ml);
    snprintf(out, sizeof out, "%s/out_sx", dir);
    rc = rc ? rc : fit(data, sx, out, ids, "", "interpolator simplex", &rs);
    snprintf(out, sizeof out, "%s/out_pca", dir);
    rc = rc ? rc : fit(data, pca, out, ids, "", "interpolator pca (", &rp);
    snprintf(out, sizeof out, "%s/out_irr", dir);
    rc = rc ? rc : fit(data, irr, out, ids, "", "interpolator simplex", &ri);
    if (rc)
        return tu_finish("test_e2e_interp");
    compare("multilinear (ref)", &ml, &ml, 1.0, 1.0);
    compare("pca, rms 1e-3", &rp, &ml, 1.1, 1.1);
    compare("simplex, full grid", &rs, &ml, 1.25, 1.5);
    long nwarn = 0, corner = 0;
    for (long i = 0; i < ri.n; i++) {
        int w = ((long)ri.warn[i] & RVFIT_WARN_PARAM) != 0;
        nwarn += w;
        if (ri.id[i] == CORNER_ID) {
            corner = 1;
            printf("irregular: star %d (TEFF %.0f, LOGG %.2f) fitted at "
                   "TEFF %.0f, LOGG %.2f, RVS_WARN %ld\n", CORNER_ID,
                   ri.tru[1][i], ri.tru[2][i], ri.col[1][i], ri.col[2][i],
                   (long)ri.warn[i]);
            CHECK_MSG(w, "the corner star has no PARAM_WARN");
        }
    }
    printf("irregular simplex: PARAM_WARN on %ld of %ld stars, >5 sigma in "
           "VRAD %ld\n", nwarn, ri.n, vrad_outliers(&ri));
    CHECK(corner && vrad_outliers(&ri) == 0 && nwarn < ri.n / 4);
    result_free(&ml), result_free(&rs), result_free(&rp), result_free(&ri);

    if (getenv("RVFIT_PLUGINS_BUILT") &&
        tu_contains(getenv("RVFIT_PLUGINS_BUILT"), "rvfit_backend_opencl")) {
        snprintf(out, sizeof out, "%s/cmp_pca", dir);
        opencl_same(data, pca, out, ids8);
        snprintf(out, sizeof out, "%s/cmp_sx", dir);
        opencl_same(data, sx, out, ids8);
    } else {
        printf("opencl not built: cpu/opencl comparison skipped\n");
    }
    return tu_finish("test_e2e_interp");
}
