/* template_arm.c — the template-arm options every single-arm instrument
 * (sdss, lamost) reads: one parser, so their keys, ranges and messages
 * stay the same. */
#include "rvfit/instrument.h"

int rvfit_kv_template_arm(const rvfit_kv *kv, int n, const char *section,
                          rvfit_template_arm *arm, rvfit_err *err)
{
    int rc = rvfit_kv_double(kv, n, "lam_min", 1000.0, 30000.0,
                             &arm->lam_min, err);
    if (!rc)
        rc = rvfit_kv_double(kv, n, "lam_max", 1000.0, 30000.0,
                             &arm->lam_max, err);
    if (!rc)
        rc = rvfit_kv_double(kv, n, "step", 0.01, 10.0, &arm->step, err);
    if (!rc)
        rc = rvfit_kv_double(kv, n, "sigma_kms", 0.0, 500.0,
                             &arm->sigma_kms, err);
    if (!rc && !(arm->lam_max > arm->lam_min + 100.0))
        rc = rvfit_err_set(err, RVFIT_ERR_CONFIG,
                           "%s: lam_max (%g) must exceed lam_min (%g) by "
                           "more than 100 A", section, arm->lam_max,
                           arm->lam_min);
    return rc;
}
