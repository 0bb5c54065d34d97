/* rvfit/run.h — fitting a stream of inputs: spectra from any number of
 * files are read through the instrument plugin into batches of
 * [run] batch_size spectra regardless of file boundaries, prepared, fitted
 * on the backend and written to each input's rvtab/rvmod, which is
 * committed (renamed into place) as soon as its last spectrum is written.
 *
 * With [run] readahead = 1 (the default) a reader thread reads and
 * prepares batch k+1 and a writer thread writes batch k-1 while the
 * calling thread fits batch k; at most three batches are in memory.  The
 * results do not depend on how spectra are grouped into batches.
 *
 * Work comes from an rvfit_source: a list of files, or a coordinator that
 * hands out files and parts of files to several processes (MPI).  A unit
 * that fails (unreadable, corrupt) is reported and the run goes on; only
 * backend failures, running out of memory or cancellation stop it.
 *
 * Ownership: the run borrows config, host, backend, library and
 * instrument.  Thread-safety: one run at a time per backend; the source's
 * callbacks are called from the run's reader and writer threads (never two
 * at once).
 */
#ifndef RVFIT_RUN_H
#define RVFIT_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/fit.h"
#include "rvfit/loader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a unit of work asks for. */
enum rvfit_unit_kind {
    RVFIT_UNIT_FIT = 0,     /* fit a file, or one part of it            */
    RVFIT_UNIT_MERGE = 1,   /* concatenate the part outputs of a file   */
    RVFIT_UNIT_DISCARD = 2  /* remove the part outputs of a failed file */
};

/* One unit of work.  A file's selected spectra may be cut into nparts
 * consecutive parts (part k holds spectra [k n / nparts, (k+1) n /
 * nparts)); each part writes hidden part outputs that a MERGE unit joins.
 * nparts == 0 asks the run to decide through rvfit_source.split (it then
 * fits part 0).  Strings are the source's and must outlive the report. */
typedef struct rvfit_unit {
    int kind;           /* enum rvfit_unit_kind                          */
    const char *path;   /* input file                                    */
    size_t input;       /* position of the input in the job              */
    int part, nparts;   /* see above; 1 = the whole file                 */
} rvfit_unit;

enum rvfit_unit_state {
    RVFIT_UNIT_DONE = 1,    /* outputs complete (or already complete)    */
    RVFIT_UNIT_FAILED = 2,  /* nothing written; detail says why          */
    RVFIT_UNIT_SKIPPED = 3  /* not attempted; detail says why            */
};

typedef struct rvfit_unit_report {
    rvfit_unit unit;
    int state;              /* enum rvfit_unit_state                     */
    const char *detail;     /* output name, or the reason                */
    size_t nspec;           /* spectra fitted in this unit               */
    uint64_t points;        /* backend points spent on them              */
    int reused;             /* DONE: the outputs existed and were kept
                               (--skip-existing)                         */
} rvfit_unit_report;

/* rvfit_source.next: no unit yet, but more may come (see there). */
#define RVFIT_SOURCE_LATER 2

/* Where a run takes its work and tells what became of it. */
typedef struct rvfit_source {
    void *ctx;
    /* The next unit into *u: 1, or 0 when there is no more work.  With
     * may_wait == 0 the run still holds spectra it has not fitted (work
     * elsewhere may wait for them), so the source must not block for new
     * work: it returns RVFIT_SOURCE_LATER instead, and the run fits what
     * it has before asking again with may_wait == 1. */
    int (*next)(void *ctx, rvfit_unit *u, int may_wait);
    /* A unit with nparts == 0 selected nselect spectra: how many parts to
     * cut it into (1: not cut).  The source hands out parts 1.. to whoever
     * asks next; this run fits part 0.  NULL: never cut. */
    int (*split)(void *ctx, const rvfit_unit *u, size_t nselect);
    /* Called once per unit, with its outcome. */
    void (*report)(void *ctx, const rvfit_unit_report *r);
} rvfit_source;

/* Progress after each written batch: spectra written so far, seconds. */
typedef void (*rvfit_progress_fn)(void *ctx, size_t spectra, double seconds);

typedef struct rvfit_run {
    const rvfit_config *cfg;
    const rvfit_host *host;
    rvfit_backend *be;
    const rvfit_library *lib;
    const rvfit_interpolator *interp; /* NULL: stencils from the backend       */
    const char *lib_path;
    rvfit_plugin_handle *inst;
    const char *cmdline;
    const int64_t *targetid;   /* selection list (may be NULL)          */
    size_t ntargetid;
    rvfit_progress_fn progress; /* may be NULL                           */
    void *progress_ctx;
    /* Non-zero stops the run (may be NULL): polled before each batch is
     * read or fitted and before every backend call of a fit
     * (rvfit_fit_opts.cancel); units not complete then are reported
     * SKIPPED ("interrupted") with their temporaries removed, and the run
     * returns RVFIT_ERR_CANCELLED.  The CLI sets it from the thread that
     * takes SIGINT/SIGTERM (core/cli/cli_signal.c). */
    const volatile int *cancel;
    /* accumulated over the run */
    rvfit_fit_opts fo;
    rvfit_profile prof;
    size_t nfiles, nskipped, nfailed, nspectra, nwarn, nbad;
    double busy;               /* seconds the backend was fitting        */
    /* Figures (cfg [output] plot_dir, docs/plots.md): only spectra with
     * these TARGETIDs are drawn; none listed: every fitted spectrum.
     * Drawing evaluates one more model and continuum per drawn spectrum
     * on the backend.  Added last: the layout above is unchanged. */
    const int64_t *plot_targetid;
    size_t nplot_targetid;
    size_t nplots;             /* figures written                        */
    /* Of busy, the time outside the backend's evaluation calls that the
     * backend's load_batch took (loading) and that the fit driver took
     * between those calls (driver), in seconds.  Added last. */
    double loading, driver;
    /* More fit streams ([run] streams): each of these backends (open,
     * its library loaded, the same plugin and device as be) fits batches
     * on a thread of its own while be fits others, so that a device's
     * host work between calls overlaps another stream's kernels.  The
     * outputs are written in the input's order and do not depend on it.
     * Single fits with [run] readahead only (ignored otherwise); NULL:
     * one stream.  The profile, busy, loading and driver above are the
     * streams' sums.  Added last. */
    rvfit_backend *const *more_be;
    size_t nmore_be;
} rvfit_run;

/* Fit every unit src hands out.  Returns RVFIT_OK when the run went
 * through (units that failed are counted in nfailed and reported), or
 * the status of what stopped it (backend failure, no memory, cancel),
 * with every unfinished output removed. */
RVFIT_EXPORT int rvfit_run_stream(rvfit_run *r, const rvfit_source *src,
                                  rvfit_err *err);

/* What a joint run did (rvfit_run_joint). */
typedef struct rvfit_joint_report {
    int *usable;                 /* [ninput], set by the caller or NULL:
                                    1 for each input that was read       */
    size_t ninput, nfailed;      /* inputs given; left out (logged why)  */
    size_t nobj_all, nexp_all;   /* objects and exposures of the job     */
    size_t nobj, nexp;           /* ... of this part                     */
    size_t nskip;                /* spectra of no object, or duplicate
                                    exposures (counted by reason in the
                                    log)                                 */
    int kept;                    /* the outputs existed and were kept
                                    (--skip-existing): nothing was read  */
    char output[RVFIT_PATH_LEN + 1100]; /* the rvtab written (a part's:
                                    hidden until merged)                 */
} rvfit_joint_report;

/* Joint mode ([fit] epochs = joint, rvfit/joint.h): every selected
 * spectrum of the ninput inputs is read as an epoch of its object
 * through the instrument's 'epochs' extension (an instrument without it
 * is refused); all spectra of an object are fitted together, whichever
 * inputs and rows they come from and in whatever order the inputs are
 * given; the outputs are one rvtab/rvmod pair,
 * DIR/rvtab_<[output] joint_name>.fits (rvfit/output.h, "joint
 * outputs").  part/nparts: this process fits objects [part n / nparts,
 * (part + 1) n / nparts) of the job's n (in output order) and writes the
 * hidden part outputs that rvfit_run_joint_merge joins; nparts 1: the
 * whole job.  Inputs that cannot be read are reported in rep and left
 * out.  Returns RVFIT_OK when the outputs were written, or what stopped
 * the run (nothing left behind). */
RVFIT_EXPORT int rvfit_run_joint(rvfit_run *r, char *const *inputs,
                                 size_t ninput, int part, int nparts,
                                 rvfit_joint_report *rep, rvfit_err *err);
/* Join the nparts part outputs of a joint job into its final outputs
 * (atomically) and remove the parts. */
RVFIT_EXPORT int rvfit_run_joint_merge(const rvfit_config *cfg, int nparts,
                                       rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
