/* test_plot_render.c — a fit figure drawn from a constructed spectrum and
 * read back with Cairo: the curves are where the numbers put them.
 *
 * Arm B: 1000 pixels at 4000..4999 A, flux 1 with sigma 0.1 except 20
 * pixels at 0.7 (which set the lower end of the range), model = flux,
 * continuum 1.3, pixels 400..499 masked (ivar 0, flux 50: a masked spike
 * must not stretch the axis).  Arm R: 500 pixels at 6000..6998 A, flux 10,
 * sigma 1, model 10, continuum 12, pixels 300..349 masked.  The flux range
 * of a panel is documented (docs/plots.md) as the 1st..99th percentile of
 * the usable flux widened to the model and continuum, padded by 8%:
 * B [0.652, 1.348], R [9.84, 12.16].  The test maps values to pixels with
 * those numbers and looks for each colour there.  The axis names and the
 * arm's header are looked for as ink where they are documented
 * (check_labels); the row under the arms has a zoom panel on H-alpha
 * (in arm R) and the chi^2(v) panel of a constructed parabolic scan,
 * whose curve, VRAD line and error band are checked likewise and whose
 * drawn minimum must lie at VRAD (check_row).  The summary figure is
 * checked the same way (check_summary). */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/plot.h"
#include "testutil.h"

#ifndef RVFIT_HAVE_CAIRO
int main(void)
{
    if (!rvfit_plot_available())
        tu_skip("rvfit built without Cairo");
    fprintf(stderr, "librvfit draws but this test was built without "
                    "Cairo\n");
    return 1;
}
#else
#include <cairo.h>

#define NB 1000
#define NR 500

static double wb[NB], wr[NR];
static float fb[NB], ib[NB], mb[NB], cb[NB];
static float fr[NR], ir[NR], mr[NR], cr_[NR];

static void build(rvfit_plot_spec *s, rvfit_result *res)
{
    for (int i = 0; i < NB; i++) {
        wb[i] = 4000 + i;
        fb[i] = mb[i] = (i >= 100 && i < 120) ? 0.7f : 1.0f;
        ib[i] = 100;
        cb[i] = 1.3f;
        if (i >= 400 && i < 500)
            ib[i] = 0, fb[i] = 50;
    }
    for (int i = 0; i < NR; i++) {
        wr[i] = 6000 + 2 * i;
        fr[i] = mr[i] = 10;
        ir[i] = 1;
        cr_[i] = 12;
        if (i >= 300 && i < 350)
            ir[i] = 0;
    }
    memset(res, 0, sizeof *res);
    res->vrad = 12.5, res->vrad_err = 0.5, res->warn = RVFIT_WARN_CHISQ;
    /* the final velocity scan: 25 points 0.25 km/s apart about VRAD,
     * -2 ln L = 1000 + ((v - VRAD) / 0.5)^2 */
    res->vscan_n = 25;
    for (int k = 0; k < 25; k++) {
        res->vscan_v[k] = 12.5 + 0.25 * (k - 12);
        double d = (res->vscan_v[k] - 12.5) / 0.5;
        res->vscan_m2lnl[k] = 1000 + d * d;
    }
    *s = (rvfit_plot_spec){.targetid = 39627000123, .res = res, .narm = 2};
    s->arm[0] = (rvfit_plot_arm){"B", NB, wb, fb, ib, mb, cb};
    s->arm[1] = (rvfit_plot_arm){"R", NR, wr, fr, ir, mr, cr_};
}

typedef struct img {
    cairo_surface_t *s;
    const unsigned char *d;
    int w, h, stride;
} img;

static unsigned pixel(const img *m, int x, int y)
{
    if (x < 0 || y < 0 || x >= m->w || y >= m->h)
        return 0xffffffffu;
    const uint32_t *row = (const uint32_t *)(m->d + (size_t)y * m->stride);
    return row[x] & 0xffffffu;
}

static int dist2(unsigned a, unsigned b)
{
    int d2 = 0;
    for (int k = 0; k < 24; k += 8) {
        int d = (int)((a >> k) & 255) - (int)((b >> k) & 255);
        d2 += d * d;
    }
    return d2;
}

/* Can p be colour c drawn with coverage a >= 1/2 over some colour?
 * Antialiased lines blend with whatever lies under them, so the colour
 * under them, p = a c + (1 - a) under, must be a valid one for some a. */
static int covers(unsigned p, unsigned c)
{
    for (int t = 10; t < 20; t++) {
        double a = t / 20.0;
        int ok = 1;
        for (int k = 0; k < 24 && ok; k += 8) {
            double under = (((p >> k) & 255) - a * ((c >> k) & 255)) / (1 - a);
            ok = under >= -8 && under <= 263;
        }
        if (ok)
            return 1;
    }
    return dist2(p, c) <= 3 * 8 * 8;
}

/* Is colour c (exactly when dy == 0, else covering the pixel at least
 * half) within +-dy rows of (x, y)? */
static int near(const img *m, double x, double y, unsigned c, int dy)
{
    for (int k = -dy; k <= dy; k++) {
        unsigned p = pixel(m, (int)x, (int)(y + 0.5) + k);
        if (dy ? covers(p, c) : dist2(p, c) <= 12)
            return 1;
    }
    return 0;
}

typedef struct map {
    rvfit_plot_frame f;
    double ylo, yhi; /* the test's own range */
} map;

static double X(const map *p, double w)
{
    return p->f.x0 + (w - p->f.xmin) / (p->f.xmax - p->f.xmin) * p->f.w;
}

static double Y(const map *p, double v)
{
    return p->f.y0 + (p->yhi - v) / (p->yhi - p->ylo) * p->f.h;
}

static void frame(const rvfit_plot_spec *s, int arm, int resid,
                  double lo, double hi, map *p)
{
    rvfit_err e;
    CHECK(rvfit_plot_frame_of(s, arm, resid, &p->f, &e) == RVFIT_OK);
    CHECK_NEAR(p->f.ymin, lo, 1e-4);
    CHECK_NEAR(p->f.ymax, hi, 1e-4);
    p->ylo = lo, p->yhi = hi;
}

static void check_arm_b(const img *m, const rvfit_plot_spec *s)
{
    map d, r;
    frame(s, 0, 0, 0.7 - 0.048, 1.3 + 0.048, &d);
    frame(s, 0, 1, -5, 5, &r);
    CHECK_NEAR(d.f.xmin, 4000, 0);
    CHECK_NEAR(d.f.xmax, 4999, 0);
    double x = X(&d, 4700), xm = X(&d, 4450), xlow = X(&d, 4110);
    CHECK_MSG(near(m, x, Y(&d, 1.0), RVFIT_PLOT_RGB_MODEL, 2),
              "model at 4700 A, flux 1");
    CHECK_MSG(near(m, xlow, Y(&d, 0.7), RVFIT_PLOT_RGB_MODEL, 2),
              "model at 4110 A, flux 0.7");
    CHECK_MSG(near(m, x, Y(&d, 1.3), RVFIT_PLOT_RGB_CONT, 2),
              "continuum at 4700 A");
    CHECK_MSG(near(m, x, Y(&d, 0.95), RVFIT_PLOT_RGB_BAND, 0),
              "1-sigma band below the flux");
    CHECK_MSG(near(m, x, Y(&d, 1.05), RVFIT_PLOT_RGB_BAND, 0),
              "1-sigma band above the flux");
    CHECK_MSG(near(m, x, Y(&d, 1.2), 0xffffff, 0),
              "white between band and continuum");
    CHECK_MSG(near(m, xm, Y(&d, 1.2), RVFIT_PLOT_RGB_MASK, 0),
              "masked pixels shaded");
    CHECK_MSG(near(m, xm, Y(&d, 0.95), RVFIT_PLOT_RGB_MASK, 0),
              "no band over masked pixels");
    CHECK_MSG(near(m, xm, Y(&d, 1.0), RVFIT_PLOT_RGB_MODEL, 2),
              "model drawn over masked pixels");
    CHECK_MSG(near(m, x, Y(&r, 0), RVFIT_PLOT_RGB_RESID, 1),
              "residual 0 at 4700 A");
    CHECK_MSG(near(m, x, Y(&r, 3), 0xffffff, 0), "residual panel empty");
    CHECK_MSG(near(m, xm, Y(&r, 3), RVFIT_PLOT_RGB_MASK, 0),
              "masked pixels shaded in the residual panel");
}

static void check_arm_r(const img *m, const rvfit_plot_spec *s)
{
    map d;
    frame(s, 1, 0, 10 - 0.16, 12 + 0.16, &d);
    double x = X(&d, 6400), xm = X(&d, 6650);
    CHECK_MSG(near(m, x, Y(&d, 10), RVFIT_PLOT_RGB_MODEL, 2), "R model");
    CHECK_MSG(near(m, x, Y(&d, 12), RVFIT_PLOT_RGB_CONT, 2), "R continuum");
    CHECK_MSG(near(m, x, Y(&d, 10.6), RVFIT_PLOT_RGB_BAND, 0), "R band");
    CHECK_MSG(near(m, xm, Y(&d, 11.5), RVFIT_PLOT_RGB_MASK, 0), "R mask");
    CHECK_MSG(near(m, X(&d, 6400), Y(&d, 11.5), 0xffffff, 0), "R white");
}

static void open_png(const char *path, img *m)
{
    m->s = cairo_image_surface_create_from_png(path);
    m->d = NULL;
    CHECK_MSG(cairo_surface_status(m->s) == CAIRO_STATUS_SUCCESS, "read %s",
              path);
    if (cairo_surface_status(m->s) != CAIRO_STATUS_SUCCESS)
        return;
    cairo_surface_flush(m->s);
    m->d = cairo_image_surface_get_data(m->s);
    m->w = cairo_image_surface_get_width(m->s);
    m->h = cairo_image_surface_get_height(m->s);
    m->stride = cairo_image_surface_get_stride(m->s);
}

/* Dark (text) pixels in the rectangle [x0, x1) x [y0, y1). */
static int ink(const img *m, int x0, int x1, int y0, int y1)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            n += dist2(pixel(m, x, y), 0x000000) < 3 * 90 * 90;
    return n;
}

/* The axis names: the flux and residual axes' names, written upwards left
 * of each panel (x 6..22), and the wavelength axis' name centred under
 * the last arm; nothing in the same strip beside the panels' gaps. */
static void check_labels(const img *m, const rvfit_plot_spec *s)
{
    map d, r;
    frame(s, 0, 0, 0.7 - 0.048, 1.3 + 0.048, &d);
    frame(s, 0, 1, -5, 5, &r);
    int yd = (int)(d.f.y0 + d.f.h / 2), yr = (int)(r.f.y0 + r.f.h / 2);
    CHECK_MSG(ink(m, 6, 22, yd - 60, yd + 60) > 40, "no flux axis name");
    CHECK_MSG(ink(m, 6, 22, yr - 30, yr + 30) > 30,
              "no residual axis name");
    CHECK_MSG(ink(m, 6, 22, (int)d.f.y0 - 20, (int)d.f.y0 - 2) == 0,
              "ink in the strip where no name is");
    map last;
    frame(s, 1, 1, -5, 5, &last);
    int yl = (int)(last.f.y0 + last.f.h + 22);
    int xc = (int)(last.f.x0 + last.f.w / 2);
    CHECK_MSG(ink(m, xc - 80, xc + 80, yl + 4, yl + 22) > 60,
              "no wavelength axis name under the last arm");
    /* the arm's header above its data panel */
    CHECK_MSG(ink(m, (int)d.f.x0, (int)d.f.x0 + 300, (int)d.f.y0 - 18,
                  (int)d.f.y0 - 2) > 60, "no header over arm B");
}

/* The zoom panel on H-alpha (only arm R, 6000..6998 A, holds one of the
 * documented windows: 6535..6595 A at rest, shifted by VRAD 12.5 km/s)
 * and the chi^2(v) panel of the constructed scan. */
static void check_row(const img *m, const rvfit_plot_spec *s)
{
    rvfit_plot_zoom z[RVFIT_PLOT_MAX_ZOOM];
    CHECK(rvfit_plot_zooms(s, z) == 1);
    double k = 1 + 12.5 / 299792.458;
    CHECK(z[0].arm == 1 && z[0].nline == 1);
    CHECK_NEAR(z[0].line[0], 6564.61 * k, 1e-6);
    map zm;
    rvfit_err e;
    CHECK(rvfit_plot_zoom_frame(s, 0, &zm.f, &e) == RVFIT_OK);
    CHECK_NEAR(zm.f.xmin, 6535 * k, 1e-6);
    CHECK_NEAR(zm.f.xmax, 6595 * k, 1e-6);
    /* flux and model 10 everywhere: range 10 -+ 10%, padded (plots.md) */
    CHECK_NEAR(zm.f.ymin, 9, 1e-4);
    CHECK_NEAR(zm.f.ymax, 11, 1e-4);
    zm.ylo = 9, zm.yhi = 11;
    CHECK_MSG(near(m, X(&zm, 6550), Y(&zm, 10), RVFIT_PLOT_RGB_MODEL, 2),
              "zoom: model at 6550 A");
    CHECK_MSG(near(m, X(&zm, 6550), Y(&zm, 10.5), RVFIT_PLOT_RGB_BAND, 0),
              "zoom: the 1-sigma band");
    int line = 0; /* dashed, antialiased: over some of its pixels */
    for (double v = 10.0; v < 10.9 && !line; v += 0.05)
        for (int dx = -1; dx <= 1 && !line; dx++)
            line = near(m, X(&zm, z[0].line[0]) + dx, Y(&zm, v),
                        RVFIT_PLOT_RGB_LINE, 1);
    CHECK_MSG(line, "zoom: H-alpha's position marked");
    map c;
    CHECK(rvfit_plot_chisq_frame(s, &c.f, &e) == RVFIT_OK);
    /* x over the scan, y over 0..36 with -5% and +8% */
    CHECK_NEAR(c.f.xmin, 9.5, 1e-12);
    CHECK_NEAR(c.f.xmax, 15.5, 1e-12);
    CHECK_NEAR(c.f.ymin, -1.8, 1e-9);
    CHECK_NEAR(c.f.ymax, 38.88, 1e-9);
    c.ylo = -1.8, c.yhi = 38.88;
    CHECK_MSG(near(m, X(&c, 11.0), Y(&c, 9.0), RVFIT_PLOT_RGB_RESID, 2),
              "chi2(v): the point at 11 km/s, 9");
    CHECK_MSG(near(m, X(&c, 14.5), Y(&c, 16.0), RVFIT_PLOT_RGB_RESID, 2),
              "chi2(v): the point at 14.5 km/s, 16");
    CHECK_MSG(near(m, X(&c, 12.5), Y(&c, 25.0), RVFIT_PLOT_RGB_MODEL, 1),
              "chi2(v): VRAD marked");
    CHECK_MSG(near(m, X(&c, 12.8), Y(&c, 30.0), RVFIT_PLOT_RGB_BAND, 0),
              "chi2(v): VRAD +- VRAD_ERR shaded");
    CHECK_MSG(near(m, X(&c, 9.7), Y(&c, 15.0), 0xffffff, 0),
              "chi2(v): white off the curve and the band");
    /* the lowest curve pixel lies at VRAD within VRAD_ERR */
    int ybest = -1, xbest = 0;
    for (int x = (int)c.f.x0 + 2; x < (int)(c.f.x0 + c.f.w) - 2; x++)
        for (int y = (int)c.f.y0; y < (int)(c.f.y0 + c.f.h); y++)
            if (dist2(pixel(m, x, y), RVFIT_PLOT_RGB_RESID) < 12 && y > ybest)
                ybest = y, xbest = x;
    double vmin = c.f.xmin + (xbest - c.f.x0) / c.f.w * (c.f.xmax - c.f.xmin);
    CHECK_MSG(ybest > 0 && fabs(vmin - 12.5) < 0.5,
              "chi2(v): minimum drawn at %.2f km/s", vmin);
}

/* Summary of ten spectra: S/N 10..100 evenly in log, VRAD_ERR = 10/(S/N),
 * RVS_WARN bit RV (2) set on three.  The scatter panel spans log10 S/N
 * [1, 2] and log10 VRAD_ERR [-1, 0] padded by 5%: the first point
 * (S/N 10, 1 km/s) is 0.05/1.1 of the panel in from the left and the top.
 * The warning panel has 7 bars, the RV bar 3 high, the CHISQ bar empty. */
static void check_summary(const char *dir)
{
    double sn[10], vrad[10], verr[10], par[10];
    uint32_t warn[10];
    for (int i = 0; i < 10; i++) {
        sn[i] = 10 * pow(10, i / 9.0);
        verr[i] = 10 / sn[i];
        vrad[i] = par[i] = i;
        warn[i] = i < 3 ? RVFIT_WARN_RV : 0;
    }
    rvfit_plot_summary s = {"test.fits", 10, sn, vrad, verr, par, warn,
                            NULL};
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.png", dir);
    rvfit_err e;
    CHECK_MSG(rvfit_plot_summary_write(path, &s, &e) == RVFIT_OK, "%s",
              e.msg);
    img m;
    open_png(path, &m);
    if (m.d) {
        rvfit_plot_frame f;
        rvfit_plot_summary_panel(0, &f);
        double x = f.x0 + 0.05 / 1.1 * f.w, y = f.y0 + 0.05 / 1.1 * f.h;
        CHECK_MSG(near(&m, x, y, RVFIT_PLOT_RGB_RESID, 1),
                  "first point of the scatter at (%.0f, %.0f)", x, y);
        CHECK_MSG(near(&m, f.x0 + f.w / 2, y, 0xffffff, 0),
                  "nothing in the scatter's top middle");
        rvfit_plot_summary_panel(7, &f);
        double bw = f.w / 7, base = f.y0 + f.h - 2;
        CHECK_MSG(near(&m, f.x0 + 1.5 * bw, base, RVFIT_PLOT_RGB_MODEL, 0),
                  "RV bar");
        CHECK_MSG(near(&m, f.x0 + 0.5 * bw, base, 0xffffff, 0),
                  "no CHISQ bar");
        /* bar height 3 of an axis to 3.3: its top at 1/11 of the panel */
        CHECK_MSG(near(&m, f.x0 + 1.5 * bw, f.y0 + f.h * 0.15,
                       RVFIT_PLOT_RGB_MODEL, 0), "RV bar reaches 3");
        /* (beside the count written over the bar's centre) */
        CHECK_MSG(near(&m, f.x0 + 1.8 * bw, f.y0 + f.h * 0.05, 0xffffff, 0),
                  "RV bar stops at 3");
    }
    cairo_surface_destroy(m.s);
}

int main(void)
{
    CHECK(rvfit_plot_available() == 1);
    rvfit_plot_spec s;
    rvfit_result res;
    build(&s, &res);
    char path[4200];
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("plot_render"));
    snprintf(path, sizeof path, "%s/fig.png", dir);
    rvfit_err e;
    rvfit_err_clear(&e);
    int rc = rvfit_plot_write(path, &s, &e);
    CHECK_MSG(rc == RVFIT_OK, "%s", e.msg);
    img m;
    open_png(path, &m);
    if (m.d) {
        int w, h;
        rvfit_plot_size(2, &w, &h);
        CHECK(m.w == w && m.h == h);
        check_arm_b(&m, &s);
        check_arm_r(&m, &s);
        check_labels(&m, &s);
        check_row(&m, &s);
    }
    cairo_surface_destroy(m.s);
    /* an unwritable place: an error naming the path, no file */
    rc = rvfit_plot_write("/nonexistent-dir/fig.png", &s, &e);
    CHECK(rc == RVFIT_ERR_IO);
    CHECK(tu_contains(e.msg, "/nonexistent-dir/fig.png"));
    char w[128];
    rvfit_warn_names(RVFIT_WARN_RV | RVFIT_WARN_BAD_HESSIAN, w, sizeof w);
    CHECK_MSG(!strcmp(w, "RV, BAD_HESSIAN"), "%s", w);
    check_summary(dir);
    /* a spectrum without a usable pixel and without a fit: the figure
     * still comes out (the panel says why), the frame is refused */
    for (int i = 0; i < NB; i++)
        ib[i] = 0;
    s.narm = 1, s.res = NULL, s.arm[0].model = s.arm[0].cont = NULL;
    snprintf(path, sizeof path, "%s/bad.png", dir);
    CHECK(rvfit_plot_write(path, &s, &e) == RVFIT_OK);
    CHECK(access(path, R_OK) == 0);
    rvfit_plot_frame f;
    CHECK(rvfit_plot_frame_of(&s, 0, 0, &f, &e) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(e.msg, "no usable pixels"));
    CHECK(rvfit_plot_chisq_frame(&s, &f, &e) == RVFIT_ERR_INVALID);
    rvfit_plot_zoom z[RVFIT_PLOT_MAX_ZOOM];
    CHECK(rvfit_plot_zooms(&s, z) == 0);
    return tu_finish("test_plot_render");
}
#endif
