/* run_writer.c — the writer of a run: writes each fitted segment's rows to
 * its unit's outputs, then finishes the units whose last rows were in the
 * batch: commits their outputs (rename into place) with the backend points
 * spent on them, or removes them when the unit failed, and reports. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "run_internal.h"

static void unit_fail(run_unit *U, const char *head, const char *why)
{
    if (U->wfailed)
        return;
    U->wfailed = 1;
    size_t n = strlen(head);
    n = n < sizeof U->wwhy - 1 ? n : sizeof U->wwhy - 1;
    memcpy(U->wwhy, head, n);
    snprintf(U->wwhy + n, sizeof U->wwhy - n, "%.*s",
             (int)(sizeof U->wwhy - n - 1), why);
}

static void write_seg(run_ctx *c, const run_batch *rb, run_seg *seg)
{
    run_unit *U = seg->unit;
    rvfit_run *r = c->r;
    if (!rb->fitted) {
        if (!atomic_load(&U->rfailed) && !U->wfailed)
            atomic_store(&U->stopped, 1);
        unit_fail(U, "not fitted: ", c->fatal_err.msg);
    } else if (!atomic_load(&U->rfailed) && !U->wfailed) {
        rvfit_err e;
        rvfit_err_clear(&e);
        notes_segment(c, U, &rb->b, seg, rb->res + seg->off);
        rvfit_output_rows v = {&rb->b, seg->off, seg->n, rb->res + seg->off,
                               seg->rows,
                               r->cfg->write_models ? rb->models : NULL};
        if (rvfit_output_write(U->out, seg->row0, &v, &e))
            unit_fail(U, "", e.msg);
        else
            plot_sum_add(c, U, rb->res + seg->off, seg->n);
        size_t warn = 0, bad = 0;
        for (size_t i = 0; i < seg->n; i++) {
            const rvfit_result *res = &rb->res[seg->off + i];
            U->points += res->npoints;
            warn += res->warn != 0;
            bad += (res->warn & RVFIT_WARN_BAD_SPECTRUM) != 0;
        }
        U->written += seg->n;
        c->spectra_done += seg->n;
        pthread_mutex_lock(&c->mu);
        r->nwarn += warn;
        r->nbad += bad;
        pthread_mutex_unlock(&c->mu);
    }
    int nt = 0;
    const rvfit_table_schema *tab = rvfit_output_tables(U->out, &nt);
    for (int t = 0; t < nt; t++)
        rvfit_rows_free(&seg->rows[t], &tab[t]);
}

static void finish_unit(run_ctx *c, run_unit *U)
{
    rvfit_run *r = c->r;
    rvfit_err e;
    rvfit_err_clear(&e);
    const char *why = atomic_load(&U->rfailed) ? U->rwhy
                      : U->wfailed             ? U->wwhy
                                               : NULL;
    int rc = RVFIT_OK;
    if (!why && U->written != U->count)
        rc = rvfit_err_set(&e, RVFIT_ERR_INTERNAL, "%s: %zu of %zu rows "
                           "written", U->path, U->written, U->count);
    if (!why && !rc)
        rc = rvfit_output_key(U->out, "BKNDPTS", (long long)U->points,
                              "points the backend evaluated for this file",
                              &e);
    if (!why && !rc) {
        rc = rvfit_output_commit(U->out, &e);
        U->out = NULL;
    }
    if (why || rc) {
        rvfit_output_abort(U->out);
        U->out = NULL;
        /* Cut short by a cancel, the unit did not fail: it was not done. */
        pthread_mutex_lock(&c->mu);
        int cancelled = c->fatal_rc == RVFIT_ERR_CANCELLED &&
                        atomic_load(&U->stopped);
        pthread_mutex_unlock(&c->mu);
        run_report(c, &U->u,
                   cancelled ? RVFIT_UNIT_SKIPPED : RVFIT_UNIT_FAILED,
                   cancelled ? "interrupted" : why ? why : e.msg, 0, 0);
    } else {
        notes_finish(c, U);
        rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit",
                  "%s: wrote %s; backend %s on %s evaluated %" PRIu64
                  " points", U->path, U->tab, r->be->name,
                  r->be->ops->device(r->be->state), U->points);
        plot_sum_draw(c, U);
        run_report(c, &U->u, RVFIT_UNIT_DONE, U->tab, U->count, U->points);
    }
    run_unit_free(c, U);
}

void writer_batch(run_ctx *c, run_batch *rb)
{
    double t0 = rvfit_now();
    for (size_t i = 0; i < rb->nseg; i++)
        write_seg(c, rb, &rb->seg[i]);
    if (rb->fitted)
        plot_draw_batch(c, rb);
    for (size_t i = 0; i < rb->nend; i++)
        finish_unit(c, rb->ends[i]);
    c->t_write += rvfit_now() - t0;
    if (c->r->progress && rb->fitted && rb->nseg)
        c->r->progress(c->r->progress_ctx, c->spectra_done,
                       rvfit_now() - c->t0);
}
