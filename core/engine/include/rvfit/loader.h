/* rvfit/loader.h — finding, loading and checking plugins; opening backends
 * and instruments through them.
 *
 * Search path, in order: config [run] plugin_path (':'-separated), the
 * environment variable RVFIT_PLUGIN_PATH, then this librvfit's own plugin
 * directory: <directory of librvfit>/rvfit/plugins when installed (found
 * with dladdr, so a moved prefix still finds its plugins), the build
 * tree's plugin directory when librvfit is the build tree's.  The first
 * rvfit_<kind>_<name>.so found is used.
 *
 * A failure keeps its stage (enum rvfit_load_stage) and the message says
 * what was tried and how to fix it, e.g.
 *   backend 'cuda': dlopen failed: libcudart.so.13: cannot open shared
 *   object file (file /usr/lib/rvfit/plugins/rvfit_backend_cuda.so)
 *
 * Ownership: a handle owns its dlopen reference; unload after the last use
 * of anything the plugin returned.  Thread-safety: load/unload from one
 * thread.
 */
#ifndef RVFIT_LOADER_H
#define RVFIT_LOADER_H

#include "rvfit/config.h"
#include "rvfit/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rvfit_load_stage {
    RVFIT_STAGE_OK = 0,
    RVFIT_STAGE_NOT_FOUND = 1,
    RVFIT_STAGE_DLOPEN = 2,
    RVFIT_STAGE_SYMBOL = 3,
    RVFIT_STAGE_ABI = 4,
    RVFIT_STAGE_NAME = 5,
    RVFIT_STAGE_INIT = 6
};

/* "not found", "dlopen", "symbol", "ABI", "name", "init". */
RVFIT_EXPORT const char *rvfit_stage_name(int stage);

typedef struct rvfit_plugin_handle {
    void *dl;
    const rvfit_plugin *desc;
    int kind;
    char path[RVFIT_PATH_LEN];
    /* Operation tables copied from the plugin; entries a shorter (older)
     * table lacks are filled with defaults returning UNAVAILABLE.
     * Extension tables are not copied: see rvfit_plugin_ext. */
    rvfit_backend_ops backend;
    rvfit_instrument_ops instrument;
} rvfit_plugin_handle;

/* The search directories for config c (c may be NULL); returns a
 * NULL-terminated array to release with rvfit_plugin_dirs_free. */
RVFIT_EXPORT char **rvfit_plugin_dirs(const rvfit_config *c);
RVFIT_EXPORT void rvfit_plugin_dirs_free(char **dirs);

/* "backend" / "instrument" */
RVFIT_EXPORT const char *rvfit_kind_name(int kind);

/* Load rvfit_<kind>_<name>.so from dirs.  On failure *stage (may be NULL)
 * tells where it failed. */
RVFIT_EXPORT int rvfit_plugin_load(char *const *dirs, int kind,
                                   const char *name, rvfit_plugin_handle *h,
                                   int *stage, rvfit_err *err);
/* Load a plugin from an explicit file (used by `rvfit plugins`). */
RVFIT_EXPORT int rvfit_plugin_load_file(const char *path, int kind,
                                        const char *name,
                                        rvfit_plugin_handle *h, int *stage,
                                        rvfit_err *err);
RVFIT_EXPORT void rvfit_plugin_unload(rvfit_plugin_handle *h);

/* Extension table `name` of a loaded plugin (rvfit_plugin.ext), or NULL.
 * The table must have major version RVFIT_VERSION_MAJ(min_version), a
 * minor >= RVFIT_VERSION_MIN(min_version) and at least min_size bytes;
 * the caller reads only those bytes.  On NULL, err (may be NULL) says
 * "no 'NAME' extension" (RVFIT_ERR_UNAVAILABLE-type: the plugin simply
 * lacks the feature) or which version it has and that the plugin must be
 * rebuilt.  The table lives in the plugin: valid until unload. */
RVFIT_EXPORT const void *rvfit_plugin_ext(const rvfit_plugin_handle *h,
                                          const char *name,
                                          uint32_t min_version,
                                          size_t min_size, rvfit_err *err);

/* An opened backend. */
typedef struct rvfit_backend {
    rvfit_plugin_handle ph;
    void *state;
    const rvfit_backend_ops *ops; /* == &ph.backend */
    char name[64];
} rvfit_backend;

/* Open the backend named in c->backend.  A single name is strict; a list
 * ("cuda, opencl, cpu") falls back in order past plugins that are not
 * found, fail to dlopen or report UNAVAILABLE, logging why; a plugin that
 * is broken (symbol, ABI, name) stops the run.  A name that is neither one
 * of rvfit's own backends (cpu, opencl, cuda) nor a plugin file on the
 * search path is RVFIT_ERR_CONFIG naming the known ones, in a list too.
 * In a list, a plugin that declares the key device_type gets
 * device_type = gpu unless its section sets it (no OpenCL CPU device).
 * The choice and its reason are logged.  Plugin options come from
 * [backend.NAME] and are checked against the plugin's keys. */
RVFIT_EXPORT int rvfit_backend_open(const rvfit_config *c,
                                    const rvfit_host *host,
                                    rvfit_backend *b, rvfit_err *err);
/* Open one backend by name (strict). */
RVFIT_EXPORT int rvfit_backend_open_name(const rvfit_config *c,
                                         const rvfit_host *host,
                                         const char *name, rvfit_backend *b,
                                         int *stage, rvfit_err *err);
RVFIT_EXPORT void rvfit_backend_close(rvfit_backend *b);

/* Load the instrument plugin named in c->instrument (strict). */
RVFIT_EXPORT int rvfit_instrument_load(const rvfit_config *c,
                                       const char *name,
                                       rvfit_plugin_handle *h,
                                       rvfit_err *err);

/* The 'mock' extension (rvfit/instrument_mock.h) of loaded instrument h,
 * with write_mock set; NULL with "instrument 'NAME' cannot write synthetic
 * files (no 'mock' extension)" (or the version mismatch) in err. */
RVFIT_EXPORT const rvfit_instrument_mock_ops *
rvfit_instrument_mock(const rvfit_plugin_handle *h, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
