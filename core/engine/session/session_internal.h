/* session_internal.h — the state behind rvfit_session (core-internal). */
#ifndef RVFIT_SESSION_INTERNAL_H
#define RVFIT_SESSION_INTERNAL_H

#include "output/output_internal.h"
#include "rvfit/config.h"
#include "rvfit/fit.h"
#include "rvfit/interp.h"
#include "rvfit/loader.h"
#include "rvfit/session.h"

/* An arm as the caller gave it, copied, until batch_load. */
typedef struct sess_arm {
    rvfit_arm_info info;
    double *wave;
    float *flux, *ivar, *res;
} sess_arm;

struct rvfit_session {
    rvfit_config cfg;
    rvfit_host host;
    rvfit_library lib;
    rvfit_interpolator interp;  /* open while have_lib                  */
    rvfit_stencil_buf sbuf;     /* stencils from the core (simplex)     */
    int have_lib;
    rvfit_backend be;
    int have_be;
    rvfit_fit_opts fo;
    rvfit_profile prof;
    /* the batch: staged arms, then the loaded batch */
    size_t nspec;
    int narm;
    sess_arm st[RVFIT_MAX_ARMS];
    rvfit_batch b;
    int have_b, loaded;
    /* results of the last fit */
    rvfit_result *res;
    float *models[RVFIT_MAX_ARMS];
    int fitted;
    out_cols cols;
};

/* Free the staged arms, the batch and the results. */
void sess_batch_clear(rvfit_session *s);

#endif
