/* mockstars.c — seeded star lists for injection-recovery tests and the
 * truth table that goes with a mock file (HDU TRUTH, written atomically).
 */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/fits.h"
#include "rvfit/numeric.h"
#include "rvfit/synth.h"

/* Uniform draw inside [x0 + step/2, x1 - step/2]; an axis with a single
 * node (step <= 0 or x1 <= x0) gives x0. */
static double ms_draw(uint64_t *s, double x0, double x1, double step)
{
    double lo = x0, hi = x1;
    if (step > 0.0) {
        lo += 0.5 * step;
        hi -= 0.5 * step;
    }
    double u = rvfit_splitmix_uniform(s);
    if (!(hi > lo))
        return x1 > x0 && step > 0.0 ? 0.5 * (x0 + x1) : x0;
    return lo + (hi - lo) * u;
}

void rvfit_mock_stars(const rvfit_grid_spec *spec, size_t n, uint64_t seed,
                      double vmax, double vsini_max, double snr_min,
                      double snr_max, rvfit_mock_star *stars)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x6d6f636bull; /* "mock" */
    double lsmin = log(snr_min > 0.0 ? snr_min : 1.0);
    double lsmax = log(snr_max > snr_min ? snr_max
                                         : (snr_min > 0.0 ? snr_min : 1.0));
    for (size_t i = 0; i < n; i++) {
        rvfit_mock_star *m = &stars[i];
        m->targetid = 1000000 + (int64_t)i;
        m->teff = ms_draw(&s, spec->teff0, spec->teff1, spec->teff_step);
        m->logg = ms_draw(&s, spec->logg0, spec->logg1, spec->logg_step);
        m->feh = ms_draw(&s, spec->feh0, spec->feh1, spec->feh_step);
        m->alphafe = ms_draw(&s, spec->alpha0, spec->alpha1,
                             spec->alpha_step);
        m->vrad = vmax * (2.0 * rvfit_splitmix_uniform(&s) - 1.0);
        m->vsini = vsini_max > 0.0 ? vsini_max * rvfit_splitmix_uniform(&s) : 0.0;
        m->snr = exp(lsmin + (lsmax - lsmin) * rvfit_splitmix_uniform(&s));
    }
}

static int ms_columns(fitsfile *f, size_t n, const rvfit_mock_star *stars,
                      int *fs)
{
    double *col = malloc((n ? n : 1) * sizeof *col);
    long long *id = malloc((n ? n : 1) * sizeof *id);
    if (!col || !id) {
        free(col);
        free(id);
        return RVFIT_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        id[i] = stars[i].targetid;
    if (n)
        fits_write_col(f, TLONGLONG, 1, 1, 1, (LONGLONG)n, id, fs);
    for (int c = 2; c <= 8 && n; c++) {
        for (size_t i = 0; i < n; i++) {
            const rvfit_mock_star *m = &stars[i];
            const double v[8] = {0, m->teff, m->logg, m->feh, m->alphafe,
                                 m->vrad, m->vsini, m->snr};
            col[i] = v[c - 1];
        }
        fits_write_col(f, TDOUBLE, c, 1, 1, (LONGLONG)n, col, fs);
    }
    free(col);
    free(id);
    return RVFIT_OK;
}

int rvfit_truth_write(const char *path, size_t n,
                      const rvfit_mock_star *stars, rvfit_err *err)
{
    char tmp[4200];
    /* Columns of HDU TRUTH, in this order (CFITSIO wants char **). */
    char *names[] = {"TARGETID", "TEFF", "LOGG", "FEH",
                     "ALPHAFE", "VRAD", "VSINI", "SNR"};
    char *forms[] = {"K", "D", "D", "D", "D", "D", "D", "D"};
    /* dex is no FITS unit: those columns say it in TCOMMn (as rvtab) */
    char *units[] = {"", "K", "", "", "", "km/s", "km/s", ""};
    fitsfile *f = NULL;
    int fs = 0, st = rvfit_fits_create(path, tmp, sizeof tmp, &f, err);
    if (st)
        return st;
    fits_create_tbl(f, BINARY_TBL, 0, 8, names, forms, units,
                    "TRUTH", &fs);
    for (int c = 2; c <= 4; c++) {
        char key[16];
        snprintf(key, sizeof key, "TCOMM%d", c + 1);
        fits_write_key_str(f, key, c == 2 ? "true log g [dex]"
                                          : c == 3 ? "true [Fe/H] [dex]"
                                                   : "true [alpha/Fe] [dex]",
                           "column description", &fs);
    }
    if (!fs)
        st = ms_columns(f, n, stars, &fs);
    if (st) {
        rvfit_fits_discard(f, tmp);
        return rvfit_err_set(err, st, "%s: no memory for %zu rows", path, n);
    }
    return rvfit_fits_commit(f, fs, tmp, path, err);
}
