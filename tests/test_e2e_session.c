/* test_e2e_session.c — the session API (rvfit/session.h) that the Python
 * package binds, on constructed spectra with known answers: arm B of the
 * fixture library's template at a grid node (Teff 5500, logg 4, [Fe/H] 0,
 * [a/Fe] 0; interpolated by rvfit_library_interp on the host, not by the
 * backend), scaled by 2, sampled on the library's own pixels at v = 0 with
 * no instrumental resolution.  The backend's chi^2 there is ~0, -2 ln L
 * grows away from v = 0, and the fit lands on the node.  A spectrum with no
 * usable pixel is reported, not fitted; a cosmic ray is clipped by the
 * fit and still seen by later chisq calls; bad calls fail with a reason.
 * Runs under the sanitizers too (the Python tests cannot). */
#include <string.h>

#include "rvfit/interp.h"
#include "rvfit/session.h"
#include "testutil.h"

#define NPIX 1500
#define OFF 400 /* first library pixel used: away from the padding */

static rvfit_session *open_session(const char *libdir)
{
    rvfit_session *s = NULL;
    rvfit_err e;
    CHECK(rvfit_session_new(&s, &e) == RVFIT_OK);
    CHECK_MSG(rvfit_session_open_library(s, libdir, &e) == RVFIT_OK, "%s",
              e.msg);
    CHECK_MSG(rvfit_session_open_backend(s, "cpu", &e) == RVFIT_OK, "%s",
              e.msg);
    return s;
}

static void check_grid(rvfit_session *s)
{
    char name[64], unit[64];
    int lg = 0, nn = 0;
    double node[RVFIT_MAX_NODES];
    rvfit_err e;
    CHECK(rvfit_session_nparam(s) == 4 && rvfit_session_narm(s) == 3);
    CHECK(rvfit_session_axis(s, 0, name, unit, sizeof name, &lg, &nn, node,
                             &e) == RVFIT_OK);
    CHECK(!strcmp(name, "TEFF") && !strcmp(unit, "K") && lg == 1);
    CHECK(nn == 7);
    CHECK_NEAR(node[0], 4000.0, 1e-6);
    CHECK_NEAR(node[3], 5500.0, 1e-6);
    CHECK(rvfit_session_axis(s, 4, name, unit, sizeof name, &lg, &nn, node,
                             &e) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "parameter 4 of 4"));
}

/* Spectrum 0: 2 x the node's template on library pixels OFF..; spectrum 1:
 * nothing usable. */
static void make_spectra(const char *libdir, double *wave, float *flux,
                         float *ivar)
{
    rvfit_library lib;
    rvfit_err e;
    CHECK(rvfit_library_load(&lib, libdir, &e) == RVFIT_OK);
    int a = rvfit_library_arm(&lib, "B");
    double theta[RVFIT_MAX_PARAMS] = {log10(5500.0), 4.0, 0.0, 0.0};
    double *t = malloc(lib.arm[a].npix * sizeof *t);
    rvfit_library_interp(&lib, a, theta, t);
    for (size_t i = 0; i < NPIX; i++) {
        wave[i] = exp(lib.arm[a].lnl0 + lib.arm[a].dlnl * (double)(OFF + i));
        flux[i] = (float)(2.0 * t[OFF + i]);
        ivar[i] = 1e4f;
        flux[NPIX + i] = 1.0f;
        ivar[NPIX + i] = 0.0f;
    }
    free(t);
    rvfit_library_free(&lib);
}

static void check_chisq(rvfit_session *s)
{
    uint32_t spec[3] = {0, 0, 0};
    double par[12] = {5500, 4, 0, 0, 5500, 4, 0, 0, 5500, 4, 0, 0};
    double v[3] = {0.0, 20.0, -20.0}, vs[3] = {0, 0, 0}, m[3], c[3];
    rvfit_err e;
    CHECK_MSG(rvfit_session_chisq(s, 3, spec, par, v, vs, m, c, &e) ==
                  RVFIT_OK, "%s", e.msg);
    /* exact model up to float rounding of the data: chi^2 ~ 0 */
    CHECK_MSG(c[0] < 1e-2, "chi^2 at the truth %g", c[0]);
    CHECK(m[1] > m[0] + 100 && m[2] > m[0] + 100);
    spec[0] = 2;
    CHECK(rvfit_session_chisq(s, 1, spec, par, v, vs, m, c, &e) ==
          RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "spectrum 2 of 2"));
}

static double col(rvfit_session *s, const char *want, size_t row)
{
    char name[80], unit[80], type = 0;
    double vals[2] = {0, 0};
    rvfit_err e;
    for (int c = 0; c < rvfit_session_ncol(s); c++) {
        CHECK(rvfit_session_col(s, c, name, unit, sizeof name, &type, &e) ==
              RVFIT_OK);
        if (!strcmp(name, want)) {
            CHECK(rvfit_session_col_values(s, c, vals, &e) == RVFIT_OK);
            if (!strcmp(want, "VRAD"))
                CHECK(!strcmp(unit, "km/s") && type == 'D');
            return vals[row];
        }
    }
    CHECK_MSG(0, "no column %s", want);
    return NAN;
}

static void check_fit(rvfit_session *s)
{
    rvfit_err e;
    CHECK_MSG(rvfit_session_fit(s, 1, &e) == RVFIT_OK, "%s", e.msg);
    CHECK_NEAR(col(s, "VRAD", 0), 0.0, 0.05);
    CHECK_NEAR(col(s, "TEFF", 0), 5500.0, 5.0);
    CHECK_NEAR(col(s, "LOGG", 0), 4.0, 0.02);
    CHECK_NEAR(col(s, "NPIX_TOT", 0), NPIX, 0.0);
    CHECK(isnan(col(s, "VRAD", 1)));
    CHECK_NEAR(col(s, "RVS_WARN", 1), 32.0, 0.0);
    float *m = malloc(2 * NPIX * sizeof *m);
    CHECK(rvfit_session_model(s, 0, m, &e) == RVFIT_OK);
    CHECK(isnan(m[NPIX]) && m[NPIX / 2] > 0);
    free(m);
}

/* A cosmic ray on the spectrum: the fit's clip stage rejects it, and
 * the session's later chisq calls still see the spectrum as loaded (the
 * backend's batch is reloaded after a fit that rejected pixels). */
static void check_clip(rvfit_session *s, const double *wave,
                       const float *flux, const float *ivar)
{
    rvfit_err e;
    float *fl = malloc(NPIX * sizeof *fl);
    memcpy(fl, flux, NPIX * sizeof *fl);
    fl[NPIX / 3] += 5.0f; /* 500 sigma */
    CHECK(rvfit_session_batch_new(s, 1, 1, &e) == RVFIT_OK);
    CHECK_MSG(rvfit_session_batch_arm(s, 0, "B", NPIX, 0, wave, fl, ivar, 0,
                                      0, NULL, &e) == RVFIT_OK, "%s", e.msg);
    CHECK_MSG(rvfit_session_batch_load(s, NULL, &e) == RVFIT_OK, "%s",
              e.msg);
    uint32_t spec = 0;
    double par[4] = {5500, 4, 0, 0}, v = 0, vs = 0, m0, m1;
    CHECK(rvfit_session_chisq(s, 1, &spec, par, &v, &vs, &m0, NULL, &e) ==
          RVFIT_OK);
    CHECK_MSG(rvfit_session_fit(s, 0, &e) == RVFIT_OK, "%s", e.msg);
    CHECK_NEAR(col(s, "NCLIP_B", 0), 3.0, 0.0); /* the hit, 2 neighbours */
    CHECK_NEAR(col(s, "VRAD", 0), 0.0, 0.05);
    CHECK(rvfit_session_chisq(s, 1, &spec, par, &v, &vs, &m1, NULL, &e) ==
          RVFIT_OK);
    printf("-2 ln L at the truth before / after the fit: %.6g / %.6g\n", m0,
           m1);
    CHECK_MSG(m0 > 2e5 && m1 == m0, "before %g, after %g", m0, m1);
    free(fl);
}

static void check_bad_calls(rvfit_session *s, const double *wave,
                            const float *flux, const float *ivar)
{
    rvfit_err e;
    CHECK(rvfit_session_batch_new(s, 1, 1, &e) == RVFIT_OK);
    CHECK(rvfit_session_batch_arm(s, 0, "Q", NPIX, 0, wave, flux, ivar, 0, 0,
                                  NULL, &e) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "arm 'Q' is not in the library"));
    CHECK(rvfit_session_batch_arm(s, 0, "B", NPIX, 0, wave, flux, ivar, 1, 4,
                                  flux, &e) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "4 diagonals"));
    double w2[3] = {4000, 4001, 4000.5};
    CHECK(rvfit_session_batch_arm(s, 0, "B", 3, 0, w2, flux, ivar, 0, 0,
                                  NULL, &e) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "wavelength 2 (4000.5)"));
    float lsf[NPIX] = {-1.0f};
    CHECK(rvfit_session_batch_arm(s, 0, "B", NPIX, 0, wave, flux, ivar, 2, 0,
                                  lsf, &e) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "LSF sigma"));
    CHECK(rvfit_session_batch_load(s, NULL, &e) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "arm 0 of the batch not given"));
    CHECK(rvfit_session_fit(s, 0, &e) == RVFIT_ERR_INVALID);
}

int main(void)
{
    char libdir[4096];
    snprintf(libdir, sizeof libdir, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    tu_need_plugin("rvfit_backend_cpu");
    double *wave = malloc(NPIX * sizeof *wave);
    float *flux = malloc(2 * NPIX * sizeof *flux);
    float *ivar = malloc(2 * NPIX * sizeof *ivar);
    rvfit_session *s = open_session(libdir);
    rvfit_err e;
    check_grid(s);
    make_spectra(libdir, wave, flux, ivar);
    CHECK(rvfit_session_batch_new(s, 2, 1, &e) == RVFIT_OK);
    CHECK_MSG(rvfit_session_batch_arm(s, 0, "B", NPIX, 0, wave, flux, ivar,
                                      0, 0, NULL, &e) == RVFIT_OK, "%s",
              e.msg);
    CHECK_MSG(rvfit_session_batch_load(s, NULL, &e) == RVFIT_OK, "%s",
              e.msg);
    check_chisq(s);
    check_fit(s);
    check_clip(s, wave, flux, ivar);
    check_bad_calls(s, wave, flux, ivar);
    rvfit_session_free(s);
    free(wave), free(flux), free(ivar);
    return tu_finish("test_e2e_session");
}
