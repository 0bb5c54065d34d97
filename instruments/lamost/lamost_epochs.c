/* lamost_epochs.c — the 'epochs' extension (rvfit/instrument_epochs.h):
 * every spectrum is an epoch of the star its designation (DESIG) names.
 * An LRS file, or the coadd of an MRS file, is one epoch: the OBSID
 * changes from one observation to the next, so it identifies the
 * exposure (EXPID; -1 when the file has no usable OBSID), not the object.
 * Its epoch is the header's MJD, or, without one, its LMJD (LAMOST's
 * local day number: good to a day); an MRS coadd's the mean of its
 * exposures' (lamost_mrs_scan.c).  An MRS exposure's EXPID is its LMJM
 * (local Julian minute: unique among one target's exposures, across
 * nights) and its epoch LMJM's MJD. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lamost_internal.h"

int lamost_epochs(void *handle, size_t first, size_t count, rvfit_epoch *out,
                  rvfit_err *err)
{
    lamost_handle *h = handle;
    if (first > h->nsel || count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: epochs [%zu, %zu) "
                             "of %zu selected", h->path, first,
                             first + count, h->nsel);
    const lamost_meta *m = &h->meta;
    for (size_t i = 0; i < count; i++) {
        rvfit_epoch *e = &out[i];
        memset(e, 0, sizeof *e);
        e->targetid = m->targetid;
        e->expid = m->obsid > 0 ? m->obsid : -1;
        e->mjd = isfinite(m->mjd) ? m->mjd
                 : m->lmjd >= 0   ? (double)m->lmjd
                                  : NAN;
        if (h->layout == LAMOST_MRS) {
            const lamost_mrs_spec *p = &h->mrs.spec[h->mrs.sel[first + i]];
            e->expid = p->lmjm >= 0 ? p->lmjm : e->expid;
            e->mjd = p->mjd;
        }
        if (m->desig[0])
            snprintf(e->key, sizeof e->key, "%s", m->desig);
        else
            snprintf(e->why, sizeof e->why, "no DESIG keyword");
    }
    return RVFIT_OK;
}
