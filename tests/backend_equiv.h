/* backend_equiv.h — cross-backend equivalence harness (FFmpeg checkasm
 * style): seeded random libraries, batches and points; the cpu backend is
 * the reference and any other backend must match it within a tolerance
 * scaled by the magnitude of the result.  One suite (be_equiv_suite) runs
 * unchanged for every backend; a backend's test only opens it (and skips
 * with its own reason when there is no device) and adds the checks of its
 * own options through be_target.extra.
 *
 * tests/CMakeLists.txt builds each tests/test_*.c alone, so a test uses
 * the harness by `#include "backend_equiv.c"` (test_opencl_equiv.c,
 * test_cuda_equiv.c, and test_cuda_emu.c through test_cuda_equiv.c).
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
    unsigned cubic;         /* bit p: axis p interpolated cubically      */
    int log_flux;           /* 1: interpolation in ln flux               */
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

/* ---- the suite -------------------------------------------------------- */

#define BE_TOL 1e-6        /* m2lnl, chisq, vscan: relative, max(|x|, 1) */
#define BE_TOL_MODEL 2e-5  /* float model outputs, relative to row's max */
#define BE_TOL_FLOAT 1e-3  /* everything, float device code (fp64 = 0)  */
#define BE_NVSCAN 7        /* vscan base points per case (at most)       */

/* One problem shape and the number of chisq points evaluated on it. */
typedef struct be_case {
    be_shape sh;
    size_t npts;
} be_case;

#define BE_NCASES 12
extern const be_case be_cases[BE_NCASES];

/* Largest relative differences seen (over the cases of one run). */
typedef struct be_result {
    double m2lnl, chisq, models, vscan;
} be_result;

/* A backend under test. */
typedef struct be_target {
    const char *name;       /* plugin name, also the device string prefix */
    const char *dir;        /* plugin directory; NULL or "": the one in
                             * $RVFIT_PLUGIN_PATH                         */
    size_t bench_points;    /* RVFIT_BENCH: chisq points on the backend   */
    /* Backend-specific checks (options, selection, several instances),
     * run between the fp64 and the float parts of the suite; NULL: none. */
    void (*extra)(const struct be_target *t, be_backend *cpu,
                  const rvfit_host *host, uint64_t *rng);
} be_target;

/* be_open for the target (its directory). */
int be_target_open(const be_target *t, be_backend *b, const rvfit_host *host,
                   const rvfit_kv *opts, int nopt, rvfit_err *err);
/* One case on cpu and gpu: chisq of sc->npts points (m2lnl and per-arm
 * chisq within tol), models of the first 16 (within BE_TOL_MODEL, or tol
 * when looser), vscan of the first BE_NVSCAN on 41 velocities (within
 * tol), the harness's known 1e30 and skipped-arm points; prints one line
 * and raises *res to the differences seen. */
void be_run_case(const be_target *t, be_backend *cpu, be_backend *gpu,
                 const be_case *sc, uint64_t *rng, be_result *res,
                 double tol);
/* The suite on gpu, an instance of t opened with default options, which it
 * closes: every be_cases at BE_TOL, counters and device string, t->extra,
 * then the float device code (fp64 = 0, must open) on be_cases[2] at
 * BE_TOL_FLOAT.  RVFIT_BENCH=1 adds throughput lines.  cpu stays open. */
void be_equiv_suite(const be_target *t, be_backend *gpu, be_backend *cpu,
                    const rvfit_host *host);

#endif
