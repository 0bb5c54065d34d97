/* The spectrographs of rvfit-indep: the DESI-like one (three arms on 0.8 A
 * pixels, a Gram-Charlier LSF whose width and shape vary along each arm
 * and between fibres) and the LAMOST MRS-like one (two arms on pixels
 * uniform in ln lambda, a Gaussian LSF of R ~ 7500), each with a
 * throughput curve, and a night-sky spectrum.  Internal to the generator
 * (see indep.h for conventions). */
#ifndef INDEP_INSTRUMENT_H
#define INDEP_INSTRUMENT_H

#include "indep.h"

#define IND_NARM 3

/* What varies between fibres: the LSF width scale, an h3 offset, and a
 * shape switch (1: Gram-Charlier, 0: pure Gaussian, for ablations). */
typedef struct { double scale, dh3, shape; } ind_fibre;

/* An arm's pixels are uniform in its coordinate x: x = lambda (A) for a
 * linear arm, x = ln lambda for a log arm (logpix).  lo, step and the LSF
 * sigma are in units of x. */
typedef struct {
    const char *name;        /* "B", "R", "Z" */
    double lo, step;         /* first pixel centre, pixel width (x) */
    size_t n;
    double s0, s1, s2;       /* LSF sigma (x) = s0 + s1 x + s2 x^2 */
    double h3a, h3b, h4a, h4b; /* h3 = h3a + h3b x, h4 = h4a + h4b x^2 */
    double tc, tw;           /* throughput peak centre and width (A) */
    int logpix;              /* 1: x = ln lambda                    */
    double reach;            /* kernel reach, pixels each side      */
    int sub;                 /* detector sub-steps per pixel        */
} ind_arm;

const ind_arm *ind_desi_arms(void);
/* The LAMOST MRS-like arms B (about 4950-5350 A) and R (6300-6750 A). */
#define IND_MRS_NARM 2
const ind_arm *ind_mrs_arms(void);
/* Pixel centre i in A. */
double ind_arm_lam(const ind_arm *a, size_t i);
/* lambda (A) at fractional pixel position p (p = -0.5: the first edge). */
double ind_arm_lam_at(const ind_arm *a, double p);
/* LSF of pixel i seen by fibre f. */
void ind_arm_lsf(const ind_arm *a, size_t i, const ind_fibre *f, double *s,
                 double *h3, double *h4);
/* The resolution matrix in DESI storage, res[k * n + j], k = 0..10, with
 * R[i][j] = res[(5 - (j - i)) * n + j]: each row is the LSF integrated over
 * the source pixels, restricted to the arm, renormalised to sum 1 and
 * rounded to float; the data are made with exactly these numbers. */
void ind_arm_resolution(const ind_arm *a, const ind_fibre *f, float *res);
/* out[i] = sum_j R[i][j] in[j] */
void ind_arm_apply(const ind_arm *a, const float *res, const double *in,
                   double *out);
/* Mean of the high-resolution spectrum over each pixel of the arm. */
void ind_arm_bin(const ind_arm *a, const ind_hgrid *g, const double *f,
                 const double *cum, double *out);
/* The pixel kernel K(u) = (1/dpix) integral of the LSF over a detector
 * pixel centred at u = lambda_pixel - lambda_source (1/A).  The resolution
 * matrix samples it: R[i][i+d] = dpix K(-d dpix). */
double ind_pixel_kernel(double u, double s, double h3, double h4,
                        double dpix);
/* What the detector records: the high-resolution spectrum f (cum from
 * ind_cumulate) convolved with each pixel's LSF and integrated over the
 * pixel, out to the 5.5-pixel reach of the resolution matrix.
 * scratch: ind_arm_observe_scratch(a) doubles. */
size_t ind_arm_observe_scratch(const ind_arm *a);
void ind_arm_observe(const ind_arm *a, const ind_fibre *fib,
                     const ind_hgrid *g, const double *f, const double *cum,
                     double *out, double *scratch);
/* Detected electrons per (1e-17 erg/s/cm^2/A) per unit exposure. */
double ind_arm_response(const ind_arm *a, double lam);

/* Night sky as recorded through a fibre's LSF (1e-17 erg/s/cm^2/A):
 * continuum and emission lines separately.  The line list is fixed. */
void ind_sky_pixels(const ind_arm *a, const ind_fibre *f, double *cont,
                    double *lines);

#endif
