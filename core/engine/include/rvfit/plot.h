/* rvfit/plot.h — a PNG figure of one fitted spectrum (`rvfit fit
 * --plot-dir`), drawn with Cairo when librvfit was built with it.
 *
 * Layout (docs/plots.md): a title band, then per arm a data panel (flux
 * with its 1-sigma band, continuum, best model, masked pixels shaded over
 * the full panel height) above a residual panel ((flux - model) / sigma,
 * fixed range +-RVFIT_PLOT_RESID_MAX).  rvfit_plot_frame gives where each
 * panel lands and the data ranges it maps, for tests and for readers of
 * the figure; drawing and frame come from the same layout.
 *
 * Ownership: the caller owns every array.  Thread-safety: reentrant.
 */
#ifndef RVFIT_PLOT_H
#define RVFIT_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/fit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_PLOT_RESID_MAX 5.0 /* residual panel spans +-5 sigma */

/* One arm of a spectrum; pixels with ivar <= 0 are masked (shaded, not
 * drawn).  model and cont may be NULL (not fitted: data only). */
typedef struct rvfit_plot_arm {
    const char *name;
    size_t npix;
    const double *wave;   /* Angstrom, increasing */
    const float *flux, *ivar, *model, *cont;
} rvfit_plot_arm;

typedef struct rvfit_plot_spec {
    int64_t targetid;
    const rvfit_result *res;     /* may be NULL: no numbers in the title */
    const rvfit_library *lib;    /* parameter names for the title        */
    int narm;
    rvfit_plot_arm arm[RVFIT_MAX_ARMS];
} rvfit_plot_spec;

/* Colours of the figure (RGB, 0..255), documented in docs/plots.md. */
#define RVFIT_PLOT_RGB_MODEL 0xd62728u  /* best model: red          */
#define RVFIT_PLOT_RGB_CONT 0x2ca02cu   /* continuum: green         */
#define RVFIT_PLOT_RGB_DATA 0x303030u   /* flux: dark grey          */
#define RVFIT_PLOT_RGB_BAND 0xaec7e8u   /* 1-sigma band: light blue */
#define RVFIT_PLOT_RGB_MASK 0xffd8a8u   /* masked pixels: light orange */
#define RVFIT_PLOT_RGB_RESID 0x1f77b4u  /* residuals: blue          */

/* Where panel `resid` (0 data, 1 residual) of arm `arm` lies in the image
 * (pixels, origin top left, y down) and which data ranges it maps:
 * x = x0 + (wave - xmin) / (xmax - xmin) * w, y = y0 + (ymax - val) /
 * (ymax - ymin) * h. */
typedef struct rvfit_plot_frame {
    double x0, y0, w, h;
    double xmin, xmax, ymin, ymax;
} rvfit_plot_frame;

/* Image size for a spectrum with narm arms. */
RVFIT_EXPORT void rvfit_plot_size(int narm, int *width, int *height);

/* The frame of a panel; RVFIT_ERR_INVALID for an arm without usable
 * pixels (the panel then only says so). */
RVFIT_EXPORT int rvfit_plot_frame_of(const rvfit_plot_spec *s, int arm,
                                     int resid, rvfit_plot_frame *f,
                                     rvfit_err *err);

/* 1 when this librvfit can draw (built with Cairo), else 0. */
RVFIT_EXPORT int rvfit_plot_available(void);

/* Draw s into the PNG `path`, atomically (a temporary renamed into
 * place).  RVFIT_ERR_UNAVAILABLE without Cairo. */
RVFIT_EXPORT int rvfit_plot_write(const char *path, const rvfit_plot_spec *s,
                                  rvfit_err *err);

/* The summary figure of one input file: VRAD_ERR against S/N (log-log),
 * histograms of VRAD and of each parameter, and the count of each RVS_WARN
 * bit.  Arrays hold n spectra (param: n x lib->nparam, row-major);
 * non-finite values are left out. */
typedef struct rvfit_plot_summary {
    const char *title;           /* e.g. the input file's name           */
    size_t n;
    const double *sn;            /* best arm's median S/N per pixel      */
    const double *vrad, *vrad_err;
    const double *param;
    const uint32_t *warn;
    const rvfit_library *lib;
} rvfit_plot_summary;

/* Panel k of the summary figure (row-major, 4 x 2; frame ranges unset). */
RVFIT_EXPORT void rvfit_plot_summary_panel(int k, rvfit_plot_frame *f);

/* Draw s into the PNG `path`, atomically.  RVFIT_ERR_UNAVAILABLE without
 * Cairo. */
RVFIT_EXPORT int rvfit_plot_summary_write(const char *path,
                                          const rvfit_plot_summary *s,
                                          rvfit_err *err);

/* "RV, PARAM" for the set RVS_WARN bits (empty when none), into buf. */
RVFIT_EXPORT void rvfit_warn_names(uint32_t warn, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
