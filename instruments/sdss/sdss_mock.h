/* sdss_mock.h — synthetic BOSS spectra: the numerics (sdss_mock_star.c,
 * run on worker threads, no CFITSIO) and the writer (sdss_mock.c). */
#ifndef SDSS_MOCK_H
#define SDSS_MOCK_H

#include "rvfit/mockkit.h"
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

/* One synthetic spec file.  The struct itself is output array
 * SDSS_BUF_SPEC of rvfit_mock_run, its arrays the others, so that a
 * block's flush finds every star's spectrum in buf[SDSS_BUF_SPEC]. */
typedef struct sdss_mock_spec {
    size_t npix;
    double coeff0;
    float *flux, *ivar, *wdisp, *sky, *model;
    int32_t *mask;
    float snr; /* median flux*sqrt(ivar) over ivar > 0 */
} sdss_mock_spec;

enum {
    SDSS_BUF_SPEC, SDSS_BUF_FLUX, SDSS_BUF_IVAR, SDSS_BUF_WDISP,
    SDSS_BUF_SKY, SDSS_BUF_MODEL, SDSS_BUF_MASK, SDSS_NBUF
};

/* The job's ctx. */
typedef struct sdss_mock_ctx {
    const rvfit_phi_table *phi;
    const struct sdss_dest *dest; /* where the files go (sdss_mock.c)  */
    const char *path;             /* write_mock's path                 */
} sdss_mock_ctx;

/* LSF width (pixels) of the mock at log10(lambda) ll, fibre factor f. */
double sdss_mock_wdisp(double ll, double f);
/* Buffers, scratch and star callback of an SDSS mock job. */
void sdss_mock_job_init(rvfit_mock_job *job);

#endif
