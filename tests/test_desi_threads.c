/* test_desi_threads.c — the DESI reader spreads a read over the host's
 * threads (instruments/desi/desi_read.c): the batch it fills must be the
 * same bytes at any thread count, for a selection whose file rows break
 * into many runs, read whole and in odd ranges; and when the file goes
 * bad after opening (cut short on disk), every thread count fails with
 * an error naming the file and the HDU that is cut.  The
 * reference is the read on one thread (the reader before it had
 * threads), on the fixture's 200-star coadd. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/plugin.h"
#include "testutil.h"

static const int nthreads[] = {1, 2, 3, 7};
#define NT (int)(sizeof nthreads / sizeof nthreads[0])

typedef struct reading {
    rvfit_batch b;
    int rc;
    char msg[RVFIT_ERR_LEN];
} reading;

/* Open path with the selection, read [first, first+count) on nt threads. */
static void read_with(const rvfit_instrument_ops *ops, const char *path,
                      const rvfit_select *sel, int nt, size_t first,
                      size_t count, void (*after_open)(const char *),
                      reading *out)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    host.nthreads = nt;
    rvfit_err e;
    rvfit_err_clear(&e);
    void *h = NULL;
    memset(out, 0, sizeof *out);
    CHECK(ops->open(&host, NULL, 0, path, sel, &h, &e) == RVFIT_OK);
    if (!h)
        return;
    if (after_open)
        after_open(path);
    rvfit_file_info I;
    ops->info(h, &I);
    CHECK(rvfit_batch_alloc(&out->b, I.narm, I.arm, count, &e) == RVFIT_OK);
    out->rc = ops->read(h, first, count, &out->b, &e);
    snprintf(out->msg, sizeof out->msg, "%s", e.msg);
    ops->close(h);
}

static int same(const reading *x, const reading *y)
{
    const rvfit_batch *a = &x->b, *b = &y->b;
    if (a->nspec != b->nspec || a->narm != b->narm ||
        memcmp(a->snr, b->snr, a->nspec * (size_t)a->narm * sizeof *a->snr) ||
        memcmp(a->flags, b->flags, a->nspec * sizeof *a->flags) ||
        memcmp(a->index, b->index, a->nspec * sizeof *a->index))
        return 0;
    for (int k = 0; k < a->narm; k++) {
        const rvfit_arm_batch *A = &a->arm[k], *B = &b->arm[k];
        size_t n = a->nspec * A->npix;
        if (memcmp(A->wave, B->wave, A->npix * sizeof *A->wave) ||
            memcmp(A->flux, B->flux, n * sizeof *A->flux) ||
            memcmp(A->ivar, B->ivar, n * sizeof *A->ivar) ||
            memcmp(A->res, B->res, n * (size_t)A->ndiag * sizeof *A->res))
            return 0;
    }
    return 1;
}

static const char *g_cut; /* the copy after_open cuts short */

static void cut_short(const char *path)
{
    (void)path;
    long long size = 0;
    FILE *f = fopen(g_cut, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fclose(f);
    }
    /* into the last images (Z's), well past the first spectra's B data */
    CHECK(size > 0 && truncate(g_cut, (off_t)(size * 9 / 10)) == 0);
}

int main(void)
{
    const rvfit_instrument_ops *ops =
        tu_plugin_ops("rvfit_instrument_desi.so");
    char path[2048], copy[2048], cmd[4400];
    snprintf(path, sizeof path, "%s/coadd-mock.fits",
             tu_env("RVFIT_TEST_DATA"));
    long nrow = 0;
    double *tid = tu_read_col(path, "FIBERMAP", "TARGETID", &nrow);
    CHECK(tid && nrow == 200);
    /* every third star dropped, and a block: runs of 1 to 40 rows */
    int64_t ids[200];
    size_t nid = 0;
    for (long i = 0; tid && i < nrow; i++)
        if (i % 3 != 1 && !(i >= 100 && i < 110))
            ids[nid++] = (int64_t)tid[i];
    free(tid);
    rvfit_select all = {0, 0, NULL}, some = {0, nid, ids};
    const rvfit_select *sels[2] = {&all, &some};
    size_t nsel[2] = {200, nid};
    for (int s = 0; s < 2; s++) {
        /* whole selection, and an odd range inside it */
        size_t ranges[2][2] = {{0, nsel[s]}, {5, nsel[s] - 17}};
        for (int r = 0; r < 2; r++) {
            reading ref;
            read_with(ops, path, sels[s], 1, ranges[r][0], ranges[r][1],
                      NULL, &ref);
            CHECK(ref.rc == RVFIT_OK && ref.b.nspec == ranges[r][1]);
            for (int t = 1; t < NT; t++) {
                reading got;
                read_with(ops, path, sels[s], nthreads[t], ranges[r][0],
                          ranges[r][1], NULL, &got);
                CHECK_MSG(got.rc == RVFIT_OK && same(&ref, &got),
                          "selection %d range %d: %d threads differ from 1",
                          s, r, nthreads[t]);
                rvfit_batch_free(&got.b);
            }
            rvfit_batch_free(&ref.b);
        }
    }
    /* the file cut short after opening: an error at any count */
    const char *dir = tu_tmpdir("desi_threads");
    snprintf(copy, sizeof copy, "%s/coadd-cut.fits", dir);
    g_cut = copy;
    for (int t = 0; t < NT; t++) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, copy);
        CHECK(system(cmd) == 0);
        reading got;
        read_with(ops, copy, &all, nthreads[t], 0, 200, cut_short, &got);
        CHECK_MSG(got.rc != RVFIT_OK && tu_contains(got.msg, copy) &&
                      tu_contains(got.msg, "HDU Z_"),
                  "%d threads: %d '%s'", nthreads[t], got.rc, got.msg);
        printf("  %d threads: %s\n", nthreads[t], got.msg);
        rvfit_batch_free(&got.b);
    }
    return tu_finish("test_desi_threads");
}
