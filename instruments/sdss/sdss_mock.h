/* sdss_mock.h — synthetic BOSS spectra: the numerics (sdss_mock_star.c,
 * run on worker threads, no CFITSIO) and the writer (sdss_mock.c). */
#ifndef SDSS_MOCK_H
#define SDSS_MOCK_H


#include "sdss_internal.h"

/* The mock grid: pixel centres at log10(lambda) = COEFF0 + i*1e-4 with
 * COEFF0 = SDSS_MOCK_LL0 + k*1e-4, k < SDSS_MOCK_SHIFT per star, and
 * SDSS_MOCK_NPIX - (0..SDSS_MOCK_TRIM) pixels, as fibres differ. */
#define SDSS_MOCK_LL0 3.5563 /* 3600.0 A */
#define SDSS_MOCK_SHIFT 10
#define SDSS_MOCK_NPIX 4600
#define SDSS_MOCK_TRIM 20
/* Median flux a star is scaled to (1e-17 erg/s/cm^2/A). */
#define SDSS_MOCK_LEVEL 50.0
/* Truth sampling in ln(lambda) (1.5 km/s) and padding (A). */
#define SDSS_MOCK_DLNL 5e-6
#define SDSS_MOCK_PAD 20.0
#define SDSS_MOCK_BLOCK 32       /* stars computed before writing */
#define SDSS_MOCK_BADBIT 0x400000 /* and_mask bit of corrupted pixels */

/* One synthetic spec file. */
typedef struct sdss_mock_spec {
    size_t npix;
    double coeff0;
    float *flux, *ivar, *wdisp, *sky, *model;
    int32_t *mask;
    float snr; /* median flux*sqrt(ivar) over ivar > 0 */
} sdss_mock_spec;

typedef struct sdss_phi sdss_phi;

typedef struct sdss_mock_block {
    const rvfit_mock_star *stars;
    rvfit_truth_fn truth;
    void *ctx;
    uint64_t seed;
    const sdss_phi *phi;
    size_t s0, ns;               /* stars [s0, s0+ns)                  */
    sdss_mock_spec spec[SDSS_MOCK_BLOCK];
} sdss_mock_block;

sdss_phi *sdss_phi_new(void);
void sdss_phi_free(sdss_phi *t);
/* Standard normal CDF, |error| < 1e-12. */
double sdss_phi_cdf(const sdss_phi *t, double z);

/* LSF width (pixels) of the mock at log10(lambda) ll, fibre factor f. */
double sdss_mock_wdisp(double ll, double f);
/* Compute every star of the block on nthreads threads. */
int sdss_mock_run_block(sdss_mock_block *b, int nthreads, rvfit_err *err);

#endif
