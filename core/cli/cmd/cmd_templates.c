/* cmd_templates.c — `rvfit templates`: build a template library for an
 * instrument from a grid in PHOENIX layout, or import rvspecfit's
 * template files (--from-rvspecfit). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../cli.h"
#include "rvfit/library_io.h"
#include "rvfit/loader.h"
#include "rvfit/rvspecfit.h"
#include "rvfit/templates.h"

static void help(void)
{
    printf("usage: rvfit templates --grid DIR --out DIR [options]\n"
           "       rvfit templates --from-rvspecfit DIR --out DIR "
           "[options]\n"
           "  -g, --grid DIR         PHOENIX-layout grid (the HiResFITS "
           "directory)\n"
           "      --from-rvspecfit DIR  rvspecfit's templates: "
           "DIR/specs_{setup}.h5, one\n"
           "                         setup per arm%s\n"
           "      --setups LIST      with --from-rvspecfit: arm=setup,... "
           "(default\n"
           "                         <instrument>_<arm>, e.g. "
           "B=desi_b,R=desi_r,Z=desi_z)\n"
           "  -o, --out DIR          library directory to write\n"
           "  -i, --instrument NAME  instrument whose arms to build "
           "(default desi)\n"
           "      --sigma0 A         Gaussian pre-smoothing, Angstrom "
           "(default 0.4), of\n"
           "                         the arms the instrument does not "
           "smooth in velocity;\n"
           "                         with --from-rvspecfit: the sigma the "
           "templates were\n"
           "                         smoothed with (default: read from "
           "their cmdline)\n"
           "      --vmax KMS         velocity padding of each arm (default "
           "1000)\n"
           "      --interpolator K   multilinear, cubic, simplex or pca "
           "([templates]\n"
           "                         interpolator; --from-rvspecfit "
           "default: simplex\n"
           "                         when the grid has holes)\n"
           "  -j, --threads N        worker threads (0 = all cores)\n"
           "  -c, --config FILE      configuration ([instrument.NAME] "
           "options; [templates] interpolator, cubic, log_flux, "
           "pca_components, pca_rms: the interpolator recorded in the "
           "library; fill_holes)\n",
           rvfit_rvspecfit_available()
               ? ""
               : " (unavailable: rvfit was built without HDF5)");
}

/* How each arm's templates are smoothed, for the log: "B, R, Z 0.4 A" or
 * "BOSS 45 km/s": an instrument's sigma_kms replaces --sigma0 for its arm
 * (rvfit_template_arm).  Returns the number of arms smoothed in velocity. */
static int smoothing(const rvfit_template_arm *arms, int narm, double sigma0,
                     char *buf, size_t n)
{
    size_t len = 0;
    int nkms = 0;
    buf[0] = '\0';
    for (int a = 0; a < narm && len < n; a++) {
        double kms = arms[a].sigma_kms;
        nkms += kms > 0;
        int same_next = a + 1 < narm &&
                        (arms[a + 1].sigma_kms > 0) == (kms > 0) &&
                        (kms <= 0 || arms[a + 1].sigma_kms == kms);
        int k = same_next
                    ? snprintf(buf + len, n - len, "%s, ", arms[a].name)
                : kms > 0
                    ? snprintf(buf + len, n - len, "%s %.3g km/s%s",
                               arms[a].name, kms, a + 1 < narm ? "; " : "")
                    : snprintf(buf + len, n - len, "%s %.3g A%s",
                               arms[a].name, sigma0, a + 1 < narm ? "; " : "");
        len += k > 0 ? (size_t)k : 0;
    }
    return nkms;
}

/* --setups "B=desi_b,R=desi_r": each arm's setup into setup[] (pointers
 * into buf, a copy of spec). */
static int parse_setups(char *buf, const rvfit_template_arm *arms, int narm,
                        const char **setup)
{
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        int a = 0;
        if (eq)
            *eq = '\0';
        while (eq && a < narm && strcasecmp(arms[a].name, tok))
            a++;
        if (!eq || !eq[1] || a == narm) {
            fprintf(stderr, "rvfit: error: --setups: '%s' is not ARM=SETUP "
                            "with an arm of the instrument\n", tok);
            return 1;
        }
        setup[a] = eq + 1;
    }
    return 0;
}

/* --from-rvspecfit: import, log what was read and chosen.  Returns a
 * status, or -1 after printing a usage error. */
static int templates_rvs(const char *dir, const char *setups,
                         const rvfit_template_arm *arms, int narm,
                         const char *instrument, double sigma0,
                         const rvfit_templates_opts *to, int kind_given,
                         rvfit_host *host, const char *out, rvfit_err *err)
{
    rvfit_rvspecfit_opts ro;
    rvfit_rvspecfit_info info;
    memset(&ro, 0, sizeof ro);
    ro.build = *to;
    ro.sigma0 = sigma0;
    ro.info = &info;
    /* multilinear, the configuration's default, lets the grid decide */
    if (!kind_given && !strcasecmp(to->interpolator, "multilinear"))
        ro.build.interpolator = NULL;
    char *buf = setups ? strdup(setups) : NULL;
    if (setups && (!buf || parse_setups(buf, arms, narm, ro.setup))) {
        free(buf);
        return -1;
    }
    rvfit_log(host, RVFIT_LOG_INFO, "rvfit", "importing rvspecfit templates"
              " from %s for the %d arms of %s", dir, narm, instrument);
    int rc = rvfit_templates_from_rvspecfit(dir, narm, arms, instrument, &ro,
                                            out, err);
    free(buf);
    if (rc)
        return rc;
    for (int a = 0; a < narm; a++)
        rvfit_log(host, RVFIT_LOG_INFO, "rvfit", "%s", info.arm[a]);
    rvfit_log(host, RVFIT_LOG_INFO, "rvfit", "%zu models on a lattice of "
              "%zu nodes (%zu holes): interpolator %s; source: %s",
              info.nspec, info.nmodel, info.nmodel - info.nspec, info.kind,
              info.source);
    return 0;
}

int cmd_templates(int argc, char **argv)
{
    static const struct option opts[] = {
        {"grid", 1, 0, 'g'},   {"out", 1, 0, 'o'},    {"instrument", 1, 0, 'i'},
        {"sigma0", 1, 0, 1},   {"vmax", 1, 0, 2},     {"threads", 1, 0, 'j'},
        {"config", 1, 0, 'c'}, {"help", 0, 0, 'h'},
        {"from-rvspecfit", 1, 0, 3}, {"setups", 1, 0, 4},
        {"interpolator", 1, 0, 5},   {0, 0, 0, 0}};
    const char *grid = NULL, *out = NULL, *config = NULL, *rvs = NULL;
    const char *setups = NULL;
    cli_overrides ov;
    memset(&ov, 0, sizeof ov);
    rvfit_templates_opts to = {.sigma0 = 0.4, .vmax = 1000.0, .nthreads = 1};
    int c, sigma0_given = 0, vmax_given = 0, kind_given = 0;
    optind = 1;
    int li = -1;
    while ((c = getopt_long(argc, argv, "g:o:i:j:c:h", opts, &li)) != -1) {
        cli_opt_seen(&ov, opts, &li, c);
        switch (c) {
        case 'g': grid = optarg; break;
        case 'o': out = optarg; break;
        case 'i': cli_override(&ov, "instrument", "name", optarg); break;
        case 'j': cli_override(&ov, "run", "threads", optarg); break;
        case 'c': config = optarg; break;
        case 1: to.sigma0 = atof(optarg), sigma0_given = 1; break;
        case 2: to.vmax = atof(optarg), vmax_given = 1; break;
        case 3: rvs = optarg; break;
        case 4: setups = optarg; break;
        case 5:
            cli_override(&ov, "templates", "interpolator", optarg);
            kind_given = 1;
            break;
        case 'h': help(); return 0;
        default: help(); return 2;
        }
    }
    const char *bad =
        !out || !grid == !rvs
            ? "templates needs --out and one of --grid or --from-rvspecfit"
        : setups && !rvs ? "--setups goes with --from-rvspecfit"
        : rvs && vmax_given
            ? "--vmax does not apply to --from-rvspecfit (rvspecfit pads "
              "its templates by 1000 km/s)"
        : !(to.sigma0 >= 0) || !(to.vmax >= 0) ||
                (rvs && sigma0_given && !(to.sigma0 > 0))
            ? "--sigma0 and --vmax must be >= 0 (--sigma0 > 0 with "
              "--from-rvspecfit)"
            : NULL;
    if (bad) {
        fprintf(stderr, "rvfit: error: %s\n", bad);
        return 2;
    }
    rvfit_config cfg;
    if (cli_config(&cfg, config, &ov))
        return 2;
    cli_log lg;
    rvfit_host host;
    cli_host_init(&host, &lg, (int)cfg.log_level, cli_threads(&cfg));
    to.nthreads = host.nthreads;
    to.interpolator = cfg.interpolator;
    to.cubic = cfg.cubic;
    to.log_flux = (int)cfg.log_flux;
    to.pca_k = (int)cfg.pca_components;
    to.pca_rms = cfg.pca_rms;
    size_t nfilled = 0, nleft = 0;
    to.fill_holes = cfg.fill_holes;
    to.simplex_correction = cfg.simplex_correction;
    to.nfilled = &nfilled;
    to.nleft = &nleft;
    rvfit_err err;
    rvfit_err_clear(&err);
    rvfit_plugin_handle inst;
    int rc = rvfit_instrument_load(&cfg, cfg.instrument, &inst, &err);
    rvfit_template_arm arms[RVFIT_MAX_ARMS];
    int narm = 0;
    if (!rc) {
        rvfit_kv *kv = NULL;
        int nkv = 0;
        char section[96];
        snprintf(section, sizeof section, "instrument.%s", cfg.instrument);
        rvfit_config_section(&cfg, section, &kv, &nkv);
        rc = inst.instrument.template_arms(kv, nkv, &narm, arms, &err);
        free(kv);
        rvfit_plugin_unload(&inst);
    }
    if (!rc && rvs) {
        rc = templates_rvs(rvs, setups, arms, narm, cfg.instrument,
                           sigma0_given ? to.sigma0 : 0.0, &to, kind_given,
                           &host, out, &err);
        if (rc < 0) { /* a usage error, printed */
            rvfit_config_free(&cfg);
            return 2;
        }
    } else if (!rc) {
        char smooth[RVFIT_MAX_ARMS * 64];
        int nkms = smoothing(arms, narm, to.sigma0, smooth, sizeof smooth);
        if (sigma0_given && nkms == narm)
            rvfit_log(&host, RVFIT_LOG_WARN, "rvfit", "--sigma0 has no "
                      "effect: every arm of %s is smoothed in velocity "
                      "(sigma_kms)", cfg.instrument);
        rvfit_log(&host, RVFIT_LOG_INFO, "rvfit",
                  "building %d arms for %s from %s (smoothing %s; "
                  "padding %.0f km/s, %d threads; interpolator %s%s%s)",
                  narm, cfg.instrument, grid, smooth, to.vmax, to.nthreads,
                  cfg.interpolator, cfg.log_flux == 1 ? " in ln flux" : "",
                  cfg.cubic[0] ? ", cubic axes as given" : "");
        rc = rvfit_templates_build(grid, narm, arms, cfg.instrument, &to, out,
                                   &err);
    }
    if (!rc && rvfit_fill_parse(cfg.fill_holes) > 0)
        rvfit_log(&host, RVFIT_LOG_INFO, "rvfit", "fill_holes = %s: %zu "
                  "holes filled, %zu left (not surrounded by enough "
                  "models)", cfg.fill_holes, nfilled, nleft);
    if (rc)
        rvfit_log(&host, RVFIT_LOG_ERROR, "rvfit", "%s", err.msg);
    else
        rvfit_log(&host, RVFIT_LOG_INFO, "rvfit", "wrote %s/%s", out,
                  RVFIT_LIBRARY_FILE);
    rvfit_config_free(&cfg);
    return rc ? 1 : 0;
}
