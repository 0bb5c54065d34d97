/* grid.c — the regular-grid kinds, multilinear and cubic: the stencil of
 * rvfit_library_stencil over the library's models (2 nodes per axis, or
 * 4 along the cubic axes; holes dropped), computed by the backends
 * themselves on the device unless host stencils are asked for.  They
 * keep no records of their own: the file's CUBAXES says which axes are
 * cubic, and the two are one family whose axes decide which it is. */
#include "interp_internal.h"

const rvfit_interp_kind interp_multilinear = {
    .name = "multilinear",
    .fits = "MULTILIN",
    .device = 1,
    .kinks_on_nodes = 1,
    .cubaxes = INTERP_CUB_NONE,
};

const rvfit_interp_kind interp_cubic = {
    .name = "cubic",
    .fits = "CUBIC",
    .device = 1,
    .kinks_on_nodes = 1,
    .cubaxes = INTERP_CUB_SOME,
};
