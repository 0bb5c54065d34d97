/* desi_mock.h — the DESI mock writer: per-star synthesis (desi_mock_star.c,
 * run on worker threads by rvfit_mock_run; no CFITSIO there) and the FITS
 * output (desi_mock.c). */
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

/* Per-star output arrays of camera a (rvfit_mock_job buffers): flux,
 * ivar (float[npix]), mask (int32[npix]), resolution (float[ndiag*npix]),
 * so that a block of each is the rows of its image. */
#define DESI_BUF(a, k) (4 * (a) + (k)) /* k: 0 flux 1 ivar 2 mask 3 res */
#define DESI_NBUF (4 * DESI_MOCK_NARM)

/* The job's ctx. */
typedef struct desi_mock_ctx {
    const rvfit_phi_table *phi;
    float *snr_med;  /* [nstar*NARM] MEDIAN_COADD_SNR, by star index */
    float *flux_med; /* [nstar*NARM] MEDIAN_COADD_FLUX               */
    void *writer;    /* the output, for flush                        */
} desi_mock_ctx;

/* Buffers, scratch and star callback of a DESI mock job. */
void desi_mock_job_init(rvfit_mock_job *job);

#endif
