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

#ifdef RVFIT_HAVE_CAIRO
#include <cairo.h>
/* plot_draw.c */
void plot_rgb(cairo_t *cr, unsigned rgb);
void plot_label(cairo_t *cr, double x, double y, double size,
                const char *text, int align_right);
void plot_draw_arm(cairo_t *cr, const rvfit_plot_spec *s, int arm);
#endif

#endif
