/* stub_backend.c — a backend plugin that fails in exactly one way, chosen
 * at compile time (STUB_NOSYM, STUB_BADABI, STUB_WRONGNAME, STUB_INITFAIL,
 * STUB_UNAVAIL, STUB_SHORT).  It links nothing from the core on purpose:
 * errors are written by hand. */
#include <stdio.h>
#include <string.h>

#include "rvfit/plugin.h"

static int stub_open(const rvfit_host *h, const rvfit_kv *o, int n,
                     void **state, rvfit_err *err)
{
    (void)h, (void)o, (void)n;
    *state = NULL;
#if defined(STUB_INITFAIL)
    snprintf(err->msg, sizeof err->msg, "stub: device exploded");
    return RVFIT_ERR_DEVICE;
#elif defined(STUB_UNAVAIL)
    snprintf(err->msg, sizeof err->msg, "stub: no device here");
    return RVFIT_ERR_UNAVAILABLE;
#else
    (void)err;
    return RVFIT_OK;
#endif
}

static const char *stub_device(void *s)
{
    (void)s;
    return "stub device";
}

static void stub_close(void *s) { (void)s; }

static const rvfit_backend_ops ops = {
#ifdef STUB_SHORT
    /* An "older" plugin whose table ends after device(): the loader must
     * fill the rest with defaults. */
    offsetof(rvfit_backend_ops, load_library),
#else
    sizeof(rvfit_backend_ops),
#endif
    stub_open, stub_device, NULL, NULL, NULL, NULL, NULL, NULL, stub_close};

static const char *const keys[] = {NULL};

static const rvfit_plugin desc = {
#ifdef STUB_BADABI
    99,
#else
    RVFIT_ABI_MAJOR,
#endif
    RVFIT_ABI_MINOR, sizeof(rvfit_plugin), RVFIT_PLUGIN_BACKEND,
#ifdef STUB_WRONGNAME
    "somethingelse",
#elif defined(STUB_BADABI)
    "badabi",
#elif defined(STUB_INITFAIL)
    "initfail",
#elif defined(STUB_UNAVAIL)
    "unavail",
#elif defined(STUB_SHORT)
    "short",
#else
    "nosym",
#endif
    "0.0", "loader test stub", keys, &ops};

#ifdef STUB_NOSYM
RVFIT_EXPORT const rvfit_plugin *not_the_entry(void) { return &desc; }
#else
RVFIT_EXPORT const rvfit_plugin *rvfit_plugin_entry(void) { return &desc; }
#endif
