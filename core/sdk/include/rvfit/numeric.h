/* rvfit/numeric.h — small numeric helpers for plugins: seedable random
 * streams (for synthetic data that must be deterministic in a seed and
 * independent of thread scheduling) and a median.  The parallel loop
 * rvfit_parallel_for lives in rvfit/pool.h (included here).
 *
 * Ownership: caller-owned state.  Thread-safety: one rvfit_rng per thread;
 * rvfit_median reorders its argument in place.
 */
#ifndef RVFIT_NUMERIC_H
#define RVFIT_NUMERIC_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/pool.h"
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* xoshiro256** state (Blackman & Vigna), seeded through splitmix64. */
typedef struct rvfit_rng {
    uint64_t s[4];
} rvfit_rng;

/* Independent streams from one seed: e.g. stream = star index + 1. */
RVFIT_EXPORT void rvfit_rng_seed(rvfit_rng *r, uint64_t seed,
                                 uint64_t stream);
/* Uniform in [0, 1) with 53 random bits. */
RVFIT_EXPORT double rvfit_rng_uniform(rvfit_rng *r);
/* Standard normal (Box-Muller, one value per call). */
RVFIT_EXPORT double rvfit_rng_normal(rvfit_rng *r);

/* splitmix64 (Steele, Lea & Flood): the state advances by a constant and
 * each output is a strong mix of it.  Cheap deterministic sequences (line
 * lists, hole patterns, star lists) and the seeding of rvfit_rng. */
RVFIT_EXPORT uint64_t rvfit_splitmix64(uint64_t *state);
/* Uniform in [0, 1) with 53 bits of the next splitmix64 output. */
RVFIT_EXPORT double rvfit_splitmix_uniform(uint64_t *state);

/* Median of x[0..n-1] (finite values; x is reordered in place, not
 * sorted); NaN for n == 0. */
RVFIT_EXPORT double rvfit_median(double *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif
