/* plot_row.c — the row under the arms of a fit figure (rvfit/plot.h):
 * zoom panels on the strong lines inside the arms (data, 1-sigma band,
 * model, the lines' positions at VRAD) and -2 ln L against velocity from
 * the final velocity scan, with VRAD and its error.  Built only with
 * Cairo; the geometry is plot_layout.c's. */
#include <math.h>
#include <stdio.h>

#include "plot_internal.h"

#ifdef RVFIT_HAVE_CAIRO

/* Frame, range labels, x ticks, the panel's title and axis label. */
static void row_axes(cairo_t *cr, const rvfit_plot_frame *f,
                     const char *title, const char *xlabel)
{
    plot_frame_box(cr, f, 10);
    plot_xticks(cr, f, 4);
    plot_label(cr, f->x0 + f->w / 2, f->y0 + f->h + 34, 11, xlabel, 0);
    cairo_set_font_size(cr, 13);
    cairo_move_to(cr, f->x0, f->y0 - 8);
    cairo_show_text(cr, title);
}

static void draw_zoom(cairo_t *cr, const rvfit_plot_spec *s,
                      const rvfit_plot_zoom *z, int k)
{
    rvfit_plot_frame f;
    rvfit_err e;
    if (rvfit_plot_zoom_frame(s, k, &f, &e))
        return;
    const rvfit_plot_arm *A = &s->arm[z->arm];
    size_t i0, i1;
    plot_window(A, z->lo, z->hi, &i0, &i1);
    /* one pixel more each side, so that curves reach the frame */
    i0 = i0 > 0 ? i0 - 1 : 0;
    i1 = i1 < A->npix ? i1 + 1 : i1;
    rvfit_plot_arm w = {A->name, i1 - i0, A->wave + i0, A->flux + i0,
                        A->ivar + i0, A->model ? A->model + i0 : NULL,
                        NULL};
    cairo_save(cr);
    cairo_rectangle(cr, f.x0, f.y0, f.w, f.h);
    cairo_clip(cr);
    plot_mask(cr, &f, &w);
    plot_band(cr, &f, &w);
    static const double dash[] = {4, 3};
    cairo_set_dash(cr, dash, 2, 0);
    for (int l = 0; l < z->nline; l++) {
        double x = plot_px(&f, z->line[l]);
        cairo_move_to(cr, x, f.y0);
        cairo_line_to(cr, x, f.y0 + f.h);
    }
    plot_rgb(cr, RVFIT_PLOT_RGB_LINE);
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    plot_curve(cr, &f, &w, w.flux, 1, RVFIT_PLOT_RGB_DATA, 1.0);
    if (w.model)
        plot_curve(cr, &f, &w, w.model, 0, RVFIT_PLOT_RGB_MODEL, 1.5);
    cairo_restore(cr);
    char title[96];
    snprintf(title, sizeof title, "%s (arm %s)", z->name, A->name);
    row_axes(cr, &f, title, "wavelength [\xc3\x85]");
}

/* -2 ln L - min over the final scan: the points and the curve through
 * them, VRAD and VRAD +- VRAD_ERR. */
static void draw_chisq(cairo_t *cr, const rvfit_plot_spec *s)
{
    rvfit_plot_frame f;
    rvfit_err e;
    const char *title = "\xcf\x87\xc2\xb2(v), final scan";
    const char *xl = "v [km/s]";
    if (rvfit_plot_chisq_frame(s, &f, &e)) {
        plot_rgb(cr, 0x000000);
        cairo_set_line_width(cr, 1);
        cairo_rectangle(cr, f.x0, f.y0, f.w, f.h);
        cairo_stroke(cr);
        cairo_set_font_size(cr, 13);
        cairo_move_to(cr, f.x0, f.y0 - 8);
        cairo_show_text(cr, title);
        plot_label(cr, f.x0 + f.w / 2, f.y0 + f.h / 2, 11,
                   s->res ? "no velocity scan" : "not fitted", 0);
        if (s->res)
            plot_label(cr, f.x0 + f.w / 2, f.y0 + f.h / 2 + 16, 10,
                       "(rvfit fit --set output.chisq_v=1)", 0);
        return;
    }
    const rvfit_result *r = s->res;
    double mmin = INFINITY;
    for (int i = 0; i < r->vscan_n; i++)
        if (isfinite(r->vscan_m2lnl[i]))
            mmin = fmin(mmin, r->vscan_m2lnl[i]);
    cairo_save(cr);
    cairo_rectangle(cr, f.x0, f.y0, f.w, f.h);
    cairo_clip(cr);
    if (isfinite(r->vrad) && isfinite(r->vrad_err)) {
        double a = plot_px(&f, r->vrad - r->vrad_err);
        double b = plot_px(&f, r->vrad + r->vrad_err);
        plot_rgb(cr, RVFIT_PLOT_RGB_BAND);
        cairo_rectangle(cr, a, f.y0, fmax(b - a, 1.0), f.h);
        cairo_fill(cr);
        plot_rgb(cr, RVFIT_PLOT_RGB_MODEL);
        cairo_set_line_width(cr, 1.5);
        cairo_move_to(cr, plot_px(&f, r->vrad), f.y0);
        cairo_line_to(cr, plot_px(&f, r->vrad), f.y0 + f.h);
        cairo_stroke(cr);
    }
    plot_rgb(cr, RVFIT_PLOT_RGB_RESID);
    cairo_set_line_width(cr, 1.5);
    for (int i = 0; i < r->vscan_n; i++)
        cairo_line_to(cr, plot_px(&f, r->vscan_v[i]),
                      plot_py(&f, r->vscan_m2lnl[i] - mmin));
    cairo_stroke(cr);
    for (int i = 0; i < r->vscan_n; i++) {
        cairo_arc(cr, plot_px(&f, r->vscan_v[i]),
                  plot_py(&f, r->vscan_m2lnl[i] - mmin), 2.5, 0,
                  2 * PLOT_PI);
        cairo_fill(cr);
    }
    cairo_restore(cr);
    row_axes(cr, &f, title, xl);
    plot_vlabel(cr, f.x0 - 32, f.y0 + f.h / 2, 10,
                "\xe2\x88\x92" "2 \xce\x94ln L");
}

void plot_draw_row(cairo_t *cr, const rvfit_plot_spec *s)
{
    rvfit_plot_zoom z[RVFIT_PLOT_MAX_ZOOM];
    int n = rvfit_plot_zooms(s, z);
    for (int k = 0; k < n; k++)
        draw_zoom(cr, s, &z[k], k);
    draw_chisq(cr, s);
}

#endif
