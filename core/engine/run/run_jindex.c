/* run_jindex.c — the index of a joint run: the epochs of every selected
 * spectrum of every input (the instrument's 'epochs' extension), grouped
 * into objects.  Nothing here depends on the order the inputs came in:
 * exposures are sorted by object key, epoch, exposure id, input path and
 * row, and objects by the path and row of their first epoch, so every
 * process of a job, and every ordering of its inputs, gets the same
 * objects in the same order. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

static void note_skip(run_jindex *ix, const char *why)
{
    ix->nskip++;
    for (int k = 0; k < RUN_JREASONS; k++) {
        if (!ix->reason[k].why[0])
            snprintf(ix->reason[k].why, sizeof ix->reason[k].why, "%s",
                     why);
        if (!strcmp(ix->reason[k].why, why)) {
            ix->reason[k].n++;
            return;
        }
    }
    /* more distinct reasons than slots: counted in nskip alone */
}

static int cmp_nan_last(double a, double b)
{
    int na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na - nb;
    return (a > b) - (a < b);
}

/* Exposures: object key, then epoch, exposure, input path and row. */
static int cmp_exp(const void *pa, const void *pb)
{
    const run_jexp *a = pa, *b = pb;
    int c = strcmp(a->ep.key, b->ep.key);
    if (c)
        return c;
    if ((c = cmp_nan_last(a->ep.mjd, b->ep.mjd)))
        return c;
    if (a->ep.expid != b->ep.expid)
        return (a->ep.expid > b->ep.expid) - (a->ep.expid < b->ep.expid);
    if (a->prank != b->prank)
        return (a->prank > b->prank) - (a->prank < b->prank);
    return (a->sel > b->sel) - (a->sel < b->sel);
}

/* Objects (as their first exposures): input path, then row. */
static int cmp_first(const void *pa, const void *pb)
{
    const run_jexp *a = *(run_jexp *const *)pa, *b = *(run_jexp *const *)pb;
    if (a->prank != b->prank)
        return (a->prank > b->prank) - (a->prank < b->prank);
    return (a->sel > b->sel) - (a->sel < b->sel);
}

/* Path ranks: rank[i] = position of inputs[i] among the sorted paths. */
static int path_ranks(run_jindex *ix, uint32_t *rank)
{
    size_t n = ix->ninput;
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!ord)
        return -1;
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    /* insertion sort by path: inputs are few (thousands at most) */
    for (size_t i = 1; i < n; i++) {
        size_t v = ord[i], j = i;
        while (j > 0 && strcmp(ix->inputs[ord[j - 1]], ix->inputs[v]) > 0)
            ord[j] = ord[j - 1], j--;
        ord[j] = v;
    }
    for (size_t i = 0; i < n; i++)
        rank[ord[i]] = (uint32_t)i;
    free(ord);
    return 0;
}

/* Can an input with info join the index's arms (the same arms in the
 * same order, resolution kinds and band widths)?  The first usable input
 * in path order sets them; npix grows to the widest. */
static int arms_fit(run_jindex *ix, const rvfit_file_info *info)
{
    if (ix->narm == 0) {
        ix->narm = info->narm;
        memcpy(ix->arm, info->arm, (size_t)info->narm * sizeof *ix->arm);
        return 1;
    }
    if (info->narm != ix->narm)
        return 0;
    for (int a = 0; a < ix->narm; a++) {
        const rvfit_arm_info *x = &ix->arm[a], *y = &info->arm[a];
        if (strncmp(x->name, y->name, sizeof x->name) ||
            x->res_kind != y->res_kind ||
            (x->res_kind == RVFIT_RES_BAND && x->ndiag != y->ndiag))
            return 0;
    }
    for (int a = 0; a < ix->narm; a++)
        if (info->arm[a].npix > ix->arm[a].npix)
            ix->arm[a].npix = info->arm[a].npix;
    return 1;
}

/* Why an input cannot take part: logged and counted. */
static void input_failed(run_ctx *c, const char *why)
{
    rvfit_log(c->r->host, RVFIT_LOG_ERROR, "rvfit", "%s", why);
    pthread_mutex_lock(&c->mu);
    c->r->nfailed++;
    pthread_mutex_unlock(&c->mu);
}

/* The epochs of input i into the index (cap: its exp array's room). */
static int index_input(run_ctx *c, size_t i, uint32_t prank, size_t *cap,
                       rvfit_err *fatal)
{
    run_joint *J = c->J;
    run_jindex *ix = &J->ix;
    rvfit_run *r = c->r;
    const rvfit_instrument_ops *io = &r->inst->instrument;
    rvfit_select sel = {r->cfg->minsn, r->ntargetid, r->targetid};
    rvfit_file_info info;
    rvfit_epoch *ep = NULL;
    void *h = NULL;
    rvfit_err e;
    rvfit_err_clear(&e);
    int rc = io->open(r->host, c->kv, c->nkv, ix->inputs[i], &sel, &h, &e);
    if (!rc) {
        io->info(h, &info);
        for (int a = 0; a < info.narm && !rc; a++)
            if (rvfit_library_arm(r->lib, info.arm[a].name) < 0)
                rc = rvfit_err_set(&e, RVFIT_ERR_INVALID, "%s: arm %s has "
                                   "no templates in %s", ix->inputs[i],
                                   info.arm[a].name, r->lib_path);
        if (!rc && !arms_fit(ix, &info))
            rc = rvfit_err_set(&e, RVFIT_ERR_INVALID, "%s: its arms differ "
                               "from the other inputs' (a joint fit needs "
                               "the same arms in every input)",
                               ix->inputs[i]);
    }
    size_t n = rc ? 0 : info.nselect;
    if (!rc && !(ep = malloc((n ? n : 1) * sizeof *ep)))
        rc = rvfit_err_set(fatal, RVFIT_ERR_NOMEM, "joint index: out of "
                           "memory");
    if (!rc && n)
        rc = J->ep->epochs(h, 0, n, ep, &e);
    if (!rc &&
        run_grow((void **)&ix->exp, cap, ix->nexp + n, sizeof *ix->exp))
        rc = rvfit_err_set(fatal, RVFIT_ERR_NOMEM, "joint index: out of "
                           "memory");
    for (size_t k = 0; k < n && !rc; k++) {
        if (!ep[k].key[0]) {
            note_skip(ix, ep[k].why[0] ? ep[k].why : "no object key");
            continue;
        }
        ep[k].key[RVFIT_OBJKEY_LEN - 1] = '\0';
        ix->exp[ix->nexp++] = (run_jexp){ep[k], (uint32_t)i, prank, k};
    }
    free(ep);
    if (h)
        io->close(h);
    if (rc == RVFIT_ERR_NOMEM)
        return rc;
    if (rc) {
        input_failed(c, e.msg);
        return RVFIT_OK;
    }
    ix->usable[i] = 1;
    ix->nusable++;
    return RVFIT_OK;
}

/* Within each object: a second spectrum of the same exposure (the same
 * file given twice under two names, two files holding one exposure) is
 * left out; a coadd (expid -1) is never taken for a duplicate. */
static void drop_duplicates(run_jindex *ix)
{
    size_t w = 0;
    for (size_t k = 0; k < ix->nexp; k++) {
        const run_jexp *e = &ix->exp[k];
        if (w > 0 && e->ep.expid >= 0) {
            const run_jexp *p = &ix->exp[w - 1];
            if (!strcmp(p->ep.key, e->ep.key) && p->ep.expid == e->ep.expid) {
                note_skip(ix, "duplicate exposure");
                continue;
            }
        }
        ix->exp[w++] = *e;
    }
    ix->nexp = w;
}

/* Objects as runs of one key, reordered by their first epoch's input
 * path and row; exp is rewritten in that order. */
static int make_objects(run_jindex *ix)
{
    size_t n = ix->nexp, no = 0;
    run_jexp **first = malloc((n ? n : 1) * sizeof *first);
    run_jexp *out = malloc((n ? n : 1) * sizeof *out);
    ix->obj = malloc((n + 1) * sizeof *ix->obj);
    if (!first || !out || !ix->obj) {
        free(first), free(out);
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        if (k == 0 || strcmp(ix->exp[k - 1].ep.key, ix->exp[k].ep.key))
            first[no++] = &ix->exp[k];
    qsort(first, no, sizeof *first, cmp_first);
    size_t w = 0;
    ix->maxobj = 0;
    for (size_t o = 0; o < no; o++) {
        ix->obj[o] = w;
        const run_jexp *e = first[o];
        const char *key = e->ep.key;
        while (e < ix->exp + n && !strcmp(e->ep.key, key))
            out[w++] = *e++;
        if (w - ix->obj[o] > ix->maxobj)
            ix->maxobj = w - ix->obj[o];
    }
    ix->obj[no] = w;
    ix->nobj = no;
    free(ix->exp);
    ix->exp = out;
    free(first);
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void log_index(run_ctx *c)
{
    const run_jindex *ix = &c->J->ix;
    char skips[512] = "";
    for (int k = 0; k < RUN_JREASONS && ix->reason[k].n; k++) {
        size_t l = strlen(skips);
        snprintf(skips + l, sizeof skips - l, "%s%zu %s", l ? ", " : "",
                 ix->reason[k].n, ix->reason[k].why);
    }
    rvfit_log(c->r->host, RVFIT_LOG_INFO, "rvfit",
              "joint: %zu of %zu inputs read: %zu spectra of %zu objects "
              "(at most %zu each); %zu skipped%s%s%s", ix->nusable,
              ix->ninput, ix->nexp, ix->nobj, ix->maxobj, ix->nskip,
              skips[0] ? " (" : "", skips, skips[0] ? ")" : "");
}

int jindex_build(run_ctx *c, char *const *inputs, size_t n, rvfit_err *err)
{
    run_jindex *ix = &c->J->ix;
    ix->inputs = inputs;
    ix->ninput = n;
    ix->base = calloc(n ? n : 1, sizeof *ix->base);
    ix->usable = calloc(n ? n : 1, sizeof *ix->usable);
    uint32_t *rank = malloc((n ? n : 1) * sizeof *rank);
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    int rc = ix->base && ix->usable && rank && ord && !path_ranks(ix, rank)
                 ? RVFIT_OK
                 : rvfit_err_set(err, RVFIT_ERR_NOMEM, "joint index: out "
                                 "of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        if (!(ix->base[i] = strdup(base_name(inputs[i]))))
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "joint index: out of "
                               "memory");
        else if (strlen(ix->base[i]) > ix->base_len)
            ix->base_len = strlen(ix->base[i]);
        ord[rank[i]] = i;
    }
    /* inputs in path order: which one sets the arms does not depend on
     * the order they were given in */
    size_t cap = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        size_t i = ord[k];
        if (k > 0 && !strcmp(inputs[ord[k - 1]], inputs[i])) {
            char why[RVFIT_PATH_LEN + 64];
            snprintf(why, sizeof why, "%s: given twice", inputs[i]);
            input_failed(c, why);
            continue;
        }
        rc = index_input(c, i, rank[i], &cap, err);
        run_poll_cancel(c);
        if (!rc && atomic_load(&c->stop)) {
            rc = c->fatal_rc;
            *err = c->fatal_err;
        }
    }
    if (!rc) {
        qsort(ix->exp, ix->nexp, sizeof *ix->exp, cmp_exp);
        drop_duplicates(ix);
        if (make_objects(ix))
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "joint index: out of "
                               "memory");
    }
    if (!rc) {
        c->r->nfiles += ix->nusable; /* the profile's "spectra in N files" */
        log_index(c);
    }
    free(rank), free(ord);
    return rc;
}

void jindex_free(run_jindex *ix)
{
    for (size_t i = 0; ix->base && i < ix->ninput; i++)
        free(ix->base[i]);
    free(ix->base), free(ix->usable), free(ix->exp), free(ix->obj);
    memset(ix, 0, sizeof *ix);
}
