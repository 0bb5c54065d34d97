/* joint_internal.h — between the joint driver (joint.c) and the
 * two-velocity test (joint_sb2.c); private to the joint part. */
#ifndef RVFIT_JOINT_INTERNAL_H
#define RVFIT_JOINT_INTERNAL_H

#include "fit/fit_internal.h"
#include "rvfit/joint.h"

/* The secondary's velocity is searched at VRAD + k SB2_STEP, |k| <=
 * SB2_NSTEP (+-300 km/s) and |k SB2_STEP| >= SB2_MINSEP (km/s);
 * RVFIT_WARN_SB2 is set when the two-velocity model lowers -2 ln L by
 * more than SB2_WARN (docs/benchmarks.md, "Joint fits": the measurements
 * behind them). */
#define SB2_NSTEP 30
#define SB2_STEP 10.0
#define SB2_MINSEP 50.0
#define SB2_WARN 100.0

/* The two-velocity test of every fitted spectrum of the batch into
 * out[nspec] (NaN where not fitted), RVFIT_WARN_SB2 into their results;
 * needs the batch's flux (the run keeps it when [fit] sb2 is set). */
int joint_sb2(fit_ctx *f, rvfit_sb2 *out);

#endif
