/* rvspecfit_h5.h — private: reading one rvspecfit template file
 * `specs_{setup}.h5` (written by rvs_make_interpol through rvspecfit's
 * serializer: root attribute version = 1, one dataset per key) with the
 * HDF5 C API.  Only built with HDF5 (RVFIT_HAVE_HDF5).
 *
 * Datasets read: specs [nspec][nlam] (natural-log flux unless log_spec
 * says 0), vec [npar][nspec] (raw parameters), lam [nlam] (Angstrom),
 * parnames [npar]; optional: log_spec, log_step (booleans),
 * mapper_class_name and mapper_args (which parameters rvspecfit
 * interpolates in log10), revision, git_rev, cmdline (strings; "" when
 * absent).  Errors name the file, the dataset and the reason.
 *
 * Not thread-safe (Debian's serial libhdf5): one reader at a time.
 */
#ifndef RVSPECFIT_H5_H
#define RVSPECFIT_H5_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/limits.h"
#include "rvfit/status.h"

typedef struct rvs_file {
    char *path;                 /* owned copy                               */
    int64_t fid, did;           /* HDF5 file and `specs` dataset (hid_t)    */
    size_t nspec, nlam;
    int npar;
    char parname[RVFIT_MAX_PARAMS][32];
    double *vec;                /* [npar][nspec]                            */
    double *lam;                /* [nlam], increasing                       */
    int log_spec;               /* 1: specs hold ln flux                    */
    int log_step;               /* 1 log-lambda grid, 0 linear, -1 unknown  */
    int logpar[RVFIT_MAX_PARAMS]; /* 1: parameter interpolated in log10     */
    char *revision, *git_rev, *cmdline; /* owned, "" when absent           */
} rvs_file;

/* Open path and read everything but the spectra; f is zeroed first and
 * needs rvs_close also after a failure. */
int rvs_open(const char *path, rvs_file *f, rvfit_err *err);
/* Spectrum i (0 <= i < nspec) into out[nlam], as stored (ln flux when
 * log_spec); non-finite values are refused. */
int rvs_row(rvs_file *f, size_t i, float *out, rvfit_err *err);
void rvs_close(rvs_file *f);

#endif
