/* cmd_plot.c — `rvfit plot RVTAB_FILE...`: the fit figures (rvfit/plot.h,
 * docs/plots.md) of files already fitted, without fitting: the values,
 * errors and warnings from the rvtab, the best-fit models and the final
 * velocity scans (HDU CHISQ_V, when the fit wrote it) from the rvmod
 * beside it, and the spectra from the input file named in its header,
 * read through the instrument plugin.  No backend is opened. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "cmd_plot_read.h"
#include "rvfit/files.h"
#include "rvfit/plot.h"

static void help(void)
{
    printf(
        "usage: rvfit plot [options] RVTAB_FILE...\n"
        "Figures of fitted files from their outputs, without fitting: the\n"
        "rvtab's values, the models (and, when the fit was run with\n"
        "--set output.chisq_v=1, the chi^2(v) scans) of the rvmod beside\n"
        "it, the spectra of the input named in its header (INPUT).\n"
        "  -d, --plot-dir DIR     where the PNGs go (created when missing)\n"
        "      --targetid LIST    only these TARGETIDs (comma list or @file)\n"
        "      --input FILE       the fitted input, if it moved (one rvtab)\n"
        "  -c, --config FILE      INI configuration (instrument options)\n"
        "      --set S.K=V        any config key\n"
        "      --log-level L      error, warn, info or debug\n");
}

typedef struct plot_args {
    const char *config, *targetid, *input;
    cli_overrides ov;
    char **files;
    int nfiles;
} plot_args;

static int parse(int argc, char **argv, plot_args *a)
{
    static const struct option opts[] = {
        {"plot-dir", 1, 0, 'd'}, {"targetid", 1, 0, 1}, {"input", 1, 0, 2},
        {"config", 1, 0, 'c'},   {"set", 1, 0, 3},      {"log-level", 1, 0, 4},
        {"help", 0, 0, 'h'},     {0, 0, 0, 0}};
    int c, bad = 0, li = -1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:c:h", opts, &li)) != -1) {
        cli_opt_seen(&a->ov, opts, &li, c);
        switch (c) {
        case 'd': bad |= cli_override(&a->ov, "output", "plot_dir", optarg); break;
        case 1: a->targetid = optarg; break;
        case 2: a->input = optarg; break;
        case 'c': a->config = optarg; break;
        case 3:
            if (cli_override_set(&a->ov, optarg)) {
                fprintf(stderr, "rvfit: error: --set %s: expected "
                                "SECTION.KEY=VALUE\n", optarg);
                return 2;
            }
            break;
        case 4:
            if (cli_override_log_level(&a->ov, optarg))
                return 2;
            break;
        case 'h': help(); exit(0);
        default: help(); return 2;
        }
    }
    a->files = argv + optind;
    a->nfiles = argc - optind;
    return bad ? 2 : 0;
}

/* What one run of the figures of a file needs. */
typedef struct plot_job {
    const rvfit_config *cfg;
    const rvfit_host *host;
    pl_file *pf;
    const int64_t *ids;       /* --targetid, or NULL: every row          */
    size_t nids;
    unsigned char *done;      /* [nrow] drawn                            */
    size_t nfig, nfail;
} plot_job;

static int wanted(const plot_job *j, int64_t tid)
{
    for (size_t i = 0; i < j->nids; i++)
        if (j->ids[i] == tid)
            return 1;
    return j->nids == 0;
}

/* The rvtab row of a spectrum read with TARGETID tid (first not drawn),
 * or of the k-th spectrum of the file when the rvtab has no TARGETID. */
static long row_of(const plot_job *j, int64_t tid, size_t k)
{
    const pl_file *pf = j->pf;
    if (!pf->tid)
        return k < pf->nrow && !j->done[k] ? (long)k : -1;
    for (size_t r = 0; r < pf->nrow; r++)
        if (pf->tid[r] == tid && !j->done[r])
            return (long)r;
    return -1;
}

/* Draw spectrum s of batch b (TARGETID tid) with rvtab row r. */
static void draw(plot_job *j, const rvfit_batch *b, size_t s, int64_t tid,
                 size_t r, float *const *mod)
{
    pl_file *pf = j->pf;
    rvfit_plot_spec ps = {.targetid = tid, .res = &pf->res[r],
                          .lib = pf->lib, .narm = b->narm};
    rvfit_err e;
    rvfit_err_clear(&e);
    int rc = RVFIT_OK;
    for (int a = 0; a < b->narm && !rc; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        size_t np = A->npix, off = s * np;
        rc = pl_model(pf, A->name, r, mod[a], np, &e);
        ps.arm[a] = (rvfit_plot_arm){A->name, rvfit_arm_npix(A, s),
                                     A->wave + (A->wave_per_spec ? off : 0),
                                     A->flux + off, A->ivar + off, mod[a],
                                     NULL};
    }
    char path[RVFIT_PATH_LEN + 1200];
    snprintf(path, sizeof path, "%.*s/%.1024s_%lld.png", RVFIT_PATH_LEN - 1,
             j->cfg->plot_dir, pf->stem, (long long)tid);
    if (!rc)
        rc = rvfit_plot_write(path, &ps, &e);
    j->done[r] = 1;
    if (rc) {
        rvfit_log(j->host, RVFIT_LOG_ERROR, "rvfit", "figure: %s", e.msg);
        j->nfail++;
    } else {
        rvfit_log(j->host, RVFIT_LOG_DEBUG, "rvfit", "wrote %s", path);
        j->nfig++;
    }
}

/* The TARGETID column of the instrument's RVTAB rows, or -1. */
static int tid_column(const rvfit_file_info *info, int *table)
{
    for (int t = 0; t < info->ntable; t++) {
        if (strcmp(info->table[t].extname, "RVTAB"))
            continue;
        for (int c = 0; c < info->table[t].ncol; c++)
            if (!strcmp(info->table[t].cols[c].name, "TARGETID") &&
                info->table[t].cols[c].type == RVFIT_COL_I64) {
                *table = t;
                return c;
            }
    }
    return -1;
}

/* Read the selected spectra in chunks and draw those the rvtab has. */
static int draw_all(plot_job *j, const rvfit_plugin_handle *inst, void *h,
                    rvfit_err *e)
{
    const rvfit_instrument_ops *io = &inst->instrument;
    rvfit_file_info info;
    io->info(h, &info);
    int tt = -1, tc = tid_column(&info, &tt);
    if (!j->pf->tid && info.nselect != j->pf->nrow)
        return rvfit_err_set(e, RVFIT_ERR_INVALID, "%s has no TARGETID "
                             "column and %zu rows for the %zu spectra of "
                             "%s: the rows cannot be matched", j->pf->rvtab,
                             j->pf->nrow, info.nselect, j->pf->input);
    size_t cap = 32;
    rvfit_batch b;
    rvfit_table_rows rows = {0, NULL};
    float *mod[RVFIT_MAX_ARMS] = {0};
    int rc = rvfit_batch_alloc(&b, info.narm, info.arm, cap, e);
    for (int a = 0; a < info.narm && !rc; a++)
        if (!(mod[a] = malloc(info.arm[a].npix * sizeof(float))))
            rc = rvfit_err_set(e, RVFIT_ERR_NOMEM, "out of memory");
    if (!rc && tc >= 0)
        rc = rvfit_rows_alloc(&rows, &info.table[tt], cap, e);
    for (size_t first = 0; !rc && first < info.nselect; first += cap) {
        size_t n = info.nselect - first < cap ? info.nselect - first : cap;
        rc = io->read(h, first, n, &b, e);
        if (!rc && tc >= 0)
            rc = io->read_rows(h, tt, first, n, &rows, e);
        for (size_t s = 0; s < n && !rc; s++) {
            int64_t tid = tc >= 0 ? ((const int64_t *)rows.data[tc])[s]
                                  : (int64_t)b.index[s];
            long r = row_of(j, tid, first + s);
            if (r >= 0 && wanted(j, tid))
                draw(j, &b, s, tid, (size_t)r, mod);
        }
    }
    if (tc >= 0)
        rvfit_rows_free(&rows, &info.table[tt]);
    for (int a = 0; a < info.narm; a++)
        free(mod[a]);
    rvfit_batch_free(&b);
    return rc;
}

/* The figures of one rvtab file; 0, or 1 when anything failed (logged). */
static int plot_file(const rvfit_config *cfg, const rvfit_host *host,
                     const char *rvtab, const char *input,
                     const int64_t *ids, size_t nids)
{
    pl_file pf;
    rvfit_err e;
    rvfit_err_clear(&e);
    int rc = pl_open(&pf, rvtab, &e);
    if (rc) {
        rvfit_log(host, RVFIT_LOG_ERROR, "rvfit", "%s", e.msg);
        return 1;
    }
    if (input)
        snprintf(pf.input, sizeof pf.input, "%s", input);
    plot_job j = {cfg, host, &pf, ids, nids, calloc(pf.nrow + 1, 1), 0, 0};
    rvfit_plugin_handle inst;
    memset(&inst, 0, sizeof inst);
    const char *iname = pf.instrument[0] ? pf.instrument : cfg->instrument;
    void *h = NULL;
    rvfit_kv *kv = NULL;
    int nkv = 0;
    char section[96];
    snprintf(section, sizeof section, "instrument.%s", iname);
    if (!j.done)
        rc = rvfit_err_set(&e, RVFIT_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = rvfit_instrument_load(cfg, iname, &inst, &e);
    if (!rc && rvfit_config_section(cfg, section, &kv, &nkv))
        rc = rvfit_err_set(&e, RVFIT_ERR_NOMEM, "out of memory");
    rvfit_select sel = {0, pf.tid ? (nids ? nids : pf.nrow) : 0,
                        pf.tid ? (nids ? ids : pf.tid) : NULL};
    if (!rc)
        rc = inst.instrument.open(host, kv, nkv, pf.input, &sel, &h, &e);
    rvfit_log(host, RVFIT_LOG_INFO, "rvfit", "%s: %zu rows; spectra from "
              "%s (instrument %s), models%s from %s", rvtab, pf.nrow,
              pf.input, iname, pf.has_scan ? " and chi^2(v) scans" : "",
              pf.rvmod);
    if (!rc)
        rc = draw_all(&j, &inst, h, &e);
    if (h)
        inst.instrument.close(h);
    if (inst.dl)
        rvfit_plugin_unload(&inst);
    free(kv);
    if (rc)
        rvfit_log(host, RVFIT_LOG_ERROR, "rvfit", "%s: %s", rvtab, e.msg);
    for (size_t i = 0; !rc && i < nids; i++) {
        int found = 0;
        for (size_t r = 0; r < pf.nrow && pf.tid && !found; r++)
            found = pf.tid[r] == ids[i] && j.done[r];
        if (!found)
            rvfit_log(host, RVFIT_LOG_WARN, "rvfit", "%s: TARGETID %lld: "
                      "not drawn (not in the rvtab or the input)", rvtab,
                      (long long)ids[i]);
    }
    rvfit_log(host, RVFIT_LOG_INFO, "rvfit", "%s: %zu figures in %s%s",
              rvtab, j.nfig, cfg->plot_dir,
              pf.has_scan ? "" : " (no chi^2(v): fit with --set "
                                 "output.chisq_v=1 to keep the scans)");
    size_t bad = j.nfail;
    free(j.done);
    pl_close(&pf);
    return rc || bad ? 1 : 0;
}

int cmd_plot(int argc, char **argv)
{
    plot_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    rvfit_config cfg;
    if (cli_config(&cfg, a.config, &a.ov))
        return 2;
    rvfit_err e;
    if (a.nfiles == 0 || !cfg.plot_dir[0] || (a.input && a.nfiles > 1))
        rc = 2;
    if (rc)
        fprintf(stderr, "rvfit: error: %s (see rvfit plot --help)\n",
                a.nfiles == 0 ? "no rvtab file given"
                : !cfg.plot_dir[0] ? "--plot-dir DIR is needed"
                                   : "--input goes with one rvtab file");
    else if (!rvfit_plot_available()) {
        fprintf(stderr, "rvfit: error: rvfit was built without Cairo: "
                        "rvfit plot unavailable (install libcairo2-dev "
                        "and rebuild)\n");
        rc = 2;
    } else if (rvfit_mkdirs(cfg.plot_dir, &e)) {
        fprintf(stderr, "rvfit: error: plot directory: %s\n", e.msg);
        rc = 1;
    }
    int64_t *ids = NULL;
    size_t nids = 0;
    if (!rc && a.targetid && cli_parse_targetids(a.targetid, &ids, &nids))
        rc = 2;
    cli_log lg;
    rvfit_host host;
    cli_host_init(&host, &lg, (int)cfg.log_level, 1);
    int bad = 0;
    for (int i = 0; !rc && i < a.nfiles; i++)
        bad |= plot_file(&cfg, &host, a.files[i], a.input, ids, nids);
    rc = rc ? rc : bad;
    free(ids);
    rvfit_config_free(&cfg);
    return rc;
}
