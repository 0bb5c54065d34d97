/* run_ctx.c — services of a run every part of it uses: the fatal error
 * that stops it, the cancel, reporting a unit's outcome to the source,
 * and releasing a unit. */
#include <stdlib.h>

#include "run_internal.h"

void run_fatal(run_ctx *c, int rc, const rvfit_err *err)
{
    pthread_mutex_lock(&c->mu);
    if (c->fatal_rc == RVFIT_OK) {
        c->fatal_rc = rc;
        c->fatal_err = *err;
    }
    pthread_mutex_unlock(&c->mu);
    atomic_store(&c->stop, 1);
}

void run_report(run_ctx *c, const rvfit_unit *u, int state,
                const char *detail, size_t nspec, uint64_t points)
{
    rvfit_run *r = c->r;
    rvfit_unit_report rep = {*u, state, detail, nspec, points, 0};
    pthread_mutex_lock(&c->mu);
    if (state == RVFIT_UNIT_FAILED)
        r->nfailed++;
    else if (state == RVFIT_UNIT_SKIPPED)
        r->nskipped++;
    else
        r->nfiles++;
    r->nspectra += nspec;
    if (c->src->report)
        c->src->report(c->src->ctx, &rep);
    pthread_mutex_unlock(&c->mu);
}

void run_unit_free(run_ctx *c, run_unit *u)
{
    if (!u)
        return;
    if (u->h)
        c->r->inst->instrument.close(u->h);
    plot_sum_free(u->sum);
    notes_free(u);
    free(u->path);
    free(u);
}

void run_poll_cancel(run_ctx *c)
{
    if (atomic_load(&c->stop) || !c->r->cancel || !*c->r->cancel)
        return;
    rvfit_err e;
    rvfit_err_set(&e, RVFIT_ERR_CANCELLED, "interrupted");
    run_fatal(c, RVFIT_ERR_CANCELLED, &e);
}

/* Fill rb until it is full, the next unit does not fit its layout, or
 * the work ends. */
