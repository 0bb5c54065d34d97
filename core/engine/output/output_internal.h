/* output_internal.h — what the output part gives the parts above it
 * (core-internal; the public interface is rvfit/output.h): the writer's
 * state and column descriptions (the session builds rows with them), the
 * stem of an input's name, and joining or removing the part outputs of
 * a file fitted in parts. */
#ifndef RVFIT_OUTPUT_INTERNAL_H
#define RVFIT_OUTPUT_INTERNAL_H

#include "rvfit/config.h"

#include <fitsio.h>
#include <stddef.h>

#include "rvfit/output.h"

#define OUT_MAX_COLS 128

enum out_col_kind {
    OC_VRAD, OC_VRAD_ERR, OC_VRAD_SKEW, OC_VRAD_KURT, OC_VSINI, OC_PARAM,
    OC_PARAM_ERR, OC_PARAM_ERR_INTERP, OC_CHISQ_TOT, OC_CHISQ_C_TOT,
    OC_CHISQ_RED, OC_NPIX_TOT, OC_CHISQ, OC_CHISQ_C, OC_SN, OC_NCLIP, OC_WARN,
    OC_SUCCESS,
    /* joint outputs (output_joint.c) */
    OC_NEPOCH, OC_VRAD_CHISQ, OC_VRAD_PVALUE, OC_VRAD_SCATTER, OC_TARGETID,
    OC_OBJKEY, OC_EXPID, OC_MJD, OC_INPUT, OC_ROW, OC_SB2_DCHISQ,
    OC_SB2_VRAD2, OC_SB2_FRATIO
};

typedef struct out_col {
    char name[72], form[16], unit[72], comment[72];
    char qty[16];   /* the physical unit ("dex" too, which `unit`, the
                       FITS TUNIT, leaves empty: the comment says it) */
    int kind, index;
} out_col;

typedef struct out_cols {
    int n;
    out_col col[OUT_MAX_COLS];
} out_cols;

struct rvfit_output {
    fitsfile *tab, *mod;
    char tab_tmp[RVFIT_PATH_LEN + 64], tab_final[RVFIT_PATH_LEN];
    char mod_tmp[RVFIT_PATH_LEN + 64], mod_final[RVFIT_PATH_LEN];
    out_cols cols;
    int id_table;       /* schema index whose columns go into RVTAB, -1 */
    int ntable;
    rvfit_table_schema *table; /* [ntable], copies of the file's schemas */
    int narm;
    rvfit_arm_info arm[RVFIT_MAX_ARMS];
    int wave_per_spec[RVFIT_MAX_ARMS];
    int wave_written;   /* shared grids written (with the first batch) */
    size_t nrow;
    int chisq_v;        /* rvmod has HDU CHISQ_V                         */
    /* joint outputs: RVEPOCH's columns and rows (nrow: RVTAB's) */
    int joint;
    out_cols ecols;
    size_t nexp;
};

void out_rvtab_columns(out_cols *c, const rvfit_library *lib,
                       const rvfit_file_info *info);
/* NCLIP_<arm> of each arm of info (RVTAB and RVEPOCH). */
void out_nclip_columns(out_cols *c, const rvfit_file_info *info);
/* Append a column (name, TFORM, unit, description, kind, index); "dex"
 * as unit goes into the description.  Nothing when c is full. */
void out_col_add(out_cols *c, const char *name, const char *form,
                 const char *unit, const char *comment, int kind, int index);
/* A binary table HDU extname of nrow rows with the columns of c (and
 * their TCOMMn descriptions); CFITSIO status in *st. */
int out_make_table(fitsfile *f, const char *extname, size_t nrow,
                   const out_cols *c, int *st);
/* output.c's primary header of either file: provenance, NSPEC = nrow. */
void out_write_primary(fitsfile *f, const rvfit_output_meta *m, size_t nrow,
                       int *st);
double out_value(const out_col *c, const rvfit_result *r);
const char *out_tform(const rvfit_column *col, char *buf, size_t n);
int out_fits_type(int type);
/* Deep copies of n schemas (columns included) and their release. */
rvfit_table_schema *out_schemas_copy(const rvfit_table_schema *s, int n);
void out_schemas_free(rvfit_table_schema *s, int n);

/* Room for an output path: the directory, a prefix and an input's stem. */
#define OUT_PATH (RVFIT_PATH_LEN + 1100)

/* The name of an input without directory and .fits/.fits.gz/.fit. */
void out_stem(const char *input, char *stem, size_t n);

/* output_merge.c.  Join the nparts part outputs of input `path`
 * (rvfit_output_part_names in outdir; models: the rvmod parts too) into
 * its final outputs, atomically, and remove the parts. */
int out_merge_parts(const char *outdir, int models, const char *path,
                    int nparts, rvfit_err *err);
/* Remove the part outputs of `path` (all part counts) and their
 * temporaries. */
void out_remove_parts(const char *outdir, const char *path);
/* Remove temporaries of `path`'s final outputs left by a process that was
 * killed (the one that opens an input is the only one writing it). */
void out_remove_stale(const char *outdir, const char *path);

#endif
