/* run_reader.c — the reader of a run: takes units from the source, opens
 * them through the instrument plugin (skipping or refusing existing
 * outputs, cutting large files into parts when the source asks), opens
 * their outputs, and reads their spectra range by range into merged
 * batches, which it prepares for the backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_internal.h"

static void fail_open(run_ctx *c, run_unit *U, const rvfit_err *e)
{
    run_report(c, &U->u, RVFIT_UNIT_FAILED, e->msg, 0, 0);
    rvfit_output_abort(U->out);
    U->out = NULL;
    run_unit_free(c, U);
}

/* --skip-existing / --overwrite for a whole input; 1 when it is done. */
static int existing(run_ctx *c, run_unit *U, char *mod, rvfit_err *e)
{
    const rvfit_config *cfg = c->r->cfg;
    struct stat sb;
    rvfit_output_names(cfg->output_dir, U->path, U->tab, mod, RUN_PATH);
    if (stat(U->tab, &sb) != 0)
        return 0;
    if (cfg->skip_existing) {
        rvfit_log(c->r->host, RVFIT_LOG_INFO, "rvfit",
                  "%s: skipped, %s exists", U->path, U->tab);
        rvfit_unit_report rep = {U->u, RVFIT_UNIT_DONE, U->tab, 0, 0, 1};
        pthread_mutex_lock(&c->mu);
        c->r->nskipped++;
        if (c->src->report)
            c->src->report(c->src->ctx, &rep);
        pthread_mutex_unlock(&c->mu);
        return 1;
    }
    if (!cfg->overwrite) {
        rvfit_err_set(e, RVFIT_ERR_IO, "%s: output %s exists (use "
                      "--overwrite or --skip-existing)", U->path, U->tab);
        return -1;
    }
    return 0;
}

static int open_output(run_ctx *c, run_unit *U, const char *mod,
                       rvfit_err *e)
{
    rvfit_run *r = c->r;
    rvfit_output_meta meta = {
        U->path, r->be->name, r->be->ph.desc->version,
        r->be->ops->device(r->be->state), r->inst->desc->name,
        r->inst->desc->version, r->lib_path, c->cfgtext, r->cmdline,
        (int)r->cfg->chisq_v};
    return rvfit_output_open(&U->out, U->tab,
                             r->cfg->write_models ? mod : NULL, r->lib,
                             &U->info, U->count, &meta, e);
}

/* Every arm of the file must exist in the library. */
static int check_arms(run_ctx *c, const run_unit *U, rvfit_err *e)
{
    const rvfit_run *r = c->r;
    for (int a = 0; a < U->info.narm; a++)
        if (rvfit_library_arm(r->lib, U->info.arm[a].name) < 0)
            return rvfit_err_set(e, RVFIT_ERR_INVALID,
                                 "%s: arm %s has no templates in %s (built "
                                 "for instrument '%s'); rebuild the library "
                                 "with `rvfit templates --instrument %s`",
                                 U->path, U->info.arm[a].name, r->lib_path,
                                 r->lib->instrument, r->cfg->instrument);
    if (U->info.ntable > RUN_MAX_TABLES)
        return rvfit_err_set(e, RVFIT_ERR_INVALID, "%s: %d tables (max %d)",
                             U->path, U->info.ntable, RUN_MAX_TABLES);
    return RVFIT_OK;
}

/* Which selected spectra the unit fits, and where its outputs go. */
static void unit_range(run_ctx *c, run_unit *U, char *mod)
{
    size_t n = U->info.nselect;
    if (U->u.nparts == 0) {
        int m = 1;
        if (c->src->split) {
            out_remove_parts(c->r->cfg->output_dir, U->path);
            m = c->src->split(c->src->ctx, &U->u, n);
        }
        U->u.part = 0;
        U->u.nparts = m < 1 ? 1 : m;
    }
    size_t k = (size_t)U->u.part, m = (size_t)U->u.nparts;
    U->first = k * n / m;
    U->count = (k + 1) * n / m - U->first;
    if (m > 1)
        rvfit_output_part_names(c->r->cfg->output_dir, U->path, U->u.part,
                                U->u.nparts, U->tab, mod, RUN_PATH);
}

static run_unit *unit_open(run_ctx *c, const rvfit_unit *u)
{
    rvfit_run *r = c->r;
    const rvfit_instrument_ops *io = &r->inst->instrument;
    run_unit *U = calloc(1, sizeof *U);
    char *mod = malloc(RUN_PATH);
    rvfit_err e;
    rvfit_err_clear(&e);
    if (U)
        U->path = strdup(u->path);
    if (!U || !U->path || !mod) {
        rvfit_err_set(&e, RVFIT_ERR_NOMEM, "out of memory");
        run_fatal(c, RVFIT_ERR_NOMEM, &e);
        free(mod);
        if (U)
            free(U->path);
        free(U);
        return NULL;
    }
    U->u = *u;
    U->u.path = U->path;
    int ex = u->nparts <= 1 ? existing(c, U, mod, &e) : 0;
    int rc = ex < 0 ? RVFIT_ERR_IO : RVFIT_OK;
    if (ex > 0) {
        run_unit_free(c, U);
        free(mod);
        return NULL;
    }
    rvfit_select sel = {r->cfg->minsn, r->ntargetid, r->targetid};
    if (!rc)
        rc = io->open(r->host, c->kv, c->nkv, U->path, &sel, &U->h, &e);
    if (!rc) {
        io->info(U->h, &U->info);
        rc = check_arms(c, U, &e);
    }
    if (!rc) {
        unit_range(c, U, mod);
        if (U->u.nparts <= 1)
            out_remove_stale(r->cfg->output_dir, U->path);
        rc = open_output(c, U, mod, &e);
    }
    free(mod);
    if (rc) {
        fail_open(c, U, &e);
        return NULL;
    }
    rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit",
              "%s: %zu of %zu spectra selected%s", U->path, U->info.nselect,
              U->info.ntotal, U->u.nparts > 1 ? " (in parts)" : "");
    return U;
}

static void merge_unit(run_ctx *c, const rvfit_unit *u)
{
    rvfit_err e;
    rvfit_err_clear(&e);
    if (u->kind == RVFIT_UNIT_DISCARD) {
        out_remove_parts(c->r->cfg->output_dir, u->path);
        run_report(c, u, RVFIT_UNIT_DONE, "parts removed", 0, 0);
        return;
    }
    char tab[RUN_PATH], mod[RUN_PATH];
    rvfit_output_names(c->r->cfg->output_dir, u->path, tab, mod,
                       sizeof tab);
    int rc = out_merge_parts(c->r->cfg->output_dir,
                             (int)c->r->cfg->write_models, u->path,
                             u->nparts, &e);
    run_report(c, u, rc ? RVFIT_UNIT_FAILED : RVFIT_UNIT_DONE,
               rc ? e.msg : tab, 0, 0);
}

/* The next unit to read, or NULL: no more work (*later == 0) or none
 * before rb is fitted (*later == 1). */
static run_unit *next_unit(run_ctx *c, const run_batch *rb, int *later)
{
    rvfit_unit u;
    int pending = (rb->have_b && rb->b.nspec > 0) || rb->nend > 0;
    *later = 0;
    while (!atomic_load(&c->stop)) {
        int got = c->src->next(c->src->ctx, &u, !pending);
        if (got == RVFIT_SOURCE_LATER) {
            if (!pending)
                continue; /* the source should have waited: ask again */
            *later = 1;
            return NULL;
        }
        if (got != 1)
            return NULL;
        if (u.kind != RVFIT_UNIT_FIT) {
            merge_unit(c, &u);
            continue;
        }
        run_unit *U = unit_open(c, &u);
        if (U)
            return U;
    }
    return NULL;
}

/* Read k spectra of U into rb as one segment. */
static int read_segment(run_ctx *c, run_batch *rb, run_unit *U, size_t k,
                        rvfit_err *e)
{
    const rvfit_instrument_ops *io = &c->r->inst->instrument;
    size_t at = U->first + U->next;
    int rc = rb_read(c, rb, U->h, &U->info, at, k, U->path, e);
    run_seg *seg = NULL;
    if (!rc)
        rc = rb_add_seg(rb, &seg, e);
    if (rc)
        return rc;
    *seg = (run_seg){.unit = U, .row0 = U->next, .off = rb->b.nspec - k,
                     .n = k};
    int nt = 0;
    const rvfit_table_schema *tab = rvfit_output_tables(U->out, &nt);
    for (int t = 0; t < nt && !rc; t++) {
        rc = rvfit_rows_alloc(&seg->rows[t], &tab[t], k, e);
        if (!rc)
            rc = io->read_rows(U->h, t, at, k, &seg->rows[t], e);
    }
    U->next += k;
    return rc;
}

/* Out of memory and bugs stop the run; anything else fails the unit. */
static void unit_error(run_ctx *c, run_unit *U, int rc, const rvfit_err *e)
{
    if (rc == RVFIT_ERR_NOMEM || rc == RVFIT_ERR_INTERNAL) {
        run_fatal(c, rc, e);
        return;
    }
    snprintf(U->rwhy, sizeof U->rwhy, "%s", e->msg);
    atomic_store(&U->rfailed, 1);
}

/* U leaves the reader: its outcome is settled by the writer with rb. */
static int end_unit(run_ctx *c, run_batch *rb)
{
    run_unit *U = c->cur;
    rvfit_err e;
    c->cur = NULL;
    if (U->h) {
        c->r->inst->instrument.close(U->h);
        U->h = NULL;
    }
    int rc = rb_add_end(rb, U, &e);
    if (rc) {
        run_fatal(c, rc, &e);
        rvfit_output_abort(U->out);
        run_unit_free(c, U);
    }
    return rc;
}

/* With a reader thread the fit waits for the first batch alone, so that
 * one is small: fitting starts after 64 spectra are read, not 512, while
 * the next batch is read.  Results do not depend on where batches end. */
#define RUN_FIRST_CAP 64

static void fill_batch(run_ctx *c, run_batch *rb)
{
    size_t cap = c->threaded && c->nfilled++ == 0 && c->cap > RUN_FIRST_CAP
                     ? RUN_FIRST_CAP
                     : c->cap;
    for (;;) {
        run_poll_cancel(c);
        if (atomic_load(&c->stop)) {
            if (c->cur) {
                snprintf(c->cur->rwhy, sizeof c->cur->rwhy, "run stopped");
                atomic_store(&c->cur->stopped, 1);
                atomic_store(&c->cur->rfailed, 1);
                end_unit(c, rb);
            }
            rb->last = 1;
            return;
        }
        int later = 0;
        if (!c->cur && !(c->cur = next_unit(c, rb, &later))) {
            rb->last = !later;
            return;
        }
        run_unit *U = c->cur;
        size_t room = cap - (rb->have_b ? rb->b.nspec : 0);
        size_t k = U->count - U->next < room ? U->count - U->next : room;
        size_t kmax = rb_read_max(rb, &U->info);
        k = k > kmax ? kmax : k;
        if (k > 0 && !rb_compatible(rb, &U->info))
            return;
        if (k == 0 && U->next < U->count)
            return; /* batch full */
        if (k > 0) {
            rvfit_err e;
            rvfit_err_clear(&e);
            int rc = read_segment(c, rb, U, k, &e);
            if (rc)
                unit_error(c, U, rc, &e);
        }
        if (U->next == U->count || atomic_load(&U->rfailed))
            if (end_unit(c, rb))
                return;
    }
}

run_batch *reader_batch(run_ctx *c)
{
    run_batch *rb = rq_pop(&c->free);
    double t0 = rvfit_now();
    fill_batch(c, rb);
    if (rb->have_b && rb->b.nspec > 0 && !atomic_load(&c->stop)) {
        rvfit_err e;
        rvfit_err_clear(&e);
        rvfit_prep_mem mem = run_mem_prep(&c->mem);
        int rc = rvfit_prep_batch_mem(&rb->b, c->r->lib,
                                      c->r->host->nthreads, &mem, &e);
        if (rc)
            run_fatal(c, rc, &e);
    }
    if (rb->last)
        run_mem_close(&c->mem); /* no batch will take what waits */
    c->t_read += rvfit_now() - t0;
    return rb;
}
