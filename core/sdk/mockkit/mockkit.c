/* mockkit.c — the driver of instrument mock writers: argument checks, the
 * truth call, and stars computed in blocks on rvfit_parallel_for with the
 * block handed back to the calling thread for writing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/mockkit.h"
#include "rvfit/pool.h"

int rvfit_mock_begin(rvfit_mock_job *job, const rvfit_host *host,
                     const char *path, size_t nstar,
                     const rvfit_mock_star *stars, rvfit_truth_fn truth,
                     void *truth_ctx, uint64_t seed, rvfit_err *err)
{
    memset(job, 0, sizeof *job);
    if (nstar == 0 || !stars || !truth)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: mock needs at "
                             "least one star and a truth function", path);
    for (size_t s = 0; s < nstar; s++)
        if (!(stars[s].snr > 0.0) || !isfinite(stars[s].snr))
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: mock star %zu:"
                                 " S/N %g must be > 0", path, s,
                                 stars[s].snr);
    job->nstar = nstar;
    job->stars = stars;
    job->truth = truth;
    job->truth_ctx = truth_ctx;
    job->seed = seed;
    job->nthreads = host && host->nthreads > 1 ? host->nthreads : 1;
    return RVFIT_OK;
}

int rvfit_mock_truth(const rvfit_mock_job *job, size_t s, const char *part,
                     double lnl0, double dlnl, size_t n, double *fine,
                     rvfit_err *err)
{
    int rc = job->truth(job->truth_ctx, s, lnl0, dlnl, n, fine, err);
    if (rc)
        return rc;
    for (size_t k = 0; k < n; k++)
        if (!isfinite(fine[k]))
            return rvfit_err_set(err, RVFIT_ERR_NUMERIC, "truth of star %zu"
                                 "%s%s: non-finite flux at %.3f A", s,
                                 part ? ", " : "", part ? part : "",
                                 exp(lnl0 + dlnl * (double)k));
    return RVFIT_OK;
}

/* One block in flight. */
typedef struct mk_block {
    const rvfit_mock_job *job;
    void *buf[RVFIT_MOCK_MAXBUF];
    size_t s0;
} mk_block;

static void *mk_scratch_new(void *ctx)
{
    const mk_block *b = ctx;
    return b->job->scratch_new(b->job);
}

static int mk_item(void *ctx, void *scratch, size_t i, rvfit_err *err)
{
    const mk_block *b = ctx;
    const rvfit_mock_job *job = b->job;
    void *out[RVFIT_MOCK_MAXBUF];
    for (int k = 0; k < job->nbuf; k++)
        out[k] = (char *)b->buf[k] + i * job->bytes[k];
    return job->star(job, scratch, b->s0 + i, out, err);
}

static int mk_blocks(mk_block *b, size_t cap, rvfit_err *err)
{
    const rvfit_mock_job *job = b->job;
    const rvfit_parallel_job pj = {
        b, job->scratch_new ? mk_scratch_new : NULL, job->scratch_free,
        mk_item};
    for (size_t s0 = 0; s0 < job->nstar; s0 += cap) {
        size_t ns = job->nstar - s0 < cap ? job->nstar - s0 : cap;
        b->s0 = s0;
        int rc = rvfit_parallel_for(&pj, ns, job->nthreads, err);
        if (!rc)
            rc = job->flush(job, s0, ns, b->buf, err);
        if (rc)
            return rc;
    }
    return RVFIT_OK;
}

int rvfit_mock_run(const rvfit_mock_job *job, rvfit_err *err)
{
    if (job->nbuf < 0 || job->nbuf > RVFIT_MOCK_MAXBUF || job->block < 1 ||
        !job->star || !job->flush)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "mock: bad job (%d "
                             "arrays, block %zu)", job->nbuf, job->block);
    size_t cap = job->nstar < job->block ? job->nstar : job->block;
    mk_block b = {.job = job};
    int rc = RVFIT_OK;
    for (int k = 0; k < job->nbuf && !rc; k++)
        if (!(b.buf[k] = malloc(cap * job->bytes[k] + 1)))
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "mock: no memory for a"
                               " block of %zu stars", cap);
    if (!rc)
        rc = mk_blocks(&b, cap, err);
    for (int k = 0; k < job->nbuf; k++)
        free(b.buf[k]);
    return rc;
}

int rvfit_mock_run_phi(const rvfit_mock_job *job,
                       const rvfit_phi_table **phi, const char *path,
                       rvfit_err *err)
{
    rvfit_phi_table *t = rvfit_phi_new();
    if (!t)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: mock of %zu stars",
                             path, job->nstar);
    *phi = t;
    int rc = rvfit_mock_run(job, err);
    *phi = NULL;
    rvfit_phi_free(t);
    return rc;
}

int rvfit_mock_each(const rvfit_mock_job *job, size_t s0, size_t ns,
                    void *const *buf,
                    int (*one)(const rvfit_mock_job *job, size_t s,
                               const void *spec, rvfit_err *err),
                    rvfit_err *err)
{
    const char *spec = buf[0];
    int rc = RVFIT_OK;
    for (size_t i = 0; i < ns && !rc; i++)
        rc = one(job, s0 + i, spec + i * job->bytes[0], err);
    return rc;
}
