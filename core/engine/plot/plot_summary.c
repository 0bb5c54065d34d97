/* plot_summary.c — the summary figure of one input file (rvfit/plot.h):
 * VRAD_ERR against S/N, the distributions of VRAD and of the parameters,
 * and how often each RVS_WARN bit is set.  Panels in a 4 x 2 grid. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"

void rvfit_plot_summary_panel(int k, rvfit_plot_frame *f)
{
    int col = k % SUM_COLS, row = k / SUM_COLS;
    double cw = (double)SUM_W / SUM_COLS;
    f->x0 = col * cw + SUM_PAD_L;
    f->w = cw - SUM_PAD_L - SUM_PAD_R;
    f->y0 = SUM_TITLE_H + row * SUM_ROW_H + SUM_PAD_T;
    f->h = SUM_ROW_H - SUM_PAD_T - SUM_PAD_B;
    f->xmin = f->ymin = 0;
    f->xmax = f->ymax = 1;
}

#ifndef RVFIT_HAVE_CAIRO

int rvfit_plot_summary_write(const char *path, const rvfit_plot_summary *s,
                             rvfit_err *err)
{
    (void)s;
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "%s: rvfit was built "
                         "without Cairo: --plot-dir unavailable", path);
}

#else

/* Finite range of x (log10 of the positive values when lg). */
static int range(const double *x, size_t n, size_t stride, int lg,
                 double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = x[i * stride];
        if (lg)
            v = v > 0 ? log10(v) : NAN;
        if (isfinite(v))
            *lo = fmin(*lo, v), *hi = fmax(*hi, v);
    }
    if (!(*lo <= *hi))
        return 0;
    double pad = *hi > *lo ? 0.05 * (*hi - *lo) : 0.5;
    *lo -= pad, *hi += pad;
    return 1;
}

/* Frame, title and the range ends as labels (x ones unless lgx < 0). */
static void frame(cairo_t *cr, const rvfit_plot_frame *f, const char *title,
                  int lgx, int lgy)
{
    char t[64];
    plot_rgb(cr, 0x000000);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, f->x0, f->y0, f->w, f->h);
    cairo_stroke(cr);
    plot_label(cr, f->x0 + f->w / 2, f->y0 - 6, 13, title, 0);
    snprintf(t, sizeof t, lgy ? "%.2g" : "%.4g", lgy ? pow(10, f->ymax)
                                                    : f->ymax);
    plot_label(cr, f->x0 - 3, f->y0 + 9, 10, t, 1);
    snprintf(t, sizeof t, lgy ? "%.2g" : "%.4g", lgy ? pow(10, f->ymin)
                                                    : f->ymin);
    plot_label(cr, f->x0 - 3, f->y0 + f->h, 10, t, 1);
    if (lgx < 0)
        return;
    snprintf(t, sizeof t, lgx ? "%.2g" : "%.4g", lgx ? pow(10, f->xmin)
                                                    : f->xmin);
    plot_label(cr, f->x0 + 12, f->y0 + f->h + 14, 10, t, 0);
    snprintf(t, sizeof t, lgx ? "%.2g" : "%.4g", lgx ? pow(10, f->xmax)
                                                    : f->xmax);
    plot_label(cr, f->x0 + f->w - 12, f->y0 + f->h + 14, 10, t, 0);
}

static double fx(const rvfit_plot_frame *f, double v)
{
    return f->x0 + (v - f->xmin) / (f->xmax - f->xmin) * f->w;
}

static double fy(const rvfit_plot_frame *f, double v)
{
    return f->y0 + (f->ymax - v) / (f->ymax - f->ymin) * f->h;
}

static void scatter(cairo_t *cr, int k, const rvfit_plot_summary *s)
{
    rvfit_plot_frame f;
    rvfit_plot_summary_panel(k, &f);
    if (range(s->sn, s->n, 1, 1, &f.xmin, &f.xmax) &&
        range(s->vrad_err, s->n, 1, 1, &f.ymin, &f.ymax)) {
        plot_rgb(cr, RVFIT_PLOT_RGB_RESID);
        for (size_t i = 0; i < s->n; i++)
            if (s->sn[i] > 0 && s->vrad_err[i] > 0 &&
                isfinite(s->sn[i]) && isfinite(s->vrad_err[i])) {
                cairo_arc(cr, fx(&f, log10(s->sn[i])),
                          fy(&f, log10(s->vrad_err[i])), 2.0, 0, 2 * PLOT_PI);
                cairo_fill(cr);
            }
    }
    frame(cr, &f, "VRAD_ERR (km/s) vs S/N", 1, 1);
}

/* Bars of height count[b] (b < nb) in panel f, y from 0. */
static void bars(cairo_t *cr, rvfit_plot_frame *f, const size_t *count,
                 int nb, unsigned colour)
{
    size_t top = 1;
    for (int b = 0; b < nb; b++)
        top = count[b] > top ? count[b] : top;
    f->ymin = 0, f->ymax = (double)top * 1.1;
    plot_rgb(cr, colour);
    for (int b = 0; b < nb; b++) {
        double x0 = f->x0 + f->w * b / nb, y = fy(f, (double)count[b]);
        cairo_rectangle(cr, x0 + 1, y, f->w / nb - 2, f->y0 + f->h - y);
        cairo_fill(cr);
    }
}

static void histogram(cairo_t *cr, int k, const double *x, size_t stride,
                      size_t n, const char *title)
{
    enum { NB = 24 };
    size_t count[NB] = {0};
    rvfit_plot_frame f;
    rvfit_plot_summary_panel(k, &f);
    if (range(x, n, stride, 0, &f.xmin, &f.xmax)) {
        for (size_t i = 0; i < n; i++) {
            double v = x[i * stride];
            if (!isfinite(v))
                continue;
            int b = (int)((v - f.xmin) / (f.xmax - f.xmin) * NB);
            count[b < 0 ? 0 : b >= NB ? NB - 1 : b]++;
        }
        bars(cr, &f, count, NB, RVFIT_PLOT_RGB_BAND);
    }
    frame(cr, &f, title, 0, 0);
}

static void warn_counts(cairo_t *cr, int k, const rvfit_plot_summary *s)
{
    enum { NW = 7 };
    size_t count[NW] = {0};
    rvfit_plot_frame f;
    rvfit_plot_summary_panel(k, &f);
    for (size_t i = 0; i < s->n; i++)
        for (int b = 0; b < NW; b++)
            count[b] += (s->warn[i] >> b) & 1u;
    bars(cr, &f, count, NW, RVFIT_PLOT_RGB_MODEL);
    frame(cr, &f, "RVS_WARN bits set (count)", -1, 0);
    plot_rgb(cr, 0x000000);
    for (int b = 0; b < NW; b++) {
        char name[32], num[32];
        rvfit_warn_names(1u << b, name, sizeof name);
        snprintf(num, sizeof num, "%zu", count[b]);
        double x = f.x0 + f.w * (b + 0.5) / NW;
        cairo_save(cr);
        cairo_move_to(cr, x - 3, f.y0 + f.h + 4);
        cairo_rotate(cr, PLOT_PI / 2);
        cairo_set_font_size(cr, 9);
        cairo_show_text(cr, name);
        cairo_restore(cr);
        plot_label(cr, x, f.y0 + 12, 9, num, 0);
    }
}

static void draw(cairo_t *cr, const rvfit_plot_summary *s)
{
    char t[600];
    plot_rgb(cr, 0xffffff);
    cairo_paint(cr);
    plot_rgb(cr, 0x000000);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 16);
    cairo_move_to(cr, SUM_PAD_L, 24);
    snprintf(t, sizeof t, "%s: %zu spectra", s->title, s->n);
    cairo_show_text(cr, t);
    scatter(cr, 0, s);
    histogram(cr, 1, s->vrad, 1, s->n, "VRAD (km/s)");
    int np = s->lib ? s->lib->nparam : 0;
    for (int p = 0; p < np && p < SUM_COLS * SUM_ROWS - 3; p++)
        histogram(cr, 2 + p, s->param + p, (size_t)np, s->n,
                  plot_param_label(s->lib->axis[p].name));
    warn_counts(cr, SUM_COLS * SUM_ROWS - 1, s);
}

int rvfit_plot_summary_write(const char *path, const rvfit_plot_summary *s,
                             rvfit_err *err)
{
    cairo_surface_t *sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24,
                                                     SUM_W, SUM_H);
    cairo_t *cr = cairo_create(sf);
    draw(cr, s);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    int rc = plot_png_save(sf, st, path, err);
    cairo_surface_destroy(sf);
    return rc;
}

#endif
