/* rvfit/instrument_epochs.h — the optional 'epochs' extension of
 * instrument plugins: which object each selected spectrum belongs to, when
 * it was observed and as which exposure, so that `rvfit fit --epochs
 * joint` can fit all spectra of one object together (shared stellar
 * parameters, one velocity per exposure), whichever files, rows and order
 * they come in.
 *
 * It is an extension, not an entry of rvfit_instrument_ops, so that
 * readers without it (every plugin written before it, docs/examples/ascii)
 * keep loading and working in single mode; joint mode refuses an
 * instrument without it, naming the plugin.  A plugin offers it as an
 * entry of its descriptor's ext array:
 *
 *   static const rvfit_instrument_epochs_ops epochs = {
 *       .size = sizeof epochs, .version = RVFIT_EPOCHS_EXT_VERSION,
 *       .epochs = my_epochs};
 *   static const rvfit_ext ext[] = {{RVFIT_EXT_EPOCHS, &epochs}, ...,
 *                                   {NULL, NULL}};
 *
 * The core finds it with rvfit_plugin_ext(handle, RVFIT_EXT_EPOCHS,
 * RVFIT_EPOCHS_EXT_VERSION, sizeof(rvfit_instrument_epochs_ops), err).
 * Versioning: RVFIT_EPOCHS_EXT_VERSION (rvfit/abi.h); entries are only
 * appended (minor bump).  Threading: as the reader's handle (one thread
 * at a time).
 */
#ifndef RVFIT_INSTRUMENT_EPOCHS_H
#define RVFIT_INSTRUMENT_EPOCHS_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/instrument.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_EXT_EPOCHS "epochs"

/* Characters of an object key, its terminating NUL included. */
#define RVFIT_OBJKEY_LEN 48

/* One selected spectrum as an epoch of an object. */
typedef struct rvfit_epoch {
    /* The object: spectra with equal keys are one star (DESI: the
     * TARGETID in decimal; LAMOST: the designation, since OBSID changes
     * between exposures).  NUL-terminated; "" means the spectrum belongs
     * to no object (an unassigned fibre): joint mode skips it, counted
     * under `why`. */
    char key[RVFIT_OBJKEY_LEN];
    int64_t targetid;  /* the object's identifier for the outputs        */
    int64_t expid;     /* exposure identifier, unique within an object's
                          exposures; -1 when the spectrum is not one
                          exposure (a coadd of several)                  */
    double mjd;        /* epoch: MJD (days, UTC) of the exposure's middle,
                          or the mean of a coadd's; NaN when unknown     */
    char why[40];      /* key "": the reason, e.g. "negative TARGETID"   */
} rvfit_epoch;

typedef struct rvfit_instrument_epochs_ops {
    uint32_t size;    /* sizeof(rvfit_instrument_epochs_ops) as compiled */
    uint32_t version; /* RVFIT_EPOCHS_EXT_VERSION as compiled            */

    /* --- epochs 1.0 (ABI 3.0) --- */

    /* Epochs of the selected spectra [first, first + count) of an open
     * handle (rvfit_instrument_ops.open) into out[0 .. count-1].  Errors
     * name the file and HDU. */
    int (*epochs)(void *handle, size_t first, size_t count,
                  rvfit_epoch *out, rvfit_err *err);
} rvfit_instrument_epochs_ops;

#ifdef __cplusplus
}
#endif
#endif
