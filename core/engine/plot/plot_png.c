/* plot_png.c — a fit figure as a PNG file: the title with the fitted
 * numbers and their errors and the legend, the arms (plot_draw.c), the
 * row of zoom and chi^2(v) panels (plot_row.c), written to a temporary
 * and renamed into place.  Without Cairo at build time it says that plots are unavailable. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plot_internal.h"
#include "rvfit/files.h"

#ifndef RVFIT_HAVE_CAIRO

int rvfit_plot_available(void) { return 0; }

int rvfit_plot_write(const char *path, const rvfit_plot_spec *s,
                     rvfit_err *err)
{
    (void)s;
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "%s: rvfit was built "
                         "without Cairo: --plot-dir unavailable", path);
}

#else

int rvfit_plot_available(void) { return 1; }

/* "VALUE +- ERR UNIT" with as many decimals as the error asks (2
 * significant digits of it), into buf. */
static void with_error(char *buf, size_t n, double v, double e,
                       const char *unit)
{
    int d = 2;
    if (isfinite(e) && e > 0)
        d = (int)fmax(0, fmin(4, 1 - floor(log10(e))));
    else if (fabs(v) >= 100)
        d = 0;
    if (isfinite(e))
        snprintf(buf, n, "%.*f \xc2\xb1 %.*f%s%s", d, v, d, e,
                 unit[0] ? " " : "", unit);
    else
        snprintf(buf, n, "%.*f%s%s", d, v, unit[0] ? " " : "", unit);
}

static void append(char *buf, size_t n, const char *text)
{
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, "%s%s", l ? "    " : "", text);
}

/* The legend at the right of the title's third line. */
static void legend(cairo_t *cr, const rvfit_plot_spec *s, double y)
{
    int cont = 0;
    for (int a = 0; a < s->narm; a++)
        cont |= s->arm[a].cont != NULL;
    static const struct {
        const char *name;
        unsigned rgb;
        int box, cont;
    } k[] = {{"data", RVFIT_PLOT_RGB_DATA, 0, 0},
             {"\xc2\xb1" "1\xcf\x83", RVFIT_PLOT_RGB_BAND, 1, 0},
             {"model", RVFIT_PLOT_RGB_MODEL, 0, 0},
             {"continuum", RVFIT_PLOT_RGB_CONT, 0, 1},
             {"masked", RVFIT_PLOT_RGB_MASK, 1, 0},
             {"line", RVFIT_PLOT_RGB_LINE, 0, 0}};
    double x = 560;
    cairo_set_font_size(cr, 12);
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        if (k[i].cont && !cont)
            continue;
        plot_rgb(cr, k[i].rgb);
        if (k[i].box) {
            cairo_rectangle(cr, x, y - 9, 18, 10);
            cairo_fill(cr);
        } else {
            cairo_set_line_width(cr, 2);
            cairo_move_to(cr, x, y - 4);
            cairo_line_to(cr, x + 18, y - 4);
            cairo_stroke(cr);
        }
        cairo_text_extents_t e;
        cairo_text_extents(cr, k[i].name, &e);
        plot_rgb(cr, 0x000000);
        cairo_move_to(cr, x + 22, y);
        cairo_show_text(cr, k[i].name);
        x += 22 + e.x_advance + 14;
    }
}

/* Three lines: the target and its velocity; the parameters with their
 * errors; chi^2, RVS_WARN and the legend. */
static void title(cairo_t *cr, const rvfit_plot_spec *s)
{
    char l1[512], l2[768] = "", l3[512], w[256], v[96];
    const rvfit_result *r = s->res;
    snprintf(l1, sizeof l1, "TARGETID %lld", (long long)s->targetid);
    if (r) {
        with_error(v, sizeof v, r->vrad, r->vrad_err, "km/s");
        size_t n = strlen(l1);
        snprintf(l1 + n, sizeof l1 - n, "    VRAD %s    vsini %.1f km/s",
                 v, r->vsini);
        for (int i = 0; s->lib && i < s->lib->nparam; i++) {
            char p[160];
            with_error(v, sizeof v, r->param[i], r->param_err[i],
                       s->lib->axis[i].unit);
            snprintf(p, sizeof p, "%s %s",
                     plot_param_label(s->lib->axis[i].name), v);
            append(l2, sizeof l2, p);
        }
        rvfit_warn_names(r->warn, w, sizeof w);
        snprintf(l3, sizeof l3, "\xcf\x87\xc2\xb2_red %.3g (%ld pixels)"
                 "    RVS_WARN %u%s%s%s", r->chisq_red, r->npix_tot,
                 r->warn, w[0] ? " (" : "", w, w[0] ? ")" : "");
    } else {
        snprintf(l2, sizeof l2, "not fitted");
        l3[0] = '\0';
    }
    plot_rgb(cr, 0x000000);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 16);
    cairo_move_to(cr, PLOT_LEFT, 22);
    cairo_show_text(cr, l1);
    cairo_set_font_size(cr, 14);
    cairo_move_to(cr, PLOT_LEFT, 44);
    cairo_show_text(cr, l2);
    cairo_move_to(cr, PLOT_LEFT, 66);
    cairo_show_text(cr, l3);
    legend(cr, s, 66);
}

static int png_error(cairo_status_t st, const char *path, rvfit_err *err)
{
    if (st == CAIRO_STATUS_WRITE_ERROR && errno)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot write: %s",
                             path, strerror(errno));
    return rvfit_err_set(err, st == CAIRO_STATUS_NO_MEMORY
                                  ? RVFIT_ERR_NOMEM : RVFIT_ERR_IO,
                         "%s: cannot draw: %s", path,
                         cairo_status_to_string(st));
}

int rvfit_plot_write(const char *path, const rvfit_plot_spec *s,
                     rvfit_err *err)
{
    int w, h;
    rvfit_plot_size(s->narm, &w, &h);
    cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w,
                                                     h);
    cairo_t *cr = cairo_create(sf);
    plot_rgb(cr, 0xffffff);
    cairo_paint(cr);
    title(cr, s);
    for (int a = 0; a < s->narm; a++)
        plot_draw_arm(cr, s, a);
    plot_rgb(cr, 0x000000);
    plot_label(cr, PLOT_LEFT + (PLOT_W - PLOT_LEFT - PLOT_RIGHT) / 2.0,
               PLOT_TITLE_H + (s->narm > 0 ? s->narm : 1) * PLOT_ARM_H +
                   PLOT_XLAB_H - 8,
               12, "wavelength [\xc3\x85, vacuum]", 0);
    plot_draw_row(cr, s);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    int rc = plot_png_save(sf, st, path, err);
    cairo_surface_destroy(sf);
    return rc;
}

int plot_png_save(cairo_surface_t *sf, cairo_status_t st, const char *path,
                  rvfit_err *err)
{
    char tmp[RVFIT_PATH_LEN + 64];
    int rc = RVFIT_OK;
    if (st != CAIRO_STATUS_SUCCESS)
        rc = png_error(st, path, err);
    else if (rvfit_tmpname(tmp, sizeof tmp, path))
        rc = rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: path too long",
                           path);
    if (!rc) {
        errno = 0;
        st = cairo_surface_write_to_png(sf, tmp);
        if (st != CAIRO_STATUS_SUCCESS)
            rc = png_error(st, path, err);
        else if (rename(tmp, path) != 0)
            rc = rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot rename %s "
                               "into place: %s", path, tmp, strerror(errno));
        if (rc)
            unlink(tmp);
    }
    return rc;
}

#endif
