/* rvfit/output.h — rvtab_*.fits and rvmod_*.fits writers.
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

#ifdef __cplusplus
}
#endif
#endif
