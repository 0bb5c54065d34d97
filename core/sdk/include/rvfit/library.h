/* rvfit/library.h — the template library as a plugin sees it: per-arm
 * log-lambda grids, the parameter space, and the interpolation stencil of a
 * point (the CPU reference every backend reproduces).  Loading, saving and
 * interpolation options are the engine's (rvfit/library_io.h).
 *
 * File format: docs/template-library.md (a FITS file `rvfit_library.fits`
 * in the library directory).
 *
 * Parameters are handled in *scaled* coordinates: x = log10(value) for axes
 * with scale RVFIT_SCALE_LOG10 (Teff), x = value otherwise.  Points sent to
 * backends carry scaled coordinates.
 *
 * Flux convention: each model's flux is divided by its mean over the arm
 * (before padding is excluded) so that templates carry no absolute scale;
 * this keeps -2 ln L free of the ln det(S^T S) bias toward faint templates.
 * Interpolation is linear in (normalised) flux.
 *
 * Ownership: the engine's rvfit_library_load allocates everything and
 * rvfit_library_free releases it; a backend given a library copies what it
 * needs.  A loaded library is read-only and may be shared by threads.
 */
#ifndef RVFIT_LIBRARY_H
#define RVFIT_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/limits.h" /* RVFIT_MAX_NODES, _CORNERS, RVFIT_PENALTY_* */
#include "rvfit/spectra.h"
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_LIBRARY_FILE "rvfit_library.fits"
#define RVFIT_LIBRARY_VERSION 1

/* exists[] value of a model estimated from its neighbours when the
 * library was built ([templates] fill_holes; docs/template-library.md). */
#define RVFIT_MODEL_FILLED 2

enum rvfit_scale { RVFIT_SCALE_LINEAR = 0, RVFIT_SCALE_LOG10 = 1 };

/* How the stencil interpolates along an axis.  Cubic is a cubic Hermite
 * whose node slopes come from the quadratic through each node and its
 * neighbours (one-sided at the ends): C1 across nodes, exact for
 * quadratics, Catmull-Rom on an evenly spaced axis; it spans 4 nodes
 * (3 in the end cells) instead of 2.  Axes with < 3 nodes stay linear. */
enum rvfit_interp { RVFIT_INTERP_LINEAR = 0, RVFIT_INTERP_CUBIC = 1 };

typedef struct rvfit_axis {
    char name[16];     /* "TEFF", "LOGG", "FEH", "ALPHAFE"              */
    char unit[16];     /* "K", "dex", ...                               */
    int scale;         /* enum rvfit_scale                               */
    int nnode;
    int interp;        /* enum rvfit_interp: the loader sets what the
                          file's CUBAXES says, rvfit_library_set_cubic
                          changes it                                     */
    double node[RVFIT_MAX_NODES]; /* scaled coordinates, increasing      */
} rvfit_axis;

typedef struct rvfit_lib_arm {
    char name[16];     /* matches the instrument's arm name              */
    double lnl0;       /* ln(lambda/Angstrom) of pixel 0 (pixel centre)  */
    double dlnl;       /* step in ln lambda                              */
    size_t npix;
    float *flux;       /* [nmodel*npix], model m at m*npix               */
    double sigma_kms;  /* > 0: templates smoothed by a Gaussian of this
                          sigma in velocity (km/s); 0: by sigma0 (A)    */
} rvfit_lib_arm;

typedef struct rvfit_library {
    int nparam;
    rvfit_axis axis[RVFIT_MAX_PARAMS];
    size_t nmodel;          /* product of axis[i].nnode                  */
    /* Model index of node (i0,...,i_{n-1}) is row-major, last axis
     * fastest: ((i0*n1 + i1)*n2 + i2)... */
    uint8_t *exists;        /* [nmodel], 0 = hole in the grid, 1 = model,
                               RVFIT_MODEL_FILLED = a hole filled when the
                               library was built (a model like any other
                               to interpolators and backends: test != 0) */
    int narm;
    rvfit_lib_arm arm[RVFIT_MAX_ARMS];
    double sigma0;          /* Gaussian LSF sigma of the templates, in
                               Angstrom, pixel response included (arms
                               with sigma_kms > 0 use that instead; see
                               rvfit_library_sigma)                       */
    double vmax;            /* km/s of padding on both sides of each arm */
    int log_flux;           /* 1: arm flux holds ln(flux) and templates
                               are interpolated in ln flux, then
                               exponentiated (rvfit_library_set_log_flux;
                               on load when the file says LOGFLUX)       */
    char instrument[32];    /* instrument the arms were built for        */
    char source[256];       /* grid the library was built from           */
} rvfit_library;

/* Gaussian sigma (Angstrom) of the templates of arm `arm` at wavelength
 * lambda, their own pixel response included. */
RVFIT_EXPORT double rvfit_library_sigma(const rvfit_library *lib, int arm,
                                        double lambda);

/* Check that a library is internally consistent (parameter and arm counts,
 * node counts, nmodel == product of nodes, each arm with npix >= 4,
 * dlnl > 0 and flux).  Backends call it before copying a library. */
RVFIT_EXPORT int rvfit_library_check(const rvfit_library *lib,
                                     rvfit_err *err);

/* Index of an arm by name, or -1. */
RVFIT_EXPORT int rvfit_library_arm(const rvfit_library *lib,
                                   const char *name);

/* Convert between physical and scaled coordinates for axis i. */
RVFIT_EXPORT double rvfit_axis_scale(const rvfit_axis *a, double physical);
RVFIT_EXPORT double rvfit_axis_unscale(const rvfit_axis *a, double scaled);

/* Interpolation stencil of a point: corners (model indices) and weights.
 * Linear axes contribute 2 nodes, cubic axes up to 4 (weights may then be
 * negative); the weights sum to 1.  Where a cubic stencil would need a hole
 * the stencil drops cubic axes, the fewest first (among equals the
 * higher-numbered axis stays cubic), down to the linear one; the linear
 * stencil drops holes and renormalises the rest.  *penalty receives the
 * out-of-grid penalty (0 inside).  Returns the number of corners (0 when
 * every linear corner is a hole: *penalty then includes RVFIT_PENALTY_HOLE
 * and the caller must use a flat template).  Backends reproduce this rule
 * exactly (plugins/kernels/rvfit_kernels.c). */
RVFIT_EXPORT int rvfit_library_stencil(const rvfit_library *lib,
                                       const double *theta, size_t *corner,
                                       double *weight, double *penalty);

#ifdef __cplusplus
}
#endif
#endif
