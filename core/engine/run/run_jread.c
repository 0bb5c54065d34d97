/* run_jread.c — the reader of a joint run: batches of whole objects, in
 * the index's order, each object's spectra read from whichever inputs
 * hold them (instrument handles kept open, the least recently used one
 * closed when RUN_JOPEN are open), merged into one batch layout and
 * prepared for the backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

/* An open handle of input i (opened with the index's selection). */
static run_jopen *get_handle(run_ctx *c, size_t i, int *rc, rvfit_err *e)
{
    run_joint *J = c->J;
    rvfit_run *r = c->r;
    const rvfit_instrument_ops *io = &r->inst->instrument;
    run_jopen *slot = &J->open[0];
    for (int k = 0; k < RUN_JOPEN; k++) {
        run_jopen *o = &J->open[k];
        if (o->h && o->input == i) {
            o->used = ++J->tick;
            return o;
        }
        if (!o->h || (slot->h && o->used < slot->used))
            slot = o;
    }
    if (slot->h)
        io->close(slot->h);
    slot->h = NULL;
    rvfit_select sel = {r->cfg->minsn, r->ntargetid, r->targetid};
    *rc = io->open(r->host, c->kv, c->nkv, J->ix.inputs[i], &sel, &slot->h,
                   e);
    if (*rc)
        return NULL;
    io->info(slot->h, &slot->info);
    slot->input = i;
    slot->used = ++J->tick;
    return slot;
}

void jreader_close(run_ctx *c)
{
    for (int k = 0; k < RUN_JOPEN; k++)
        if (c->J->open[k].h) {
            c->r->inst->instrument.close(c->J->open[k].h);
            c->J->open[k].h = NULL;
        }
}

/* Spectrum x of the index into the next row of rb. */
static int read_one(run_ctx *c, run_batch *rb, const run_jexp *x,
                    size_t cap, rvfit_err *e)
{
    const rvfit_instrument_ops *io = &c->r->inst->instrument;
    int rc = RVFIT_OK;
    run_jopen *o = get_handle(c, x->input, &rc, e);
    if (!o)
        return rc;
    if (x->sel >= o->info.nselect)
        return rvfit_err_set(e, RVFIT_ERR_IO, "%s: %zu spectra selected, "
                             "%zu when it was indexed: the file changed",
                             c->J->ix.inputs[x->input], o->info.nselect,
                             x->sel + 1);
    rvfit_batch sb;
    rc = rvfit_batch_alloc(&sb, o->info.narm, o->info.arm, 1, e);
    if (rc)
        return rc;
    rc = io->read(o->h, x->sel, 1, &sb, e);
    if (!rc && sb.nspec != 1)
        rc = rvfit_err_set(e, RVFIT_ERR_INTERNAL, "%s: read %zu of 1 "
                           "spectra", c->J->ix.inputs[x->input], sb.nspec);
    if (!rc)
        rc = rb_append(c, rb, &sb, cap, e);
    rvfit_batch_free(&sb);
    return rc;
}

/* What names exposure row s of the batch (x: its index entry). */
static void set_id(const run_joint *J, run_batch *rb, size_t s,
                   const run_jexp *x)
{
    rb->j.id[s] = (rvfit_joint_id){x->ep.key, x->ep.targetid, x->ep.expid,
                                   x->ep.mjd, J->ix.base[x->input],
                                   (int64_t)rb->b.index[s]};
}

/* Objects from J->next while the batch has room for spectra (at least
 * one object, however large). */
static int fill(run_ctx *c, run_batch *rb, rvfit_err *e)
{
    run_joint *J = c->J;
    const run_jindex *ix = &J->ix;
    size_t want = c->cap, cap = c->cap + ix->maxobj, no = 0, ns = 0;
    size_t o = J->next;
    while (o < J->o1 && (no == 0 || ns + (ix->obj[o + 1] - ix->obj[o]) <=
                                        want))
        ns += ix->obj[o + 1] - ix->obj[o], no++, o++;
    run_jbatch *jb = &rb->j;
    jb->nobj = no;
    jb->o0 = J->next - J->o0;
    jb->e0 = ix->obj[J->next] - J->e0;
    jb->obj_off = malloc((no + 1) * sizeof *jb->obj_off);
    jb->id = malloc((ns ? ns : 1) * sizeof *jb->id);
    jb->jres = calloc(no ? no : 1, sizeof *jb->jres);
    if (c->r->fo.sb2)
        jb->sb2 = malloc((ns ? ns : 1) * sizeof *jb->sb2);
    if (!jb->obj_off || !jb->id || !jb->jres || (c->r->fo.sb2 && !jb->sb2))
        return rvfit_err_set(e, RVFIT_ERR_NOMEM, "joint batch: out of "
                             "memory");
    int rc = RVFIT_OK;
    for (size_t k = 0; k < no && !rc; k++) {
        size_t ob = J->next + k;
        jb->obj_off[k] = rb->have_b ? rb->b.nspec : 0;
        for (size_t x = ix->obj[ob]; x < ix->obj[ob + 1] && !rc; x++) {
            rc = read_one(c, rb, &ix->exp[x], cap, e);
            if (!rc)
                set_id(J, rb, rb->b.nspec - 1, &ix->exp[x]);
        }
    }
    jb->obj_off[no] = rb->have_b ? rb->b.nspec : 0;
    J->next += no;
    return rc;
}

run_batch *jreader_batch(run_ctx *c)
{
    run_batch *rb = rq_pop(&c->free);
    double t0 = rvfit_now();
    run_poll_cancel(c);
    rvfit_err e;
    rvfit_err_clear(&e);
    if (atomic_load(&c->stop) || c->J->next >= c->J->o1) {
        rb->last = 1;
    } else {
        int rc = fill(c, rb, &e);
        if (!rc && rb->have_b && rb->b.nspec > 0)
            rc = rvfit_prep_batch_threads(&rb->b, c->r->lib,
                                          c->r->host->nthreads, &e);
        if (rc)
            run_fatal(c, rc, &e);
        rb->last = c->J->next >= c->J->o1 || atomic_load(&c->stop);
    }
    c->t_read += rvfit_now() - t0;
    return rb;
}
