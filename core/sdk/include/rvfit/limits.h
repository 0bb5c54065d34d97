/* rvfit/limits.h — the fixed sizes and numerical constants of the model,
 * in one place for the host code and the device kernels.
 *
 * Only #defines, no includes, no declarations: the same text is valid C,
 * C++, OpenCL C and CUDA, so the GPU kernels (plugins/kernels) include it
 * as is (the OpenCL build inlines it into the embedded kernel source)
 * instead of keeping copies.  spectra.h, library.h and physics.h include
 * it; a plugin normally gets it through them.  Changing a value changes
 * the model of every backend at once (and the ABI where a size is an
 * array bound in a public struct).
 *
 * Units are stated per constant.  Thread-safety: constants only.
 */
#ifndef RVFIT_LIMITS_H
#define RVFIT_LIMITS_H

/* ---- sizes --------------------------------------------------------- */

#define RVFIT_MAX_ARMS 8     /* arms of a batch or a library              */
#define RVFIT_MAX_PARAMS 8   /* library axes (stellar parameters)         */
#define RVFIT_MAX_NODES 256  /* nodes per library axis                    */
/* Corners of one interpolation stencil (4^cubic * 2^linear axes must fit;
 * rvfit_library_stencil). */
#define RVFIT_MAX_CORNERS (1 << RVFIT_MAX_PARAMS)
/* Entries of one stencil the core sends (rvfit_stencils): what any
 * interpolator may use per point; backends size local arrays by it. */
#define RVFIT_MAX_STENCIL RVFIT_MAX_CORNERS
#define RVFIT_MAX_POLY 32    /* continuum terms per arm (npoly)           */
/* Largest half width of the rotation kernel, template pixels. */
#define RVFIT_MAX_VSINI_HALF 512

/* ---- physics (rvfit/physics.h) -------------------------------------- */

#define RVFIT_C_KMS 299792.458 /* speed of light, km/s                    */
#define RVFIT_VSINI_EPS 0.6    /* limb-darkening coefficient (rotation)  */
/* Half widths below this (template pixels) mean no rotation. */
#define RVFIT_VSINI_MIN_HALF 1.0e-6
/* rvfit_marg_chisq declares the normal equations singular when a pivot of
 * the equilibrated (unit-diagonal) Cholesky is not above this. */
#define RVFIT_CHOL_MIN_PIVOT 1.0e-14
/* -2 ln L a backend reports for a point whose normal equations are
 * singular (and the chisq of the arm that failed); exactly representable
 * in float, so that float device code can return it unchanged. */
#define RVFIT_M2LNL_FAIL 1.0e30

/* ---- library stencil (rvfit/library.h) ------------------------------ */

/* Smooth penalty added to -2 ln L per unit of squared distance outside the
 * grid, the distance measured in units of the axis' mean node spacing.
 * The template itself is evaluated at the clamped point. */
#define RVFIT_PENALTY_SCALE 1.0e4
/* Added when every corner of the enclosing cell is a hole (no model). */
#define RVFIT_PENALTY_HOLE 1.0e6
/* Distance (node spacings) charged for a NaN coordinate, which is
 * evaluated at the axis' first node. */
#define RVFIT_NAN_DISTANCE 1.0e3

#endif
