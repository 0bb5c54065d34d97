/* read_prep.c — reading and preparation of a run, without the fit: the
 * profile's `read` row (docs/benchmarks.md, "Reading and preparation").
 *
 * Opens an input through the instrument plugin and reads it as the run's
 * reader thread does (core/engine/run/run_reader.c, fill_batch and
 * read_segment): ranges of spectra (as many as rb_read_max allows) into
 * a batch of [run] batch_size by the run's own code (run_batch.c and
 * run_mem.c are compiled into this program), the pass-through table rows
 * of each range,
 * then rvfit_prep_batch_mem on the host's threads with the run's memory;
 * the batch's arrays then go back as the fit thread and the writer give
 * them back.  Keep fill_batch's loop here in step with the reader's.
 * What it does not do: open the outputs (rvfit_output_open) and merge
 * batches of several files.
 *
 * Prints ms per spectrum for the whole and for its parts (open, read,
 * rows, prep), best of --repeat passes, and a digest (FNV-1a 64) of every
 * prepared array and table row: two builds that prepare the same bytes
 * print the same digest (--digest 0: none).  Instructions: run it under
 * valgrind --tool=callgrind --separate-threads=yes with --repeat 1
 * --digest 0 and add rp_pass (inclusive, thread 1) to the totals of the
 * other threads (prep's workers).
 *
 * Build (from the repository root, after building rvfit in BUILD/):
 *   cc -O2 -g -std=c11 -D_POSIX_C_SOURCE=200809L -Icore/engine \
 *      -Icore/sdk/include -Icore/engine/include bench/read_prep.c \
 *      core/engine/run/run_batch.c core/engine/run/run_mem.c \
 *      -LBUILD/core -lrvfit -lrvfit_sdk -lcfitsio -lpthread -lm \
 *      -Wl,-rpath,$PWD/BUILD/core -o BUILD/read_prep
 * Usage: RVFIT_PLUGIN_PATH=BUILD/plugins BUILD/read_prep [--threads N]
 *          [--batch N] [--repeat N] [--digest 0|1] [--instrument NAME]
 *          LIBRARY FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/config.h"
#include "rvfit/interp.h"
#include "rvfit/library_io.h"
#include "rvfit/loader.h"
#include "rvfit/prep.h"
#include "run/run_internal.h"

#define RP_MAXTAB 16
#define RP_MAXCOL 256

typedef struct rp_times {
    double open, read, rows, prep, drop, digest;
    double total; /* all but digest */
} rp_times;

typedef struct rp {
    rvfit_run *run;
    const rvfit_instrument_ops *io;
    const rvfit_host *host;
    const rvfit_library *lib;
    rvfit_kv *kv;
    int nkv;
    const char *path;
    size_t batch;
    int do_digest;
    uint64_t digest, rows[RP_MAXTAB][RP_MAXCOL];
    uint64_t arm[RVFIT_MAX_ARMS][5], spec[3];
    int wave_seen;
    size_t nspec;
} rp;

static void rp_log(void *ctx, int level, const char *who, const char *msg)
{
    (void)ctx;
    if (level <= RVFIT_LOG_WARN)
        fprintf(stderr, "%s: %s\n", who, msg);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* Every array a backend receives, own pixels of each spectrum only, one
 * stream per array (P->arm[a][k], P->spec[k]), so that the digest does
 * not depend on the batch size; the layout and a shared grid once. */
static void digest_batch(rp *P, const rvfit_batch *b)
{
    for (int a = 0; a < b->narm; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        uint64_t *h = P->arm[a];
        size_t N = A->npix;
        if (!P->wave_seen) {
            h[0] = fnv(h[0], &A->ndiag, sizeof A->ndiag);
            h[0] = fnv(h[0], &A->res_kind, sizeof A->res_kind);
        }
        for (size_t s = 0; s < b->nspec; s++) {
            size_t n = A->npix_own[s];
            h[1] = fnv(h[1], A->flux + s * N, n * sizeof(float));
            h[2] = fnv(h[2], A->ivar + s * N, n * sizeof(float));
            if (A->wave_per_spec || (!P->wave_seen && s == 0))
                h[3] = fnv(h[3], A->wave + (A->wave_per_spec ? s * N : 0),
                           n * sizeof(double));
            for (int k = 0; A->res && k < A->ndiag; k++)
                h[4] = fnv(h[4],
                           A->res + (s * (size_t)A->ndiag + (size_t)k) * N,
                           n * sizeof(float));
        }
    }
    P->wave_seen = 1;
    P->spec[0] = fnv(P->spec[0], b->snr,
                     b->nspec * (size_t)b->narm * sizeof *b->snr);
    P->spec[1] = fnv(P->spec[1], b->flags, b->nspec * sizeof *b->flags);
    P->spec[2] = fnv(P->spec[2], b->index, b->nspec * sizeof *b->index);
}

/* Column by column (h[c]), so that the digest does not depend on how
 * the rows were split into reads. */
static void digest_rows(uint64_t *h, const rvfit_table_schema *s,
                        const rvfit_table_rows *r)
{
    for (int c = 0; c < s->ncol && c < RP_MAXCOL; c++)
        h[c] = fnv(h[c], r->data[c], r->nrow * (size_t)s->cols[c].repeat *
                                         rvfit_col_size(s->cols[c].type));
}

/* Plots are off here: run_batch.c's rb_clear has nothing to free. */
void plot_clear(run_plot *p)
{
    (void)p;
}

/* Spectra [first, first+k) of the open file h into rb and their table
 * rows (read_segment). */
static int read_range(rp *P, run_ctx *c, void *h, const rvfit_file_info *info,
                      run_batch *rb, size_t first, size_t k, rp_times *t,
                      rvfit_err *e)
{
    double t0 = rvfit_now();
    int rc = rb_read(c, rb, h, info, first, k, P->path, e);
    double t1 = rvfit_now();
    t->read += t1 - t0;
    double d0 = t->digest;
    for (int tb = 0; tb < info->ntable && !rc; tb++) {
        rvfit_table_rows rows;
        rc = rvfit_rows_alloc(&rows, &info->table[tb], k, e);
        if (!rc)
            rc = P->io->read_rows(h, tb, first, k, &rows, e);
        double t2 = rvfit_now();
        if (!rc && P->do_digest)
            digest_rows(P->rows[tb < RP_MAXTAB ? tb : 0], &info->table[tb],
                        &rows);
        t->digest += rvfit_now() - t2;
        rvfit_rows_free(&rows, &info->table[tb]);
    }
    t->rows += rvfit_now() - t1 - t->digest + d0;
    return rc;
}

/* One pass over the file, timed; the function callgrind's
 * --toggle-collect names. */
__attribute__((noinline)) static int rp_pass(rp *P, rp_times *t,
                                              rvfit_err *e)
{
    void *h = NULL;
    rvfit_file_info info;
    rvfit_select sel = {0, 0, NULL};
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.r = P->run;
    c.cap = P->batch;
    run_mem_init(&c.mem);
    double t0 = rvfit_now();
    memset(t, 0, sizeof *t);
    P->digest = 0xcbf29ce484222325ull;
    for (int tb = 0; tb < RP_MAXTAB; tb++)
        for (int k = 0; k < RP_MAXCOL; k++)
            P->rows[tb][k] = P->digest;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        for (int k = 0; k < 5; k++)
            P->arm[a][k] = P->digest;
    P->spec[0] = P->spec[1] = P->spec[2] = P->digest;
    P->wave_seen = 0;
    int rc = P->io->open(P->host, P->kv, P->nkv, P->path, &sel, &h, e);
    if (!rc) {
        P->io->info(h, &info);
        P->nspec = info.nselect;
    }
    t->open = rvfit_now() - t0;
    for (size_t at = 0; !rc && at < info.nselect;) {
        run_batch rb;
        memset(&rb, 0, sizeof rb);
        size_t nb = info.nselect - at < P->batch ? info.nselect - at
                                                 : P->batch;
        for (size_t got = 0; got < nb && !rc;) {
            size_t k = nb - got, kmax = rb_read_max(&rb, &info);
            k = k > kmax ? kmax : k;
            rc = read_range(P, &c, h, &info, &rb, at + got, k, t, e);
            got += k;
        }
        double t1 = rvfit_now();
        rvfit_prep_mem mem = run_mem_prep(&c.mem);
        if (!rc)
            rc = rvfit_prep_batch_mem(&rb.b, P->lib, P->host->nthreads, &mem,
                                      e);
        double t2 = rvfit_now();
        t->prep += t2 - t1;
        if (!rc && P->do_digest)
            digest_batch(P, &rb.b);
        double t3 = rvfit_now();
        t->digest += t3 - t2;
        rb_drop_spectra(&c, &rb.b, 1); /* as after load_batch and the fit */
        rb_clear(&c, &rb);
        t->drop += rvfit_now() - t3;
        at += nb;
    }
    if (h)
        P->io->close(h);
    run_mem_destroy(&c.mem);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(c.grid[a]);
    P->digest = fnv(P->digest, P->rows, sizeof P->rows);
    P->digest = fnv(P->digest, P->arm, sizeof P->arm);
    P->digest = fnv(P->digest, P->spec, sizeof P->spec);
    t->total = rvfit_now() - t0 - t->digest;
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: read_prep [--threads N] [--batch N] [--repeat N]"
                    " [--digest 0|1] [--instrument NAME] LIBRARY FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    int threads = 2, repeat = 3, digest = 1, i = 1;
    size_t batch = 512;
    const char *inst = "desi";
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch"))
            batch = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--repeat"))
            repeat = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--digest"))
            digest = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--instrument"))
            inst = argv[i + 1];
        else
            return usage();
    }
    if (argc - i != 2 || threads < 1 || batch < 1 || repeat < 1)
        return usage();
    rvfit_err e;
    rvfit_err_clear(&e);
    rvfit_config cfg;
    rvfit_config_defaults(&cfg);
    snprintf(cfg.instrument, sizeof cfg.instrument, "%s", inst);
    rvfit_host host = {sizeof host, RVFIT_LOG_WARN, rp_log, NULL, threads,
                       0, 1, 0, 1};
    rvfit_library lib;
    rvfit_plugin_handle ph;
    rvfit_run run;
    memset(&run, 0, sizeof run);
    run.cfg = &cfg, run.host = &host, run.lib = &lib, run.inst = &ph;
    rp P = {.run = &run, .host = &host, .lib = &lib, .path = argv[i + 1],
            .batch = batch, .do_digest = digest};
    int rc = rvfit_library_load(&lib, argv[i], &e);
    if (!rc)
        rc = rvfit_instrument_load(&cfg, cfg.instrument, &ph, &e);
    if (!rc) {
        char section[80];
        snprintf(section, sizeof section, "instrument.%s", inst);
        P.io = &ph.instrument;
        rc = rvfit_config_section(&cfg, section, &P.kv, &P.nkv);
    }
    rp_times best = {0}, t;
    for (int r = 0; r < repeat && !rc; r++) {
        rc = rp_pass(&P, &t, &e);
        if (!rc && (r == 0 || t.total < best.total))
            best = t;
    }
    if (rc) {
        fprintf(stderr, "read_prep: %s\n", e.msg);
        return 1;
    }
    double ms = 1e3 / (double)(P.nspec ? P.nspec : 1);
    printf("%zu spectra, batch %zu, %d threads, best of %d: %.4f ms per "
           "spectrum (open %.4f, read %.4f, rows %.4f, prep %.4f, "
           "release %.4f)\n",
           P.nspec, batch, threads, repeat, best.total * ms, best.open * ms,
           best.read * ms, best.rows * ms, best.prep * ms, best.drop * ms);
    if (digest)
        printf("digest %016llx\n", (unsigned long long)P.digest);
    free(P.kv);
    rvfit_plugin_unload(&ph);
    rvfit_library_free(&lib);
    rvfit_config_free(&cfg);
    return 0;
}
