/* plot_draw.c — drawing the panels of one arm of a fit figure with Cairo
 * (rvfit/plot.h); built only with Cairo. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plot_internal.h"

#ifdef RVFIT_HAVE_CAIRO

void plot_rgb(cairo_t *cr, unsigned c)
{
    cairo_set_source_rgb(cr, ((c >> 16) & 255) / 255.0,
                         ((c >> 8) & 255) / 255.0, (c & 255) / 255.0);
}

double plot_px(const rvfit_plot_frame *f, double wave)
{
    return f->x0 + (wave - f->xmin) / (f->xmax - f->xmin) * f->w;
}

/* Values far outside the panel (a pixel with a tiny ivar) are held a
 * few panel heights away: clipped all the same, but within the range of
 * Cairo's fixed-point coordinates. */
double plot_py(const rvfit_plot_frame *f, double v)
{
    double y = (f->ymax - v) / (f->ymax - f->ymin);
    return f->y0 + (y < -4 ? -4 : y > 5 ? 5 : y) * f->h;
}

static int usable(const rvfit_plot_arm *A, size_t i)
{
    return A->ivar[i] > 0 && isfinite(A->flux[i]);
}

/* Half the pixel spacing around pixel i, in Angstrom. */
static double half_step(const rvfit_plot_arm *A, size_t i, int side)
{
    size_t j = side < 0 ? (i > 0 ? i - 1 : i + 1)
                        : (i + 1 < A->npix ? i + 1 : i - 1);
    return 0.5 * fabs(A->wave[i] - A->wave[j]);
}

/* Runs of masked pixels, shaded over the full panel height. */
void plot_mask(cairo_t *cr, const rvfit_plot_frame *f,
                      const rvfit_plot_arm *A)
{
    plot_rgb(cr, RVFIT_PLOT_RGB_MASK);
    for (size_t i = 0; i < A->npix;) {
        if (usable(A, i)) {
            i++;
            continue;
        }
        size_t j = i;
        while (j + 1 < A->npix && !usable(A, j + 1))
            j++;
        double x0 = plot_px(f, A->wave[i] - half_step(A, i, -1));
        double x1 = plot_px(f, A->wave[j] + half_step(A, j, 1));
        cairo_rectangle(cr, x0, f->y0, fmax(x1 - x0, 1.0), f->h);
        cairo_fill(cr);
        i = j + 1;
    }
}

/* The 1-sigma band: one polygon per run of usable pixels. */
void plot_band(cairo_t *cr, const rvfit_plot_frame *f,
                      const rvfit_plot_arm *A)
{
    plot_rgb(cr, RVFIT_PLOT_RGB_BAND);
    for (size_t i = 0; i < A->npix;) {
        if (!usable(A, i)) {
            i++;
            continue;
        }
        size_t j = i;
        while (j + 1 < A->npix && usable(A, j + 1))
            j++;
        for (size_t k = i; k <= j; k++)
            cairo_line_to(cr, plot_px(f, A->wave[k]),
                          plot_py(f, A->flux[k] + 1 / sqrt(A->ivar[k])));
        for (size_t k = j + 1; k-- > i;)
            cairo_line_to(cr, plot_px(f, A->wave[k]),
                          plot_py(f, A->flux[k] - 1 / sqrt(A->ivar[k])));
        cairo_close_path(cr);
        cairo_fill(cr);
        i = j + 1;
    }
}

/* A curve through the finite values (of usable pixels only when
 * data_only), broken where they stop. */
void plot_curve(cairo_t *cr, const rvfit_plot_frame *f,
                       const rvfit_plot_arm *A, const float *v,
                       int data_only, unsigned colour, double width)
{
    int pen = 0;
    for (size_t i = 0; i < A->npix; i++) {
        int ok = isfinite(v[i]) && (!data_only || usable(A, i));
        if (ok && pen)
            cairo_line_to(cr, plot_px(f, A->wave[i]), plot_py(f, v[i]));
        else if (ok)
            cairo_move_to(cr, plot_px(f, A->wave[i]), plot_py(f, v[i]));
        pen = ok;
    }
    plot_rgb(cr, colour);
    cairo_set_line_width(cr, width);
    cairo_stroke(cr);
}

void plot_label(cairo_t *cr, double x, double y, double size,
                  const char *text, int align_right)
{
    cairo_text_extents_t e;
    cairo_set_font_size(cr, size);
    cairo_text_extents(cr, text, &e);
    cairo_move_to(cr, align_right ? x - e.x_advance : x - e.x_advance / 2,
                  y);
    cairo_show_text(cr, text);
}

void plot_vlabel(cairo_t *cr, double x, double y, double size,
                 const char *text)
{
    cairo_text_extents_t e;
    cairo_save(cr);
    cairo_set_font_size(cr, size);
    cairo_text_extents(cr, text, &e);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, -PLOT_PI / 2);
    cairo_move_to(cr, -e.x_advance / 2, 0);
    cairo_show_text(cr, text);
    cairo_restore(cr);
}

void plot_xticks(cairo_t *cr, const rvfit_plot_frame *f, int nmax)
{
    char t[64];
    double span = f->xmax - f->xmin, step = pow(10, floor(log10(span / 4)));
    while (span / step > nmax)
        step *= span / step > 2.5 * nmax ? 5 : 2;
    plot_rgb(cr, 0x000000);
    cairo_set_line_width(cr, 1);
    for (double w = ceil(f->xmin / step) * step; w <= f->xmax; w += step) {
        double x = plot_px(f, w);
        cairo_move_to(cr, x, f->y0 + f->h);
        cairo_line_to(cr, x, f->y0 + f->h + 4);
        cairo_stroke(cr);
        snprintf(t, sizeof t, "%.*f", step < 1 ? 1 : 0, w);
        plot_label(cr, x, f->y0 + f->h + 16, 11, t, 0);
    }
}

/* Frame, y labels at the range ends and the y axis' name; under the
 * residual panel, wavelength ticks at a round step. */
void plot_frame_box(cairo_t *cr, const rvfit_plot_frame *f, double size)
{
    char t[32];
    plot_rgb(cr, 0x000000);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, f->x0, f->y0, f->w, f->h);
    cairo_stroke(cr);
    snprintf(t, sizeof t, "%.3g", f->ymax);
    plot_label(cr, f->x0 - size / 3, f->y0 + 10, size, t, 1);
    snprintf(t, sizeof t, "%.3g", f->ymin);
    plot_label(cr, f->x0 - size / 3, f->y0 + f->h, size, t, 1);
}

static void draw_axes(cairo_t *cr, const rvfit_plot_frame *f, int resid,
                      const char *unit)
{
    char t[96];
    plot_frame_box(cr, f, 11);
    if (!resid) {
        snprintf(t, sizeof t, "flux%s%s%s", unit ? " [" : "",
                 unit ? unit : "", unit ? "]" : " (input's units)");
        plot_vlabel(cr, 14, f->y0 + f->h / 2, 12, t);
        return;
    }
    plot_vlabel(cr, 14, f->y0 + f->h / 2, 10, "(data\xe2\x88\x92model)/\xcf\x83");
    plot_xticks(cr, f, 12);
}

/* Above the data panel: the arm, its S/N and chi^2 per usable pixel. */
static void arm_header(cairo_t *cr, const rvfit_plot_spec *s, int a,
                       const rvfit_plot_frame *f)
{
    const rvfit_plot_arm *A = &s->arm[a];
    size_t n = 0;
    for (size_t i = 0; i < A->npix; i++)
        n += usable(A, i);
    char t[256];
    int k = snprintf(t, sizeof t, "arm %s   %zu usable pixels", A->name, n);
    const rvfit_result *r = s->res;
    if (r && a < RVFIT_MAX_ARMS && k > 0 && (size_t)k < sizeof t)
        snprintf(t + k, sizeof t - (size_t)k,
                 "   S/N %.1f per pixel   \xcf\x87\xc2\xb2/pixel %.3g",
                 r->sn[a], n ? r->chisq[a] / (double)n : NAN);
    plot_rgb(cr, 0x000000);
    cairo_set_font_size(cr, 12);
    cairo_move_to(cr, f->x0, f->y0 - 6);
    cairo_show_text(cr, t);
}

/* Data panel and residual panel of one arm. */
void plot_draw_arm(cairo_t *cr, const rvfit_plot_spec *s, int a)
{
    const rvfit_plot_arm *A = &s->arm[a];
    rvfit_plot_frame f, r;
    rvfit_err e;
    if (rvfit_plot_frame_of(s, a, 0, &f, &e) ||
        rvfit_plot_frame_of(s, a, 1, &r, &e)) {
        plot_rgb(cr, 0x000000);
        plot_label(cr, PLOT_W / 2.0, f.y0 + f.h / 2, 14, e.msg, 0);
        return;
    }
    cairo_save(cr);
    cairo_rectangle(cr, f.x0, f.y0, f.w, f.h);
    cairo_clip(cr);
    plot_mask(cr, &f, A);
    plot_band(cr, &f, A);
    plot_curve(cr, &f, A, A->flux, 1, RVFIT_PLOT_RGB_DATA, 0.8);
    if (A->cont)
        plot_curve(cr, &f, A, A->cont, 0, RVFIT_PLOT_RGB_CONT, 1.5);
    if (A->model)
        plot_curve(cr, &f, A, A->model, 0, RVFIT_PLOT_RGB_MODEL, 1.5);
    cairo_restore(cr);
    cairo_save(cr);
    cairo_rectangle(cr, r.x0, r.y0, r.w, r.h);
    cairo_clip(cr);
    plot_mask(cr, &r, A);
    plot_rgb(cr, 0x999999);
    cairo_set_line_width(cr, 1);
    cairo_move_to(cr, r.x0, plot_py(&r, 0));
    cairo_line_to(cr, r.x0 + r.w, plot_py(&r, 0));
    cairo_stroke(cr);
    if (A->model) {
        float *res = malloc(A->npix * sizeof *res);
        for (size_t i = 0; res && i < A->npix; i++)
            res[i] = (float)((A->flux[i] - A->model[i]) * sqrt(A->ivar[i]));
        if (res)
            plot_curve(cr, &r, A, res, 1, RVFIT_PLOT_RGB_RESID, 1.2);
        free(res);
    }
    cairo_restore(cr);
    draw_axes(cr, &f, 0, s->flux_unit);
    draw_axes(cr, &r, 1, NULL);
    arm_header(cr, s, a, &f);
}

#endif
