/* run.c — one input file from reader to committed outputs, batch by batch
 * so that memory does not grow with the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rvfit/output.h"
#include "rvfit/run.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void rvfit_output_names(const char *outdir, const char *input, char *tab,
                        char *mod, size_t n)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    char stem[1024];
    snprintf(stem, sizeof stem, "%s", base);
    static const char *ext[] = {".fits.gz", ".fits.fz", ".fits", ".fit"};
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t ls = strlen(stem), le = strlen(ext[i]);
        if (ls > le && !strcmp(stem + ls - le, ext[i])) {
            stem[ls - le] = '\0';
            break;
        }
    }
    snprintf(tab, n, "%s/rvtab_%s.fits", outdir, stem);
    snprintf(mod, n, "%s/rvmod_%s.fits", outdir, stem);
}

/* Every arm of the file must exist in the library. */
static int check_arms(const rvfit_run *r, const rvfit_file_info *info,
                      const char *path, rvfit_err *err)
{
    for (int a = 0; a < info->narm; a++)
        if (rvfit_library_arm(r->lib, info->arm[a].name) < 0)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "%s: arm %s has no templates in %s (built "
                                 "for instrument '%s'); rebuild the "
                                 "library with `rvfit templates "
                                 "--instrument %s`",
                                 path, info->arm[a].name, r->lib_path,
                                 r->lib->instrument, r->cfg->instrument);
    return RVFIT_OK;
}

typedef struct batch_bufs {
    rvfit_batch b;
    rvfit_table_rows rows[16];
    rvfit_result *res;
    float *models[RVFIT_MAX_ARMS];
} batch_bufs;

static void bufs_free(batch_bufs *B, const rvfit_file_info *info)
{
    for (int t = 0; t < info->ntable && t < 16; t++)
        rvfit_rows_free(&B->rows[t], &info->table[t]);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(B->models[a]);
    free(B->res);
    rvfit_batch_free(&B->b);
    memset(B, 0, sizeof *B);
}

/* Read, prepare, fit and write selected spectra [first, first+n). */
static int do_batch(rvfit_run *r, void *h, const rvfit_file_info *info,
                    rvfit_output *out, size_t first, size_t n,
                    rvfit_err *err)
{
    const rvfit_instrument_ops *io = &r->inst->instrument;
    batch_bufs B;
    memset(&B, 0, sizeof B);
    double t0 = now();
    int rc = rvfit_batch_alloc(&B.b, info->narm, info->arm, n, err);
    if (!rc)
        rc = io->read(h, first, n, &B.b, err);
    for (int t = 0; t < info->ntable && t < 16 && !rc; t++) {
        rc = rvfit_rows_alloc(&B.rows[t], &info->table[t], n, err);
        if (!rc)
            rc = io->read_rows(h, t, first, n, &B.rows[t], err);
    }
    B.res = calloc(n, sizeof *B.res);
    for (int a = 0; a < info->narm && !rc && r->cfg->write_models; a++) {
        B.models[a] = malloc(n * info->arm[a].npix * sizeof(float));
        if (!B.models[a])
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "models");
    }
    if (!rc && !B.res)
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "results");
    if (!rc)
        rc = rvfit_prep_batch(&B.b, r->lib, err);
    r->prof.seconds[RVFIT_ST_READ] += now() - t0;
    if (!rc) {
        rc = r->be->ops->load_batch(r->be->state, &B.b, &r->fo.model, err);
        if (rc)
            rvfit_err_prefix(err, "backend '%s': load_batch", r->be->name);
    }
    if (!rc)
        rc = rvfit_fit_batch(r->be, r->lib, &B.b, &r->fo, B.res,
                             r->cfg->write_models ? B.models : NULL,
                             &r->prof, r->host, err);
    t0 = now();
    if (!rc)
        rc = rvfit_output_write(out, first, &B.b, B.res, B.rows,
                                r->cfg->write_models ? B.models : NULL, err);
    r->prof.seconds[RVFIT_ST_WRITE] += now() - t0;
    for (size_t i = 0; i < B.b.nspec && !rc; i++) {
        r->nwarn += B.res[i].warn != 0;
        r->nbad += (B.res[i].warn & RVFIT_WARN_BAD_SPECTRUM) != 0;
    }
    bufs_free(&B, info);
    return rc;
}

static int open_output(rvfit_run *r, const char *path,
                       const rvfit_file_info *info, const char *tab,
                       const char *mod, rvfit_output **out, rvfit_err *err)
{
    int rc = RVFIT_OK;
    char *cfgtext = NULL;
    size_t need = rvfit_config_dump(r->cfg, NULL, 0) + 1;
    cfgtext = malloc(need);
    if (cfgtext)
        rvfit_config_dump(r->cfg, cfgtext, need);
    rvfit_output_meta meta = {
        path, r->be->name, r->be->ph.desc->version,
        r->be->ops->device(r->be->state), r->inst->desc->name,
        r->inst->desc->version, r->lib_path, cfgtext, r->cmdline};
    if (!rc)
        rc = rvfit_output_open(out, tab, r->cfg->write_models ? mod : NULL,
                               r->lib, info, info->nselect, &meta, err);
    free(cfgtext);
    return rc;
}

int rvfit_run_file(rvfit_run *r, const char *path, rvfit_err *err)
{
    char tab[RVFIT_PATH_LEN + 1100], mod[RVFIT_PATH_LEN + 1100];
    struct stat sb;
    rvfit_output_names(r->cfg->output_dir, path, tab, mod, sizeof tab);
    if (stat(tab, &sb) == 0) {
        if (r->cfg->skip_existing) {
            rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit",
                      "%s: skipped, %s exists", path, tab);
            r->nskipped++;
            return RVFIT_OK;
        }
        if (!r->cfg->overwrite)
            return rvfit_err_set(err, RVFIT_ERR_IO,
                                 "%s: output %s exists (use --overwrite or "
                                 "--skip-existing)", path, tab);
    }
    rvfit_select sel = {r->cfg->minsn, r->ntargetid, r->targetid};
    const rvfit_instrument_ops *io = &r->inst->instrument;
    void *h = NULL;
    rvfit_kv *kv = NULL;
    int nkv = 0;
    char section[96];
    snprintf(section, sizeof section, "instrument.%s", r->inst->desc->name);
    if (rvfit_config_section(r->cfg, section, &kv, &nkv) != RVFIT_OK)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "out of memory");
    double t0 = now();
    int rc = io->open(r->host, kv, nkv, path, &sel, &h, err);
    free(kv);
    if (rc)
        return rc;
    rvfit_file_info info;
    io->info(h, &info);
    r->prof.seconds[RVFIT_ST_READ] += now() - t0;
    rvfit_output *out = NULL;
    rc = check_arms(r, &info, path, err);
    if (!rc && info.ntable > 16)
        rc = rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: %d tables (max 16)",
                           path, info.ntable);
    if (!rc)
        rc = open_output(r, path, &info, tab, mod, &out, err);
    rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit",
              "%s: %zu of %zu spectra selected", path, info.nselect,
              info.ntotal);
    size_t bs = (size_t)r->cfg->batch_size;
    double start = now();
    rvfit_counters c0, c1;
    r->be->ops->counters(r->be->state, &c0);
    for (size_t first = 0; first < info.nselect && !rc; first += bs) {
        size_t n = info.nselect - first < bs ? info.nselect - first : bs;
        rc = do_batch(r, h, &info, out, first, n, err);
        if (!rc && r->progress)
            r->progress(r->progress_ctx, path, first + n, info.nselect,
                        now() - start);
    }
    r->be->ops->counters(r->be->state, &c1);
    if (!rc)
        rc = rvfit_output_key(out, "BKNDPTS", (long long)(c1.points - c0.points),
                              "points the backend evaluated for this file",
                              err);
    if (!rc) {
        rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit",
                  "%s: backend %s on %s evaluated %llu points",
                  path, r->be->name, r->be->ops->device(r->be->state),
                  (unsigned long long)(c1.points - c0.points));
        rc = rvfit_output_commit(out, err);
        out = NULL;
    }
    rvfit_output_abort(out);
    io->close(h);
    if (rc)
        return rc;
    r->nfiles++;
    r->nspectra += info.nselect;
    rvfit_log(r->host, RVFIT_LOG_INFO, "rvfit", "%s: wrote %s", path, tab);
    return RVFIT_OK;
}
