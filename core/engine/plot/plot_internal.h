/* plot_internal.h — layout constants shared by the figure's geometry
 * (plot_layout.c) and its drawing (plot_draw.c); core-internal. */
#ifndef RVFIT_PLOT_INTERNAL_H
#define RVFIT_PLOT_INTERNAL_H

#include "rvfit/plot.h"

/* Pixels.  An arm is a data panel over a residual panel, each preceded by
 * a gap; the last gap of an arm holds the wavelength labels. */
#define PLOT_W 1100
#define PLOT_TITLE_H 84
#define PLOT_LEFT 76
#define PLOT_RIGHT 20
#define PLOT_GAP 22
#define PLOT_DATA_H 230
#define PLOT_RESID_H 70
#define PLOT_ARM_H (3 * PLOT_GAP + PLOT_DATA_H + PLOT_RESID_H)
#define PLOT_XLAB_H 22   /* the wavelength axis' label under the arms */
/* The row under the arms: PLOT_ROW_COLS columns (the zoom panels, the
 * chi^2(v) panel last), each a panel title, the panel, its ticks and
 * axis label. */
#define PLOT_ROW_COLS 5
#define PLOT_ROW_X0 24
#define PLOT_ROW_T 24
#define PLOT_ROW_PH 170
#define PLOT_ROW_B 46
#define PLOT_ROW_H (PLOT_ROW_T + PLOT_ROW_PH + PLOT_ROW_B)
#define PLOT_ROW_PADL 48
#define PLOT_ROW_PADR 10
#define PLOT_PI 3.14159265358979323846
#define PLOT_C_KMS 299792.458

/* The summary figure: SUM_COLS x SUM_ROWS panels under a title band. */
#define SUM_W 1100
#define SUM_COLS 4
#define SUM_ROWS 2
#define SUM_TITLE_H 40
#define SUM_ROW_H 300
#define SUM_H (SUM_TITLE_H + SUM_ROWS * SUM_ROW_H + 30) /* + bit names */
#define SUM_PAD_L 50
#define SUM_PAD_R 12
#define SUM_PAD_T 26
#define SUM_PAD_B 62

/* Label of a library axis: "Teff", "logg", "[Fe/H]", "[alpha/Fe]" for
 * the PHOENIX names, others as they are (plot_layout.c). */
const char *plot_param_label(const char *axis);
/* The flux range of arm A's usable pixels, widened to its model and
 * continuum (plot_layout.c). */
int plot_data_range(const rvfit_plot_arm *A, double *lo, double *hi);
/* Pixels [*i0, *i1) of A inside [lo, hi]. */
void plot_window(const rvfit_plot_arm *A, double lo, double hi, size_t *i0,
                 size_t *i1);

#ifdef RVFIT_HAVE_CAIRO
#include <cairo.h>
/* plot_draw.c */
void plot_rgb(cairo_t *cr, unsigned rgb);
void plot_label(cairo_t *cr, double x, double y, double size,
                const char *text, int align_right);
void plot_draw_arm(cairo_t *cr, const rvfit_plot_spec *s, int arm);
/* x and y of a value in frame f (y held a few panel heights out) */
double plot_px(const rvfit_plot_frame *f, double x);
double plot_py(const rvfit_plot_frame *f, double y);
/* arm A's masked runs shaded, its 1-sigma band, a curve v over its
 * pixels (of usable pixels only when data_only) */
void plot_mask(cairo_t *cr, const rvfit_plot_frame *f,
               const rvfit_plot_arm *A);
void plot_band(cairo_t *cr, const rvfit_plot_frame *f,
               const rvfit_plot_arm *A);
void plot_curve(cairo_t *cr, const rvfit_plot_frame *f,
                const rvfit_plot_arm *A, const float *v, int data_only,
                unsigned colour, double width);
/* text rotated a quarter turn (reading upwards), centred on (x, y) */
void plot_vlabel(cairo_t *cr, double x, double y, double size,
                 const char *text);
/* frame f's rectangle and its y range's ends as labels (font size) */
void plot_frame_box(cairo_t *cr, const rvfit_plot_frame *f, double size);
/* x ticks at a round step under frame f, with labels ("%.0f") */
void plot_xticks(cairo_t *cr, const rvfit_plot_frame *f, int nmax);
/* plot_row.c: the zoom panels and the chi^2(v) panel */
void plot_draw_row(cairo_t *cr, const rvfit_plot_spec *s);
/* plot_png.c: write surface sf (drawn with status st) to the PNG `path`
 * atomically (a temporary renamed into place). */
int plot_png_save(cairo_surface_t *sf, cairo_status_t st, const char *path,
                  rvfit_err *err);
#endif

#endif
