/* test_library_io.c — template library file: save/load round trip of a
 * hand-made library (every field), and clear errors for a missing,
 * truncated, non-FITS or wrong-version file. */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/interp.h"
#include "rvfit/library.h"
#include "rvfit/library_io.h"
#include "testutil.h"

static void make_lib(rvfit_library *lib)
{
    memset(lib, 0, sizeof *lib);
    lib->nparam = 3;
    const char *nm[3] = {"TEFF", "LOGG", "FEH"};
    const int nn[3] = {3, 2, 1};
    for (int i = 0; i < 3; i++) {
        rvfit_axis *a = &lib->axis[i];
        snprintf(a->name, sizeof a->name, "%s", nm[i]);
        snprintf(a->unit, sizeof a->unit, "%s", i ? "dex" : "K");
        a->scale = i == 0 ? RVFIT_SCALE_LOG10 : RVFIT_SCALE_LINEAR;
        a->nnode = nn[i];
        for (int k = 0; k < nn[i]; k++)
            a->node[k] = i == 0 ? log10(4000.0 + 500.0 * k) : 1.5 * k - 0.25;
    }
    lib->nmodel = 6;
    lib->exists = malloc(6);
    for (int m = 0; m < 6; m++)
        lib->exists[m] = m != 4;
    lib->narm = 2;
    const size_t np[2] = {50, 73};
    for (int a = 0; a < 2; a++) {
        rvfit_lib_arm *ar = &lib->arm[a];
        snprintf(ar->name, sizeof ar->name, "%s", a ? "R" : "B");
        ar->lnl0 = log(3500.0 + 2000.0 * a) + 1e-7 / 3.0;
        ar->dlnl = 7.3e-5 + 1e-6 * a;
        ar->npix = np[a];
        ar->flux = malloc(6 * np[a] * sizeof(float));
        for (size_t i = 0; i < 6 * np[a]; i++)
            ar->flux[i] = (float)(1.0 + 0.001 * (double)i + 0.5 * a);
    }
    lib->sigma0 = 0.4123456789;
    lib->vmax = 1000.0;
    snprintf(lib->instrument, sizeof lib->instrument, "desi");
    /* longer than one FITS card: exercises the long-string convention */
    snprintf(lib->source, sizeof lib->source, "/some/very/long/path/to/a/"
             "PHOENIX/grid/that/does/not/fit/in/one/card/HiResFITS/"
             "with/more/than/68/characters");
}

static void test_roundtrip(const char *dir)
{
    rvfit_library a, b;
    rvfit_err e;
    make_lib(&a);
    int st = rvfit_library_save(&a, dir, &e);
    CHECK_MSG(st == RVFIT_OK, "save: %s", e.msg);
    st = rvfit_library_load(&b, dir, &e);
    CHECK_MSG(st == RVFIT_OK, "load: %s", e.msg);
    if (st)
        return;
    CHECK(b.nparam == 3 && b.narm == 2 && b.nmodel == 6);
    for (int i = 0; i < 3; i++) {
        CHECK(strcmp(a.axis[i].name, b.axis[i].name) == 0);
        CHECK(strcmp(a.axis[i].unit, b.axis[i].unit) == 0);
        CHECK(a.axis[i].scale == b.axis[i].scale);
        CHECK(a.axis[i].nnode == b.axis[i].nnode);
        for (int k = 0; k < a.axis[i].nnode; k++)
            CHECK(a.axis[i].node[k] == b.axis[i].node[k]);
    }
    CHECK(memcmp(a.exists, b.exists, 6) == 0);
    for (int r = 0; r < 2; r++) {
        CHECK(strcmp(a.arm[r].name, b.arm[r].name) == 0);
        CHECK(a.arm[r].lnl0 == b.arm[r].lnl0); /* exact: float64 keys */
        CHECK(a.arm[r].dlnl == b.arm[r].dlnl);
        CHECK(a.arm[r].npix == b.arm[r].npix);
        CHECK(memcmp(a.arm[r].flux, b.arm[r].flux,
                     6 * a.arm[r].npix * sizeof(float)) == 0);
    }
    CHECK(a.sigma0 == b.sigma0 && a.vmax == b.vmax);
    CHECK(strcmp(a.instrument, b.instrument) == 0);
    CHECK_MSG(strcmp(a.source, b.source) == 0, "source '%s'", b.source);
    CHECK(rvfit_library_arm(&b, "R") == 1);
    /* a path to the file itself works too */
    rvfit_library c;
    char file[8192];
    snprintf(file, sizeof file, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    CHECK(rvfit_library_load(&c, file, &e) == RVFIT_OK);
    rvfit_library_free(&c);
    rvfit_library_free(&b);
    /* saving an inconsistent library is refused */
    a.nmodel = 7;
    CHECK(rvfit_library_save(&a, dir, &e) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(e.msg, "NMODEL"), "%s", e.msg);
    rvfit_library_free(&a);
}

static void copy_prefix(const char *from, const char *to, long nbytes)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[2880];
    long left = nbytes;
    while (in && out && left > 0) {
        size_t k = fread(buf, 1, left < 2880 ? (size_t)left : 2880, in);
        if (k == 0)
            break;
        fwrite(buf, 1, k, out);
        left -= (long)k;
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}

static void test_errors(const char *dir, const char *tmp)
{
    rvfit_library b;
    rvfit_err e;
    char good[8192], bad[8192];
    snprintf(good, sizeof good, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    /* missing */
    CHECK(rvfit_library_load(&b, tmp, &e) == RVFIT_ERR_IO);
    CHECK_MSG(tu_contains(e.msg, "not found"), "%s", e.msg);
    /* truncated: headers intact, flux of the last arm cut */
    FILE *f = fopen(good, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    snprintf(bad, sizeof bad, "%s/truncated.fits", tmp);
    copy_prefix(good, bad, size - 2880);
    int st = rvfit_library_load(&b, bad, &e);
    printf("truncated: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_FORMAT);
    CHECK(tu_contains(e.msg, "truncated.fits"));
    CHECK(tu_contains(e.msg, "FLUX_R"));
    /* cut inside the headers */
    copy_prefix(good, bad, 3 * 2880);
    st = rvfit_library_load(&b, bad, &e);
    printf("cut early: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_FORMAT && tu_contains(e.msg, "HDU"));
    /* not FITS at all */
    snprintf(bad, sizeof bad, "%s/garbage.fits", tmp);
    f = fopen(bad, "w");
    fputs("this is not a FITS file\n", f);
    fclose(f);
    st = rvfit_library_load(&b, bad, &e);
    printf("garbage: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_FORMAT && tu_contains(e.msg, "garbage.fits"));
    /* wrong version and a corrupted axis */
    snprintf(bad, sizeof bad, "%s/version.fits", tmp);
    copy_prefix(good, bad, size);
    fitsfile *ff;
    int fs = 0, v = 99, type;
    fits_open_file(&ff, bad, READWRITE, &fs);
    fits_update_key(ff, TINT, "RVFLIBV", &v, NULL, &fs);
    fits_close_file(ff, &fs);
    CHECK(fs == 0);
    st = rvfit_library_load(&b, bad, &e);
    CHECK(st == RVFIT_ERR_FORMAT && tu_contains(e.msg, "RVFLIBV = 99"));
    copy_prefix(good, bad, size);
    double nodes[2] = {2.0, 1.0};
    fits_open_file(&ff, bad, READWRITE, &fs);
    fits_movabs_hdu(ff, 3, &type, &fs);
    fits_write_img(ff, TDOUBLE, 1, 2, nodes, &fs);
    fits_close_file(ff, &fs);
    st = rvfit_library_load(&b, bad, &e);
    printf("bad nodes: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_FORMAT && tu_contains(e.msg, "LOGG") &&
          tu_contains(e.msg, "increasing"));
}

/* Load `bad` and expect a format error mentioning want. */
static void expect_bad(const char *bad, const char *want)
{
    rvfit_library b;
    rvfit_err e;
    rvfit_err_clear(&e);
    int st = rvfit_library_load(&b, bad, &e);
    printf("%s\n", e.msg);
    CHECK_MSG(st == RVFIT_ERR_FORMAT, "status %d", st);
    CHECK_MSG(tu_contains(e.msg, bad) && tu_contains(e.msg, want),
              "'%s' lacks '%s'", e.msg, want);
    if (st == RVFIT_OK)
        rvfit_library_free(&b);
}

/* Headers CFITSIO accepts but reads wrongly, and values no template can
 * have (HDUs of the hand-made library: 1 primary, 2-4 AXIS_TEFF/LOGG/FEH,
 * 5 EXISTS, 6 FLUX_B, 7 FLUX_R). */
static void test_corrupt(const char *dir, const char *tmp)
{
    char good[8192], bad[8192], cmd[20000];
    snprintf(good, sizeof good, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    snprintf(bad, sizeof bad, "%s/corrupt.fits", tmp);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, bad);
    /* PCOUNT = -1: CFITSIO read FLUX_B one pixel off, without error */
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(bad, 6, "PCOUNT", "                  -1") == 0);
    expect_bad(bad, "HDU 6 (FLUX_B): PCOUNT = -1, GCOUNT = 1");
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(bad, 3, "GCOUNT", "                   2") == 0);
    expect_bad(bad, "HDU 3 (AXIS_LOGG): PCOUNT = 0, GCOUNT = 2");
    /* a 29-character word where an integer belongs: CFITSIO 4.2 aborted
     * the process while converting it (ffc2j) */
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(bad, 1, "NARM", "ooooooooooooooooooooooooooooo") ==
          0);
    expect_bad(bad, "HDU 1: header card 9 (NARM): a value of 29 characters "
               "is not a number (at most 28)");
    /* the same word right after '=' in column 9, no space in column 10:
     * CFITSIO still reads it as the value (the library fuzzer's find) */
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card_text(bad, 1, "NARM",
                             "NARM    =ooooooooooooooooooooooooooooo") == 0);
    expect_bad(bad, "HDU 1: header card 9 (NARM): a value of 29 characters "
               "is not a number (at most 28)");
    /* a complex value whose parentheses hold 29+ characters (a '/' and
     * the comment inside): the library fuzzer's second find */
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(bad, 1, "NARM",
                        "             (     2 / number of arms    )") == 0);
    expect_bad(bad, "HDU 1: header card 9 (NARM): a value of 29 characters "
               "is not a number (at most 28)");
    /* a quoted string of 30+ characters where a number belongs: CFITSIO
     * 4.2 aborted the process converting it (the library fuzzer's find);
     * rvfit_fits_read_key refuses it first */
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(bad, 1, "NARM",
                        "'I    1 / a string of more than thirty'") == 0);
    expect_bad(bad, "keyword NARM");
    /* an axis rvfit does not know, and an AXNAME that disagrees */
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(bad, 4, "EXTNAME", "'AXIS_VMIC'") == 0);
    CHECK(tu_patch_card(bad, 4, "AXNAME", "'VMIC'") == 0);
    expect_bad(bad, "axis 2: unknown parameter 'VMIC'");
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(bad, 4, "AXNAME", "'LOGG'") == 0);
    expect_bad(bad, "HDU 4 (AXIS_FEH): AXNAME 'LOGG' does not match");
    /* model 2 of FLUX_R all negative (finite, so once accepted) */
    CHECK(system(cmd) == 0);
    float neg[73];
    for (int i = 0; i < 73; i++)
        neg[i] = -1.0f - 0.01f * (float)i;
    fitsfile *ff;
    int fs = 0, type;
    fits_open_file(&ff, bad, READWRITE, &fs);
    fits_movabs_hdu(ff, 7, &type, &fs);
    fits_write_img(ff, TFLOAT, 2 * 73 + 1, 73, neg, &fs);
    fits_close_file(ff, &fs);
    CHECK(fs == 0);
    expect_bad(bad, "HDU 7 (FLUX_R): model 2: mean flux -1.36 is not "
               "positive");
    /* the untouched copy still loads */
    CHECK(system(cmd) == 0);
    rvfit_library b;
    rvfit_err e;
    CHECK_MSG(rvfit_library_load(&b, bad, &e) == RVFIT_OK, "%s", e.msg);
    rvfit_library_free(&b);
    /* and an unknown axis cannot be saved either */
    rvfit_library a;
    make_lib(&a);
    snprintf(a.axis[1].name, sizeof a.axis[1].name, "VRAD");
    CHECK(rvfit_library_save(&a, tmp, &e) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(e.msg, "unknown parameter 'VRAD'"), "%s", e.msg);
    rvfit_library_free(&a);
}

/* The grid kind a library's axes describe ("?" when none opens). */
static const char *grid_kind(const rvfit_library *lib)
{
    rvfit_interpolator ip;
    rvfit_err e;
    if (rvfit_interp_open(&ip, lib, NULL, 0, &e) != RVFIT_OK)
        return "?";
    const char *name = rvfit_interp_name(&ip); /* the kind's, static */
    rvfit_interp_close(&ip);
    return name;
}

static void set_key(const char *file, const char *key, const char *val)
{
    fitsfile *ff;
    int fs = 0;
    fits_open_file(&ff, file, READWRITE, &fs);
    if (val)
        fits_update_key(ff, TSTRING, key, (void *)val, NULL, &fs);
    else
        fits_delete_key(ff, key, &fs);
    fits_close_file(ff, &fs);
    CHECK_MSG(fs == 0, "editing %s in %s: status %d", key, file, fs);
}

/* The interpolator is recorded (INTERP, CUBAXES, LOGFLUX) and applied on
 * load; the file keeps flux even when the library interpolates in ln
 * flux; files without the keywords (before they existed) are
 * multilinear in flux; unknown or inconsistent records are refused. */
static void test_interp_record(const char *tmp)
{
    rvfit_library a, b;
    rvfit_err e;
    char dir[4096], file[8192];
    snprintf(dir, sizeof dir, "%s/libi", tmp);
    snprintf(file, sizeof file, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    make_lib(&a);
    float keep = a.arm[1].flux[3 * 73 + 5];
    CHECK(rvfit_library_configure(&a, "cubic", "", 1, &e) == RVFIT_OK);
    /* every axis of >= 3 nodes: TEFF only */
    CHECK(a.axis[0].interp == RVFIT_INTERP_CUBIC &&
          a.axis[1].interp == RVFIT_INTERP_LINEAR && a.log_flux == 1);
    CHECK(rvfit_library_save(&a, dir, &e) == RVFIT_OK);
    int st = rvfit_library_load(&b, dir, &e);
    CHECK_MSG(st == RVFIT_OK, "load: %s", e.msg);
    if (st)
        return;
    CHECK(!strcmp(grid_kind(&b), "cubic"));
    CHECK(b.axis[0].interp == RVFIT_INTERP_CUBIC &&
          b.axis[1].interp == RVFIT_INTERP_LINEAR &&
          b.axis[2].interp == RVFIT_INTERP_LINEAR);
    CHECK(b.log_flux == 1);
    /* ln(1.0 + 0.001*(3*73+5) + 0.5), float round trip through exp */
    double want = log(1.0 + 0.001 * (3 * 73 + 5) + 0.5);
    CHECK_MSG(fabs(b.arm[1].flux[3 * 73 + 5] - want) < 1e-6, "%g vs %g",
              (double)b.arm[1].flux[3 * 73 + 5], want);
    CHECK(fabs(keep - 1.724f) < 1e-6f);
    /* run-time override: linear everywhere; flux refused (file is ln) */
    CHECK(rvfit_library_configure(&b, NULL, "none", -1, &e) == RVFIT_OK);
    CHECK(!strcmp(grid_kind(&b), "multilinear"));
    CHECK(rvfit_library_configure(&b, NULL, "", 0, &e) == RVFIT_ERR_CONFIG &&
          tu_contains(e.msg, "ln flux"));
    rvfit_library_free(&b);
    CHECK(rvfit_library_configure(&a, "spline", "", 0, &e) ==
          RVFIT_ERR_CONFIG);
    rvfit_library_free(&a);
    /* a file from before INTERP recorded anything */
    set_key(file, "INTERP", NULL);
    set_key(file, "CUBAXES", NULL);
    set_key(file, "LOGFLUX", NULL);
    CHECK(rvfit_library_load(&b, file, &e) == RVFIT_OK);
    CHECK(!strcmp(grid_kind(&b), "multilinear") &&
          b.log_flux == 0);
    CHECK(fabs(b.arm[1].flux[3 * 73 + 5] - 1.724f) < 1e-6f);
    rvfit_library_free(&b);
    set_key(file, "INTERP", "BOGUS");
    CHECK(rvfit_library_load(&b, file, &e) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(e.msg, "BOGUS"), "%s", e.msg);
    set_key(file, "INTERP", "CUBIC"); /* cubic without axes */
    CHECK(rvfit_library_load(&b, file, &e) == RVFIT_ERR_FORMAT);
    set_key(file, "CUBAXES", "TEFF,MASS");
    CHECK(rvfit_library_load(&b, file, &e) != RVFIT_OK);
    CHECK_MSG(tu_contains(e.msg, "MASS"), "%s", e.msg);
}

int main(void)
{
    const char *tmp = tu_tmpdir("library_io");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/lib", tmp); /* created by save */
    test_roundtrip(dir);
    test_errors(dir, tmp);
    test_corrupt(dir, tmp);
    test_interp_record(tmp);
    return tu_finish("test_library_io");
}
