/* cmd_fit.c — `rvfit fit`: fit input files and write rvtab/rvmod outputs. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../cli.h"
#include "rvfit/run.h"
#include "rvfit/library_io.h"
#include "rvfit/plot.h"

static void help(void)
{
    printf(
        "usage: rvfit fit [options] FILE... (or @LIST: a file of file names,\n"
        "       one a line; a line @LIST2 includes another list)\n"
        "  -c, --config FILE      INI configuration (every key has a default)\n"
        "  -t, --templates DIR    template library directory\n"
        "  -o, --output-dir DIR   where rvtab_*.fits / rvmod_*.fits go\n"
        "  -b, --backend NAME     backend plugin or list 'cuda,opencl,cpu'\n"
        "  -i, --instrument NAME  instrument plugin (default desi)\n"
        "  -j, --threads N        worker threads (0 = all cores; under mpirun\n"
        "                         each rank's share of its node's cores)\n"
        "      --minsn X          skip spectra whose best arm S/N < X\n"
        "      --targetid LIST    only these TARGETIDs (comma list or @file)\n"
        "      --batch-size N     spectra fitted together\n"
        "      --epochs MODE      single (each spectrum alone, the default) or\n"
        "                         joint: all spectra of an object, from any\n"
        "                         files, fitted together (one velocity per\n"
        "                         exposure); one rvtab_joint.fits output\n"
        "      --log-level L      error, warn, info or debug\n"
        "      --skip-existing    skip inputs whose rvtab exists\n"
        "      --overwrite        replace existing outputs\n"
        "      --no-models        do not write rvmod files\n"
        "      --plot-dir DIR     one PNG figure per fitted spectrum in DIR\n"
        "      --plot-targetid LIST  draw only these TARGETIDs (comma list\n"
        "                         or @file; default: every fitted spectrum)\n"
        "      --set S.K=V        any config key, e.g. backend.opencl.device=1\n"
        "      --files-from FILE  read input file names from FILE\n"
        "      --status FILE      the job's status file: a line per input,\n"
        "                         pending, running, done, failed, skipped or\n"
        "                         interrupted, replaced whole at every change\n"
        "\n"
        "Many processes (Open MPI), one job:\n"
        "  mpirun -n 8 rvfit fit -c survey.ini --status job.status coadd-*.fits\n"
        "  rank 0 hands out the files (large ones cut into parts) and writes\n"
        "  the status file; every rank fits with its own backend. Threads per\n"
        "  rank: its share of its node's cores (mpirun -n 4 on a 16-core node:\n"
        "  4 each) unless -j or [run] threads says; one rank per GPU with\n"
        "  [backend.cuda] devices = local. After a crash or kill, rerun the\n"
        "  same command with --skip-existing (docs/scale.md).\n");
}

/* The lists being read, innermost first: a list that includes itself,
 * directly or through others, is an error, not an endless read. */
typedef struct list_chain {
    const struct list_chain *up;
    dev_t dev;
    ino_t ino;
    const char *path;
} list_chain;

static void chain_text(const list_chain *c, char *buf, size_t n)
{
    if (!c) {
        buf[0] = '\0';
        return;
    }
    chain_text(c->up, buf, n);
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, "%s%s", l ? " -> " : "", c->path);
}

static int read_list_in(const char *path, const list_chain *up, char ***files,
                        int *n)
{
    FILE *f = fopen(path, "r");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        fprintf(stderr, "rvfit: error: file list %s%s%s: %s\n", path,
                up ? ", named in " : "", up ? up->path : "", strerror(errno));
        if (f)
            fclose(f);
        return 1;
    }
    for (const list_chain *c = up; c; c = c->up)
        if (c->dev == sb.st_dev && c->ino == sb.st_ino) {
            char chain[4096];
            chain_text(up, chain, sizeof chain);
            fprintf(stderr, "rvfit: error: file list %s includes itself "
                            "(%s -> @%s): a list cannot be read inside "
                            "itself\n", c->path, chain, path);
            fclose(f);
            return 1;
        }
    list_chain me = {up, sb.st_dev, sb.st_ino, path};
    char line[4096];
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        if (*p == '@') { /* a list of lists */
            rc = read_list_in(p + 1, &me, files, n);
            continue;
        }
        char **g = realloc(*files, (size_t)(*n + 1) * sizeof *g);
        if (g)
            *files = g;
        if (!g || !(g[*n] = strdup(p)))
            rc = 1;
        else
            (*n)++;
    }
    fclose(f);
    return rc;
}

/* Append names from a list file (one per line, # comments, @LIST lines
 * include another list). */
static int read_list(const char *path, char ***files, int *n)
{
    return read_list_in(path, NULL, files, n);
}

/* A comma/blank list of TARGETIDs, or @file holding one; at least one.
 * Errors go to stderr; on failure *ids is NULL. */
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
            free(*ids);
            *ids = NULL;
            return 1;
        }
        int64_t *g = realloc(*ids, (*n + 1) * sizeof *g);
        if (!g) {
            free(text);
            free(*ids);
            *ids = NULL;
            return 1;
        }
        *ids = g;
        (*ids)[(*n)++] = (int64_t)v;
    }
    free(text);
    /* an empty list would otherwise mean "no selection": every star */
    if (*n == 0) {
        if (spec[0] == '@')
            fprintf(stderr, "rvfit: error: --targetid %s: the file lists no "
                            "TARGETID\n", spec);
        else
            fprintf(stderr, "rvfit: error: --targetid '%s': no TARGETID "
                            "given\n", spec);
        return 1;
    }
    return 0;
}

typedef struct fit_args {
    const char *config;
    cli_overrides ov;
    char **files;
    int nfiles;
    const char *targetid;
    const char *plot_targetid;
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
        {"plot-dir", 1, 0, 10},     {"plot-targetid", 1, 0, 11},
        {"status", 1, 0, 12},       {"epochs", 1, 0, 13},
        {0, 0, 0, 0}};
    int c, bad = 0;
    optind = 1;
    int li = -1;
    while ((c = getopt_long(argc, argv, "c:t:o:b:i:j:h", opts, &li)) != -1) {
        cli_opt_seen(&a->ov, opts, &li, c);
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
        case 4:
            if (cli_override_log_level(&a->ov, optarg))
                return 2;
            break;
        case 5: bad |= cli_override(&a->ov, "output", "skip_existing", "1"); break;
        case 6: bad |= cli_override(&a->ov, "output", "overwrite", "1"); break;
        case 7: bad |= cli_override(&a->ov, "output", "models", "0"); break;
        case 8: {
            int r = cli_override_set(&a->ov, optarg);
            if (r == -1)
                fprintf(stderr, "rvfit: error: --set %s: expected "
                                "SECTION.KEY=VALUE\n", optarg);
            if (r)
                return 2;
            break;
        }
        case 9: if (read_list(optarg, &a->files, &a->nfiles)) return 2; break;
        case 10: bad |= cli_override(&a->ov, "output", "plot_dir", optarg); break;
        case 11: a->plot_targetid = optarg; break;
        case 12: bad |= cli_override(&a->ov, "output", "status", optarg); break;
        case 13: bad |= cli_override(&a->ov, "fit", "epochs", optarg); break;
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
    if (bad) /* cli_override said why */
        return 2;
    return 0;
}

static void free_files(fit_args *a)
{
    for (int i = 0; i < a->nfiles; i++)
        free(a->files[i]);
    free(a->files);
    a->files = NULL, a->nfiles = 0;
}

/* --plot-targetid into e; figures need a plot directory and Cairo.
 * Returns 0 or 1 (message printed). */
static int plot_args(const fit_args *a, fit_env *e)
{
    if (a->plot_targetid && cli_parse_targetids(a->plot_targetid,
                                                &e->plot_ids,
                                                &e->nplot_ids))
        return 1;
    if (e->cfg.plot_dir[0] && !rvfit_plot_available()) {
        fprintf(stderr, "rvfit: error: rvfit was built without Cairo: "
                        "--plot-dir unavailable (install libcairo2-dev "
                        "and rebuild)\n");
        return 1;
    }
    if (a->plot_targetid && !e->cfg.plot_dir[0]) {
        fprintf(stderr, "rvfit: error: --plot-targetid needs --plot-dir "
                        "(or [output] plot_dir)\n");
        return 1;
    }
    return 0;
}

static int fit_main(int argc, char **argv, struct cli_mpi *mpi,
                    cli_signals *sig)
{
    fit_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc) {
        free_files(&a);
        return rc;
    }
    if (a.nfiles == 0) {
        fprintf(stderr, "rvfit: error: no input files (see rvfit fit "
                        "--help)\n");
        rc = 2;
    }
    fit_env *e = rc ? NULL : calloc(1, sizeof *e); /* large */
    if (!e || cli_config(&e->cfg, a.config, &a.ov)) {
        free_files(&a);
        free(e);
        return rc ? rc : 2;
    }
    e->mpi = mpi;
    e->cancel = &sig->caught;
    e->sig = sig;
    cli_host_init(&e->host, &e->lg, (int)e->cfg.log_level,
                  cli_threads(&e->cfg));
    cli_mpi_host(mpi, &e->host, &e->lg);
    cli_threads_rank(&e->cfg, &e->host);
    int64_t *ids = NULL;
    size_t nids = 0;
    char cmdline[8192];
    cli_cmdline(argc, argv, cmdline, sizeof cmdline);
    int failed = 0;
    if ((a.targetid && cli_parse_targetids(a.targetid, &ids, &nids)) ||
        plot_args(&a, e)) {
        rvfit_config_free(&e->cfg);
        rc = 2;
    } else {
        failed = cli_fit_files(e, a.files, a.nfiles, cmdline, ids, nids,
                               NULL);
    }
    free_files(&a);
    free(ids);
    free(e->plot_ids);
    free(e);
    if (!rc && sig->caught) /* the shell's convention for a death by signal */
        return 128 + sig->caught;
    return rc ? rc : failed == -2 ? 2 : failed ? 1 : 0;
}

int cmd_fit(int argc, char **argv)
{
    struct cli_mpi *mpi = NULL;
    cli_signals sig;
    if (cli_signals_start(&sig))
        fprintf(stderr, "rvfit: warning: cannot take SIGINT/SIGTERM: an "
                        "interrupted run leaves temporaries behind\n");
    int rc = cli_mpi_init(&argc, &argv, &mpi);
    if (!rc) {
        rc = cli_mpi_exit_code(mpi, fit_main(argc, argv, mpi, &sig));
        cli_mpi_finalize(mpi);
    }
    cli_signals_stop(&sig);
    return rc;
}
