/* run_notes.c — per-star problems the writer reports while it writes a
 * unit's rows: a TARGETID already written to the same output (flagged
 * RVFIT_WARN_DUPLICATE; both rows are kept), and the warnings of
 * rvfit_prep_batch that the star's RVS_WARN alone would leave unexplained
 * (absurd inverse variances, an arm outside the templates).  Each kind is
 * logged for the first NOTES_LISTED stars of a file, then counted. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

#define NOTES_LISTED 5

/* The unit's TARGETID column (an int64 column of that name in one of
 * its pass-through tables), or table -1. */
static void find_ids(run_unit *U)
{
    int nt = 0;
    const rvfit_table_schema *tab = rvfit_output_tables(U->out, &nt);
    U->ids.table = -1;
    for (int t = 0; t < nt && U->ids.table < 0; t++)
        for (int k = 0; k < tab[t].ncol; k++)
            if (!strcmp(tab[t].cols[k].name, "TARGETID") &&
                tab[t].cols[k].type == RVFIT_COL_I64 &&
                tab[t].cols[k].repeat == 1) {
                U->ids.table = t;
                U->ids.col = k;
                break;
            }
    size_t cap = 16;
    while (cap < 2 * U->count + 2)
        cap *= 2;
    U->ids.key = malloc(cap * sizeof *U->ids.key);
    U->ids.row = calloc(cap, sizeof *U->ids.row);
    U->ids.cap = U->ids.key && U->ids.row ? cap : 0;
    U->ids.ready = 1;
}

/* Row (1-based) where id was first written, 0 if new (then recorded). */
static size_t seen(run_ids *ids, int64_t id, size_t row1)
{
    if (!ids->cap)
        return 0;
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    for (size_t i = (size_t)(h >> 20) & (ids->cap - 1);;
         i = (i + 1) & (ids->cap - 1)) {
        if (!ids->row[i]) {
            ids->key[i] = id;
            ids->row[i] = row1;
            return 0;
        }
        if (ids->key[i] == id)
            return ids->row[i];
    }
}

static void arm_range(const rvfit_arm_batch *A, size_t s, double *lo,
                      double *hi)
{
    const double *w = A->wave + (A->wave_per_spec ? s * A->npix : 0);
    size_t n = rvfit_arm_npix(A, s);
    *lo = n ? w[0] : NAN;
    *hi = n ? w[n - 1] : NAN;
}

static void note_outside(run_ctx *c, const run_unit *U, const rvfit_batch *b,
                         size_t s, const char *who)
{
    const rvfit_library *lib = c->r->lib;
    for (int a = 0; a < b->narm; a++) {
        if (!(b->flags[s] & RVFIT_SPEC_ARM_OUTSIDE(a)))
            continue;
        int la = rvfit_library_arm(lib, b->arm[a].name);
        const rvfit_lib_arm *L = &lib->arm[la < 0 ? 0 : la];
        double lo, hi;
        arm_range(&b->arm[a], s, &lo, &hi);
        rvfit_log(c->r->host, RVFIT_LOG_WARN, "rvfit",
                  "%s: %s: arm %s (%.1f-%.1f A) lies entirely outside the "
                  "templates (%.1f-%.1f A): not used (RVS_WARN %u)", U->path,
                  who, b->arm[a].name, lo, hi, exp(L->lnl0),
                  exp(L->lnl0 + L->dlnl * (double)(L->npix - 1)),
                  RVFIT_WARN_ARM_OUTSIDE);
    }
}

void notes_segment(run_ctx *c, run_unit *U, const rvfit_batch *b,
                   const run_seg *seg, rvfit_result *res)
{
    if (!U->ids.ready)
        find_ids(U);
    const int64_t *id =
        U->ids.table >= 0 ? seg->rows[U->ids.table].data[U->ids.col] : NULL;
    for (size_t i = 0; i < seg->n; i++) {
        size_t s = seg->off + i, row1 = seg->row0 + i + 1;
        char who[96];
        if (id)
            snprintf(who, sizeof who, "row %zu (TARGETID %" PRId64 ")", row1,
                     id[i]);
        else
            snprintf(who, sizeof who, "row %zu", row1);
        size_t first = id ? seen(&U->ids, id[i], row1) : 0;
        if (first) {
            res[i].warn |= RVFIT_WARN_DUPLICATE;
            if (U->ndup++ < NOTES_LISTED)
                rvfit_log(c->r->host, RVFIT_LOG_WARN, "rvfit",
                          "%s: %s: the TARGETID of row %zu again; both are "
                          "written, this one flagged (RVS_WARN %u)", U->path,
                          who, first, RVFIT_WARN_DUPLICATE);
        }
        if ((res[i].warn & RVFIT_WARN_BAD_IVAR) &&
            U->nivar++ < NOTES_LISTED)
            rvfit_log(c->r->host, RVFIT_LOG_WARN, "rvfit",
                      "%s: %s: median S/N per pixel above %.0e in an arm: "
                      "the inverse variances (IVAR) are not credible, nor "
                      "VRAD_ERR = %.3g km/s (RVS_WARN %u)", U->path, who,
                      RVFIT_SNR_ABSURD, res[i].vrad_err,
                      RVFIT_WARN_BAD_IVAR);
        if ((res[i].warn & RVFIT_WARN_ARM_OUTSIDE) &&
            U->noutside++ < NOTES_LISTED)
            note_outside(c, U, b, s, who);
    }
}

void notes_finish(run_ctx *c, const run_unit *U)
{
    static const char *what[3] = {
        "repeat a TARGETID", "have absurd inverse variances",
        "have an arm outside the templates"};
    size_t n[3] = {U->ndup, U->nivar, U->noutside};
    for (int k = 0; k < 3; k++)
        if (n[k] > NOTES_LISTED)
            rvfit_log(c->r->host, RVFIT_LOG_WARN, "rvfit",
                      "%s: %zu rows %s (the first %d listed above)", U->path,
                      n[k], what[k], NOTES_LISTED);
}

void notes_free(run_unit *U)
{
    free(U->ids.key);
    free(U->ids.row);
    memset(&U->ids, 0, sizeof U->ids);
}
