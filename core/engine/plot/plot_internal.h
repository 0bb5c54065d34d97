/* plot_internal.h — layout constants shared by the figure's geometry
 * (plot_layout.c) and its drawing (plot_draw.c); core-internal. */
#ifndef RVFIT_PLOT_INTERNAL_H
#define RVFIT_PLOT_INTERNAL_H

#include "rvfit/plot.h"

/* Pixels.  An arm is a data panel over a residual panel, each preceded by
 * a gap; the last gap of an arm holds the wavelength labels. */
#define PLOT_W 1100
#define PLOT_TITLE_H 56
#define PLOT_LEFT 70
#define PLOT_RIGHT 20
#define PLOT_GAP 22
#define PLOT_DATA_H 230
#define PLOT_RESID_H 70
#define PLOT_ARM_H (3 * PLOT_GAP + PLOT_DATA_H + PLOT_RESID_H)
#define PLOT_PI 3.14159265358979323846

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

#ifdef RVFIT_HAVE_CAIRO
#include <cairo.h>
/* plot_draw.c */
void plot_rgb(cairo_t *cr, unsigned rgb);
void plot_label(cairo_t *cr, double x, double y, double size,
                const char *text, int align_right);
void plot_draw_arm(cairo_t *cr, const rvfit_plot_spec *s, int arm);
/* plot_png.c: write surface sf (drawn with status st) to the PNG `path`
 * atomically (a temporary renamed into place). */
int plot_png_save(cairo_surface_t *sf, cairo_status_t st, const char *path,
                  rvfit_err *err);
#endif

#endif
