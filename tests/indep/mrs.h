/* LAMOST medium-resolution (MRS) mocks of rvfit-indep: stars observed on
 * one or more nights, several exposures a night, written as med- files
 * (mrs.c plans and observes, mrs_write.c writes).  Internal to the
 * generator (see indep.h for conventions). */
#ifndef INDEP_MRS_H
#define INDEP_MRS_H

#include "mock.h"

typedef struct {
    const char *outdir, *truth;
    size_t nstar;
    uint64_t seed, model_seed;
    const ind_preset *ps;
    ind_mockopts o;
    int nnight_max;              /* nights per star: 1 .. nnight_max    */
    int nexp_min, nexp_max;      /* exposures per night                 */
    double binary_frac, k_min, k_max, p_min, p_max, span;
    int nthreads;
} ind_mrs_args;
int ind_mrs_write(const ind_mrs_args *a, ind_err *e);

/* One exposure of a med- file: its local Julian minute, exposure time (s)
 * and, per arm, the pixels (mask: PIXMASK) and median S/N. */
typedef struct {
    long long lmjm;
    double exptime;
    float *flux[IND_MRS_NARM], *ivar[IND_MRS_NARM];
    int32_t *mask[IND_MRS_NARM];
    double snr[IND_MRS_NARM];
} ind_mrs_exposure;

/* One med- file: the primary header's values, the arms (their grids) and
 * the exposures, which the coadds combine. */
typedef struct {
    const char *path;
    long long obsid, lmjd, mjd;
    int fiber;
    const char *planid, *desig;
    double ra, dec, helio_rv;
    const ind_arm *arms;         /* IND_MRS_NARM                        */
    size_t nexp;
    const ind_mrs_exposure *x;
} ind_mrs_file;
int ind_mrs_file_write(const ind_mrs_file *f, ind_err *e);

#endif
