/* cmd_compare.c — `rvfit compare`: fit the same files with several
 * backends and compare their results column by column against the first
 * (the reference, normally cpu) with stated tolerances. */
#include <fitsio.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../cli.h"
#include "rvfit/run.h"

#define MAX_BACKENDS 8

/* Tolerance per column (absolute); RVS_WARN must be identical. */
static const struct { const char *col; double tol; } cols[] = {
    {"VRAD", 0.01},    {"VRAD_ERR", 0.01}, {"VSINI", 0.1},
    {"TEFF", 1.0},     {"LOGG", 0.001},    {"FEH", 0.001},
    {"ALPHAFE", 0.001}, {"RVS_WARN", 0.0},
};

static void help(void)
{
    printf("usage: rvfit compare --backends A,B[,C] [fit options] FILE...\n"
           "Fits FILE... with each backend (outputs in OUTDIR/compare-NAME)\n"
           "and compares the results with the first backend's:\n"
           "  VRAD, VRAD_ERR 0.01 km/s; VSINI 0.1 km/s; TEFF 1 K; LOGG, FEH,\n"
           "  ALPHAFE 0.001; RVS_WARN identical.  Exits 1 beyond tolerance.\n"
           "Options: -c CONFIG, -t/--templates DIR, -o/--output-dir DIR,\n"
           "  -j/--threads N, --targetid LIST, --set S.K=V, --log-level L\n");
}

static double *read_col(const char *path, const char *name, long *n)
{
    fitsfile *f;
    int st = 0, cn, any;
    double *v = NULL, nan = NAN;
    if (fits_open_file(&f, path, READONLY, &st))
        return NULL;
    fits_movnam_hdu(f, BINARY_TBL, "RVTAB", 0, &st);
    fits_get_colnum(f, CASEINSEN, (char *)name, &cn, &st);
    fits_get_num_rows(f, n, &st);
    if (!st) {
        v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
        fits_read_col(f, TDOUBLE, cn, 1, 1, *n, &nan, v, &any, &st);
    }
    int s2 = 0;
    fits_close_file(f, &s2);
    if (st) {
        free(v);
        return NULL;
    }
    return v;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Compare one rvtab of backend b with the reference; returns failures. */
static int compare_tab(const char *ref, const char *other, const char *bname)
{
    int bad = 0;
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
        long n1 = 0, n2 = 0;
        double *a = read_col(ref, cols[c].col, &n1);
        double *b = read_col(other, cols[c].col, &n2);
        if (!a || !b || n1 != n2) {
            if (a || b)
                printf("  %-9s cannot compare (%ld vs %ld rows)\n",
                       cols[c].col, n1, n2);
            free(a), free(b);
            bad += (a != NULL) != (b != NULL) || n1 != n2;
            continue;
        }
        double *d = malloc((size_t)(n1 ? n1 : 1) * sizeof *d), mx = 0;
        long m = 0, beyond = 0;
        for (long i = 0; i < n1; i++) {
            if (isnan(a[i]) && isnan(b[i]))
                continue;
            double x = fabs(a[i] - b[i]);
            if (isnan(x))
                x = INFINITY;
            d[m++] = x;
            mx = x > mx ? x : mx;
            beyond += x > cols[c].tol;
        }
        qsort(d, (size_t)m, sizeof *d, cmp_d);
        double med = m ? d[m / 2] : 0;
        printf("  %-9s %-8s max |diff| %-11.3g median %-11.3g tol %-7g %s"
               "\n", cols[c].col, bname, mx, med, cols[c].tol,
               beyond ? "FAIL" : "ok");
        if (beyond)
            printf("            %ld of %ld rows beyond tolerance\n", beyond,
                   m);
        bad += beyond > 0;
        free(a), free(b), free(d);
    }
    return bad;
}

typedef struct cmp_args {
    const char *config, *backends, *targetid, *outdir;
    cli_overrides ov;
    char **files;
    int nfiles;
} cmp_args;

static int parse(int argc, char **argv, cmp_args *a)
{
    static const struct option opts[] = {
        {"config", 1, 0, 'c'},   {"backends", 1, 0, 'B'},
        {"templates", 1, 0, 't'}, {"output-dir", 1, 0, 'o'},
        {"threads", 1, 0, 'j'},  {"targetid", 1, 0, 1},
        {"set", 1, 0, 2},        {"log-level", 1, 0, 3},
        {"help", 0, 0, 'h'},     {0, 0, 0, 0}};
    int c;
    optind = 1;
    int li = -1;
    while ((c = getopt_long(argc, argv, "c:B:t:o:j:h", opts, &li)) != -1) {
        cli_opt_seen(&a->ov, opts, &li, c);
        switch (c) {
        case 'c': a->config = optarg; break;
        case 'B': a->backends = optarg; break;
        case 't': cli_override(&a->ov, "templates", "path", optarg); break;
        case 'o': a->outdir = optarg; break;
        case 'j': cli_override(&a->ov, "run", "threads", optarg); break;
        case 1: a->targetid = optarg; break;
        case 2:
            if (cli_override_set(&a->ov, optarg))
                return 2;
            break;
        case 3: {
            char v[4];
            snprintf(v, sizeof v, "%d", cli_log_level(optarg));
            cli_override(&a->ov, "run", "log_level", v);
            break;
        }
        case 'h': help(); exit(0);
        default: help(); return 2;
        }
    }
    a->files = argv + optind;
    a->nfiles = argc - optind;
    if (!a->backends || a->nfiles < 1) {
        help();
        return 2;
    }
    return 0;
}

static int compare_main(int argc, char **argv, cli_signals *sig)
{
    cmp_args a;
    memset(&a, 0, sizeof a);
    if (parse(argc, argv, &a))
        return 2;
    char list[512], *names[MAX_BACKENDS];
    int nb = 0;
    snprintf(list, sizeof list, "%s", a.backends);
    for (char *s = NULL, *t = strtok_r(list, ", ", &s); t && nb < MAX_BACKENDS;
         t = strtok_r(NULL, ", ", &s))
        names[nb++] = t;
    if (nb < 2) {
        fprintf(stderr, "rvfit: error: --backends needs at least two names\n");
        return 2;
    }
    int64_t *ids = NULL;
    size_t nids = 0;
    if (a.targetid && cli_parse_targetids(a.targetid, &ids, &nids))
        return 2;
    char cmdline[8192], dirs[MAX_BACKENDS][4096];
    cli_cmdline(argc, argv, cmdline, sizeof cmdline);
    cli_fit_summary sum[MAX_BACKENDS];
    memset(sum, 0, sizeof sum);
    fit_env *e = calloc(1, sizeof *e); /* large */
    if (!e) {
        free(ids);
        return 2;
    }
    for (int b = 0; b < nb; b++) {
        snprintf(dirs[b], sizeof dirs[b], "%s/compare-%s",
                 a.outdir ? a.outdir : ".", names[b]);
        mkdir(dirs[b], 0777);
        memset(e, 0, sizeof *e);
        e->cancel = &sig->caught;
        e->sig = sig;
        cli_overrides ov = a.ov;
        snprintf(ov.cur, sizeof ov.cur, "--backends");
        cli_override(&ov, "backend", "name", names[b]);
        cli_override(&ov, "output", "dir", dirs[b]);
        cli_override(&ov, "output", "overwrite", "1");
        /* figures of each backend would overwrite each other's */
        cli_override(&ov, "output", "plot_dir", "");
        if (cli_config(&e->cfg, a.config, &ov)) {
            free(ids);
            free(e);
            return 2;
        }
        cli_host_init(&e->host, &e->lg, (int)e->cfg.log_level,
                      cli_threads(&e->cfg));
        if (cli_fit_files(e, a.files, a.nfiles, cmdline, ids, nids,
                          &sum[b]) != 0) {
            fprintf(stderr, "rvfit: error: backend %s failed; no "
                            "comparison\n", names[b]);
            free(ids);
            free(e);
            return 1;
        }
    }
    printf("\nbackend   spectra  seconds  spectra/s      points  device\n");
    for (int b = 0; b < nb; b++)
        printf("%-8s %8zu %8.2f %10.2f %11llu  %s\n", names[b],
               sum[b].spectra, sum[b].wall,
               sum[b].wall > 0 ? (double)sum[b].spectra / sum[b].wall : 0,
               (unsigned long long)sum[b].points, sum[b].device);
    int bad = 0;
    for (int i = 0; i < a.nfiles; i++) {
        char ref[8800], other[8800], mod[8800];
        rvfit_output_names(dirs[0], a.files[i], ref, mod, sizeof ref);
        printf("\n%s (reference %s):\n", a.files[i], names[0]);
        for (int b = 1; b < nb; b++) {
            rvfit_output_names(dirs[b], a.files[i], other, mod, sizeof other);
            bad += compare_tab(ref, other, names[b]);
        }
    }
    free(ids);
    free(e);
    printf("\n%s\n", bad ? "DIFFERENCES BEYOND TOLERANCE" : "all within tolerance");
    return bad ? 1 : 0;
}

int cmd_compare(int argc, char **argv)
{
    cli_signals sig;
    if (cli_signals_start(&sig))
        fprintf(stderr, "rvfit: warning: cannot take SIGINT/SIGTERM: an "
                        "interrupted run leaves temporaries behind\n");
    int rc = compare_main(argc, argv, &sig);
    if (sig.caught)
        rc = 128 + sig.caught;
    cli_signals_stop(&sig);
    return rc;
}
