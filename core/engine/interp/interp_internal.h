/* interp_internal.h — an interpolator kind as the interpolator part sees
 * it (private to core/engine/interp; the interface is rvfit/interp.h).
 *
 * A kind is one descriptor, defined in its own file or folder (grid.c:
 * multilinear and cubic; simplex/; pca/) and listed once in the registry
 * (interp.c).  Everything the rest of the engine needs to know about a
 * kind is asked through rvfit/interp.h, which reads these fields; no
 * code outside this part names a kind.  A kind keeps its own records in
 * the library file through the library part's hooks
 * (library/library_internal.h). */
#ifndef RVFIT_INTERP_INTERNAL_H
#define RVFIT_INTERP_INTERNAL_H

#include "library/library_internal.h"
#include "rvfit/interp.h"

/* What CUBAXES may say in a file of the kind. */
enum interp_cubaxes {
    INTERP_CUB_NONE = 0,  /* none (every axis linear)                     */
    INTERP_CUB_SOME = 1,  /* at least one axis                            */
    INTERP_CUB_ANY = 2    /* either                                       */
};

struct rvfit_interp_kind {
    const char *name;   /* [templates] interpolator                       */
    const char *fits;   /* INTERP keyword of the library file             */
    /* backends compute its stencils from theta themselves (the regular
     * grid's, from the library's axes) unless host stencils are asked */
    int device;
    /* the template's kinks lie on the grid's node planes (grid stencils)
     * rather than on the faces of a triangulation */
    int kinks_on_nodes;
    int cubaxes;        /* enum interp_cubaxes                            */
    /* its file's arms are read (read_arm) as models already in the
     * interpolation space LOGFLUX names */
    int models_in_space;
    /* weights per stencil entry: 1, or one per library arm */
    int arm_weights;

    /* Build over lib without a file (NULL: nothing to build, the grid).
     * *data is the kind's, freed by free_data. */
    int (*build)(const rvfit_library *lib, const rvfit_interp_opts *o,
                 void **data, rvfit_err *err);
    void (*free_data)(void *data);
    /* The stencil over the library's models (NULL: the grid's,
     * rvfit_library_stencil) and over the vectors the backend holds
     * (NULL: the same), with arm_weights weights per entry. */
    int (*stencil)(const rvfit_interpolator *ip, const double *theta,
                   uint32_t *idx, double *w, double *pen);
    int (*vec_stencil)(const rvfit_interpolator *ip, const double *theta,
                       uint32_t *idx, double *w, double *pen);
    /* A stencil over the library's models as one over the vectors the
     * backend holds, arm_weights weights per entry (NULL: the same
     * stencil, the backend holding the models). */
    int (*to_vectors)(const rvfit_interpolator *ip, const uint32_t *midx,
                      const double *mw, int n, uint32_t *idx, double *w);
    /* The library the backend loads (NULL: ip->lib). */
    const rvfit_library *(*vectors)(const rvfit_interpolator *ip);
    /* theta at or beyond the edge of the kind's domain inside the axes'
     * box (NULL: there is none) */
    int (*at_edge)(const rvfit_interpolator *ip, const double *theta);
    /* a few words for the log after the name, e.g. " (8 components)" */
    void (*describe)(const rvfit_interpolator *ip, char *buf, size_t n);

    /* The library file.  Reading: read_begin after the primary HDU's
     * common keys (its own keys; *state for the rest), read_arm for each
     * FLUX_<ARM> image (NULL: the image holds the models), read_end once
     * the library is read and its run-time options applied (its records
     * after the arms, the interpolator's data into *data; NULL: none).
     * Writing: write_hooks fills the hooks of rvfit_library_save. */
    int (*read_begin)(lio_rd *r, void **state);
    lio_arm_fn read_arm;
    int (*read_end)(lio_rd *r, const rvfit_library *lib, void *state,
                    void **data);
    void (*free_state)(void *state);
    void (*write_hooks)(const rvfit_interpolator *ip, lio_write_hooks *h);
};

/* The kinds (grid.c, simplex/sx_kind.c, pca/pca_kind.c). */
extern const rvfit_interp_kind interp_multilinear;
extern const rvfit_interp_kind interp_cubic;
extern const rvfit_interp_kind interp_simplex;
extern const rvfit_interp_kind interp_pca;

/* The kind of a [templates] interpolator name or an INTERP keyword
 * (case-insensitive); NULL when unknown. */
const rvfit_interp_kind *interp_kind_find(const char *name);
/* The grid kind lib's axes describe: cubic when any axis is. */
const rvfit_interp_kind *interp_kind_of(const rvfit_library *lib);
/* "multilinear, cubic, simplex or pca": the names, for messages. */
const char *interp_kind_names(void);

#endif
