/* test_prep_bad.c — the engine's own check of the wavelengths a reader
 * hands over (a plugin that does not check its grid must not reach a
 * backend with ln(lambda) = NaN): non-positive, non-finite and
 * decreasing grids are RVFIT_ERR_FORMAT naming the arm, the spectrum and
 * the pixel; a good grid passes. */
#include <string.h>

#include "rvfit/fit.h"
#include "rvfit/library.h"
#include "testutil.h"

#define NPIX 8

/* prep of a 2-spectrum LSF-less batch whose spectrum `bad` (or none, -1)
 * has pixel `pix` set to v; per_spec: own grid per spectrum. */
static int prep_with(int per_spec, int bad, int pix, double v, rvfit_err *e)
{
    rvfit_arm_info I = {"B", NPIX, RVFIT_RES_NONE, 0, per_spec};
    rvfit_batch b;
    rvfit_library lib;
    memset(&lib, 0, sizeof lib);
    CHECK(rvfit_batch_alloc(&b, 1, &I, 2, e) == RVFIT_OK);
    b.nspec = 2;
    b.index[0] = 40, b.index[1] = 41;
    for (size_t s = 0; s < (per_spec ? 2u : 1u); s++)
        for (size_t i = 0; i < NPIX; i++)
            b.arm[0].wave[s * NPIX + i] = 5000.0 + (double)i;
    for (size_t i = 0; i < 2 * NPIX; i++)
        b.arm[0].flux[i] = 1.0f, b.arm[0].ivar[i] = 1.0f;
    if (bad >= 0)
        b.arm[0].wave[(size_t)bad * NPIX + (size_t)pix] = v;
    int rc = rvfit_prep_batch(&b, &lib, e);
    rvfit_batch_free(&b);
    return rc;
}

static void expect(int per_spec, int bad, int pix, double v,
                   const char *what)
{
    rvfit_err e;
    rvfit_err_clear(&e);
    int rc = prep_with(per_spec, bad, pix, v, &e);
    CHECK_MSG(rc == RVFIT_ERR_FORMAT, "status %d for %g", rc, v);
    CHECK_MSG(tu_contains(e.msg, what), "'%s' lacks '%s'", e.msg, what);
    printf("  %s\n", e.msg);
}

int main(void)
{
    rvfit_err e;
    CHECK(prep_with(0, -1, 0, 0, &e) == RVFIT_OK);
    CHECK(prep_with(1, -1, 0, 0, &e) == RVFIT_OK);
    /* a whole grid below zero is increasing but not positive */
    expect(0, 0, 0, -1.0, "arm B: spectrum 40 of the file: wavelength 0 "
           "(-1) is not finite, positive and increasing");
    expect(0, 0, 3, 0.0, "wavelength 3 (0)");
    expect(1, 1, 5, NAN, "spectrum 41 of the file: wavelength 5 (nan)");
    expect(1, 1, 7, 5000.0, "wavelength 7 (5000)");
    return tu_finish("test_prep_bad");
}
