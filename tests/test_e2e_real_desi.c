/* test_e2e_real_desi.c — both real DESI coadds (tiles and healpix layout)
 * go through the whole fit with the synthetic library: they are galaxies,
 * so the fit must complete with warning bits, not crash, and the outputs
 * must carry the pass-through tables and models with the right shapes.
 * The per-exposure spectra- files, read as epochs of their objects
 * (--epochs joint) with every fibre kept: unassigned fibres (negative
 * TARGETID) skipped and counted by reason, the SKY fibre left out by the
 * selection, all-zero IVAR rows fitted as bad spectra with a warning, the
 * one row with data fitted. */
#include <fitsio.h>
#include <string.h>

#include "testutil.h"

static void check_file(const char *bin, const char *data, const char *in,
                       const char *stem, int nfibermap_cols)
{
    char out[4096], cmd[16384], tab[4400], mod[4400];
    snprintf(out, sizeof out, "%s", tu_tmpdir(stem));
    snprintf(cmd, sizeof cmd,
             "'%s' fit --templates '%s/lib' --output-dir '%s' '%s'", bin,
             data, out, in);
    char *log = NULL;
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "%s: exit %d\n%s", stem, rc, log);
    free(log);
    snprintf(tab, sizeof tab, "%s/rvtab_%s.fits", out, stem);
    snprintf(mod, sizeof mod, "%s/rvmod_%s.fits", out, stem);
    long n = 0;
    double *warn = tu_read_col(tab, "RVTAB", "RVS_WARN", &n);
    double *id = tu_read_col(tab, "RVTAB", "TARGETID", &n);
    double *npix = tu_read_col(tab, "RVTAB", "NPIX_TOT", &n);
    double *sn = tu_read_col(tab, "RVTAB", "SN_B", &n);
    CHECK_MSG(n == 1 && warn && id && npix && sn, "%s: RVTAB rows %ld",
              stem, n);
    if (n == 1 && warn && id && npix && sn) {
        printf("%s: TARGETID %.0f RVS_WARN %.0f NPIX_TOT %.0f SN_B %.3f\n",
               stem, id[0], warn[0], npix[0], sn[0]);
        CHECK(warn[0] != 0);
        CHECK(npix[0] > 7000 && npix[0] <= 2751 + 2326 + 2881);
        CHECK(sn[0] > 0);
    }
    free(warn), free(id), free(npix), free(sn);

    fitsfile *f;
    int st = 0, ncol = 0;
    fits_open_file(&f, tab, READONLY, &st);
    fits_movnam_hdu(f, BINARY_TBL, "FIBERMAP", 0, &st);
    fits_get_num_cols(f, &ncol, &st);
    CHECK_MSG(st == 0 && ncol == nfibermap_cols, "%s FIBERMAP: %d cols",
              stem, ncol);
    st = 0;
    fits_movnam_hdu(f, BINARY_TBL, "SCORES", 0, &st);
    CHECK_MSG(st == 0, "%s: no SCORES HDU", stem);
    char backend[FLEN_VALUE] = "";
    st = 0;
    fits_movabs_hdu(f, 1, NULL, &st);
    fits_read_key(f, TSTRING, "BACKEND", backend, NULL, &st);
    CHECK(st == 0 && !strcmp(backend, "cpu"));
    st = 0;
    fits_close_file(f, &st);

    fits_open_file(&f, mod, READONLY, &st);
    static const char *arms[] = {"B", "R", "Z"};
    static const long npx[] = {2751, 2326, 2881};
    for (int a = 0; a < 3; a++) {
        char ext[32];
        long shape[2] = {0, 0};
        int naxis = 0;
        snprintf(ext, sizeof ext, "%s_MODEL", arms[a]);
        st = 0;
        fits_movnam_hdu(f, IMAGE_HDU, ext, 0, &st);
        fits_get_img_dim(f, &naxis, &st);
        fits_get_img_size(f, 2, shape, &st);
        CHECK_MSG(st == 0 && naxis == 2 && shape[0] == npx[a] &&
                      shape[1] == 1,
                  "%s %s: %ld x %ld", stem, ext, shape[0], shape[1]);
        float *m = malloc((size_t)npx[a] * sizeof *m);
        int anynul = 0;
        fits_read_img(f, TFLOAT, 1, npx[a], NULL, m, &anynul, &st);
        long finite = 0;
        for (long i = 0; i < npx[a]; i++)
            finite += isfinite(m[i]) && m[i] != 0;
        CHECK_MSG(finite > npx[a] / 2, "%s %s: %ld finite model pixels",
                  stem, ext, finite);
        free(m);
    }
    st = 0;
    fits_close_file(f, &st);
}

static void check_joint(const char *bin, const char *data,
                        const char *shared)
{
    char out[4096], cmd[16384], tab[4400];
    snprintf(out, sizeof out, "%s", tu_tmpdir("real_joint"));
    snprintf(cmd, sizeof cmd,
             "'%s' fit --templates '%s/lib' --output-dir '%s' --epochs joint "
             "--set instrument.desi.fiberstatus_mask=0 "
             "'%s/desi/spectra-5-169-thru20210419.fits' "
             "'%s/desi/spectra-sv3-dark-26065.fits'", bin, data, out, shared,
             shared);
    char *log = NULL;
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "joint: exit %d\n%s", rc, log);
    CHECK_MSG(tu_contains(log, "5 skipped (5 negative TARGETID)") &&
                  tu_contains(log, "1 objtype"),
              "joint: skip reasons not counted\n%s", log);
    free(log);
    snprintf(tab, sizeof tab, "%s/rvtab_joint.fits", out);
    long n = 0, ne = 0;
    double *nep = tu_read_col(tab, "RVTAB", "NEPOCH", &n);
    double *w = tu_read_col(tab, "RVEPOCH", "RVS_WARN", &ne);
    double *ex = tu_read_col(tab, "RVEPOCH", "EXPID", &ne);
    CHECK_MSG(n == 4 && ne == 4 && nep && w && ex, "joint: %ld objects, "
              "%ld exposures", n, ne);
    int bad = 0, fitted = 0;
    for (long i = 0; w && ex && i < ne; i++) {
        bad += ((long)w[i] & 32) != 0;   /* RVFIT_WARN_BAD_SPECTRUM */
        CHECK(ex[i] == 85502 || ex[i] == 83734);
        CHECK(w[i] != 0); /* galaxies, not stars */
    }
    for (long i = 0; nep && i < n; i++)
        fitted += nep[i] == 1;
    printf("joint: %ld exposures, %d bad (zero IVAR), %d objects fitted\n",
           ne, bad, fitted);
    CHECK(bad == 2 && fitted == 2);
    free(nep), free(w), free(ex);
}

int main(void)
{
    const char *bin = tu_env("RVFIT_BIN"), *data = tu_env("RVFIT_TEST_DATA");
    const char *shared = tu_shared_data();
    char in[4096];
    snprintf(in, sizeof in, "%s/desi/coadd-4-80613-thru20210324.fits",
             shared);
    check_file(bin, data, in, "coadd-4-80613-thru20210324", 81);
    snprintf(in, sizeof in, "%s/desi/coadd-special-dark-27247.fits", shared);
    check_file(bin, data, in, "coadd-special-dark-27247", 71);
    check_joint(bin, data, shared);
    return tu_finish("test_e2e_real_desi");
}
