/* rvfit/output.h — the output part of the engine: the rvtab_*.fits and
 * rvmod_*.fits writers, the names of the outputs of an input, and the
 * job's status file.
 *
 * Both files are created as hidden temporaries in the output directory
 * with every HDU sized for nrow rows up front, filled batch by batch (so
 * memory stays flat), and renamed into place only by rvfit_output_commit:
 * a failed or interrupted run never leaves a half-written output.
 * Layout and columns: docs/output-format.md.
 *
 * Ownership: the writer copies what it needs from its arguments.
 * Thread-safety: CFITSIO; use from one thread.
 */
#ifndef RVFIT_OUTPUT_H
#define RVFIT_OUTPUT_H

#include "rvfit/fit.h"
#include "rvfit/instrument.h"
#include "rvfit/joint.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rvfit_output rvfit_output;

/* Provenance recorded in both primary headers. */
typedef struct rvfit_output_meta {
    const char *input;
    const char *backend, *backend_version, *device;
    const char *instrument, *instrument_version;
    const char *library;
    const char *config_text; /* effective INI text                     */
    const char *cmdline;
    int chisq_v;             /* rvmod gets HDU CHISQ_V: each row's final
                                velocity scan (rvfit_result vscan_*)     */
} rvfit_output_meta;

/* mod_path may be NULL (no model file).  The pass-through schemas of info
 * are copied, so the instrument handle may close before the output.
 * Wavelength grids are taken from the batches given to rvfit_output_write:
 * a shared grid is written once, with the first rows. */
RVFIT_EXPORT int rvfit_output_open(rvfit_output **out, const char *tab_path,
                                   const char *mod_path,
                                   const rvfit_library *lib,
                                   const rvfit_file_info *info, size_t nrow,
                                   const rvfit_output_meta *meta,
                                   rvfit_err *err);

/* Rows of a batch for one output: spectra off .. off+n-1 of batch b (the
 * same arms in the same order as the output's file, each possibly longer:
 * a batch can mix files, see rvfit_arm_batch npix_own), their results
 * res[0..n-1], pass-through rows (one rvfit_table_rows of n rows per table
 * of the output's file) and the batch's models ([narm] arrays laid out as
 * b, or NULL).  Only each arm's own pixels of the file are written. */
typedef struct rvfit_output_rows {
    const rvfit_batch *b;
    size_t off, n;
    const rvfit_result *res;
    const rvfit_table_rows *rows;
    float *const *models;
} rvfit_output_rows;

/* Write rows [first, first + r->n) of the output. */
RVFIT_EXPORT int rvfit_output_write(rvfit_output *out, size_t first,
                                    const rvfit_output_rows *r,
                                    rvfit_err *err);

/* Pass-through table schemas of the output (its own copies): *ntable
 * receives their number. */
RVFIT_EXPORT const rvfit_table_schema *
rvfit_output_tables(const rvfit_output *out, int *ntable);

/* Record an integer keyword in both primary headers (e.g. the points the
 * backend evaluated for this file, known only at the end). */
RVFIT_EXPORT int rvfit_output_key(rvfit_output *out, const char *key,
                                  long long value, const char *comment,
                                  rvfit_err *err);

/* Close and rename into place; frees out. */
RVFIT_EXPORT int rvfit_output_commit(rvfit_output *out, rvfit_err *err);

/* Close and delete the temporaries; frees out.  Safe with NULL. */
RVFIT_EXPORT void rvfit_output_abort(rvfit_output *out);

/* ---- joint outputs ([fit] epochs = joint; docs/output-format.md):
 * rvtab has RVTAB, one row per object (the joint parameters, the
 * constant-velocity fit, NEPOCH, VRAD_CHISQ, VRAD_PVALUE, VRAD_SCATTER,
 * TARGETID and OBJKEY), and RVEPOCH, one row per exposure; rvmod the
 * wavelengths and models of each exposure ([nexp][npix] per arm, rows as
 * RVEPOCH's, NaN beyond a row's own pixels).  Commit, abort and keywords
 * as for single outputs. */

/* What identifies one exposure in the outputs. */
typedef struct rvfit_joint_id {
    const char *key;         /* the object's key (rvfit_epoch)          */
    int64_t targetid, expid;
    double mjd;
    const char *input;       /* the input file's name, no directory     */
    int64_t row;             /* the spectrum's index in that file       */
} rvfit_joint_id;

/* The rows of one fitted batch: its spectra are exposures (batch rows
 * 0..nspec-1, ids id[]), grouped into nobj objects (obj_off[o] ..
 * obj_off[o+1]-1). */
typedef struct rvfit_joint_rows {
    const rvfit_batch *b;
    size_t nobj;
    const size_t *obj_off;          /* [nobj + 1]                      */
    const rvfit_joint_result *jres; /* [nobj]                          */
    const rvfit_result *res;        /* [nspec]                         */
    const rvfit_joint_id *id;       /* [nspec]                         */
    float *const *models;           /* [narm] laid out as b, or NULL   */
    const rvfit_sb2 *sb2;           /* [nspec] when the output has the
                                       SB2 columns, else NULL          */
} rvfit_joint_rows;

/* Outputs for nobj objects and nexp exposures with the narm arms arm[]
 * (npix: the widest input's); input_len: the longest input name; sb2:
 * RVEPOCH gets the two-velocity test's columns. */
RVFIT_EXPORT int rvfit_output_open_joint(rvfit_output **out,
                                         const char *tab_path,
                                         const char *mod_path,
                                         const rvfit_library *lib, int narm,
                                         const rvfit_arm_info *arm,
                                         size_t nobj, size_t nexp,
                                         size_t input_len, int sb2,
                                         const rvfit_output_meta *meta,
                                         rvfit_err *err);
/* Write objects [first_obj, first_obj + r->nobj) and exposures
 * [first_exp, first_exp + r->b->nspec). */
RVFIT_EXPORT int rvfit_output_write_joint(rvfit_output *out,
                                          size_t first_obj, size_t first_exp,
                                          const rvfit_joint_rows *r,
                                          rvfit_err *err);

/* Output paths for an input: DIR/rvtab_<stem>.fits and rvmod_<stem>.fits
 * with <stem> the file name without .fits/.fits.gz/.fit.  Part outputs
 * (nparts > 1) are hidden: DIR/.rvtab_<stem>.fits.part<k>of<n>. */
RVFIT_EXPORT void rvfit_output_names(const char *outdir, const char *input,
                                     char *tab, char *mod, size_t n);
RVFIT_EXPORT void rvfit_output_part_names(const char *outdir,
                                          const char *input, int part,
                                          int nparts, char *tab, char *mod,
                                          size_t n);

/* Remove what killed runs left in the output directory: part outputs and
 * the temporaries of outputs and parts (hidden names only; finished
 * outputs stay).  Only for the one run that holds the directory (the CLI
 * does this after taking its lock).  Returns the number removed. */
RVFIT_EXPORT size_t rvfit_output_clean_dir(const char *outdir);

/* ---- the job status file ([output] status = FILE, `--status FILE`): one
 * line per input, "STATE<TAB>INPUT<TAB>DETAIL", in input order.  STATE is
 * pending, running, done, failed, skipped or interrupted (meanings in
 * docs/scale.md, decided by the coordinator of the job); DETAIL the output
 * written, where the input runs, or the reason.  Every write replaces the
 * whole file (a temporary renamed over it), so a reader, or a job killed
 * at any moment, finds either the previous complete state or the next.
 *
 * Ownership: the object copies the input names.  Thread-safety: none; one
 * writer (the process that coordinates the job). */
typedef struct rvfit_statusfile rvfit_statusfile;

/* The status of n inputs, all pending, in memory: nothing is written
 * before the first rvfit_statusfile_flush or _set, so the caller can set
 * the states it knows (outputs kept from an earlier run) first.
 * Temporaries of the file left by killed runs are removed. */
RVFIT_EXPORT int rvfit_statusfile_open(rvfit_statusfile **sf,
                                       const char *path, size_t n,
                                       char *const *inputs, rvfit_err *err);
/* Set input i's state and detail in memory (tabs and newlines of detail
 * become spaces); nothing is written. */
RVFIT_EXPORT void rvfit_statusfile_mark(rvfit_statusfile *sf, size_t i,
                                        const char *state,
                                        const char *detail);
/* Write the file now (atomically) when a state changed since the last
 * write.  NULL is allowed. */
RVFIT_EXPORT int rvfit_statusfile_flush(rvfit_statusfile *sf,
                                        rvfit_err *err);
/* _mark, then _flush. */
RVFIT_EXPORT int rvfit_statusfile_set(rvfit_statusfile *sf, size_t i,
                                      const char *state, const char *detail,
                                      rvfit_err *err);
/* Flush what is not written yet and free sf (NULL is allowed). */
RVFIT_EXPORT int rvfit_statusfile_close(rvfit_statusfile *sf, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
