/* rvfit/plot.h — a PNG figure of one fitted spectrum (`rvfit fit
 * --plot-dir`, `rvfit plot`), drawn with Cairo when librvfit was built
 * with it.
 *
 * Layout (docs/plots.md): a title band (the fitted values with their
 * errors, CHISQ_RED, RVS_WARN, a legend), then per arm its S/N and
 * chi^2 per pixel over a data panel (flux with its 1-sigma band,
 * continuum, best model, masked pixels shaded over the full panel height)
 * above a residual panel ((flux - model) / sigma, fixed range
 * +-RVFIT_PLOT_RESID_MAX), axes labelled with units; under the arms a row
 * of zoom panels on the strong lines inside the arms and the panel of
 * -2 ln L against velocity from the final velocity scan.
 * rvfit_plot_frame_of, rvfit_plot_zoom_frame and rvfit_plot_chisq_frame
 * give where each panel lands and the data ranges it maps, for tests and
 * for readers of the figure; drawing and frames come from the same
 * layout.
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
    /* may be NULL: no numbers in the title, no chi^2(v) curve; its
     * vscan_n, vscan_v and vscan_m2lnl give the chi^2(v) panel */
    const rvfit_result *res;
    const rvfit_library *lib;    /* parameter names and units           */
    int narm;
    rvfit_plot_arm arm[RVFIT_MAX_ARMS];
    const char *flux_unit;       /* the flux axis' unit; NULL: the
                                    input's own (not named)             */
} rvfit_plot_spec;

/* Colours of the figure (RGB, 0..255), documented in docs/plots.md. */
#define RVFIT_PLOT_RGB_MODEL 0xd62728u  /* best model: red          */
#define RVFIT_PLOT_RGB_CONT 0x2ca02cu   /* continuum: green         */
#define RVFIT_PLOT_RGB_DATA 0x303030u   /* flux: dark grey          */
#define RVFIT_PLOT_RGB_BAND 0xaec7e8u   /* 1-sigma band: light blue */
#define RVFIT_PLOT_RGB_MASK 0xffd8a8u   /* masked pixels: light orange */
#define RVFIT_PLOT_RGB_RESID 0x1f77b4u  /* residuals, chi^2(v): blue */
#define RVFIT_PLOT_RGB_LINE 0x9467bdu   /* line positions: purple   */

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

/* Zoom panels: the strong lines people check, at VRAD, when they lie
 * inside an arm with usable pixels. */
#define RVFIT_PLOT_MAX_ZOOM 4
typedef struct rvfit_plot_zoom {
    const char *name;   /* "Ca II H&K", "Mg b", "H-alpha", "Ca II triplet" */
    int arm;            /* the arm drawn                                 */
    double lo, hi;      /* the window, Angstrom (observed frame)         */
    int nline;
    double line[3];     /* vacuum rest wavelengths shifted by VRAD       */
} rvfit_plot_zoom;

/* The zoom panels of s, in the order drawn, into z[RVFIT_PLOT_MAX_ZOOM];
 * returns their number. */
RVFIT_EXPORT int rvfit_plot_zooms(const rvfit_plot_spec *s,
                                  rvfit_plot_zoom *z);
/* Frame of zoom panel k (x: Angstrom, y: flux). */
RVFIT_EXPORT int rvfit_plot_zoom_frame(const rvfit_plot_spec *s, int k,
                                       rvfit_plot_frame *f, rvfit_err *err);
/* Frame of the chi^2(v) panel (x: km/s over the scan, y: -2 ln L minus
 * its minimum); RVFIT_ERR_INVALID when s has no scan. */
RVFIT_EXPORT int rvfit_plot_chisq_frame(const rvfit_plot_spec *s,
                                        rvfit_plot_frame *f, rvfit_err *err);

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
