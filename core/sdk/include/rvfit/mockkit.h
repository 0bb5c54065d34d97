/* rvfit/mockkit.h — building blocks of an instrument's mock writer
 * (write_mock), shared by desi, sdss and future instruments:
 *
 *   - rvfit_mock_begin: the argument checks every writer starts with;
 *   - rvfit_mock_run: stars computed in blocks on worker threads into
 *     per-star output arrays the kit allocates, each block handed back to
 *     the calling thread to be written (all CFITSIO calls stay there);
 *   - per-star numerics: the truth on a fine ln-lambda grid, a tabulated
 *     normal CDF, the spreading of one fine sample over pixels through a
 *     Gaussian LSF, flux scaling and Gaussian noise of a given median S/N.
 *
 * Atomic creation of the output file is rvfit_fits_create /
 * rvfit_fits_commit (rvfit/fits.h); the median S/N of a spectrum is
 * rvfit_pixel_snr (rvfit/spectra.h).
 *
 * Determinism: each star must draw from its own rvfit_rng stream (seeded
 * from the job's seed and the star's index), so that a mock depends on
 * (seed, stars) only, never on the threads or the block size.
 * Ownership: the caller's arrays stay the caller's; the block arrays
 * belong to rvfit_mock_run.  Thread-safety: the star callback runs
 * concurrently; everything else here is reentrant.
 */
#ifndef RVFIT_MOCKKIT_H
#define RVFIT_MOCKKIT_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/abi.h"
#include "rvfit/instrument.h"
#include "rvfit/numeric.h"
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- stars in blocks ---------------------------------------------------- */

#define RVFIT_MOCK_MAXBUF 16

typedef struct rvfit_phi_table rvfit_phi_table; /* the normal CDF, below */

typedef struct rvfit_mock_job rvfit_mock_job;
struct rvfit_mock_job {
    /* What write_mock was given. */
    size_t nstar;
    const rvfit_mock_star *stars;
    rvfit_truth_fn truth;
    void *truth_ctx;
    uint64_t seed;
    int nthreads;               /* the host's nthreads, >= 1             */
    /* The instrument. */
    void *ctx;
    size_t block;               /* stars per block (bounds memory), >= 1 */
    int nbuf;                   /* per-star output arrays, <= MAXBUF     */
    size_t bytes[RVFIT_MOCK_MAXBUF]; /* size of each, per star           */
    /* Per-thread scratch (may be NULL: scratch is then NULL). */
    void *(*scratch_new)(const rvfit_mock_job *job);
    void (*scratch_free)(void *scratch);
    /* Star s (index into stars) on a worker thread, into out[i], its
     * bytes[i]-long slot of output array i.  No CFITSIO here. */
    int (*star)(const rvfit_mock_job *job, void *scratch, size_t s,
                void *const *out, rvfit_err *err);
    /* Stars [s0, s0+ns) are done; buf[i] holds their ns consecutive
     * slots of array i.  Runs on the calling thread (CFITSIO is fine). */
    int (*flush)(const rvfit_mock_job *job, size_t s0, size_t ns,
                 void *const *buf, rvfit_err *err);
};

/* The prologue of write_mock: check its arguments and set up job with
 * them (the instrument's fields zeroed).  RVFIT_ERR_INVALID, naming path,
 * unless there is at least one star, a star array and a truth function,
 * and every star's S/N is finite and > 0: checked before anything is
 * written. */
RVFIT_EXPORT int rvfit_mock_begin(rvfit_mock_job *job,
                                  const rvfit_host *host, const char *path,
                                  size_t nstar, const rvfit_mock_star *stars,
                                  rvfit_truth_fn truth, void *truth_ctx,
                                  uint64_t seed, rvfit_err *err);

/* Every star, block by block: star() for each star of a block on up to
 * nthreads threads, then flush() for the block.  The first failure stops
 * the run and is returned. */
RVFIT_EXPORT int rvfit_mock_run(const rvfit_mock_job *job, rvfit_err *err);

/* rvfit_mock_run with a normal-CDF table (below) for its duration: the
 * table is made, stored in *phi (typically a field of the job's ctx,
 * read by star()), freed after the run and *phi reset to NULL.  No
 * memory for it: RVFIT_ERR_NOMEM naming path (write_mock's). */
RVFIT_EXPORT int rvfit_mock_run_phi(const rvfit_mock_job *job,
                                    const rvfit_phi_table **phi,
                                    const char *path, rvfit_err *err);

/* A flush() that writes one file per star calls this with its block:
 * one(job, s, spec, err) for each star s of [s0, s0+ns) in order, spec
 * its slot of output array 0 (buf[0] + (s - s0) bytes[0]); the first
 * failure stops the loop and is returned.  Calling thread only, like
 * flush(). */
RVFIT_EXPORT int rvfit_mock_each(const rvfit_mock_job *job, size_t s0,
                                 size_t ns, void *const *buf,
                                 int (*one)(const rvfit_mock_job *job,
                                            size_t s, const void *spec,
                                            rvfit_err *err),
                                 rvfit_err *err);

/* Truth of star s at exp(lnl0 + k dlnl), k < n, into fine[n]; a
 * non-finite value is RVFIT_ERR_NUMERIC naming the star, `part` (e.g.
 * "camera B"; may be NULL) and the wavelength. */
RVFIT_EXPORT int rvfit_mock_truth(const rvfit_mock_job *job, size_t s,
                                  const char *part, double lnl0, double dlnl,
                                  size_t n, double *fine, rvfit_err *err);

/* ---- normal CDF and pixel integration ----------------------------------- */

/* Standard normal CDF tabulated on [-9, 9] (step 1/128) and interpolated
 * by cubic Hermite with exact derivatives: |error| < 6e-12, about ten
 * times cheaper than erfc, which otherwise dominates a mock's cost.
 * Read-only after rvfit_phi_new, so one table serves every thread. */
RVFIT_EXPORT rvfit_phi_table *rvfit_phi_new(void); /* NULL: no memory */
RVFIT_EXPORT void rvfit_phi_free(rvfit_phi_table *t);
RVFIT_EXPORT double rvfit_phi(const rvfit_phi_table *t, double z);

/* Most pixels one fine sample is spread over; more are cut. */
#define RVFIT_MOCK_SPAN 24

/* Light of one fine sample at wavelength lam through a Gaussian LSF of
 * 1/sigma `isig`, weight w: it lands in pixel i with probability
 * Phi((e_i+1 - lam) isig) - Phi((e_i - lam) isig), e_i the pixel edges,
 * and out[i] += w times that, for pixels lo .. lo+n-1 (n cut to
 * RVFIT_MOCK_SPAN).  Edges from an array: edge[lo .. lo+n]. */
RVFIT_EXPORT void rvfit_mock_spread(const rvfit_phi_table *t,
                                    const double *edge, long lo, long n,
                                    double lam, double isig, double w,
                                    double *out);
/* The same for uniform edges e_i = e0 + de i (z steps of de isig). */
RVFIT_EXPORT void rvfit_mock_spread_uniform(const rvfit_phi_table *t,
                                            double e0, double de, long lo,
                                            long n, double lam, double isig,
                                            double w, double *out);

/* ---- flux scale and noise ----------------------------------------------- */

/* Factor that brings the median of work[0..n-1] (reordered) to level; 1
 * when that median is not positive and finite. */
RVFIT_EXPORT double rvfit_mock_scale(double *work, size_t n, double level);

/* Gaussian noise of shape `shape` (sigma_i = c shape_i, caller-filled)
 * with c set so that the median of F_i / sigma_i is snr: flux_i = F_i +
 * sigma_i N(0,1) (one rvfit_rng_normal per pixel, in order), ivar_i =
 * 1/sigma_i^2.  work: n doubles.  Returns c. */
RVFIT_EXPORT double rvfit_mock_noise(const double *F, const double *shape,
                                     size_t n, double snr, rvfit_rng *rng,
                                     double *work, float *flux, float *ivar);

/* ---- instruments on a log10(lambda) pixel grid (BOSS, LAMOST) ----------- */

/* The grid of such a writer.  A star's first pixel is at log10(lambda) =
 * ll0 + dloglam k, k drawn from [0, shift); it has npix - t pixels, t
 * drawn from [0, trim].  Its truth is sampled every dlnl in ln(lambda),
 * from pad A below the first pixel edge to pad A above the last, and its
 * pixel fluxes are scaled to a median of level.  Plain values: a writer
 * keeps one static const grid, read by every thread. */
typedef struct rvfit_mock_loglam {
    double ll0;     /* log10(lambda / A) of the first pixel, shift 0 */
    double dloglam; /* pixel step in log10(lambda)                  */
    size_t shift;   /* number of possible first pixels, >= 1        */
    size_t npix;    /* most pixels of a star                        */
    size_t trim;    /* most pixels cut from the red end             */
    double dlnl;    /* truth sampling in ln(lambda)                 */
    double pad;     /* truth padding beyond the edges, A            */
    double level;   /* median pixel flux after scaling              */
} rvfit_mock_loglam;

/* Per-thread scratch for a grid g, sized for its widest star. */
typedef struct rvfit_mock_scratch {
    double *fine;   /* nfine truth samples                         */
    double *pix;    /* g->npix pixel fluxes                        */
    double *edge;   /* g->npix + 1 pixel edges, A                  */
    double *tmp;    /* 2 g->npix doubles of work                   */
    size_t nfine;
} rvfit_mock_scratch;

/* Scratch for grid g (caller-owned; free with rvfit_mock_scratch_free,
 * which takes a void * to serve as rvfit_mock_job.scratch_free).  NULL:
 * no memory. */
RVFIT_EXPORT rvfit_mock_scratch *
rvfit_mock_scratch_new(const rvfit_mock_loglam *g);
RVFIT_EXPORT void rvfit_mock_scratch_free(void *scratch); /* NULL: no-op */

/* A star's grid from its own stream r: *coeff0 (log10 lambda of its
 * first pixel), then *npix.  Two rvfit_rng_uniform draws, in that order. */
RVFIT_EXPORT void rvfit_mock_loglam_draw(const rvfit_mock_loglam *g,
                                         rvfit_rng *r, double *coeff0,
                                         size_t *npix);

/* The pixel edges and the truth of star s, whose n pixels start at
 * log10(lambda) coeff0: w->edge[0..n] (A, edge i at coeff0 + (i - 1/2)
 * dloglam), w->fine[0..*nf) at exp(*lnl0 + k g->dlnl).  Errors:
 * RVFIT_ERR_INTERNAL when w holds fewer than *nf samples (a grid wider
 * than g), those of rvfit_mock_truth. */
RVFIT_EXPORT int rvfit_mock_loglam_truth(const rvfit_mock_job *job,
                                         size_t s,
                                         const rvfit_mock_loglam *g,
                                         double coeff0, size_t n,
                                         rvfit_mock_scratch *w, double *lnl0,
                                         size_t *nf, rvfit_err *err);

/* Scale w->pix[0..n) to a median of g->level (rvfit_mock_scale; w->tmp
 * is work). */
RVFIT_EXPORT void rvfit_mock_loglam_level(const rvfit_mock_loglam *g,
                                          size_t n, rvfit_mock_scratch *w);

/* The grid keywords of an SDSS-style spec file (BOSS, LAMOST) into the
 * current HDU of fptr (a fitsfile *): COEFF0 = coeff0 and COEFF1 =
 * dloglam (log10 lambda, 4 decimals), VACUUM = T, in that order.
 * CFITSIO status chain: nothing happens when *status is set.  Calling
 * thread only (CFITSIO). */
RVFIT_EXPORT void rvfit_mock_key_loglam(void *fptr, double coeff0,
                                        double dloglam, int *status);

/* Defects, after rvfit_mock_noise returned c for noise shape
 * shape[0..n): 0-3 corrupted pixels (flux += 30 c shape, mask |= badbit;
 * ivar kept, so that only the mask removes them), then 0-2 dead ones
 * (ivar = 0, and dead[p] = 0 when dead is not NULL, e.g. an LSF width
 * the pipeline zeroes).  Draws from r: the two counts, then one position
 * per defect. */
RVFIT_EXPORT void rvfit_mock_defects(rvfit_rng *r, size_t n, double c,
                                     const double *shape, int32_t badbit,
                                     float *flux, float *ivar,
                                     int32_t *mask, float *dead);

/* Recorded layout (rvfit/abi.h's rules): instruments fill these. */
#if defined(__LP64__) || defined(_LP64)
RVFIT_ABI_STRUCT(rvfit_mock_job, 232);
RVFIT_ABI_STRUCT(rvfit_mock_loglam, 64);
RVFIT_ABI_STRUCT(rvfit_mock_scratch, 40);
#endif

#ifdef __cplusplus
}
#endif
#endif
