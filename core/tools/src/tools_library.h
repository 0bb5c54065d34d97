/* tools_library.h — private: the steps every library builder of
 * core/tools shares (rvfit_templates_build from a PHOENIX-layout grid,
 * rvfit_templates_from_rvspecfit from rvspecfit's files): parameter axes
 * from the models' values, flux arrays, and the end of a build
 * (interpolator options, holes, the interpolator's data, saving).
 * Hidden symbols of librvfit_tools. */
#ifndef TOOLS_LIBRARY_H
#define TOOLS_LIBRARY_H

#include <stddef.h>

#include "rvfit/library.h"
#include "rvfit/templates.h"

/* Axis `name` (unit, enum rvfit_scale) with the sorted unique values of
 * v[n] (physical; equal within 1e-6 * max(1, |x|)) as nodes, scaled.
 * tmp: scratch of n doubles. */
int tools_axis(rvfit_axis *ax, const char *name, const char *unit,
               int scale, const double *v, size_t n, double *tmp,
               rvfit_err *err);
/* Node index of physical value x on ax, or -1. */
int tools_axis_find(const rvfit_axis *ax, double x);

/* lib->arm[a].flux for every arm (nmodel x npix), holes a flat 1 (never
 * used by the interpolators, harmless if a backend reads them). */
int tools_alloc_flux(rvfit_library *lib, rvfit_err *err);

/* Finish a library whose axes, exists and arm fluxes are filled: the
 * interpolator of o (kind, cubic axes, ln flux), holes filled
 * (o->fill_holes), the kind's data (simplex triangulation, pca
 * decomposition, o->simplex_correction), then saved atomically to
 * outdir.  lib stays owned by the caller. */
int tools_library_finish(rvfit_library *lib, const rvfit_templates_opts *o,
                         const char *outdir, rvfit_err *err);

#endif
