/* rvspecfit_lsf.h — private: the line-spread function rvspecfit gave its
 * templates, from the command line of rvs_make_interpol that its
 * specs_{setup}.h5 records (dataset cmdline, shlex-joined).
 *
 * rvs_make_interpol convolves with a Gaussian whose FWHM is lambda/R(lambda)
 * and integrates over each output pixel (read_grid.make_rebinner):
 *   --resol R --fixed_fwhm   FWHM = lambda_mid / R, lambda_mid =
 *                            (lambda0 + lambda1)/2: constant in Angstrom
 *   --resol R                FWHM = lambda / R: constant in velocity
 *   --resol_func 'x/W'       FWHM = W Angstrom
 *   --resol_func 'R'         as --resol R
 * Any other --resol_func expression is not interpreted (kind UNKNOWN).
 * The FWHM is the total the templates are meant to have: rvspecfit
 * subtracts the input grid's own resolution (--resolution0) in quadrature
 * from the kernel it applies. */
#ifndef RVSPECFIT_LSF_H
#define RVSPECFIT_LSF_H

#include <stddef.h>

enum rvs_lsf_kind { RVS_LSF_UNKNOWN = 0, RVS_LSF_ANGSTROM = 1,
                    RVS_LSF_KMS = 2 };

typedef struct rvs_lsf {
    int kind;          /* enum rvs_lsf_kind                                */
    double sigma;      /* Gaussian sigma: Angstrom or km/s by kind         */
    int air;           /* --air: templates in air wavelengths              */
    char how[160];     /* what was read ("--resol 5875 --fixed_fwhm: FWHM
                          0.942 A"), or why nothing could be              */
} rvs_lsf;

/* Parse cmdline (may be "" or NULL: kind UNKNOWN). */
void rvs_lsf_parse(const char *cmdline, rvs_lsf *l);

#endif
