/* fuzz_library.c — libFuzzer target: the template-library loader
 * (core/engine/library/read.c).  Checked: a load either fails with a
 * message naming the file, or gives a library whose documented
 * invariants hold (docs/template-library.md). */
#include <math.h>

#include "fuzz_util.h"
#include "rvfit/library.h"
#include "rvfit/interp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_check_library(const rvfit_library *L)
{
    size_t prod = 1;
    FZ_REQUIRE(L->nparam >= 1 && L->nparam <= RVFIT_MAX_PARAMS &&
                   L->narm >= 1 && L->narm <= RVFIT_MAX_ARMS,
               "%d params, %d arms", L->nparam, L->narm);
    for (int i = 0; i < L->nparam; i++) {
        const rvfit_axis *a = &L->axis[i];
        FZ_REQUIRE(a->nnode >= 1 && a->nnode <= RVFIT_MAX_NODES, "nodes");
        for (int k = 1; k < a->nnode; k++)
            FZ_REQUIRE(a->node[k] > a->node[k - 1], "axis %s", a->name);
        prod *= (size_t)a->nnode;
    }
    FZ_REQUIRE(prod == L->nmodel, "nmodel %zu vs %zu", L->nmodel, prod);
    for (int a = 0; a < L->narm; a++) {
        const rvfit_lib_arm *A = &L->arm[a];
        FZ_REQUIRE(A->npix >= 2 && isfinite(A->lnl0) && A->dlnl > 0,
                   "arm %s grid", A->name);
        for (size_t m = 0; m < L->nmodel; m++)
            for (size_t p = 0; L->exists[m] && p < A->npix; p++)
                FZ_REQUIRE(isfinite(A->flux[m * A->npix + p]), "flux");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9 || memcmp(data, "SIMPLE  =", 9) != 0)
        return 0; /* see fuzz_instrument.h: no compressed inputs */
    char path[512];
    if (fz_write("library", "fits", data, size, path, sizeof path) != 0)
        return 0;
    rvfit_library L;
    rvfit_err err;
    rvfit_err_clear(&err);
    if (rvfit_library_load(&L, path, &err) == RVFIT_OK) {
        fz_check_library(&L);
        rvfit_library_free(&L);
    } else {
        fz_check_error(&err, path);
    }
    remove(path);
    return 0;
}
