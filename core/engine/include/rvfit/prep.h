/* rvfit/prep.h — the prep part of the engine: a batch of spectra
 * prepared for the backends, instrument-independently, between reading
 * and load_batch.
 *
 * Ownership: works in place on the caller's batch.  Thread-safety: one
 * batch per call; rvfit_prep_batch_threads runs its own threads.
 */
#ifndef RVFIT_PREP_H
#define RVFIT_PREP_H

#include <stdint.h>

#include "rvfit/library.h"
#include "rvfit/spectra.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Median S/N per pixel no detector delivers (10^10 photons a pixel). */
#define RVFIT_SNR_ABSURD 1e5

/* Bits rvfit_prep_batch adds to rvfit_batch.flags (readers set only the
 * RVFIT_SPEC_* bits of rvfit/spectra.h, below 0x100): an arm's inverse
 * variances not credible (median S/N per pixel above RVFIT_SNR_ABSURD),
 * and which arms were outside the templates. */
#define RVFIT_SPEC_BAD_IVAR 0x100u
#define RVFIT_SPEC_ARM_OUTSIDE(a) (0x10000u << (a)) /* a < RVFIT_MAX_ARMS */

/* Preprocess a batch in place before load_batch (instrument-independent):
 * flag arms with absurd inverse variances (RVFIT_SPEC_BAD_IVAR), drop
 * arms that lie entirely outside the templates (ivar 0,
 * RVFIT_SPEC_ARM_OUTSIDE), clamp sigma from below at 0.3 x the arm's
 * median sigma, drop the
 * half-band edge pixels of band matrices, convert Gaussian LSFs to band
 * matrices, and correct band matrices for the library's own smoothing
 * (docs/architecture.md "no double smoothing").  May replace an arm's
 * resolution arrays (ndiag grows by 2): a band matrix is rewritten in
 * its own array, reallocated (the batch's arrays are malloc'ed, as
 * rvfit_batch_alloc makes them), an LSF arm's gets a new one. */
RVFIT_EXPORT int rvfit_prep_batch(rvfit_batch *b, const rvfit_library *lib,
                                  rvfit_err *err);
/* The same on up to nthreads threads (spectra in parallel; the result
 * does not depend on the count).  rvfit_prep_batch is this with 1. */
RVFIT_EXPORT int rvfit_prep_batch_threads(rvfit_batch *b,
                                          const rvfit_library *lib,
                                          int nthreads, rvfit_err *err);

/* Where rvfit_prep_batch_mem takes the band matrices it makes for LSF
 * arms and leaves the LSF arrays it replaces, for a caller that recycles
 * batch memory (fresh pages cost more to map than to fill).  get returns at
 * least `bytes` (NULL: out of memory); put receives an array and a lower
 * bound of its size (the array's b->cap spectra).  Both are called on the
 * calling thread only.  A NULL member means malloc / free. */
typedef struct rvfit_prep_mem {
    void *(*get)(void *ctx, size_t bytes);
    void (*put)(void *ctx, void *p, size_t bytes);
    void *ctx;
} rvfit_prep_mem;

/* rvfit_prep_batch_threads with the arrays from and to mem (NULL: as
 * rvfit_prep_batch_threads). */
RVFIT_EXPORT int rvfit_prep_batch_mem(rvfit_batch *b,
                                      const rvfit_library *lib,
                                      int nthreads,
                                      const rvfit_prep_mem *mem,
                                      rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
