/* The Cramer-Rao bound of a coadd's stars (`rvfit-indep bound`) and the
 * linear algebra behind it.  Internal to the generator (see indep.h). */
#ifndef INDEP_BOUND_H
#define INDEP_BOUND_H

#include "mock.h"

#define IND_NPAR 5   /* VRAD, TEFF, LOGG, FEH, ALPHAFE */
#define IND_MAXB 32  /* continuum basis functions per arm, at most */

enum { IND_BASIS_GAUSS = 0, IND_BASIS_LEGENDRE = 1 };

/* Continuum basis at x in [-1, 1]: npoly values into b.  GAUSS: 1, x, x^2
 * and npoly - 3 Gaussians of sigma 1/(npoly - 3) at -1 + 2k/(npoly - 4),
 * exactly 0 beyond 6 sigma; LEGENDRE: P_0 .. P_{npoly-1}. */
void ind_basis(int kind, int npoly, double x, double *b);

/* Adds to info (np x np, row-major, symmetric) the information on np
 * parameters of n pixels with weights w (inverse variances; <= 0 skipped),
 * model derivatives d[p*n + i], after marginalising nb linear nuisance
 * parameters with columns c[j*n + i]:
 *   D^T W D - D^T W C (C^T W C)^-1 C^T W D.
 * -1 when C^T W C is not positive definite or np, nb are too large. */
int ind_info_marginal(size_t n, int np, const double *d, int nb,
                      const double *c, const double *w, double *info);
/* cov = info^-1 (np x np); -1 unless info is positive definite. */
int ind_info_invert(int np, const double *info, double *cov);

typedef struct {
    const char *coadd, *truth, *out;
    size_t first, count;     /* stars first .. first + count - 1 (0: all) */
    int npoly, basis;        /* continuum per arm */
    double step;             /* factor on the difference steps (1) */
    ind_mockopts o;          /* what `spectra` was given */
    int nthreads;
} ind_bound_args;

/* Writes out: HDU BOUND with TARGETID, SNR and the bound of VRAD, TEFF,
 * LOGG, FEH and ALPHAFE of each star. */
int ind_bound_write(const ind_bound_args *a, ind_err *e);

#endif
