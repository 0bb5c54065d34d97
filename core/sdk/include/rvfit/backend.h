/* rvfit/backend.h — the evaluator backend interface (cpu, opencl, cuda).
 *
 * Lifecycle: open -> load_library -> { load_batch -> chisq/vscan/models }*
 * -> close.  All evaluation entry points are batched: one call evaluates
 * many (spectrum, theta, v, vsini) points on the backend's device.  The
 * library and the current batch stay resident in the backend; per call only
 * the points go in and numbers come out.
 *
 * Threading: the core calls one backend handle from one thread at a time;
 * a backend may use any number of threads internally.  Several handles of
 * one plugin may be open at once, each called from a thread of its own
 * ([run] streams: one per fit stream, on the same device), so a backend
 * keeps no state outside its handle and sets its device on the calling
 * thread where its API has per-thread state (CUDA's current device).
 * Ownership: the backend copies whatever it needs from the library and the
 * batch; the caller may free them after the call returns.
 *
 * Versioning: the table carries its size, RVFIT_BACKEND_OPS_VERSION
 * (rvfit/abi.h) and the capabilities the backend implements (caps).
 * Entries are only appended, each group marked with the table version
 * that added it (a minor bump); the loader refuses another major or a
 * newer minor, copies min(size, host size) bytes and fills missing or
 * NULL entries with defaults that return RVFIT_ERR_UNAVAILABLE.  Changing
 * or removing an entry needs a major bump.  Backend ops 2.0 (ABI 3.0)
 * has one entry per evaluation, each taking an optional stencil table,
 * where 1.x had three families of entries (chisq, chisq_st, chisq_sta,
 * ...) found by calling and failing.
 */
#ifndef RVFIT_BACKEND_H
#define RVFIT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/host.h"
#include "rvfit/library.h"
#include "rvfit/spectra.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Point flags */
#define RVFIT_PT_CONTINUUM 0x1u /* evaluate with template == 1 */

typedef struct rvfit_point {
    uint32_t spec;   /* index into the loaded batch                    */
    uint32_t flags;  /* RVFIT_PT_*                                      */
    double v;        /* radial velocity, km/s                           */
    double vsini;    /* km/s, >= 0                                      */
    double theta[RVFIT_MAX_PARAMS]; /* scaled library coordinates      */
} rvfit_point;

/* Model options shared by every evaluation of a batch. */
typedef struct rvfit_model_opts {
    int npoly;       /* continuum terms per arm, 1..RVFIT_MAX_POLY       */
    int basis;       /* enum rvfit_basis_kind                            */
} rvfit_model_opts;

/* Outputs of chisq(); arrays provided by the caller. */
typedef struct rvfit_chisq_out {
    double *m2lnl;   /* [n] -2 ln L summed over arms, penalty included  */
    double *chisq;   /* [n*narm] |D - S a|^2 per arm, or NULL            */
} rvfit_chisq_out;

/* Counters since open; a backend counts every point it evaluated. */
typedef struct rvfit_counters {
    uint64_t points;   /* points evaluated (chisq + vscan + models)      */
    uint64_t calls;    /* evaluation calls                                */
    double seconds;    /* wall time spent inside evaluation calls        */
} rvfit_counters;

/* Check the model options (npoly in 1..RVFIT_MAX_POLY, a known basis) and
 * the batch's arm count (1..RVFIT_MAX_ARMS) a backend's load_batch gets. */
RVFIT_EXPORT int rvfit_batch_opts_check(const rvfit_batch *batch,
                                        const rvfit_model_opts *mo,
                                        rvfit_err *err);

/* The load_batch contract for one arm of a batch of nspec spectra, shared
 * by every backend: the arm exists in lib (its index into *lib_arm), its
 * resolution is a band matrix or none (LSF arms are converted by the core
 * first), ndiag is odd, npix >= 2 with wave, flux and ivar present, and
 * every spectrum's own length is in [2, npix]. */
RVFIT_EXPORT int rvfit_batch_arm_check(const rvfit_library *lib,
                                       const rvfit_arm_batch *arm,
                                       size_t nspec, int *lib_arm,
                                       rvfit_err *err);

/* The update_data contract (backend ops 2.1): a batch is resident (have)
 * and batch has its nspec spectra and narm arms of npix[a] pixels, with
 * flux and ivar.  RVFIT_ERR_INVALID, saying so, otherwise. */
RVFIT_EXPORT int rvfit_batch_update_check(const rvfit_batch *batch, int have,
                                          size_t nspec, int narm,
                                          const size_t *npix, rvfit_err *err);

/* Interpolation stencils computed by the core, one per point in CSR
 * layout: point i's template in library arm a is
 *   sum_{e = off[i]}^{off[i+1]-1} w[e * nw + (nw > 1 ? a : 0)]
 *       * (library vector idx[e])
 * over the library's stored vectors (lib->arm[a].flux + idx * npix, the
 * same index in every arm), exponentiated when lib->log_flux, and pen[i]
 * is added to its -2 ln L.  nw is 1 (one weight for every arm: the grid
 * and simplex kinds) or lib->narm (a weight per arm: the pca kind, whose
 * vectors are a mean and principal components per arm).  An empty stencil
 * (off[i+1] == off[i]) means a flat template of 1, as a cell of holes
 * does.  At most RVFIT_MAX_STENCIL entries per point; indices <
 * lib->nmodel.  This is how interpolators other than the regular grid's
 * reach every backend without kernel changes (docs/architecture.md). */
typedef struct rvfit_stencils {
    const uint32_t *off; /* [n+1], off[0] == 0, non-decreasing            */
    const uint32_t *idx; /* [off[n]] vector indices                       */
    const double *w;     /* [off[n] * nw] weights, entry-major            */
    const double *pen;   /* [n] penalty added to -2 ln L                  */
    uint32_t nw;         /* weights per entry: 1 or lib->narm             */
    uint32_t reserved;   /* 0                                             */
} rvfit_stencils;

/* The contract of a stencil table for n points over library lib:
 * off[0] == 0, each stencil 0..RVFIT_MAX_STENCIL entries, indices below
 * lib->nmodel, nw 1 or lib->narm, finite weights and penalties.  Backends
 * call it whenever chisq, vscan or models get a table. */
RVFIT_EXPORT int rvfit_stencils_check(const rvfit_library *lib, size_t n,
                                      const rvfit_stencils *st,
                                      rvfit_err *err);

/* Capabilities a backend declares in its table (rvfit_backend_ops.caps);
 * the core chooses how to call it from them and refuses, before fitting,
 * an interpolator the backend cannot evaluate. */
#define RVFIT_BACKEND_CAP_GRID 0x1u        /* st == NULL: the regular
                                              grid's stencils (multilinear,
                                              cubic) computed from theta   */
#define RVFIT_BACKEND_CAP_STENCILS 0x2u    /* tables with nw == 1          */
#define RVFIT_BACKEND_CAP_ARM_WEIGHTS 0x4u /* tables with nw == narm       */
/* RVFIT_BASIS_BSPLINE in rvfit_model_opts.basis (added after 3.0): a
 * backend that builds its tables with rvfit_pixel_tables and treats every
 * basis other than CHEB as npoly plain rows handles it as it is; one that
 * evaluates the basis itself must implement it before declaring this.
 * The core refuses basis = bspline with a backend that does not. */
#define RVFIT_BACKEND_CAP_BSPLINE 0x8u
#define RVFIT_BACKEND_CAPS_KNOWN 0xfu

typedef struct rvfit_backend_ops {
    uint32_t size;    /* sizeof(rvfit_backend_ops) as compiled by the plugin */
    uint32_t version; /* RVFIT_BACKEND_OPS_VERSION as compiled              */
    uint32_t caps;    /* RVFIT_BACKEND_CAP_* it implements                  */
    uint32_t reserved; /* 0                                                 */

    /* --- backend ops 2.0 (ABI 3.0) --- */

    /* Open with the plugin's [backend.NAME] options.  Returns
     * RVFIT_ERR_UNAVAILABLE (not a fatal error) when the plugin works but
     * its device or runtime is absent, with the reason in err. */
    int (*open)(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                void **state, rvfit_err *err);
    /* Human-readable device name, e.g. "cpu: 2 threads", valid until
     * close. */
    const char *(*device)(void *state);
    int (*load_library)(void *state, const rvfit_library *lib,
                        rvfit_err *err);
    /* Replace the resident batch.  Arms are matched to library arms by
     * name; every batch arm must exist in the library. */
    int (*load_batch)(void *state, const rvfit_batch *batch,
                      const rvfit_model_opts *mo, rvfit_err *err);
    /* The three evaluations.  st: the stencil of point (base point) i is
     * taken from st (rvfit_stencils; check it with rvfit_stencils_check)
     * and theta is ignored, or with st == NULL computed from theta on the
     * regular grid of the loaded library (RVFIT_BACKEND_CAP_GRID).
     * RVFIT_PT_CONTINUUM means a flat template either way.  A table the
     * backend did not declare (caps) is refused with
     * RVFIT_ERR_UNAVAILABLE. */
    /* -2 ln L for n points. */
    int (*chisq)(void *state, size_t n, const rvfit_point *pts,
                 const rvfit_stencils *st, rvfit_chisq_out *out,
                 rvfit_err *err);
    /* -2 ln L on a velocity grid: for each of the nq base points (v
     * ignored), evaluate at v = vel[q*nvel + k], k < nvel, into
     * m2lnl[q*nvel + k].  Counts nq*nvel points. */
    int (*vscan)(void *state, size_t nq, const rvfit_point *base,
                 const rvfit_stencils *st, size_t nvel, const double *vel,
                 double *m2lnl, rvfit_err *err);
    /* Best-fit models (continuum included) on the observed pixels:
     * model[a][q*npix_a + i] for arm a of the batch.  cont, when not NULL,
     * receives the continuum alone (sum_k a_k B_k) the same way. */
    int (*models)(void *state, size_t n, const rvfit_point *pts,
                  const rvfit_stencils *st, float *const *model,
                  float *const *cont, rvfit_err *err);
    void (*counters)(void *state, rvfit_counters *c);
    void (*close)(void *state);

    /* --- backend ops 2.1 --- */

    /* New flux and ivar for the resident batch, nothing else changed: the
     * caller passes the batch of its last load_batch (same spectra, arms,
     * pixel counts, wavelengths and resolution data) with new flux and ivar
     * values, such as pixels clipped by setting ivar to 0.  Afterwards the
     * backend evaluates exactly as after load_batch of that batch, without
     * re-sending what did not change (a GPU backend's band matrices are
     * most of a batch).  A batch whose spectrum, arm or pixel counts differ
     * from the resident one's is refused (RVFIT_ERR_INVALID), as is a call
     * without a resident batch.  The loader's default (a plugin of ops
     * 2.0) returns RVFIT_ERR_UNAVAILABLE; the core then calls load_batch. */
    int (*update_data)(void *state, const rvfit_batch *batch,
                       rvfit_err *err);
} rvfit_backend_ops;

#ifdef __cplusplus
}
#endif
#endif
