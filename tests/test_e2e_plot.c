/* test_e2e_plot.c — `rvfit fit --plot-dir` on the synthetic DESI coadd
 * of the demo fixture:
 *  1. four spectra fitted into output and plot directories that do not
 *     exist yet (both created, like mkdir -p); the plot directory holds
 *     exactly one figure per spectrum, <stem>_<TARGETID>.png, the file's
 *     <stem>_summary.png and no temporaries; each figure has the size
 *     of a three-arm figure, the model's colour along each arm's data
 *     panel, the residual colour in each residual panel;
 *  2. --plot-targetid draws only the spectra listed (and the summary);
 *  3. --plot-targetid without a plot directory is an error naming it. */
#include <dirent.h>
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

/* Entries of dir (hidden ones included) whose names contain s. */
static int count_files(const char *dir, const char *s)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, s) != NULL;
    if (d)
        closedir(d);
    return n;
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
    snprintf(path, sizeof path, "%s/rvtab_coadd-mock.fits", out);
    CHECK_MSG(access(path, R_OK) == 0, "%s not written", path);
    CHECK_MSG(count_files(plots, ".png") == 5, "%d figures",
              count_files(plots, ".png"));
    CHECK(count_files(plots, "coadd-mock_summary.png") == 1);
    CHECK(count_files(plots, ".tmp") == 0);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/coadd-mock_%d.png", plots,
                 1000000 + i);
        check_figure(path);
    }

    snprintf(plots, sizeof plots, "%s/figs/some", out);
    snprintf(opt, sizeof opt, "--plot-dir '%s' --plot-targetid "
             "1000003,1000001,77", plots);
    rc = fit(out, opt, &log);
    CHECK_MSG(rc == 0, "fit with --plot-targetid: %d\n%s", rc, log);
    free(log);
    CHECK_MSG(count_files(plots, ".png") == 3, "%d figures",
              count_files(plots, ".png"));
    CHECK(count_files(plots, "coadd-mock_summary.png") == 1);
    CHECK(count_files(plots, "coadd-mock_1000001.png") == 1);
    CHECK(count_files(plots, "coadd-mock_1000003.png") == 1);

    rc = fit(out, "--plot-targetid 1000001", &log);
    CHECK(rc == 2);
    CHECK_MSG(tu_contains(log, "--plot-targetid needs --plot-dir"), "%s",
              log);
    free(log);
    return tu_finish("test_e2e_plot");
}
#endif
