/* cmd_plot_read.h — what `rvfit plot` (cmd_plot.c) reads of a fitted file
 * (cmd_plot_read.c): the RVTAB rows of an rvtab file as fit results, the
 * parameter and arm names, and from the rvmod beside it the best-fit
 * models and, when written ([output] chisq_v = 1), the final velocity
 * scans (HDU CHISQ_V).  CFITSIO; errors name the file and HDU. */
#ifndef RVFIT_CMD_PLOT_READ_H
#define RVFIT_CMD_PLOT_READ_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/fit.h"

typedef struct pl_file {
    char rvtab[4200], rvmod[4200];
    char stem[1024];          /* rvtab_<stem>.fits                      */
    char input[4200];         /* header INPUT: the file fitted           */
    char instrument[64];      /* header INSTRUM                          */
    size_t nrow;
    int64_t *tid;             /* [nrow] TARGETID, NULL: no such column  */
    rvfit_result *res;        /* [nrow] the values fitted               */
    rvfit_library *lib;       /* parameter names and units only         */
    int narm;
    char arm[RVFIT_MAX_ARMS][16]; /* arms with an SN_<ARM> column       */
    void *mod;                /* the rvmod file (fitsfile *), or NULL   */
    int has_scan;             /* rvmod has CHISQ_V                      */
} pl_file;

/* Read rvtab `path` and open the rvmod beside it (an error when it is
 * missing: the figures need the models). */
int pl_open(pl_file *f, const char *path, rvfit_err *err);
/* Row `row` of <arm>_MODEL into out[npix] (NaN where not fitted). */
int pl_model(pl_file *f, const char *arm, size_t row, float *out,
             size_t npix, rvfit_err *err);
void pl_close(pl_file *f);

#endif
