/* cmd_fit.c — `rvfit fit`: fit input files and write rvtab/rvmod outputs. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "rvfit/run.h"
#include "rvfit/library_io.h"

static void help(void)
{
    printf(
        "usage: rvfit fit [options] FILE... (or @LIST: a file of file names)\n"
        "  -c, --config FILE      INI configuration (every key has a default)\n"
        "  -t, --templates DIR    template library directory\n"
        "  -o, --output-dir DIR   where rvtab_*.fits / rvmod_*.fits go\n"
        "  -b, --backend NAME     backend plugin or list 'cuda,opencl,cpu'\n"
        "  -i, --instrument NAME  instrument plugin (default desi)\n"
        "  -j, --threads N        worker threads (0 = all cores)\n"
        "      --minsn X          skip spectra whose best arm S/N < X\n"
        "      --targetid LIST    only these TARGETIDs (comma list or @file)\n"
        "      --batch-size N     spectra fitted together\n"
        "      --log-level L      error, warn, info or debug\n"
        "      --skip-existing    skip inputs whose rvtab exists\n"
        "      --overwrite        replace existing outputs\n"
        "      --no-models        do not write rvmod files\n"
        "      --set S.K=V        any config key, e.g. backend.opencl.device=1\n"
        "      --files-from FILE  read input file names from FILE\n");
}

/* Append names from a list file (one per line, # comments). */
static int read_list(const char *path, char ***files, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rvfit: error: file list %s: %s\n", path,
                strerror(errno));
        return 1;
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        char **g = realloc(*files, (size_t)(*n + 1) * sizeof *g);
        if (!g || !(g[*n] = strdup(p))) {
            fclose(f);
            return 1;
        }
        *files = g;
        (*n)++;
    }
    fclose(f);
    return 0;
}

int cli_parse_targetids(const char *spec, int64_t **ids, size_t *n)
{
    char *text = NULL;
    if (spec[0] == '@') {
        FILE *f = fopen(spec + 1, "r");
        if (!f) {
            fprintf(stderr, "rvfit: error: --targetid %s: %s\n", spec + 1,
                    strerror(errno));
            return 1;
        }
        size_t cap = 1 << 16, len = 0;
        text = malloc(cap);
        size_t r;
        while (text && (r = fread(text + len, 1, cap - len - 1, f)) > 0) {
            len += r;
            if (len + 1 >= cap) {
                char *g = realloc(text, cap *= 2);
                if (!g) { free(text); text = NULL; }
                else text = g;
            }
        }
        fclose(f);
        if (!text)
            return 1;
        text[len] = '\0';
    } else {
        text = strdup(spec);
    }
    *n = 0;
    *ids = NULL;
    for (char *save = NULL, *t = strtok_r(text, ", \t\r\n", &save); t;
         t = strtok_r(NULL, ", \t\r\n", &save)) {
        char *end;
        errno = 0;
        long long v = strtoll(t, &end, 10);
        if (errno || *end) {
            fprintf(stderr, "rvfit: error: --targetid: '%s' is not an "
                            "integer\n", t);
            free(text);
            return 1;
        }
        int64_t *g = realloc(*ids, (*n + 1) * sizeof *g);
        if (!g) {
            free(text);
            return 1;
        }
        *ids = g;
        (*ids)[(*n)++] = (int64_t)v;
    }
    free(text);
    return 0;
}

static void print_profile(const rvfit_host *h, const rvfit_run *r,
                          double wall)
{
    rvfit_counters c;
    r->be->ops->counters(r->be->state, &c);
    rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
              "profile: %zu spectra in %zu files, %.2f s, %.2f spectra/s",
              r->nspectra, r->nfiles, wall,
              wall > 0 ? (double)r->nspectra / wall : 0.0);
    for (int s = 0; s < RVFIT_NSTAGE; s++)
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
                  "profile: %-12s %9.3f s %12" PRIu64 " points %8" PRIu64
                  " calls",
                  rvfit_stage_label(s), r->prof.seconds[s],
                  r->prof.points[s], r->prof.calls[s]);
    rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
              "backend %s on %s evaluated %" PRIu64 " points in %" PRIu64
              " calls (%.3f s inside the backend)",
              r->be->name, r->be->ops->device(r->be->state), c.points,
              c.calls, c.seconds);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit", "peak RSS %.1f MiB",
                  (double)ru.ru_maxrss / 1024.0);
}

typedef struct fit_args {
    const char *config;
    cli_overrides ov;
    char **files;
    int nfiles;
    const char *targetid;
} fit_args;

static int parse(int argc, char **argv, fit_args *a)
{
    static const struct option opts[] = {
        {"config", 1, 0, 'c'},      {"templates", 1, 0, 't'},
        {"output-dir", 1, 0, 'o'},  {"backend", 1, 0, 'b'},
        {"instrument", 1, 0, 'i'},  {"threads", 1, 0, 'j'},
        {"minsn", 1, 0, 1},         {"targetid", 1, 0, 2},
        {"batch-size", 1, 0, 3},    {"log-level", 1, 0, 4},
        {"skip-existing", 0, 0, 5}, {"overwrite", 0, 0, 6},
        {"no-models", 0, 0, 7},     {"set", 1, 0, 8},
        {"files-from", 1, 0, 9},    {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c, bad = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:t:o:b:i:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': a->config = optarg; break;
        case 't': bad |= cli_override(&a->ov, "templates", "path", optarg); break;
        case 'o': bad |= cli_override(&a->ov, "output", "dir", optarg); break;
        case 'b': bad |= cli_override(&a->ov, "backend", "name", optarg); break;
        case 'i': bad |= cli_override(&a->ov, "instrument", "name", optarg); break;
        case 'j': bad |= cli_override(&a->ov, "run", "threads", optarg); break;
        case 1: bad |= cli_override(&a->ov, "fit", "minsn", optarg); break;
        case 2: a->targetid = optarg; break;
        case 3: bad |= cli_override(&a->ov, "run", "batch_size", optarg); break;
        case 4: {
            int l = cli_log_level(optarg);
            char v[4];
            snprintf(v, sizeof v, "%d", l);
            if (l < 0) {
                fprintf(stderr, "rvfit: error: --log-level %s: use error, "
                                "warn, info or debug\n", optarg);
                return 2;
            }
            bad |= cli_override(&a->ov, "run", "log_level", v);
            break;
        }
        case 5: bad |= cli_override(&a->ov, "output", "skip_existing", "1"); break;
        case 6: bad |= cli_override(&a->ov, "output", "overwrite", "1"); break;
        case 7: bad |= cli_override(&a->ov, "output", "models", "0"); break;
        case 8:
            if (cli_override_set(&a->ov, optarg)) {
                fprintf(stderr, "rvfit: error: --set %s: expected "
                                "SECTION.KEY=VALUE\n", optarg);
                return 2;
            }
            break;
        case 9: if (read_list(optarg, &a->files, &a->nfiles)) return 2; break;
        case 'h': help(); exit(0);
        default: help(); return 2;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (argv[i][0] == '@') {
            if (read_list(argv[i] + 1, &a->files, &a->nfiles))
                return 2;
            continue;
        }
        char **g = realloc(a->files, (size_t)(a->nfiles + 1) * sizeof *g);
        if (!g)
            return 2;
        a->files = g;
        a->files[a->nfiles++] = strdup(argv[i]);
    }
    if (bad) {
        fprintf(stderr, "rvfit: error: too many options\n");
        return 2;
    }
    return 0;
}

int cli_open_env(fit_env *e, rvfit_err *err)
{
    rvfit_config *c = &e->cfg;
    if (!c->templates[0])
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "no template library: give --templates DIR "
                             "or [templates] path (build one with `rvfit "
                             "templates`)");
    struct stat sb;
    if (stat(c->output_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return rvfit_err_set(err, RVFIT_ERR_IO,
                             "output directory %s does not exist",
                             c->output_dir);
    int rc = rvfit_library_load(&e->lib, c->templates, err);
    if (rc)
        return rc;
    e->have_lib = 1;
    if ((rc = rvfit_library_set_cubic(&e->lib, c->cubic, err)) ||
        (c->log_flux && (rc = rvfit_library_set_log_flux(&e->lib, err))))
        return rc;
    rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit",
              "templates %s: %d parameters, %zu models, %d arms; "
              "interpolation in %s, cubic on: %s", c->templates,
              e->lib.nparam, e->lib.nmodel, e->lib.narm,
              c->log_flux ? "ln flux" : "flux",
              c->cubic[0] ? c->cubic : "none");
    if ((rc = rvfit_instrument_load(c, c->instrument, &e->inst, err)))
        return rc;
    e->have_inst = 1;
    if ((rc = rvfit_backend_open(c, &e->host, &e->be, err)))
        return rc;
    e->have_be = 1;
    rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit",
              "backend %s %s on %s (%s)", e->be.name,
              e->be.ph.desc->version, e->be.ops->device(e->be.state),
              e->be.ph.path);
    rc = e->be.ops->load_library(e->be.state, &e->lib, err);
    if (rc)
        rvfit_err_prefix(err, "backend '%s': load_library", e->be.name);
    return rc;
}

void cli_close_env(fit_env *e)
{
    if (e->have_be)
        rvfit_backend_close(&e->be);
    if (e->have_inst)
        rvfit_plugin_unload(&e->inst);
    if (e->have_lib)
        rvfit_library_free(&e->lib);
    rvfit_config_free(&e->cfg);
}

int cli_fit_files(fit_env *e, char **files, int nfiles, const char *cmdline,
                  const int64_t *ids, size_t nids, cli_fit_summary *sum)
{
    rvfit_err err;
    rvfit_err_clear(&err);
    int rc = cli_open_env(e, &err);
    rvfit_run run = {.cfg = &e->cfg, .host = &e->host, .be = &e->be,
                     .lib = &e->lib, .lib_path = e->cfg.templates,
                     .inst = &e->inst, .cmdline = cmdline, .targetid = ids,
                     .ntargetid = nids, .progress = cli_progress,
                     .progress_ctx = &e->lg};
    if (!rc)
        rc = rvfit_fit_opts_from_config(&e->cfg, &run.fo, &err);
    if (rc) {
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit", "%s", err.msg);
        cli_close_env(e);
        return -1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int failed = 0;
    for (int i = 0; i < nfiles; i++) {
        rvfit_err_clear(&err);
        if (rvfit_run_file(&run, files[i], &err) != RVFIT_OK) {
            rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit", "%s", err.msg);
            failed++;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) +
                  1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    print_profile(&e->host, &run, wall);
    if (failed)
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit",
                  "%d of %d input files failed (no output written for "
                  "them)", failed, nfiles);
    if (sum) {
        rvfit_counters c;
        e->be.ops->counters(e->be.state, &c);
        sum->wall = wall;
        sum->points = c.points;
        sum->spectra = run.nspectra;
        snprintf(sum->device, sizeof sum->device, "%s",
                 e->be.ops->device(e->be.state));
    }
    cli_close_env(e);
    return failed;
}

int cmd_fit(int argc, char **argv)
{
    fit_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    if (a.nfiles == 0) {
        fprintf(stderr, "rvfit: error: no input files (see rvfit fit "
                        "--help)\n");
        return 2;
    }
    static fit_env e; /* large; one per process */
    memset(&e, 0, sizeof e);
    if (cli_config(&e.cfg, a.config, &a.ov))
        return 2;
    cli_host_init(&e.host, &e.lg, (int)e.cfg.log_level, cli_threads(&e.cfg));
    int64_t *ids = NULL;
    size_t nids = 0;
    char cmdline[8192];
    cli_cmdline(argc, argv, cmdline, sizeof cmdline);
    if (a.targetid && cli_parse_targetids(a.targetid, &ids, &nids))
        return 2;
    int failed = cli_fit_files(&e, a.files, a.nfiles, cmdline, ids, nids,
                               NULL);
    for (int i = 0; i < a.nfiles; i++)
        free(a.files[i]);
    free(a.files);
    free(ids);
    return failed ? 1 : 0;
}
