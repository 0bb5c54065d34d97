/* fuzz_seeds.c — small seed inputs for the fuzz targets, written into
 * DIR/{ini,library,desi,sdss,lamost}/ (the fixture adds the real files and
 * mock spectra).  Tiny files make most mutations land in headers and
 * tables, where readers have to check what they are told.
 * Usage: rvfit_fuzz_seeds DIR */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rvfit/config.h"
#include "rvfit/library.h"
#include "rvfit/interp.h"
#include "rvfit/library_io.h"

#define NPIX 16
#define NSPEC 2
#define NDIAG 3

static int write_text(const char *dir, const char *name, const char *text)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/ini/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static int seeds_ini(const char *dir)
{
    rvfit_config c;
    rvfit_config_defaults(&c);
    size_t n = rvfit_config_dump(&c, NULL, 0);
    char *dump = malloc(n + 1);
    int rc = dump ? 0 : -1;
    if (dump) {
        rvfit_config_dump(&c, dump, n + 1);
        rc = write_text(dir, "defaults.ini", dump);
    }
    free(dump);
    rvfit_config_free(&c);
    return rc || write_text(dir, "plugins.ini",
                            "; comment\n# another\n[fit]\nnpoly = 5\n"
                            "vmin = -600 ; inline\n[backend]\nname = "
                            "opencl, cpu\n[backend.opencl]\ndevice = 1\n"
                            "[instrument.desi]\nobjtypes = TGT, SKY\n"
                            "[output]\noverwrite = true\n") ||
           write_text(dir, "multiline.ini", "[templates]\npath = /a/b\n"
                      "cubic = TEFF,\n  FEH\n[run]\nthreads=2\n");
}

static int seed_library(const char *dir)
{
    rvfit_library L;
    memset(&L, 0, sizeof L);
    static const char *const nm[2] = {"TEFF", "LOGG"};
    L.nparam = 2;
    for (int i = 0; i < 2; i++) {
        rvfit_axis *a = &L.axis[i];
        snprintf(a->name, sizeof a->name, "%s", nm[i]);
        snprintf(a->unit, sizeof a->unit, "%s", i ? "dex" : "K");
        a->scale = i ? RVFIT_SCALE_LINEAR : RVFIT_SCALE_LOG10;
        a->nnode = 2;
        for (int k = 0; k < 2; k++)
            a->node[k] = i ? 4.0 + k : log10(5000.0 + 500.0 * k);
    }
    L.nmodel = 4;
    unsigned char ex[4] = {1, 1, 0, 1};
    L.exists = ex;
    L.narm = 2;
    float flux[2][4 * NPIX];
    for (int a = 0; a < 2; a++) {
        rvfit_lib_arm *A = &L.arm[a];
        snprintf(A->name, sizeof A->name, "%s", a ? "R" : "B");
        A->lnl0 = log(4000.0 + 2000.0 * a);
        A->dlnl = 1e-4;
        A->npix = NPIX;
        A->sigma_kms = a ? 30.0 : 0.0;
        for (int i = 0; i < 4 * NPIX; i++)
            flux[a][i] = (float)(1.0 + 0.1 * sin(0.7 * i + a));
        A->flux = flux[a];
    }
    L.sigma0 = 0.3;
    L.vmax = 800.0;
    snprintf(L.instrument, sizeof L.instrument, "desi");
    snprintf(L.source, sizeof L.source, "fuzz seed");
    char p[4096];
    snprintf(p, sizeof p, "%s/library/tiny.fits", dir);
    rvfit_err err;
    int rc = rvfit_library_save(&L, p, &err);
    /* the same with model 1 marked filled (HDU FILLED, key NFILLED) */
    ex[1] = RVFIT_MODEL_FILLED;
    snprintf(p, sizeof p, "%s/library/tiny-filled.fits", dir);
    if (!rc)
        rc = rvfit_library_save(&L, p, &err);
    ex[1] = 1;
    /* the same as a pca library (its vectors and coefficients) */
    rvfit_interpolator ip;
    if (!rc && !(rc = rvfit_interp_open_pca(&ip, &L, 2, 0.0, &err))) {
        snprintf(p, sizeof p, "%s/library/tiny-pca.fits", dir);
        rc = rvfit_library_save_interp(&L, &ip, p, &err);
        rvfit_interp_close(&ip);
    }
    if (rc)
        fprintf(stderr, "fuzz_seeds: %s\n", err.msg);
    return rc;
}

static void img(fitsfile *f, int bitpix, int naxis, long *ax,
                const char *ext, int type, void *v, int *st)
{
    LONGLONG n = 1;
    for (int i = 0; i < naxis; i++)
        n *= ax[i];
    fits_create_img(f, bitpix, naxis, ax, st);
    fits_write_key(f, TSTRING, "EXTNAME", (void *)ext, NULL, st);
    fits_write_img(f, type, 1, n, v, st);
}

static void desi_camera(fitsfile *f, const char *cam, double lam0, int *st)
{
    char ext[32];
    double w[NPIX];
    float fl[NSPEC * NPIX], iv[NSPEC * NPIX], res[NSPEC * NDIAG * NPIX];
    int mask[NSPEC * NPIX];
    for (int i = 0; i < NPIX; i++)
        w[i] = lam0 + 0.8 * i;
    for (int i = 0; i < NSPEC * NPIX; i++) {
        fl[i] = (float)(10.0 + sin(i));
        iv[i] = i % 7 ? 4.0f : 0.0f;
        mask[i] = i % 11 ? 0 : 4;
    }
    for (int i = 0; i < NSPEC * NDIAG * NPIX; i++)
        res[i] = (i / NPIX) % NDIAG == 1 ? 0.6f : 0.2f;
    long a1[1] = {NPIX}, a2[2] = {NPIX, NSPEC}, a3[3] = {NPIX, NDIAG, NSPEC};
    snprintf(ext, sizeof ext, "%s_WAVELENGTH", cam);
    img(f, DOUBLE_IMG, 1, a1, ext, TDOUBLE, w, st);
    snprintf(ext, sizeof ext, "%s_FLUX", cam);
    img(f, FLOAT_IMG, 2, a2, ext, TFLOAT, fl, st);
    snprintf(ext, sizeof ext, "%s_IVAR", cam);
    img(f, FLOAT_IMG, 2, a2, ext, TFLOAT, iv, st);
    snprintf(ext, sizeof ext, "%s_MASK", cam);
    img(f, LONG_IMG, 2, a2, ext, TINT, mask, st);
    snprintf(ext, sizeof ext, "%s_RESOLUTION", cam);
    img(f, FLOAT_IMG, 3, a3, ext, TFLOAT, res, st);
}

static int seed_desi(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "!%s/desi/tiny.fits", dir);
    fitsfile *f;
    int st = 0;
    fits_create_file(&f, p, &st);
    fits_create_img(f, BYTE_IMG, 0, NULL, &st);
    desi_camera(f, "B", 3600.0, &st);
    desi_camera(f, "R", 5800.0, &st);
    char *tt[] = {"TARGETID", "OBJTYPE", "COADD_FIBERSTATUS", "TARGET_RA",
                  "TARGET_DEC", "FIBER"};
    char *tf[] = {"K", "3A", "J", "D", "D", "J"};
    fits_create_tbl(f, BINARY_TBL, NSPEC, 6, tt, tf, NULL, "FIBERMAP", &st);
    long long tid[NSPEC] = {39627000000001LL, 39627000000002LL};
    char *obj[NSPEC] = {"TGT", "SKY"};
    int zero[NSPEC] = {0, 0}, fib[NSPEC] = {10, 11};
    double ra[NSPEC] = {150.1, 150.2}, dec[NSPEC] = {2.1, 2.2};
    fits_write_col(f, TLONGLONG, 1, 1, 1, NSPEC, tid, &st);
    fits_write_col(f, TSTRING, 2, 1, 1, NSPEC, obj, &st);
    fits_write_col(f, TINT, 3, 1, 1, NSPEC, zero, &st);
    fits_write_col(f, TDOUBLE, 4, 1, 1, NSPEC, ra, &st);
    fits_write_col(f, TDOUBLE, 5, 1, 1, NSPEC, dec, &st);
    fits_write_col(f, TINT, 6, 1, 1, NSPEC, fib, &st);
    char *st_[] = {"TARGETID", "MEDIAN_COADD_SNR_B", "MEDIAN_COADD_SNR_R"};
    char *sf[] = {"K", "E", "E"};
    fits_create_tbl(f, BINARY_TBL, NSPEC, 3, st_, sf, NULL, "SCORES", &st);
    float snr[NSPEC] = {5.5f, 7.5f};
    fits_write_col(f, TLONGLONG, 1, 1, 1, NSPEC, tid, &st);
    fits_write_col(f, TFLOAT, 2, 1, 1, NSPEC, snr, &st);
    fits_write_col(f, TFLOAT, 3, 1, 1, NSPEC, snr, &st);
    fits_close_file(f, &st);
    if (st)
        fits_report_error(stderr, st);
    return st ? -1 : 0;
}

static int seed_sdss(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "!%s/sdss/spec-1234-56789-0042.fits", dir);
    fitsfile *f;
    int st = 0;
    fits_create_file(&f, p, &st);
    fits_create_img(f, BYTE_IMG, 0, NULL, &st);
    double c0 = 3.5798, c1 = 1e-4, ra = 150.0, dec = 2.0;
    int plate = 1234, mjd = 56789, fiber = 42;
    fits_write_key(f, TDOUBLE, "COEFF0", &c0, NULL, &st);
    fits_write_key(f, TDOUBLE, "COEFF1", &c1, NULL, &st);
    fits_write_key(f, TINT, "PLATEID", &plate, NULL, &st);
    fits_write_key(f, TINT, "MJD", &mjd, NULL, &st);
    fits_write_key(f, TINT, "FIBERID", &fiber, NULL, &st);
    fits_write_key(f, TDOUBLE, "PLUG_RA", &ra, NULL, &st);
    fits_write_key(f, TDOUBLE, "PLUG_DEC", &dec, NULL, &st);
    char *ct[] = {"flux", "loglam", "ivar", "and_mask", "wdisp"};
    char *cf[] = {"E", "E", "E", "J", "E"};
    fits_create_tbl(f, BINARY_TBL, NPIX, 5, ct, cf, NULL, "COADD", &st);
    float fl[NPIX], ll[NPIX], iv[NPIX], wd[NPIX];
    int m[NPIX];
    for (int i = 0; i < NPIX; i++) {
        fl[i] = (float)(20.0 + cos(i));
        ll[i] = (float)(c0 + c1 * i);
        iv[i] = i % 5 ? 1.0f : 0.0f;
        wd[i] = 1.1f;
        m[i] = i == 3 ? 1 << 4 : 0;
    }
    fits_write_col(f, TFLOAT, 1, 1, 1, NPIX, fl, &st);
    fits_write_col(f, TFLOAT, 2, 1, 1, NPIX, ll, &st);
    fits_write_col(f, TFLOAT, 3, 1, 1, NPIX, iv, &st);
    fits_write_col(f, TINT, 4, 1, 1, NPIX, m, &st);
    fits_write_col(f, TFLOAT, 5, 1, 1, NPIX, wd, &st);
    char *at[] = {"PLATE", "MJD", "FIBERID", "CLASS", "Z", "SN_MEDIAN_ALL"};
    char *af[] = {"J", "J", "J", "6A", "E", "E"};
    fits_create_tbl(f, BINARY_TBL, 1, 6, at, af, NULL, "SPALL", &st);
    char *cls[1] = {"STAR"};
    float z = 1e-4f, sn = 12.0f;
    fits_write_col(f, TINT, 1, 1, 1, 1, &plate, &st);
    fits_write_col(f, TINT, 2, 1, 1, 1, &mjd, &st);
    fits_write_col(f, TINT, 3, 1, 1, 1, &fiber, &st);
    fits_write_col(f, TSTRING, 4, 1, 1, 1, cls, &st);
    fits_write_col(f, TFLOAT, 5, 1, 1, 1, &z, &st);
    fits_write_col(f, TFLOAT, 6, 1, 1, 1, &sn, &st);
    fits_close_file(f, &st);
    if (st)
        fits_report_error(stderr, st);
    return st ? -1 : 0;
}

/* A LAMOST LRS file with the header of an early release (a real DR2
 * file's facts): float64 image [5][NPIX], no OBSID, FIBERID a string,
 * and the keys the reader derives a TARGETID from. */
static int seed_lamost(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "!%s/lamost/spec-56284-GAC060N26B1_sp03-126.fits",
             dir);
    fitsfile *f;
    int st = 0, t = 1, lmjd = 56284, spid = 3;
    long nax[2] = {NPIX, 5};
    double pix[5][NPIX], c0 = 3.6, c1 = 1e-4;
    for (int i = 0; i < NPIX; i++) {
        pix[0][i] = 100.0 + i;
        pix[1][i] = 0.5;
        pix[2][i] = pow(10.0, c0 + c1 * i);
        pix[3][i] = pix[4][i] = i == 3 ? 1.0 : 0.0;
    }
    fits_create_file(&f, p, &st);
    fits_create_img(f, DOUBLE_IMG, 2, nax, &st);
    fits_write_key(f, TINT, "LMJD", &lmjd, NULL, &st);
    fits_write_key(f, TSTRING, "PLANID", "GAC060N26B1", NULL, &st);
    fits_write_key(f, TINT, "SPID", &spid, NULL, &st);
    fits_write_key(f, TSTRING, "FIBERID", "126", NULL, &st);
    fits_write_key(f, TSTRING, "DESIG", "LAMOST J062345.12+261234.5", NULL,
                   &st);
    fits_write_key(f, TDOUBLE, "COEFF0", &c0, NULL, &st);
    fits_write_key(f, TDOUBLE, "COEFF1", &c1, NULL, &st);
    fits_write_key(f, TLOGICAL, "VACUUM", &t, NULL, &st);
    fits_write_key(f, TLOGICAL, "HELIO", &t, NULL, &st);
    fits_write_img(f, TDOUBLE, 1, 5 * NPIX, pix[0], &st);
    fits_close_file(f, &st);
    if (st)
        fits_report_error(stderr, st);
    return st ? -1 : 0;
}

/* One table of a LAMOST MRS med- file: NPIX rows of FLUX, IVAR, LOGLAM
 * and the mask (ANDMASK and ORMASK of a coadd, PIXMASK of an
 * exposure). */
static void mrs_table(fitsfile *f, const char *ext, double ll0, int *st)
{
    int coadd = !strncmp(ext, "COADD", 5);
    char *tt[5] = {"FLUX", "IVAR", "LOGLAM", coadd ? "ANDMASK" : "PIXMASK",
                   "ORMASK"};
    char *tf[5] = {"E", "E", "E", "I", "I"};
    float fl[NPIX], iv[NPIX], ll[NPIX];
    int mk[NPIX];
    for (int i = 0; i < NPIX; i++) {
        fl[i] = 100.0f + (float)i;
        iv[i] = i == 2 ? 0.0f : 0.5f;
        ll[i] = (float)(ll0 + 8.13e-6 * i);
        mk[i] = i == 3;
    }
    fits_create_tbl(f, BINARY_TBL, NPIX, coadd ? 5 : 4, tt, tf, NULL,
                    (char *)ext, st);
    fits_write_col(f, TFLOAT, 1, 1, 1, NPIX, fl, st);
    fits_write_col(f, TFLOAT, 2, 1, 1, NPIX, iv, st);
    fits_write_col(f, TFLOAT, 3, 1, 1, NPIX, ll, st);
    fits_write_col(f, TINT, 4, 1, 1, NPIX, mk, st);
    if (coadd) {
        fits_write_col(f, TINT, 5, 1, 1, NPIX, mk, st);
        fits_write_key_longstr(f, "LMJMLIST", "84420148-84420163", NULL, st);
    } else {
        long long lmjm = atoll(ext + 2);
        double t = 900.0;
        fits_write_key(f, TLONGLONG, "LMJM", &lmjm, NULL, st);
        fits_write_key(f, TDOUBLE, "EXPTIME", &t, NULL, st);
    }
}

/* A LAMOST MRS med- file (the facts of the format reference): keywords
 * only in the primary HDU, the coadds and two exposures, the second
 * without its R table. */
static int seed_lamost_mrs(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "!%s/lamost/med-58625-HD041619N453442B01_sp07-"
             "126.fits", dir);
    fitsfile *f;
    int st = 0, t = 1, lmjd = 58625;
    long long obsid = 123456789;
    fits_create_file(&f, p, &st);
    fits_create_img(f, BYTE_IMG, 0, NULL, &st);
    fits_write_key(f, TLONGLONG, "OBSID", &obsid, NULL, &st);
    fits_write_key(f, TSTRING, "DESIG", "LAMOST J041615.64+451723.3", NULL,
                   &st);
    fits_write_key(f, TINT, "LMJD", &lmjd, NULL, &st);
    fits_write_key(f, TLOGICAL, "VACUUM", &t, NULL, &st);
    fits_write_key(f, TLOGICAL, "HELIO", &t, NULL, &st);
    mrs_table(f, "COADD_B", 3.695, &st);
    mrs_table(f, "COADD_R", 3.800, &st);
    mrs_table(f, "B-84420148", 3.695, &st);
    mrs_table(f, "R-84420148", 3.800, &st);
    mrs_table(f, "B-84420163", 3.695, &st);
    fits_close_file(f, &st);
    if (st)
        fits_report_error(stderr, st);
    return st ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: rvfit_fuzz_seeds DIR\n");
        return 2;
    }
    static const char *const sub[] = {"ini", "library", "desi", "sdss",
                                      "lamost"};
    char p[4096];
    mkdir(argv[1], 0777);
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", argv[1], sub[i]);
        mkdir(p, 0777);
    }
    int bad = seeds_ini(argv[1]) | seed_library(argv[1]) |
              seed_desi(argv[1]) | seed_sdss(argv[1]) |
              seed_lamost(argv[1]) | seed_lamost_mrs(argv[1]);
    return bad ? 1 : 0;
}
