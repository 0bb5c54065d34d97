/* config.c — INI configuration through inih, driven by one key table that
 * also documents the keys (rvfit_config_describe) and dumps them. */
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rvfit/config.h"

enum key_type { K_STR, K_LONG, K_DOUBLE, K_BOOL };

typedef struct key_desc {
    const char *section, *key;
    int type;
    size_t offset, size; /* size: buffer size for strings */
    double lo, hi;       /* numeric range */
    const char *def, *help;
} key_desc;

#define OFF(f) offsetof(rvfit_config, f)
#define SZ(f) sizeof(((rvfit_config *)0)->f)

static const key_desc keys[] = {
    {"run", "plugin_path", K_STR, OFF(plugin_path), SZ(plugin_path), 0, 0,
     "", "extra plugin directories, ':'-separated, searched first"},
    {"run", "threads", K_LONG, OFF(threads), 0, 0, 4096, "0",
     "worker threads; 0 = all cores (under mpirun: each rank its share of "
     "its node's cores)"},
    {"run", "log_level", K_LONG, OFF(log_level), 0, 0, 3, "2",
     "0 error, 1 warn, 2 info, 3 debug"},
    {"run", "batch_size", K_LONG, OFF(batch_size), 0, 1, 1000000, "512",
     "spectra fitted together in lockstep per batch, across input files "
     "(with readahead the first batch holds at most 64)"},
    {"run", "readahead", K_BOOL, OFF(readahead), 0, 0, 1, "1",
     "read and prepare the next batch, and write the last, while fitting"},
    {"run", "driver_threads", K_LONG, OFF(driver_threads), 0, 0, 4096, "1",
     "threads for the fit driver's per-spectrum work between backend "
     "calls (what a GPU waits for); 1 = the fit thread alone, 0 = as "
     "[run] threads.  More help only on cores the reader's threads "
     "leave idle (docs/benchmarks.md)"},
    {"run", "streams", K_LONG, OFF(streams), 0, 1, 4, "1",
     "fit streams: each a thread with its own instance of the backend on "
     "the same device, fitting other batches, so that one stream's host "
     "work overlaps another's device work (single fits with readahead; "
     "each instance holds the templates and a batch)"},
    {"instrument", "name", K_STR, OFF(instrument), SZ(instrument), 0, 0,
     "desi", "instrument plugin reading the input files"},
    {"backend", "name", K_STR, OFF(backend), SZ(backend), 0, 0, "cpu",
     "backend plugin, or a fallback list such as 'cuda, opencl, cpu'"},
    {"templates", "path", K_STR, OFF(templates), SZ(templates), 0, 0, "",
     "template library directory (from `rvfit templates`)"},
    {"templates", "interpolator", K_STR, OFF(interpolator),
     SZ(interpolator), 0, 0, "multilinear",
     "template interpolator `rvfit templates` builds the library for and "
     "records in it: multilinear, cubic, simplex (Delaunay triangulation "
     "of the models present) or pca (principal components, their "
     "coefficients interpolated on the grid)"},
    {"templates", "cubic", K_STR, OFF(cubic), SZ(cubic), 0, 0, "",
     "axes interpolated cubically, e.g. 'TEFF, FEH' (others linear): when "
     "building with interpolator = cubic ('' = every axis) or pca (its "
     "coefficients; '' = none); when fitting, "
     "if given, replaces the library's choice ('none' = all linear)"},
    {"templates", "log_flux", K_LONG, OFF(log_flux), 0, -1, 1, "-1",
     "interpolate templates in ln flux (1) or in flux (0); -1 = as the "
     "library records (when building: flux)"},
    {"templates", "host_stencils", K_BOOL, OFF(host_stencils), 0, 0, 1, "0",
     "compute interpolation stencils in the core and send them to the "
     "backend also for the regular-grid interpolators (the backends "
     "compute those themselves otherwise)"},
    {"templates", "pca_components", K_LONG, OFF(pca_components), 0, 0, 255,
     "0", "building with interpolator = pca: principal components per arm "
     "(the stored vectors are the mean and these); 0 = the fewest that "
     "reach pca_rms in every arm"},
    {"templates", "pca_rms", K_DOUBLE, OFF(pca_rms), 0, 1e-9, 1, "0.001",
     "building with interpolator = pca and pca_components = 0: the rms "
     "reconstruction error of the models (in the interpolation space, "
     "relative to the arm-mean flux of 1) every arm must reach"},
    {"templates", "fill_holes", K_STR, OFF(fill_holes), SZ(fill_holes), 0,
     0, "none",
     "building: fill the grid's holes that their models surround with a "
     "local least-squares quadratic of the neighbours (quadratic), so that "
     "interpolators span one node spacing there, or leave them (none); "
     "holes at the edge of the models (a missing corner) stay holes"},
    {"templates", "simplex_correction", K_STR, OFF(simplex_correction),
     SZ(simplex_correction), 0, 0, "none",
     "building with interpolator = simplex: subtract the barycentric "
     "interpolant's error on the local least-squares quadratic of the "
     "models within 2.5 node spacings (quadratic: exact for flux "
     "quadratic in the parameters; stencils of about 65 models with 3 free "
     "axes, 80 with 3 and a two-node one, instead of the simplex's 4 or 5 "
     "vertices: about 4 times its backend time), or not (none); at most 4 "
     "axes with several nodes"},
    {"fit", "npoly", K_LONG, OFF(npoly), 0, 0, 32, "0",
     "continuum terms per arm; 0: the basis's own number (7 for bspline, "
     "10 for gauss and cheb)"},
    {"fit", "basis", K_STR, OFF(basis), SZ(basis), 0, 0, "bspline",
     "continuum basis: bspline (clamped cubic B-splines on npoly - 3 equal "
     "intervals: at most four live at a pixel, so the cpu backend's normal "
     "equations are a band; 1.5x the spectra/s of gauss on desi-1k, robust "
     "scatter within 2.3 % of gauss's on the independent generator), gauss "
     "(1, x, x^2 and npoly - 3 Gaussians, rvspecfit's) or cheb (Chebyshev "
     "polynomials: 3-7 % more LOGG scatter); docs/benchmarks.md"},
    {"fit", "vmin", K_DOUBLE, OFF(vmin), 0, -5000, 5000, "-1000",
     "lowest radial velocity searched, km/s"},
    {"fit", "vmax", K_DOUBLE, OFF(vmax), 0, -5000, 5000, "1000",
     "highest radial velocity searched, km/s"},
    {"fit", "ccf_vstep", K_DOUBLE, OFF(ccf_vstep), 0, 0.5, 200, "60",
     "velocity step of the initial scan, km/s (it scans every other "
     "step, then refines; below the lines' FWHM: 60 suits R <= 5000; "
     "lower it for higher resolution)"},
    {"fit", "vsini_max", K_DOUBLE, OFF(vsini_max), 0, 0, 1000, "500",
     "largest vsini allowed, km/s"},
    {"fit", "fit_vsini", K_BOOL, OFF(fit_vsini), 0, 0, 1, "1",
     "fit vsini (1) or keep it at 0 (0)"},
    {"fit", "max_iter", K_LONG, OFF(max_iter), 0, 10, 100000, "400",
     "optimizer iterations per spectrum (Nelder-Mead for the simplex "
     "interpolator; the Newton method of the regular grids stops after at "
     "most 40 models)"},
    {"fit", "starts", K_LONG, OFF(starts), 0, 1, RVFIT_MAX_STARTS, "2",
     "optimiser starts per spectrum: the lowest nodes of the initial "
     "lattice, each optimised, the lowest result kept (1: one start; the "
     "second costs 19 % more points and about as much more time on "
     "desi-1k, and cuts fits in a wrong basin from 2.8 % to 0.5 % on the "
     "independent generator, docs/benchmarks.md; the simplex "
     "interpolator's Nelder-Mead starts once)"},
    {"fit", "scale_errors", K_BOOL, OFF(scale_errors), 0, 0, 1, "0",
     "multiply VRAD_ERR and the statistical part of the parameter errors "
     "by sqrt(CHISQ_RED) (docs/output-format.md)"},
    {"fit", "interp_errors", K_BOOL, OFF(interp_errors), 0, 0, 1, "1",
     "add the template-interpolation error, estimated from the library's "
     "own nodes, to the parameter errors (columns TEFF_ERR_INTERP, ...; "
     "docs/output-format.md)"},
    {"fit", "minsn", K_DOUBLE, OFF(minsn), 0, 0, 1e6, "0",
     "skip spectra whose best arm has median S/N below this"},
    {"fit", "epochs", K_STR, OFF(epochs), SZ(epochs), 0, 0, "single",
     "single: every spectrum fitted alone; joint: all spectra of one "
     "object (the instrument's object key: DESI TARGETID), from any rows "
     "and input files, fitted together with one Teff, logg, [Fe/H], "
     "[alpha/Fe] and vsini and one velocity per exposure, plus the "
     "constant-velocity fit and its chi^2 and p-value (also --epochs; "
     "outputs: docs/output-format.md)"},
    {"fit", "clip", K_DOUBLE, OFF(clip), 0, 0, 1000, "5",
     "reject pixels more than this many sigma ABOVE the best-fit model "
     "(unflagged cosmic rays, hot pixels, sky-line residuals) and their "
     "two neighbours, then re-optimise; sigma is the pixel's own, or the "
     "arm's robust residual scale where that is larger; below-model "
     "pixels are never rejected (they carry template mismatch and absorption "
     "the model misses).  0: keep every pixel.  Columns NCLIP_<arm> "
     "(docs/output-format.md)"},
    {"fit", "sb2", K_BOOL, OFF(sb2), 0, 0, 1, "0",
     "with epochs = joint: test every exposure for a second velocity (two "
     "copies of the fitted template, the second at another velocity with "
     "a share of the light): RVEPOCH SB2_DCHISQ, SB2_VRAD2, SB2_FRATIO and "
     "the warning bit SB2 (docs/output-format.md); costs a models call of "
     "61 velocities per exposure"},
    {"output", "dir", K_STR, OFF(output_dir), SZ(output_dir), 0, 0, ".",
     "directory for rvtab_*.fits and rvmod_*.fits"},
    {"output", "overwrite", K_BOOL, OFF(overwrite), 0, 0, 1, "0",
     "replace existing outputs"},
    {"output", "skip_existing", K_BOOL, OFF(skip_existing), 0, 0, 1, "0",
     "skip inputs whose rvtab output exists"},
    {"output", "models", K_BOOL, OFF(write_models), 0, 0, 1, "1",
     "write rvmod_*.fits with best-fit models"},
    {"output", "status", K_STR, OFF(status), SZ(status), 0, 0, "",
     "status file (also --status): one line per input, pending, running, "
     "done, failed, skipped or interrupted, replaced whole at every change "
     "(docs/scale.md)"},
    {"output", "plot_dir", K_STR, OFF(plot_dir), SZ(plot_dir), 0, 0, "",
     "directory for one PNG figure per fitted spectrum (docs/plots.md), "
     "\"\" = none; needs rvfit built with Cairo"},
    {"output", "joint_name", K_STR, OFF(joint_name), SZ(joint_name), 0, 0,
     "joint", "[fit] epochs = joint: the one output pair is "
     "rvtab_<joint_name>.fits and rvmod_<joint_name>.fits"},
    {"output", "chisq_v", K_BOOL, OFF(chisq_v), 0, 0, 1, "0",
     "write the final velocity scan of each spectrum (velocities and -2 ln "
     "L) into rvmod, HDU CHISQ_V, for `rvfit plot` and inspection "
     "(docs/output-format.md); needs models = 1"},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const key_desc *find_key(const char *section, const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].section, section) && !strcmp(keys[i].key, key))
            return &keys[i];
    return NULL;
}

static int section_known(const char *section)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].section, section))
            return 1;
    return 0;
}

static int is_plugin_section(const char *s)
{
    return (!strncmp(s, "backend.", 8) && s[8]) ||
           (!strncmp(s, "instrument.", 11) && s[11]);
}

static int parse_bool(const char *v, long *out)
{
    static const char *yes[] = {"1", "true", "yes", "on"};
    static const char *no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i])) { *out = 1; return 1; }
        if (!strcasecmp(v, no[i])) { *out = 0; return 1; }
    }
    return 0;
}

/* at: where the value came from, "FILE:LINE" or "option --X". */
static int set_value(rvfit_config *c, const key_desc *k, const char *v,
                     const char *at, rvfit_err *err)
{
    char *base = (char *)c + k->offset;
    char *end;
    errno = 0;
    switch (k->type) {
    case K_STR:
        if (strlen(v) >= k->size)
            return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                 "%s: [%s] %s: value longer than %zu "
                                 "characters", at, k->section,
                                 k->key, k->size - 1);
        memcpy(base, v, strlen(v) + 1);
        return RVFIT_OK;
    case K_BOOL: {
        long b;
        if (!parse_bool(v, &b))
            return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                 "%s: [%s] %s: '%s' is not a boolean "
                                 "(use 0/1, true/false)", at,
                                 k->section, k->key, v);
        *(long *)base = b;
        return RVFIT_OK;
    }
    case K_LONG: {
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end || x < k->lo || x > k->hi)
            return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                 "%s: [%s] %s: '%s' is not an integer in "
                                 "[%g, %g]", at, k->section,
                                 k->key, v, k->lo, k->hi);
        *(long *)base = x;
        return RVFIT_OK;
    }
    default: {
        double x = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(x) || x < k->lo ||
            x > k->hi)
            return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                 "%s: [%s] %s: '%s' is not a number in "
                                 "[%g, %g]", at, k->section,
                                 k->key, v, k->lo, k->hi);
        *(double *)base = x;
        return RVFIT_OK;
    }
    }
}

void rvfit_config_defaults(rvfit_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NKEYS; i++)
        set_value(c, &keys[i], keys[i].def, "defaults", NULL);
}

static char *keep(rvfit_config *c, const char *s)
{
    char **grown = realloc(c->strings, (size_t)(c->nstrings + 1) *
                                           sizeof *grown);
    if (!grown)
        return NULL;
    c->strings = grown;
    char *copy = strdup(s);
    if (copy)
        c->strings[c->nstrings++] = copy;
    return copy;
}

static int add_plugin_kv(rvfit_config *c, const char *section,
                         const char *key, const char *value,
                         const char *origin, int line, rvfit_err *err)
{
    rvfit_kv *kv = realloc(c->plug, (size_t)(c->nplug + 1) * sizeof *kv);
    if (kv)
        c->plug = kv;
    char **sec = realloc(c->plug_section,
                         (size_t)(c->nplug + 1) * sizeof *sec);
    if (sec)
        c->plug_section = sec;
    char *s = keep(c, section), *k = keep(c, key), *v = keep(c, value);
    char *o = keep(c, origin);
    if (!kv || !sec || !s || !k || !v || !o)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "config: out of memory");
    c->plug[c->nplug] = (rvfit_kv){k, v, o, line};
    c->plug_section[c->nplug] = s;
    c->nplug++;
    return RVFIT_OK;
}

int rvfit_config_set(rvfit_config *c, const char *section, const char *key,
                     const char *value, const char *origin, int line,
                     rvfit_err *err)
{
    if (is_plugin_section(section))
        return add_plugin_kv(c, section, key, value, origin, line, err);
    char at[RVFIT_PATH_LEN + 32];
    rvfit_kv_where(origin, line, at, sizeof at);
    if (!section_known(section))
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "%s: unknown section [%s] (known: run, "
                             "instrument, backend, templates, fit, output, "
                             "backend.NAME, instrument.NAME)", at, section);
    const key_desc *k = find_key(section, key);
    if (!k)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "%s: unknown key '%s' in section [%s] (see "
                             "docs/configuration.md)", at, key, section);
    return set_value(c, k, value, at, err);
}

/* inih hands us no line numbers and silently splits lines longer than
 * its buffer: the reader counts lines, refuses over-long ones and checks
 * section headers (inih reports a [section] line to nobody when no key
 * follows it); the handler refuses a key given twice. */
typedef struct parse_ctx {
    rvfit_config *c;
    FILE *f;
    const char *path;
    int line;
    int status;
    rvfit_err *err;
    int seen[NKEYS]; /* line of each core key in this file, 0: not yet */
    int plug0;       /* c->nplug before this file                      */
} parse_ctx;

#define INI_NAME_MAX 49 /* inih truncates longer section and key names */

/* A "[name]" line (leading blanks allowed): name must be a known section
 * or backend.NAME / instrument.NAME. */
static int check_section_line(parse_ctx *p, const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line != '[')
        return RVFIT_OK;
    const char *end = strchr(line, ']');
    if (!end)
        return RVFIT_OK; /* inih reports the syntax error */
    int n = (int)(end - line - 1);
    char name[INI_NAME_MAX + 1];
    if (n > INI_NAME_MAX)
        return rvfit_err_set(p->err, RVFIT_ERR_CONFIG, "%s:%d: section "
                             "name longer than %d characters", p->path,
                             p->line, INI_NAME_MAX);
    memcpy(name, line + 1, (size_t)n);
    name[n] = '\0';
    if (section_known(name) || is_plugin_section(name))
        return RVFIT_OK;
    if (!strcmp(name, "backend.") || !strcmp(name, "instrument."))
        return rvfit_err_set(p->err, RVFIT_ERR_CONFIG, "%s:%d: section "
                             "[%s] names no plugin (e.g. [%scpu])", p->path,
                             p->line, name, name);
    return rvfit_err_set(p->err, RVFIT_ERR_CONFIG,
                         "%s:%d: unknown section [%s] (known: run, "
                         "instrument, backend, templates, fit, output, "
                         "backend.NAME, instrument.NAME)",
                         p->path, p->line, name);
}

static char *reader(char *str, int num, void *stream)
{
    parse_ctx *p = stream;
    if (p->status != RVFIT_OK)
        return NULL;
    char *r = fgets(str, num, p->f);
    if (!r)
        return NULL;
    p->line++;
    size_t len = strlen(r);
    if (len && r[len - 1] != '\n' && !feof(p->f)) {
        p->status = rvfit_err_set(p->err, RVFIT_ERR_CONFIG, "%s:%d: line "
                                  "too long (at most %d characters)",
                                  p->path, p->line, num - 3);
        return NULL;
    }
    p->status = check_section_line(p, r);
    return p->status == RVFIT_OK ? r : NULL;
}

/* Line where section/key was set earlier in this file; 0 if not. */
static int earlier_line(parse_ctx *p, const char *section, const char *key,
                        int now)
{
    if (is_plugin_section(section)) {
        for (int i = p->plug0; i < p->c->nplug; i++)
            if (!strcmp(p->c->plug_section[i], section) &&
                !strcmp(p->c->plug[i].key, key))
                return p->c->plug[i].line;
        return 0;
    }
    const key_desc *k = find_key(section, key);
    if (!k)
        return 0;
    int *seen = &p->seen[k - keys], was = *seen;
    *seen = now;
    return was;
}

/* Keys that hold paths (plugin_path: a ':'-separated list).  A relative
 * path read from a file is relative to that file's directory, so that a
 * configuration means the same from any working directory; on the command
 * line it stays relative to the working directory. */
static const char *const path_keys[][2] = {
    {"run", "plugin_path"}, {"templates", "path"}, {"output", "dir"},
    {"output", "status"},   {"output", "plot_dir"}};

static int is_path_key(const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof path_keys / sizeof *path_keys; i++)
        if (!strcmp(path_keys[i][0], section) &&
            !strcmp(path_keys[i][1], key))
            return 1;
    return 0;
}

/* value with each relative element (':'-separated) prefixed by the
 * directory of file `path` into out; 0, or -1 when it does not fit. */
static int resolve_paths(const char *path, const char *value, char *out,
                         size_t n)
{
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path) + 1 : 0; /* "dir/" */
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = value;;) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        int rel = l > 0 && p[0] != '/';
        int w = snprintf(out + used, n - used, "%s%.*s%.*s",
                         p == value ? "" : ":", rel ? dl : 0, path, (int)l,
                         p);
        if (w < 0 || (size_t)w >= n - used)
            return -1;
        used += (size_t)w;
        if (!e)
            return 0;
        p = e + 1;
    }
}

static int handler(void *user, const char *section, const char *name,
                   const char *value)
{
    parse_ctx *p = user;
    if (p->status != RVFIT_OK)
        return 0;
    if (!name) /* a bare [section] line: checked by the reader */
        return 1;
    if (strlen(name) >= INI_NAME_MAX) {
        p->status = rvfit_err_set(p->err, RVFIT_ERR_CONFIG, "%s:%d: key "
                                  "name longer than %d characters", p->path,
                                  p->line, INI_NAME_MAX - 1);
        return 0;
    }
    int was = earlier_line(p, section, name, p->line);
    if (was) {
        p->status = rvfit_err_set(p->err, RVFIT_ERR_CONFIG, "%s:%d: key "
                                  "'%s' in section [%s] given twice (first "
                                  "on line %d)", p->path, p->line, name,
                                  section, was);
        return 0;
    }
    char resolved[RVFIT_PATH_LEN * 2];
    if (is_path_key(section, name) &&
        resolve_paths(p->path, value, resolved, sizeof resolved) == 0)
        value = resolved; /* (too long: set_value says so) */
    p->status = rvfit_config_set(p->c, section, name, value, p->path,
                                 p->line, p->err);
    return p->status == RVFIT_OK;
}

int rvfit_config_load(rvfit_config *c, const char *path, rvfit_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return rvfit_err_set(err, RVFIT_ERR_IO, "config %s: %s", path,
                             strerror(errno));
    parse_ctx *p = calloc(1, sizeof *p);
    if (!p) {
        fclose(f);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "config %s", path);
    }
    *p = (parse_ctx){.c = c, .f = f, .path = path, .err = err,
                     .plug0 = c->nplug};
    int rc = ini_parse_stream(reader, p, handler, p);
    int status = p->status, bad = ferror(f);
    free(p);
    fclose(f);
    if (status != RVFIT_OK)
        return status;
    if (bad)
        return rvfit_err_set(err, RVFIT_ERR_IO, "config %s: read failed",
                             path);
    if (rc > 0)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "%s:%d: syntax error (expected [section] or "
                             "key = value)", path, rc);
    if (rc < 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "config %s: read failed",
                             path);
    snprintf(c->source, sizeof c->source, "%s", path);
    return RVFIT_OK;
}

int rvfit_config_section(const rvfit_config *c, const char *section,
                         rvfit_kv **kv, int *n)
{
    *n = 0;
    *kv = malloc((size_t)(c->nplug ? c->nplug : 1) * sizeof **kv);
    if (!*kv)
        return RVFIT_ERR_NOMEM;
    for (int i = 0; i < c->nplug; i++)
        if (!strcmp(c->plug_section[i], section))
            (*kv)[(*n)++] = c->plug[i];
    return RVFIT_OK;
}

int rvfit_config_check_keys(const rvfit_config *c, const char *section,
                            const char *const *known, rvfit_err *err)
{
    for (int i = 0; i < c->nplug; i++) {
        if (strcmp(c->plug_section[i], section))
            continue;
        int ok = 0;
        for (int j = 0; known && known[j]; j++)
            ok |= !strcmp(known[j], c->plug[i].key);
        if (!ok) {
            char list[512] = "";
            for (int j = 0; known && known[j]; j++) {
                strncat(list, j ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, known[j], sizeof list - strlen(list) - 1);
            }
            char at[RVFIT_PATH_LEN + 32];
            return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                 "%s: unknown key '%s' in section [%s] "
                                 "(the plugin accepts: %s)",
                                 rvfit_kv_where(c->plug[i].file,
                                                c->plug[i].line, at,
                                                sizeof at),
                                 c->plug[i].key, section,
                                 list[0] ? list : "no keys");
        }
    }
    return RVFIT_OK;
}

/* Appends to buf (capacity n, may be NULL with n = 0) and counts what a
 * large enough buffer would hold, like snprintf. */
static void dump_emit(char *buf, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void dump_emit(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
    char *dst = NULL;
    size_t room = 0;
    if (buf && *used < n) {
        dst = buf + *used;
        room = n - *used;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (w > 0)
        *used += (size_t)w;
}

size_t rvfit_config_dump(const rvfit_config *c, char *buf, size_t n)
{
    size_t used = 0;
    const char *cur = "";
#define EMIT(...) dump_emit(buf, n, &used, __VA_ARGS__)
    for (size_t i = 0; i < NKEYS; i++) {
        const key_desc *k = &keys[i];
        const char *base = (const char *)c + k->offset;
        if (strcmp(cur, k->section))
            EMIT("%s[%s]\n", i ? "\n" : "", cur = k->section);
        if (k->type == K_STR)
            EMIT("%s = %s\n", k->key, base);
        else if (k->type == K_DOUBLE)
            EMIT("%s = %.10g\n", k->key, *(const double *)base);
        else
            EMIT("%s = %ld\n", k->key, *(const long *)base);
    }
    for (int i = 0; i < c->nplug; i++)
        EMIT("\n[%s]\n%s = %s\n", c->plug_section[i], c->plug[i].key,
             c->plug[i].value);
#undef EMIT
    return used;
}

int rvfit_config_describe(int i, const char **section, const char **key,
                          const char **def, const char **help)
{
    if (i < 0 || (size_t)i >= NKEYS)
        return 0;
    *section = keys[i].section;
    *key = keys[i].key;
    *def = keys[i].def;
    *help = keys[i].help;
    return 1;
}

void rvfit_config_free(rvfit_config *c)
{
    for (int i = 0; i < c->nstrings; i++)
        free(c->strings[i]);
    free(c->strings);
    free(c->plug);
    free(c->plug_section);
    c->strings = NULL;
    c->plug = NULL;
    c->plug_section = NULL;
    c->nstrings = c->nplug = 0;
}
