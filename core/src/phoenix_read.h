/* phoenix_read.h — private: discovery and reading of a template grid in
 * the PHOENIX-ACES-AGSS-COND-2011 layout (reference/formats.md).
 * Not thread-safe (CFITSIO): callers serialise the readers. */
#ifndef RVFIT_PHOENIX_READ_H
#define RVFIT_PHOENIX_READ_H

#include <stddef.h>

#include "rvfit/status.h"
#include "util.h"

typedef struct rvfit_i_phx_file {
    char *path;                    /* owned                               */
    double teff, logg, feh, alpha; /* PHXTEFF, PHXLOGG, PHXM_H, PHXALPHA  */
} rvfit_i_phx_file;

typedef struct rvfit_i_phx_grid {
    double *wave;      /* [nwave] vacuum Angstrom, increasing          */
    size_t nwave;
    rvfit_i_phx_file *file; /* [nfile], sorted by path                 */
    size_t nfile;
} rvfit_i_phx_grid;

/* Read DIR/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits and the headers of every
 * DIR/PHOENIX-ACES-AGSS-COND-2011/Z* /lte*.fits; keep files with
 * teff_min <= PHXTEFF <= teff_max (a bound of 0 means none).  Every file
 * must be a FITS image with nwave float samples. */
RVFIT_HIDDEN int rvfit_i_phx_scan(const char *dir, double teff_min,
                                  double teff_max, rvfit_i_phx_grid *g,
                                  rvfit_err *err);
/* Read the flux of one model file (nwave values) as double. */
RVFIT_HIDDEN int rvfit_i_phx_flux(const char *path, size_t nwave,
                                  double *flux, rvfit_err *err);
RVFIT_HIDDEN void rvfit_i_phx_free(rvfit_i_phx_grid *g);

#endif
