/* lamost_mock.h — synthetic LRS spectra: the numerics (lamost_mock_star.c,
 * run on worker threads, no CFITSIO) and the writer (lamost_mock.c). */
#ifndef LAMOST_MOCK_H
#define LAMOST_MOCK_H

#include "lamost_internal.h"
#include "rvfit/mockkit.h"

/* The mock grid: pixel centres at log10(lambda) = COEFF0 + i*1e-4 with
 * COEFF0 = LAMOST_MOCK_LL0 + k*1e-4, k < LAMOST_MOCK_SHIFT per star, and
 * LAMOST_MOCK_NPIX - (0..LAMOST_MOCK_TRIM) pixels, as LRS fibres differ
 * (3690 A to about 9090 A). */
#define LAMOST_MOCK_LL0 3.5670 /* 3689.8 A */
#define LAMOST_MOCK_SHIFT 8
#define LAMOST_MOCK_NPIX 3910
#define LAMOST_MOCK_TRIM 12
#define LAMOST_MOCK_LEVEL 200.0   /* median flux (relative units)       */
#define LAMOST_MOCK_DLNL 5e-6     /* truth sampling in ln(lambda)       */
#define LAMOST_MOCK_PAD 20.0      /* truth padding, A                   */
#define LAMOST_MOCK_BLOCK 32      /* stars computed before writing      */
#define LAMOST_MOCK_BADBIT 0x2    /* andmask bit of corrupted pixels    */

/* One synthetic spec file.  The struct itself is output array
 * LAMOST_BUF_SPEC of rvfit_mock_run, its arrays the others. */
typedef struct lamost_mock_spec {
    size_t npix;
    double coeff0;
    float *flux, *ivar;
    int32_t *mask;
    float snr[5]; /* median S/N in the u, g, r, i, z ranges (NaN: none) */
} lamost_mock_spec;

enum {
    LAMOST_BUF_SPEC, LAMOST_BUF_FLUX, LAMOST_BUF_IVAR, LAMOST_BUF_MASK,
    LAMOST_NBUF
};

/* The job's ctx. */
typedef struct lamost_mock_ctx {
    const rvfit_phi_table *phi;
    lamost_opts opts;
    const char *path; /* write_mock's path                        */
    int is_dir;       /* 1: one file per star in directory path   */
} lamost_mock_ctx;

/* Layout of star s under option value mock_layout (0: alternate). */
int lamost_mock_layout(int mock_layout, size_t s);
/* Buffers, scratch and star callback of a LAMOST mock job. */
void lamost_mock_job_init(rvfit_mock_job *job);

#endif
