/* rvfit/run.h — fitting whole input files: read in batches through the
 * instrument plugin, prepare, fit on the backend, write outputs atomically.
 *
 * Ownership: the run borrows config, host, backend, library and
 * instrument; it owns nothing but its profile counters.
 * Thread-safety: one run per thread (CFITSIO is not used concurrently).
 */
#ifndef RVFIT_RUN_H
#define RVFIT_RUN_H

#include "rvfit/fit.h"
#include "rvfit/loader.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*rvfit_progress_fn)(void *ctx, const char *file, size_t done,
                                  size_t total, double seconds);

typedef struct rvfit_run {
    const rvfit_config *cfg;
    const rvfit_host *host;
    rvfit_backend *be;
    const rvfit_library *lib;
    const char *lib_path;
    rvfit_plugin_handle *inst;
    const char *cmdline;
    const int64_t *targetid;   /* selection list (may be NULL)          */
    size_t ntargetid;
    rvfit_progress_fn progress; /* may be NULL                           */
    void *progress_ctx;
    /* accumulated over files */
    rvfit_fit_opts fo;
    rvfit_profile prof;
    size_t nfiles, nskipped, nspectra, nwarn, nbad;
} rvfit_run;

/* Output paths for an input: DIR/rvtab_<stem>.fits and rvmod_<stem>.fits
 * with <stem> the file name without .fits/.fits.gz/.fit. */
RVFIT_EXPORT void rvfit_output_names(const char *outdir, const char *input,
                                     char *tab, char *mod, size_t n);

/* Fit one file.  Returns RVFIT_OK also when the file was skipped
 * (--skip-existing); the output is either complete or absent. */
RVFIT_EXPORT int rvfit_run_file(rvfit_run *r, const char *path,
                                rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
