/* rvfit/library_io.h — the library part of the engine: the template
 * library in memory (rvfit_library, rvfit/library.h): the interpolation
 * options that change it (cubic axes, ln flux), holes filled at build
 * time, and the template interpolated on the grid on the host.  Files
 * are read and written together with the interpolator they record:
 * rvfit_library_load, rvfit_library_open, rvfit_library_save in
 * rvfit/interp.h.
 *
 * Ownership: a library the engine loads or builds is released with
 * rvfit_library_free.  Thread-safety: the setters modify the library and must run
 * before it is shared; rvfit_library_interp is reentrant.
 */
#ifndef RVFIT_LIBRARY_IO_H
#define RVFIT_LIBRARY_IO_H

#include "rvfit/library.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Release what a library loaded or built by the engine holds. */
RVFIT_EXPORT void rvfit_library_free(rvfit_library *lib);

/* Interpolation along the axes named in `axes` (comma- or space-separated,
 * case-insensitive; "" or "none" = none) becomes cubic, every other axis linear.
 * Fails with RVFIT_ERR_CONFIG naming an unknown axis, or when the stencil
 * would exceed RVFIT_MAX_CORNERS (4^cubic * 2^linear); `lib` is unchanged
 * then.  Not thread-safe against concurrent readers of `lib`: call it
 * before the library is shared. */
RVFIT_EXPORT int rvfit_library_set_cubic(rvfit_library *lib,
                                         const char *axes, rvfit_err *err);

/* Switch to interpolation in ln flux (what rvspecfit does): replaces each
 * arm's flux by its logarithm in place and sets lib->log_flux; a no-op
 * when already set.  Products of line and continuum factors become sums,
 * so a blend's lines keep their own shapes between nodes.  Fails with
 * RVFIT_ERR_FORMAT (naming arm, model and pixel, lib unchanged) when an
 * existing model has flux <= 0 or non-finite.  Call before sharing lib. */
RVFIT_EXPORT int rvfit_library_set_log_flux(rvfit_library *lib,
                                            rvfit_err *err);

/* Filling the holes of a grid at build time ([templates] fill_holes). */
enum rvfit_fill { RVFIT_FILL_NONE = 0, RVFIT_FILL_QUADRATIC = 1 };
/* "none" or "quadratic" (case-insensitive) -> enum rvfit_fill; -1 if
 * unknown. */
RVFIT_EXPORT int rvfit_fill_parse(const char *name);

/* Fill the holes of lib that its models surround with a local quadratic
 * least-squares estimate (method RVFIT_FILL_QUADRATIC; RVFIT_FILL_NONE
 * does nothing).  Per hole, in node-index offsets o of the free axes:
 * the models (exists == 1; never other filled ones) with max|o| <= 1,
 * then also those with |o| <= 2, then max|o| <= 2, the first
 * neighbourhood that (a) has a model in every closed orthant around the
 * hole (so the hole lies in their convex hull: no extrapolation), (b)
 * gives a full-rank quadratic in the simplex's coordinates (node
 * spacings, interp/simplex/sx_build.c; squares only on axes of >= 3 nodes) and
 * (c) weights g with sum |g| <= RVFIT_FILL_MAX_GAIN (errors of the
 * neighbours are not amplified more).  One weight vector per hole, applied
 * to every pixel of every arm in the space lib holds (ln flux when
 * lib->log_flux); a filled model must be finite (in flux: of positive
 * mean), else it stays a hole.  Filled models get exists =
 * RVFIT_MODEL_FILLED.  *nfilled and *nleft (may be NULL): holes filled
 * and left.  RVFIT_ERR_CONFIG for an unknown method or more free axes
 * than the quadratic's solve handles.  Call before sharing lib. */
#define RVFIT_FILL_MAX_GAIN 3.0
/* Models of lib filled at build time (exists == RVFIT_MODEL_FILLED). */
RVFIT_EXPORT size_t rvfit_library_nfilled(const rvfit_library *lib);
RVFIT_EXPORT int rvfit_library_fill_holes(rvfit_library *lib, int method,
                                          size_t *nfilled, size_t *nleft,
                                          rvfit_err *err);

/* Interpolated template of arm `arm` at scaled theta into out[npix]
 * (double; flux, exponentiated when lib->log_flux).  Returns the penalty as rvfit_library_stencil does; a cell of
 * holes gives a flat template of 1. */
RVFIT_EXPORT double rvfit_library_interp(const rvfit_library *lib, int arm,
                                         const double *theta, double *out);

#ifdef __cplusplus
}
#endif
#endif
