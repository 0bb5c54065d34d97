/* plot_png.c — a fit figure as a PNG file: the title with the fitted
 * numbers, the arms (plot_draw.c), written to a temporary and renamed into
 * place.  Without Cairo at build time it says that plots are unavailable. */
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

static void title(cairo_t *cr, const rvfit_plot_spec *s)
{
    char l1[512], l2[512], w[256];
    const rvfit_result *r = s->res;
    snprintf(l1, sizeof l1, "TARGETID %lld", (long long)s->targetid);
    if (r) {
        size_t n = strlen(l1);
        snprintf(l1 + n, sizeof l1 - n, "    VRAD %.2f \xc2\xb1 %.2f km/s"
                 "    vsini %.1f km/s", r->vrad, r->vrad_err, r->vsini);
        l2[0] = '\0';
        for (int i = 0; s->lib && i < s->lib->nparam; i++) {
            n = strlen(l2);
            snprintf(l2 + n, sizeof l2 - n, "%s%s %.*f", i ? "    " : "",
                     plot_param_label(s->lib->axis[i].name),
                     fabs(r->param[i]) >= 100 ? 0 : 2, r->param[i]);
        }
        rvfit_warn_names(r->warn, w, sizeof w);
        n = strlen(l2);
        snprintf(l2 + n, sizeof l2 - n, "    RVS_WARN %u%s%s%s", r->warn,
                 w[0] ? " (" : "", w, w[0] ? ")" : "");
    } else {
        snprintf(l2, sizeof l2, "not fitted");
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
