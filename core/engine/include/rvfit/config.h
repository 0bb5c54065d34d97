/* rvfit/config.h — run configuration from an INI file (inih) and the
 * command line.
 *
 * Every key has a default (docs/configuration.md, generated from the same
 * table that parses them: rvfit_config_describe).  Unknown sections or keys
 * are errors naming the file and line.  Sections [backend.NAME] and
 * [instrument.NAME] are kept as key/value lists and checked against the
 * keys the plugin declares when it is loaded.  Command-line options are
 * applied with rvfit_config_set after the file, so they override it.
 *
 * Ownership: the config owns all strings; free with rvfit_config_free.
 * Thread-safety: read-only use from several threads is safe.
 */
#ifndef RVFIT_CONFIG_H
#define RVFIT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/host.h"
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_PATH_LEN 4096

typedef struct rvfit_config {
    /* [run] */
    char plugin_path[RVFIT_PATH_LEN]; /* extra plugin dirs, ':'-separated */
    long threads;                     /* 0 = all cores                    */
    long log_level;                   /* 0 error .. 3 debug               */
    long batch_size;                  /* spectra per batch                */
    long readahead;                   /* 1: read/write overlap the fit    */
    /* [instrument] */
    char instrument[64];
    /* [backend] */
    char backend[256]; /* one name (strict) or a fallback list "a, b"   */
    /* [templates] */
    char templates[RVFIT_PATH_LEN]; /* library directory                  */
    char interpolator[32]; /* kind `rvfit templates` records (interp.h) */
    char cubic[128];   /* cubic axes: build parameter of interpolator =
                          cubic ("" = every axis); at run time, when not
                          "", replaces the library's ("none": linear)   */
    long log_flux;     /* 1: interpolate in ln flux, 0: in flux, -1: as
                          the library records (at build: flux)          */
    long host_stencils; /* 1: stencils computed by the core, sent to the
                           backend, also for the regular-grid kinds     */
    long pca_components; /* pca: components per arm, 0 = by pca_rms     */
    double pca_rms;      /* pca: rms reconstruction error to reach      */
    char fill_holes[16]; /* building: "none" or "quadratic"             */
    char simplex_correction[16]; /* building with interpolator = simplex:
                                    "none" or "quadratic"             */
    /* [fit] */
    long npoly;          /* 0: the basis's own (fit.c)                   */
    char basis[16];      /* "bspline", "gauss" or "cheb"                 */
    double vmin, vmax;   /* km/s, velocity range                          */
    double ccf_vstep;    /* km/s, step of the initial velocity scan       */
    double vsini_max;    /* km/s                                          */
    long fit_vsini;      /* 0: vsini fixed at 0                            */
    long max_iter;       /* optimizer iterations                          */
    double minsn;        /* minimum S/N of the best arm (0 = all)         */
    long scale_errors;   /* 1: errors times sqrt(CHISQ_RED)               */
    /* [output] */
    char output_dir[RVFIT_PATH_LEN];
    long overwrite;
    long skip_existing;
    long write_models;
    char status[RVFIT_PATH_LEN];      /* status file, "" = none          */

    /* Plugin sections, in file order then command-line order. */
    int nplug;
    rvfit_kv *plug;        /* key, value, origin file, line           */
    char **plug_section;   /* "backend.cpu", ...                       */

    char source[RVFIT_PATH_LEN]; /* config file read ("" = defaults)  */
    char **strings;        /* owned storage for kv strings            */
    int nstrings;

    /* [output], added last so that the layout above stays as it was */
    char plot_dir[RVFIT_PATH_LEN];    /* fit figures (PNG), "" = none    */
    /* [fit], added last likewise */
    long interp_errors;  /* 1: parameter errors include interpolation */
    /* [output], added last likewise */
    long chisq_v;        /* 1: rvmod gets HDU CHISQ_V, -2 ln L(v)      */
    /* [fit] and [output] of joint fits, added last likewise */
    char epochs[16];     /* "single" or "joint" (rvfit/joint.h)         */
    char joint_name[256]; /* joint outputs: rvtab_<joint_name>.fits    */
    long sb2;            /* 1: joint fits test for a second velocity   */
    double clip;         /* sigma above the model that rejects a pixel
                            (0: none; stage_clip.c)                      */
    /* [fit], added last likewise */
    long starts;         /* optimiser starts per spectrum, 1 ..
                            RVFIT_MAX_STARTS                           */
    /* [run], added last likewise */
    long driver_threads; /* threads of the fit driver's own work: 1 the
                            fit thread alone, 0 as [run] threads       */
    long streams;        /* fit streams, each with its own backend     */
} rvfit_config;

/* [fit] starts: at most, and the default (rvfit_fit_opts.starts). */
#define RVFIT_MAX_STARTS 3
#define RVFIT_STARTS 2

/* Fill with defaults. */
RVFIT_EXPORT void rvfit_config_defaults(rvfit_config *c);

/* Read an INI file on top of the current values.  Relative paths in it
 * (run.plugin_path, templates.path, output.dir, output.status,
 * output.plot_dir) are taken relative to the file's directory. */
RVFIT_EXPORT int rvfit_config_load(rvfit_config *c, const char *path,
                                   rvfit_err *err);

/* Set section.key = value (origin e.g. "command line").  Accepts plugin
 * sections "backend.NAME"/"instrument.NAME". */
RVFIT_EXPORT int rvfit_config_set(rvfit_config *c, const char *section,
                                  const char *key, const char *value,
                                  const char *origin, int line,
                                  rvfit_err *err);

/* The key/value list of a plugin section, e.g. "backend.cpu"; *kv points
 * into a newly allocated array the caller frees with free(). */
RVFIT_EXPORT int rvfit_config_section(const rvfit_config *c,
                                      const char *section, rvfit_kv **kv,
                                      int *n);

/* Check a plugin section against the keys a plugin accepts (NULL ends);
 * error names file and line of the first unknown key. */
RVFIT_EXPORT int rvfit_config_check_keys(const rvfit_config *c,
                                         const char *section,
                                         const char *const *keys,
                                         rvfit_err *err);

/* Write the effective configuration as INI text into buf (for the output
 * headers and `rvfit config`).  Returns bytes needed (like snprintf). */
RVFIT_EXPORT size_t rvfit_config_dump(const rvfit_config *c, char *buf,
                                      size_t n);

/* Iterate the documented keys: returns 0 past the end. */
RVFIT_EXPORT int rvfit_config_describe(int i, const char **section,
                                       const char **key, const char **def,
                                       const char **help);

RVFIT_EXPORT void rvfit_config_free(rvfit_config *c);

#ifdef __cplusplus
}
#endif
#endif
