/* test_e2e_plot.c — `rvfit fit --plot-dir` on the synthetic DESI coadd
 * of the demo fixture:
 *  1. four spectra fitted into output and plot directories that do not
 *     exist yet (both created, like mkdir -p); the plot directory holds
 *     exactly one figure per spectrum, <stem>_<TARGETID>.png, the file's
 *     <stem>_summary.png and no temporaries; each figure has the size
 *     of a three-arm figure, the model's colour along each arm's data
 *     panel, the residual colour in each residual panel;
 *  2. --plot-targetid draws only the spectra listed (and the summary);
 *  3. --plot-targetid without a plot directory is an error naming it;
 *  4. `rvfit plot` on the fitted files (issue 28): figures of the spectra
 *     asked for, from rvtab + rvmod + the input, without a backend (no
 *     backend line in its log), the same panels as above, and in the
 *     chi^2(v) panel, drawn from rvmod's CHISQ_V ([output] chisq_v = 1),
 *     the curve's lowest point at VRAD within VRAD_ERR; on an rvmod
 *     without CHISQ_V it still draws and says how to get the scans. */
#include <fitsio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/plot.h"
#include "testutil.h"

#ifndef RVFIT_HAVE_CAIRO
int main(void)
{
    tu_skip("test built without Cairo (rvfit fit --plot-dir unavailable)");
}
#else
#include <cairo.h>

static char bin[4096], lib[4096], data[4096];

static int fit(const char *out, const char *opts, char **log)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s' fit --templates '%s' -o '%s' --overwrite "
             "--targetid 1000000,1000001,1000002,1000003 %s '%s'", bin, lib,
             out, opts, data);
    return tu_run(cmd, log);
}

/* The model's red and the residuals' blue, also where antialiasing
 * blends them half with what lies under them (white, the band, the
 * flux, the zero line); no other colour of the figure passes. */
static int reddish(unsigned p)
{
    int r = (p >> 16) & 255, g = (p >> 8) & 255, b = p & 255;
    return r - (g > b ? g : b) > 60;
}

static int blueish(unsigned p)
{
    int r = (p >> 16) & 255, g = (p >> 8) & 255, b = p & 255;
    return b > r + 80 && b > g + 30;
}

/* Columns of a panel (a frame's rectangle) holding a pixel that is. */
static int columns_with(cairo_surface_t *s, const rvfit_plot_frame *f,
                        int (*is)(unsigned))
{
    const unsigned char *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s), n = 0;
    for (int x = (int)f->x0 + 1; x < (int)(f->x0 + f->w) - 1; x++)
        for (int y = (int)f->y0 + 1; y < (int)(f->y0 + f->h) - 1; y++)
            if (is(((const uint32_t *)(d + (size_t)y * stride))[x])) {
                n++;
                break;
            }
    return n;
}

static void check_figure(const char *path)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    CHECK_MSG(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS, "read %s",
              path);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return;
    }
    cairo_surface_flush(s);
    int w, h;
    rvfit_plot_size(3, &w, &h);
    CHECK_MSG(cairo_image_surface_get_width(s) == w &&
              cairo_image_surface_get_height(s) == h, "%s: size", path);
    /* panel rectangles do not depend on the data: any spectrum gives them */
    double wave[2] = {1, 2};
    float one[2] = {1, 1};
    rvfit_plot_spec g = {.narm = 3};
    for (int a = 0; a < 3; a++)
        g.arm[a] = (rvfit_plot_arm){"X", 2, wave, one, one, NULL, NULL};
    for (int a = 0; a < 3; a++) {
        rvfit_plot_frame f, r;
        rvfit_err e;
        CHECK(rvfit_plot_frame_of(&g, a, 0, &f, &e) == RVFIT_OK);
        CHECK(rvfit_plot_frame_of(&g, a, 1, &r, &e) == RVFIT_OK);
        int nm = columns_with(s, &f, reddish);
        int nr = columns_with(s, &r, blueish);
        CHECK_MSG(nm > 0.8 * f.w, "%s arm %d: model in %d of %.0f columns",
                  path, a, nm, f.w);
        CHECK_MSG(nr > 0.8 * r.w, "%s arm %d: residuals in %d of %.0f "
                  "columns", path, a, nr, r.w);
        CHECK_MSG(columns_with(s, &r, reddish) == 0,
                  "%s arm %d: model outside its panel", path, a);
    }
    cairo_surface_destroy(s);
}

/* Row `row` of rvtab's VRAD, VRAD_ERR and of rvmod's CHISQ_V into r. */
static int read_fit(const char *rvtab, const char *rvmod, long row,
                    rvfit_result *r)
{
    fitsfile *f = NULL;
    int st = 0, c = 0, nv = 0;
    double nan = NAN;
    memset(r, 0, sizeof *r);
    fits_open_table(&f, rvtab, READONLY, &st);
    fits_movnam_hdu(f, BINARY_TBL, "RVTAB", 0, &st);
    fits_get_colnum(f, CASEINSEN, "VRAD", &c, &st);
    fits_read_col(f, TDOUBLE, c, row, 1, 1, &nan, &r->vrad, NULL, &st);
    fits_get_colnum(f, CASEINSEN, "VRAD_ERR", &c, &st);
    fits_read_col(f, TDOUBLE, c, row, 1, 1, &nan, &r->vrad_err, NULL, &st);
    fits_close_file(f, &st);
    fits_open_file(&f, rvmod, READONLY, &st);
    fits_movnam_hdu(f, BINARY_TBL, "CHISQ_V", 0, &st);
    fits_get_colnum(f, CASEINSEN, "NV", &c, &st);
    fits_read_col(f, TINT, c, row, 1, 1, NULL, &nv, NULL, &st);
    fits_get_colnum(f, CASEINSEN, "V", &c, &st);
    fits_read_col(f, TDOUBLE, c, row, 1, RVFIT_VSCAN_MAX, &nan, r->vscan_v,
                  NULL, &st);
    fits_get_colnum(f, CASEINSEN, "M2LNL", &c, &st);
    fits_read_col(f, TDOUBLE, c, row, 1, RVFIT_VSCAN_MAX, &nan,
                  r->vscan_m2lnl, NULL, &st);
    fits_close_file(f, &st);
    r->vscan_n = nv;
    return st;
}

/* The lowest point of the blue curve in the chi^2(v) panel of the figure
 * `path` (the panel's place from the layout, its x range from the scan)
 * lies at VRAD within VRAD_ERR. */
static void check_chisq_panel(const char *path, const rvfit_result *r)
{
    double wave[2] = {1, 2};
    float one[2] = {1, 1};
    rvfit_plot_spec g = {.narm = 3, .res = r};
    for (int a = 0; a < 3; a++)
        g.arm[a] = (rvfit_plot_arm){"X", 2, wave, one, one, NULL, NULL};
    rvfit_plot_frame f;
    rvfit_err e;
    CHECK_MSG(r->vscan_n >= 15 &&
                  rvfit_plot_chisq_frame(&g, &f, &e) == RVFIT_OK,
              "%s: no scan (%d points)", path, r->vscan_n);
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS || r->vscan_n < 2) {
        CHECK_MSG(0, "read %s", path);
        cairo_surface_destroy(s);
        return;
    }
    const unsigned char *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s), yb = -1, xb = 0, n = 0;
    for (int x = (int)f.x0 + 2; x < (int)(f.x0 + f.w) - 2; x++)
        for (int y = (int)f.y0 + 1; y < (int)(f.y0 + f.h) - 1; y++) {
            unsigned p = ((const uint32_t *)(d + (size_t)y * stride))[x];
            if ((p & 0xffffffu) == RVFIT_PLOT_RGB_RESID) {
                n++;
                if (y > yb)
                    yb = y, xb = x;
            }
        }
    double v = f.xmin + (xb + 0.5 - f.x0) / f.w * (f.xmax - f.xmin);
    printf("%s: chi2(v) curve %d pixels, lowest at %.2f km/s; VRAD %.2f "
           "+- %.2f\n", path, n, v, r->vrad, r->vrad_err);
    CHECK_MSG(n > 100, "%s: %d pixels of the chi2(v) curve", path, n);
    CHECK_MSG(fabs(v - r->vrad) <= r->vrad_err, "%s: chi2(v) minimum drawn "
              "at %.2f km/s, VRAD %.2f +- %.2f", path, v, r->vrad,
              r->vrad_err);
    cairo_surface_destroy(s);
}

/* 4. `rvfit plot` of the fitted file in out (its rvmod with CHISQ_V). */
static void replot(const char *out)
{
    char cmd[16384], figs[4300], rvtab[4300], rvmod[4300], *log = NULL;
    snprintf(figs, sizeof figs, "%s/figs/replot", out);
    snprintf(rvtab, sizeof rvtab, "%s/rvtab_coadd-mock.fits", out);
    snprintf(rvmod, sizeof rvmod, "%s/rvmod_coadd-mock.fits", out);
    snprintf(cmd, sizeof cmd, "'%s' plot --plot-dir '%s' --targetid "
             "1000002,1000000 '%s'", bin, figs, rvtab);
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0 && tu_contains(log, "2 figures in") &&
                  tu_contains(log, "chi^2(v) scans from"),
              "rvfit plot: exit %d\n%s", rc, log);
    CHECK_MSG(!tu_contains(log, "backend"), "rvfit plot opened a backend:"
              "\n%s", log);
    free(log);
    CHECK_MSG(tu_count_files(figs, ".png") == 2, "%d figures",
              tu_count_files(figs, ".png"));
    for (int i = 0; i < 3; i += 2) {
        char path[4400];
        snprintf(path, sizeof path, "%s/coadd-mock_%d.png", figs,
                 1000000 + i);
        check_figure(path);
        rvfit_result r;
        /* rows in TARGETID order: the fit selected 1000000..1000003 */
        CHECK(read_fit(rvtab, rvmod, 1 + i, &r) == 0);
        check_chisq_panel(path, &r);
    }
}

int main(void)
{
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    const char *td = tu_env("RVFIT_TEST_DATA");
    snprintf(lib, sizeof lib, "%s/lib", td);
    snprintf(data, sizeof data, "%s/coadd-mock.fits", td);
    char out[4200], plots[4300], opt[4400], path[4400];
    /* an output directory that does not exist yet: fit creates it */
    snprintf(out, sizeof out, "%s/fits/new", tu_tmpdir("e2e_plot"));
    char *log = NULL;

    snprintf(plots, sizeof plots, "%s/figs/all", out);
    snprintf(opt, sizeof opt, "--plot-dir '%s'", plots);
    int rc = fit(out, opt, &log);
    CHECK_MSG(rc == 0, "fit with --plot-dir: %d\n%s", rc, log);
    CHECK(tu_contains(log, "4 figures in"));
    free(log);
    log = NULL;
    snprintf(path, sizeof path, "%s/rvtab_coadd-mock.fits", out);
    CHECK_MSG(access(path, R_OK) == 0, "%s not written", path);
    CHECK_MSG(tu_count_files(plots, ".png") == 5, "%d figures",
              tu_count_files(plots, ".png"));
    CHECK(tu_count_files(plots, "coadd-mock_summary.png") == 1);
    CHECK(tu_count_files(plots, ".tmp") == 0);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/coadd-mock_%d.png", plots,
                 1000000 + i);
        check_figure(path);
    }

    /* an rvmod without CHISQ_V: `rvfit plot` draws and says why there
     * is no chi^2(v) curve */
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s' plot --plot-dir '%s/figs/noscan' "
             "--targetid 1000001 '%s/rvtab_coadd-mock.fits'", bin, out, out);
    rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0 && tu_contains(log, "1 figures in") &&
                  tu_contains(log, "no chi^2(v): fit with --set "
                                   "output.chisq_v=1"),
              "rvfit plot without scans: %d\n%s", rc, log);
    free(log);
    log = NULL;

    snprintf(plots, sizeof plots, "%s/figs/some", out);
    snprintf(opt, sizeof opt, "--plot-dir '%s' --plot-targetid "
             "1000003,1000001,77 --set output.chisq_v=1", plots);
    rc = fit(out, opt, &log);
    CHECK_MSG(rc == 0, "fit with --plot-targetid: %d\n%s", rc, log);
    free(log);
    log = NULL;
    CHECK_MSG(tu_count_files(plots, ".png") == 3, "%d figures",
              tu_count_files(plots, ".png"));
    CHECK(tu_count_files(plots, "coadd-mock_summary.png") == 1);
    CHECK(tu_count_files(plots, "coadd-mock_1000001.png") == 1);
    CHECK(tu_count_files(plots, "coadd-mock_1000003.png") == 1);

    replot(out);

    rc = fit(out, "--plot-targetid 1000001", &log);
    CHECK(rc == 2);
    CHECK_MSG(tu_contains(log, "--plot-targetid needs --plot-dir"), "%s",
              log);
    free(log);
    return tu_finish("test_e2e_plot");
}
#endif
