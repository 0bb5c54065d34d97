/* desi_mock.h — per-star synthesis of the DESI mock writer, shared by
 * desi_mock.c (FITS output) and desi_mock_star.c (the numerics, run on
 * worker threads; no CFITSIO there). */
#ifndef DESI_MOCK_H
#define DESI_MOCK_H


#include "desi_internal.h"

/* Mean flux level (1e-17 erg/s/cm^2/A) a mock star is scaled to: the
 * median over its pixels, a bright-ish MWS star. */
#define DESI_MOCK_FLUX_LEVEL 20.0
/* Truth sampling in ln(lambda) and padding beyond each camera (A). */
#define DESI_MOCK_DLNL 5e-6
#define DESI_MOCK_PAD 15.0
/* Spectra computed per block before they are written (bounds memory). */
#define DESI_MOCK_BLOCK 64
#define DESI_MASK_COSMIC 0x4 /* SPECMASK bit 2 */

/* One block of stars [s0, s0+ns); arrays are [ns][...] per camera. */
typedef struct desi_mock_block {
    const rvfit_mock_star *stars;
    rvfit_truth_fn truth;
    void *ctx;
    uint64_t seed;
    const desi_phi_table *phi;
    size_t s0, ns;
    float *flux[DESI_MOCK_NARM], *ivar[DESI_MOCK_NARM];
    float *res[DESI_MOCK_NARM];
    int32_t *mask[DESI_MOCK_NARM];
    float *snr_med;  /* [nstar*NARM] MEDIAN_COADD_SNR, global star index */
    float *flux_med; /* [nstar*NARM] MEDIAN_COADD_FLUX                   */
} desi_mock_block;

/* Compute every star of the block on nthreads threads (>= 1). */
int desi_mock_run_block(desi_mock_block *b, int nthreads, rvfit_err *err);

/* Deterministic PRNG (xoshiro256**, seeded by splitmix64). */

#endif
