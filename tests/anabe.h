/* tests/anabe.h — an analytic backend for the fit driver's known-answer
 * tests (test_fit_known, test_fit_optim): the -2 ln L of a point is a
 * closed-form function the test supplies, so the answers owe nothing to
 * the code under test; and the small grid library and one-arm batch both
 * tests fit.  Single-threaded; everything is owned by the caller. */
#ifndef RVFIT_TEST_ANABE_H
#define RVFIT_TEST_ANABE_H

#include <stdint.h>

#include "rvfit/fit.h"
#include "rvfit/library.h"

/* Nodes of tu_ana_library: TEFF log10(4000..7000 by 500), LOGG 1..5 by
 * 1, FEH -2..0.5 by 0.5, every model present. */
#define TU_ANA_NP 3
#define TU_ANA_NMODEL (7 * 5 * 6)

typedef struct tu_ana {
    /* -2 ln L of p (ctx is the test's) */
    double (*m2lnl)(const void *ctx, const rvfit_point *p);
    /* chisq of the one arm given that -2 ln L; NULL: 500 + m2lnl */
    double (*chisq)(const void *ctx, const rvfit_point *p, double m2lnl);
    const void *ctx;
    uint64_t points, calls; /* counted like a real backend's */
    rvfit_backend_ops ops;
    rvfit_backend be;       /* named "analytic", state = this */
} tu_ana;

/* Fill a->ops and a->be once m2lnl/chisq/ctx are set. */
void tu_ana_init(tu_ana *a);
/* The grid above into L (exists: TU_ANA_NMODEL bytes). */
void tu_ana_library(rvfit_library *L, uint8_t *exists);
/* A batch of nspec flat spectra of npix pixels (one arm "B", ivar 1,
 * S/N 30); exits the test on failure to allocate. */
void tu_ana_batch(rvfit_batch *b, size_t nspec, size_t npix);
/* rvfit_fit_batch of b on L with a's backend, no models, a one-thread
 * host logging warnings; *prof zeroed first.  Returns the fit's status
 * (message in err). */
int tu_ana_fit(tu_ana *a, const rvfit_library *L, const rvfit_batch *b,
               const rvfit_fit_opts *o, rvfit_result *res,
               rvfit_profile *prof, rvfit_err *err);

#endif
