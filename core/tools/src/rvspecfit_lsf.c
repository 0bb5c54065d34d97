/* rvspecfit_lsf.c — the templates' LSF from rvs_make_interpol's command
 * line (rvspecfit_lsf.h). */
#include "rvspecfit_lsf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/limits.h"

#define LSF_FWHM_SIGMA 2.3548200450309493 /* 2 sqrt(2 ln 2) */
#define LSF_MAXTOK 64
#define LSF_TOKLEN 512

/* rvs_make_interpol's options (rvspecfit 0.9.0) and whether each takes a
 * value: argparse accepts any unique prefix, so a prefix is matched
 * against all of them. */
static const struct {
    const char *name;
    int value;
} lsf_opts[] = {
    {"setup", 1},         {"lambda0", 1},      {"lambda1", 1},
    {"resol", 1},         {"revision", 1},     {"parameter_names", 1},
    {"log_parameters", 1}, {"resol_func", 1},  {"step", 1},
    {"log", 0},           {"no-log", 0},       {"normalize", 0},
    {"no-normalize", 0},  {"templdb", 1},      {"templprefix", 1},
    {"air", 0},           {"oprefix", 1},      {"wavefile", 1},
    {"resolution0", 1},   {"nthreads", 1},     {"fixed_fwhm", 0},
    {"help", 0},
};
#define LSF_NOPT (sizeof lsf_opts / sizeof lsf_opts[0])

/* Split as POSIX sh (shlex) does: '...' literal, "..." with \ escapes,
 * \ outside quotes escapes the next character.  Returns the count. */
static int lsf_split(const char *s, char tok[][LSF_TOKLEN], int max)
{
    int n = 0;
    while (*s && n < max) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s)
            break;
        size_t k = 0;
        char q = 0;
        for (; *s && (q || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
            char c = *s;
            if (!q && (c == '\'' || c == '"')) {
                q = c;
                continue;
            }
            if (q && c == q) {
                q = 0;
                continue;
            }
            if (c == '\\' && q != '\'' && s[1])
                c = *++s;
            if (k + 1 < LSF_TOKLEN)
                tok[n][k++] = c;
        }
        tok[n++][k] = '\0';
    }
    return n;
}

/* Option index of "--name" or "--name=value" (exact, else a unique
 * prefix), -1 if none. */
static int lsf_find(const char *t, const char **value)
{
    if (strncmp(t, "--", 2))
        return -1;
    t += 2;
    const char *eq = strchr(t, '=');
    size_t len = eq ? (size_t)(eq - t) : strlen(t);
    *value = eq ? eq + 1 : NULL;
    int hit = -1, nhit = 0;
    for (size_t i = 0; i < LSF_NOPT; i++) {
        if (strncmp(lsf_opts[i].name, t, len))
            continue;
        if (strlen(lsf_opts[i].name) == len)
            return (int)i;
        hit = (int)i, nhit++;
    }
    return nhit == 1 ? hit : -1;
}

static int lsf_number(const char *s, double *x)
{
    char *end;
    *x = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(*x) && *x > 0;
}

/* --resol_func: the two constant forms only, x/W (FWHM W Angstrom) or
 * R. */
static void lsf_func(const char *expr, rvs_lsf *l)
{
    char e[LSF_TOKLEN];
    size_t k = 0;
    for (const char *p = expr; *p && k + 1 < sizeof e; p++)
        if (*p != ' ')
            e[k++] = *p;
    e[k] = '\0';
    double w;
    if (e[0] == 'x' && e[1] == '/' && lsf_number(e + 2, &w)) {
        l->kind = RVS_LSF_ANGSTROM;
        l->sigma = w / LSF_FWHM_SIGMA;
        snprintf(l->how, sizeof l->how, "--resol_func '%.40s': FWHM %.4g A",
                 expr, w);
    } else if (lsf_number(e, &w)) {
        l->kind = RVS_LSF_KMS;
        l->sigma = RVFIT_C_KMS / w / LSF_FWHM_SIGMA;
        snprintf(l->how, sizeof l->how, "--resol_func '%.40s': R %.6g",
                 expr, w);
    } else {
        snprintf(l->how, sizeof l->how, "--resol_func '%.60s' is not a form"
                 " rvfit reads (x/FWHM or R)", expr);
    }
}

void rvs_lsf_parse(const char *cmdline, rvs_lsf *l)
{
    memset(l, 0, sizeof *l);
    char(*t)[LSF_TOKLEN] = malloc(LSF_MAXTOK * sizeof *t);
    int n = cmdline && t ? lsf_split(cmdline, t, LSF_MAXTOK) : 0;
    const char *resol = NULL, *func = NULL, *l0 = NULL, *l1 = NULL;
    int fixed = 0;
    for (int i = 1; i < n; i++) {
        const char *val;
        int o = lsf_find(t[i], &val);
        if (o < 0)
            continue;
        if (lsf_opts[o].value && !val && i + 1 < n)
            val = t[++i];
        const char *nm = lsf_opts[o].name;
        if (!strcmp(nm, "resol"))
            resol = val;
        else if (!strcmp(nm, "resol_func"))
            func = val;
        else if (!strcmp(nm, "lambda0"))
            l0 = val;
        else if (!strcmp(nm, "lambda1"))
            l1 = val;
        else if (!strcmp(nm, "fixed_fwhm"))
            fixed = 1;
        else if (!strcmp(nm, "air"))
            l->air = 1;
    }
    double r, a, b;
    if (!cmdline || !cmdline[0] || !t) {
        snprintf(l->how, sizeof l->how, "%s", t ? "no command line recorded"
                                               : "no memory");
    } else if (func) {
        lsf_func(func, l);
    } else if (!resol || !lsf_number(resol, &r)) {
        snprintf(l->how, sizeof l->how, "no --resol or --resol_func in the "
                 "recorded command line");
    } else if (!fixed) {
        l->kind = RVS_LSF_KMS;
        l->sigma = RVFIT_C_KMS / r / LSF_FWHM_SIGMA;
        snprintf(l->how, sizeof l->how, "--resol %.8g: R constant", r);
    } else if (l0 && l1 && lsf_number(l0, &a) && lsf_number(l1, &b)) {
        l->kind = RVS_LSF_ANGSTROM;
        l->sigma = 0.5 * (a + b) / r / LSF_FWHM_SIGMA;
        snprintf(l->how, sizeof l->how, "--resol %.8g --fixed_fwhm, "
                 "lambda %.6g-%.6g: FWHM %.4g A", r, a, b,
                 0.5 * (a + b) / r);
    } else {
        snprintf(l->how, sizeof l->how, "--fixed_fwhm without --lambda0 "
                 "and --lambda1");
    }
    free(t);
}
