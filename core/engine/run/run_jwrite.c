/* run_jwrite.c — the writer of a joint run: one rvtab/rvmod pair for the
 * part's objects (rvfit/output.h, "joint outputs"), filled batch by
 * batch, committed when every batch is written, removed otherwise. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "run_internal.h"

int jwriter_open(run_ctx *c, int part, int nparts, rvfit_err *err)
{
    run_joint *J = c->J;
    rvfit_run *r = c->r;
    const rvfit_config *cfg = r->cfg;
    if (nparts > 1)
        rvfit_output_part_names(cfg->output_dir, cfg->joint_name, part,
                                nparts, J->tab, J->mod, RUN_PATH);
    else
        rvfit_output_names(cfg->output_dir, cfg->joint_name, J->tab, J->mod,
                           RUN_PATH);
    char what[96];
    snprintf(what, sizeof what, "%zu input files (RVEPOCH INPUT names "
             "each spectrum's)", J->ix.nusable);
    rvfit_output_meta meta = {
        what, r->be->name, r->be->ph.desc->version,
        r->be->ops->device(r->be->state), r->inst->desc->name,
        r->inst->desc->version, r->lib_path, c->cfgtext, r->cmdline, 0};
    size_t nobj = J->o1 - J->o0;
    size_t nexp = J->ix.obj[J->o1] - J->ix.obj[J->o0];
    /* no usable input: an output of no rows and no arm */
    return rvfit_output_open_joint(&J->out, J->tab,
                                   cfg->write_models ? J->mod : NULL,
                                   r->lib, J->ix.narm, J->ix.arm, nobj, nexp,
                                   J->ix.base_len, r->fo.sb2, &meta, err);
}

void jwriter_batch(run_ctx *c, run_batch *rb)
{
    run_joint *J = c->J;
    rvfit_run *r = c->r;
    double t0 = rvfit_now();
    if (!rb->fitted || !rb->have_b || J->wfailed) {
        c->t_write += rvfit_now() - t0;
        return;
    }
    const run_jbatch *jb = &rb->j;
    rvfit_joint_rows v = {&rb->b, jb->nobj, jb->obj_off, jb->jres, rb->res,
                          jb->id, r->cfg->write_models ? rb->models : NULL,
                          jb->sb2};
    rvfit_err e;
    rvfit_err_clear(&e);
    if (rvfit_output_write_joint(J->out, jb->o0, jb->e0, &v, &e)) {
        J->wfailed = 1;
        snprintf(J->wwhy, sizeof J->wwhy, "%s", e.msg);
    }
    size_t warn = 0, bad = 0;
    for (size_t o = 0; o < jb->nobj; o++) {
        warn += jb->jres[o].r.warn != 0;
        bad += (jb->jres[o].r.warn & RVFIT_WARN_BAD_SPECTRUM) != 0;
        J->points += jb->jres[o].r.npoints;
    }
    J->written += rb->b.nspec;
    c->spectra_done += rb->b.nspec;
    pthread_mutex_lock(&c->mu);
    r->nwarn += warn;
    r->nbad += bad;
    r->nspectra += rb->b.nspec;
    pthread_mutex_unlock(&c->mu);
    c->t_write += rvfit_now() - t0;
    if (r->progress)
        r->progress(r->progress_ctx, c->spectra_done, rvfit_now() - c->t0);
}

int jwriter_finish(run_ctx *c, rvfit_err *err)
{
    run_joint *J = c->J;
    rvfit_run *r = c->r;
    size_t nexp = J->ix.obj[J->o1] - J->ix.obj[J->o0];
    int rc = c->fatal_rc;
    if (rc)
        *err = c->fatal_err;
    else if (J->wfailed)
        rc = rvfit_err_set(err, RVFIT_ERR_IO, "%s", J->wwhy);
    else if (J->written != nexp)
        rc = rvfit_err_set(err, RVFIT_ERR_INTERNAL, "%s: %zu of %zu "
                           "exposures written", J->tab, J->written, nexp);
    if (!rc)
        rc = rvfit_output_key(J->out, "BKNDPTS", (long long)J->points,
                              "points the backend evaluated for these "
                              "spectra", err);
    if (!rc) {
        rc = rvfit_output_commit(J->out, err);
        J->out = NULL;
    }
    rvfit_output_abort(J->out);
    J->out = NULL;
    if (!rc)
        rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit",
                  "joint: wrote %s (%zu objects, %zu spectra); backend %s "
                  "on %s evaluated %" PRIu64 " points", J->tab,
                  J->o1 - J->o0, nexp, r->be->name,
                  r->be->ops->device(r->be->state), J->points);
    return rc;
}
