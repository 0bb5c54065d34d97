/* phoenix_read.h — private: discovery and reading of a template grid in
 * the PHOENIX-ACES-AGSS-COND-2011 layout (reference/formats.md).
 * Not thread-safe (CFITSIO): callers serialise the readers. */
#ifndef PHOENIX_READ_H
#define PHOENIX_READ_H

#include <stddef.h>

#include "rvfit/status.h"

typedef struct phx_file {
    char *path;                    /* owned                               */
    double teff, logg, feh, alpha; /* PHXTEFF, PHXLOGG, PHXM_H, PHXALPHA  */
} phx_file;

typedef struct phx_grid {
    double *wave;      /* [nwave] vacuum Angstrom, increasing          */
    size_t nwave;
    phx_file *file; /* [nfile], sorted by path                 */
    size_t nfile;
} phx_grid;

/* Read DIR/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits and the headers of every
 * DIR/PHOENIX-ACES-AGSS-COND-2011/Z* /lte*.fits; keep files with
 * teff_min <= PHXTEFF <= teff_max (a bound of 0 means none).  Every file
 * must be a FITS image with nwave float samples. */
int phx_scan(const char *dir, double teff_min,
                                  double teff_max, phx_grid *g,
                                  rvfit_err *err);
/* Read the flux of one model file (nwave values) as double. */
int phx_flux(const char *path, size_t nwave,
                                  double *flux, rvfit_err *err);
void phx_free(phx_grid *g);

#endif
