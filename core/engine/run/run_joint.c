/* run_joint.c — rvfit_run_joint and rvfit_run_joint_merge (rvfit/run.h):
 * a joint run indexes every input, takes its part of the objects, and
 * reads, fits and writes them with the run's own loop (run.c) through the
 * joint reader and writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_internal.h"

/* A joint run reads no units: its source is never asked. */
static const rvfit_source no_source = {NULL, NULL, NULL, NULL};

static int check_setup(rvfit_run *r, int part, int nparts,
                       const rvfit_instrument_epochs_ops **ep, rvfit_err *err)
{
    const rvfit_config *cfg = r->cfg;
    if (nparts < 1 || part < 0 || part >= nparts)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "joint run: part %d "
                             "of %d", part, nparts);
    if (!cfg->joint_name[0] || strchr(cfg->joint_name, '/'))
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "[output] joint_name "
                             "'%s': a file name stem, without '/'",
                             cfg->joint_name);
    if (cfg->plot_dir[0] || cfg->chisq_v)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "[output] %s: for "
                             "single fits only ([fit] epochs = single)",
                             cfg->plot_dir[0] ? "plot_dir (figures)"
                                              : "chisq_v");
    *ep = rvfit_plugin_ext(r->inst, RVFIT_EXT_EPOCHS,
                           RVFIT_EPOCHS_EXT_VERSION,
                           sizeof(rvfit_instrument_epochs_ops), err);
    if (!*ep) {
        rvfit_err_prefix(err, "[fit] epochs = joint needs the instrument's "
                         "object keys and epochs; instrument '%s' (%s)",
                         r->inst->desc->name, r->inst->path);
        return RVFIT_ERR_CONFIG;
    }
    return RVFIT_OK;
}

/* --skip-existing / --overwrite for the job's final outputs: 1 when they
 * are kept, -1 (err) when they exist and may not be replaced. */
static int existing(const rvfit_run *r, rvfit_joint_report *rep,
                    rvfit_err *err)
{
    const rvfit_config *cfg = r->cfg;
    char mod[RUN_PATH];
    struct stat sb;
    rvfit_output_names(cfg->output_dir, cfg->joint_name, rep->output, mod,
                       sizeof rep->output);
    if (stat(rep->output, &sb) != 0)
        return 0;
    if (cfg->skip_existing) {
        rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit", "joint: %s exists: "
                  "kept (--skip-existing)", rep->output);
        return 1;
    }
    if (cfg->overwrite)
        return 0;
    rvfit_err_set(err, RVFIT_ERR_IO, "output %s exists (use --overwrite or "
                  "--skip-existing)", rep->output);
    return -1;
}

static void report(const run_ctx *c, rvfit_joint_report *rep)
{
    const run_joint *J = c->J;
    const run_jindex *ix = &J->ix;
    for (size_t i = 0; rep->usable && i < rep->ninput; i++)
        rep->usable[i] = ix->usable ? ix->usable[i] : 0;
    rep->nfailed = ix->ninput - ix->nusable;
    rep->nobj_all = ix->nobj;
    rep->nexp_all = ix->nexp;
    rep->nobj = J->o1 - J->o0;
    rep->nexp = ix->obj ? ix->obj[J->o1] - ix->obj[J->o0] : 0;
    rep->nskip = ix->nskip;
    snprintf(rep->output, sizeof rep->output, "%s", J->tab);
}

/* Index, part, outputs, the loop, the commit. */
static int joint_run(run_ctx *c, char *const *inputs, size_t ninput,
                     int part, int nparts, rvfit_err *err)
{
    run_joint *J = c->J;
    int rc = jindex_build(c, inputs, ninput, err);
    if (rc)
        return rc;
    size_t n = J->ix.nobj, k = (size_t)part, m = (size_t)nparts;
    J->o0 = k * n / m;
    J->o1 = (k + 1) * n / m;
    J->e0 = J->ix.obj[J->o0];
    J->next = J->o0;
    rc = jwriter_open(c, part, nparts, err);
    if (rc)
        return rc;
    run_loop(c);
    jreader_close(c);
    return jwriter_finish(c, err);
}

int rvfit_run_joint(rvfit_run *r, char *const *inputs, size_t ninput,
                    int part, int nparts, rvfit_joint_report *rep,
                    rvfit_err *err)
{
    int *usable = rep->usable;
    memset(rep, 0, sizeof *rep);
    rep->usable = usable;
    rep->ninput = ninput;
    const rvfit_instrument_epochs_ops *ep = NULL;
    int rc = check_setup(r, part, nparts, &ep, err);
    int ex = rc ? 0 : existing(r, rep, err);
    rep->kept = ex > 0;
    if (rc || ex)
        return rc ? rc : ex < 0 ? RVFIT_ERR_IO : RVFIT_OK;
    run_ctx *c = calloc(1, sizeof *c);
    run_joint *J = calloc(1, sizeof *J);
    if (!c || !J) {
        free(c), free(J);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "run: out of memory");
    }
    rc = run_ctx_init(c, r, &no_source, err);
    c->J = J;
    c->nstream = 1; /* an object's batches are written as one table */
    J->ep = ep;
    if (!rc)
        rc = joint_run(c, inputs, ninput, part, nparts, err);
    jreader_close(c);
    rvfit_output_abort(J->out); /* after a failure before the commit */
    report(c, rep);
    jindex_free(&J->ix);
    run_ctx_free(c);
    free(J);
    free(c);
    return rc;
}

int rvfit_run_joint_merge(const rvfit_config *cfg, int nparts,
                          rvfit_err *err)
{
    return out_merge_parts(cfg->output_dir, (int)cfg->write_models,
                           cfg->joint_name, nparts, err);
}
