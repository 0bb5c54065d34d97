/* backend_equiv.h — cross-backend equivalence harness (FFmpeg checkasm
 * style): seeded random libraries, batches and points; the cpu backend is
 * the reference and any other backend must match it within a tolerance
 * scaled by the magnitude of the result.
 *
 * tests/CMakeLists.txt builds each tests/test_*.c alone, so a test uses
 * the harness by `#include "backend_equiv.c"` (test_opencl_equiv.c,
 * and the CUDA test the same way).
 */
#ifndef RVFIT_BACKEND_EQUIV_H
#define RVFIT_BACKEND_EQUIV_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/library.h"
#include "rvfit/plugin.h"
#include "rvfit/spectra.h"

/* A backend plugin opened from $RVFIT_PLUGIN_PATH. */
typedef struct be_backend {
    void *dl;
    const rvfit_backend_ops *ops;
    void *st;
} be_backend;

/* dlopen rvfit_backend_NAME.so, check the descriptor and open() it with
 * opts.  Returns open()'s status (RVFIT_ERR_UNAVAILABLE: no device) or
 * RVFIT_ERR_PLUGIN; err says why. */
int be_open(be_backend *b, const char *name, const rvfit_host *host,
            const rvfit_kv *opts, int nopt, rvfit_err *err);
void be_close(be_backend *b);

/* Shape of one random problem. */
typedef struct be_shape {
    int narm;               /* 1..3                                     */
    size_t npix;            /* observed pixels per arm                  */
    int npoly, basis;       /* continuum                                 */
    int ndiag;              /* 0 = RVFIT_RES_NONE, else band matrix     */
    int nparam;             /* 1..3 library axes                         */
    double hole_frac;       /* fraction of library models missing       */
    double vsini_max;       /* 0: every vsini is 0                       */
    size_t nspec;
    int wave_per_spec;
} be_shape;

/* A random problem: library, batch and model options. */
typedef struct be_problem {
    rvfit_library lib;
    rvfit_batch batch;
    rvfit_model_opts mo;
    be_shape sh;
} be_problem;

/* Build problem pr from shape sh with random generator state *rng. */
int be_problem_make(be_problem *pr, const be_shape *sh, uint64_t *rng,
                    rvfit_err *err);
void be_problem_free(be_problem *pr);
/* n random points: theta inside the grid and up to 10% of the range
 * outside, |v| <= 500 km/s (a few at +-5000), vsini in [0, vsini_max]
 * (a third exactly 0), a few continuum-only. */
void be_points(const be_problem *pr, size_t n, uint64_t *rng,
               rvfit_point *pts);
/* Load library + batch into a backend. */
int be_load(be_backend *b, const be_problem *pr, rvfit_err *err);

/* Largest |a-b| / max(|a|, 1) over n values. */
double be_maxrel(const double *a, const double *b, size_t n);

/* Uniform in [0,1) from a xorshift64* state. */
double be_unif(uint64_t *rng);

#endif
