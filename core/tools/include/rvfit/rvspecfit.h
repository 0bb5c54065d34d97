/* rvfit/rvspecfit.h — a template library from rvspecfit's template files.
 *
 * rvspecfit (PyPI `rvspecfit`) writes per instrument setup a file
 * DIR/specs_{setup}.h5 (rvs_make_interpol): the models' ln flux on a
 * log-lambda grid padded by 1000 km/s, convolved to the setup's
 * resolution, continuum-normalised, with the raw parameters of each model
 * and the command line that made it.  This reads one such file per arm
 * of an instrument (HDF5 C API), adopts rvspecfit's wavelength grids as
 * the library's arms (no resampling), exponentiates and divides each
 * model by its mean over the arm without padding (the library's flux
 * convention), builds the axes TEFF, LOGG, FEH, ALPHAFE from rvspecfit's
 * teff, logg, feh, alpha (log10 scale where rvspecfit's LogParamMapper
 * takes the log10) as the sorted unique node values, marks lattice nodes
 * without a model as holes, takes the templates' LSF from the recorded
 * command line (--resol, --fixed_fwhm, --resol_func) and records where it
 * all came from in SOURCE.  docs/template-library.md, "Importing
 * rvspecfit templates".
 *
 * Thread-safety: not reentrant with other HDF5 users in the process
 * (Debian's libhdf5 is the serial, non-thread-safe build).
 */
#ifndef RVFIT_RVSPECFIT_H
#define RVFIT_RVSPECFIT_H

#include "rvfit/instrument.h"
#include "rvfit/library.h"
#include "rvfit/templates.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an import found, for the caller's log. */
typedef struct rvfit_rvspecfit_info {
    size_t nspec;                     /* models in each file              */
    size_t nmodel;                    /* nodes of the library's lattice   */
    char kind[16];                    /* interpolator chosen              */
    char arm[RVFIT_MAX_ARMS][256];    /* per arm: setup, grid and LSF     */
    char source[256];                 /* the SOURCE recorded              */
} rvfit_rvspecfit_info;

typedef struct rvfit_rvspecfit_opts {
    /* rvspecfit setup of each arm of the instrument (NULL entries, or all:
     * "<instrument>_<arm name in lower case>", e.g. desi_b). */
    const char *setup[RVFIT_MAX_ARMS];
    /* > 0: the Gaussian sigma (Angstrom) of every arm's templates, instead
     * of what each file's command line says; 0: from the files. */
    double sigma0;
    /* Interpolator options as for rvfit_templates_build, except:
     * interpolator NULL = simplex when the lattice has holes (irregular
     * grid), multilinear otherwise; log_flux -1 = 1 (rvspecfit
     * interpolates in ln flux).  sigma0, vmax, teff_* are not used. */
    rvfit_templates_opts build;
    rvfit_rvspecfit_info *info;       /* filled when not NULL             */
} rvfit_rvspecfit_opts;

/* 1 when this librvfit_tools was built with HDF5; 0 otherwise (then
 * rvfit_templates_from_rvspecfit returns RVFIT_ERR_UNAVAILABLE). */
RVFIT_EXPORT int rvfit_rvspecfit_available(void);

/* Build the library of `instrument` (its narm template arms: names, and
 * the ranges each setup must cover the centre of) from DIR/specs_*.h5 and
 * save it atomically in outdir.  Errors name the file, the dataset and
 * the reason. */
RVFIT_EXPORT int rvfit_templates_from_rvspecfit(
    const char *dir, int narm, const rvfit_template_arm *arms,
    const char *instrument, const rvfit_rvspecfit_opts *o,
    const char *outdir, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
