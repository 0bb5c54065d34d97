/* stub_backend.c — a backend plugin that fails in exactly one way, chosen
 * at compile time (STUB_NOSYM, STUB_BADABI, STUB_WRONGNAME, STUB_INITFAIL,
 * STUB_UNAVAIL, STUB_SHORT, STUB_NOCAPS, STUB_BADCAPS, STUB_OPSNEW,
 * STUB_OPSMAJOR,
 * STUB_WRONGKIND, STUB_EXT, STUB_BADEXT, STUB_DEVTYPE: a CPU-only device
 * that declares the key device_type, as the opencl backend under PoCL).  It links nothing from the core on purpose:
 * errors are written by hand. */
#include <stdio.h>
#include <string.h>

#include "rvfit/plugin.h"

#ifndef STUB_NAME
#error "STUB_NAME (the name in the file name) must be defined"
#endif

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
#elif defined(STUB_DEVTYPE)
    for (int i = 0; i < n; i++)
        if (!strcmp(o[i].key, "device_type") && !strcmp(o[i].value, "gpu")) {
            snprintf(err->msg, sizeof err->msg, "stub: only a CPU device "
                     "(device_type = gpu, from %s)", o[i].file);
            return RVFIT_ERR_UNAVAILABLE;
        }
    return RVFIT_OK;
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

#if defined(STUB_OPSNEW)
/* Built by a newer rvfit whose backend table gained entries. */
#define STUB_OPS_VERSION                                                   \
    RVFIT_MAKE_VERSION(RVFIT_BACKEND_OPS_MAJOR, RVFIT_BACKEND_OPS_MINOR + 1)
#elif defined(STUB_OPSMAJOR)
/* Built against a backend table whose entries changed meaning. */
#define STUB_OPS_VERSION RVFIT_MAKE_VERSION(RVFIT_BACKEND_OPS_MAJOR + 1, 0)
#else
#define STUB_OPS_VERSION RVFIT_BACKEND_OPS_VERSION
#endif

static const rvfit_backend_ops ops = {
#ifdef STUB_SHORT
    /* An "older" plugin whose table ends after device(): the loader must
     * fill the rest with defaults. */
    .size = offsetof(rvfit_backend_ops, load_library),
#else
    .size = sizeof(rvfit_backend_ops),
#endif
    .version = STUB_OPS_VERSION,
#if defined(STUB_NOCAPS)
    .caps = 0, /* declares no way to be called */
#elif defined(STUB_BADCAPS)
    .caps = RVFIT_BACKEND_CAP_GRID | 0x100u, /* a bit from the future */
#else
    .caps = RVFIT_BACKEND_CAP_GRID,
#endif
    .open = stub_open,
    .device = stub_device,
    .close = stub_close,
};

#if defined(STUB_EXT) || defined(STUB_BADEXT)
/* Extension tables of known versions and sizes: "demo" 1.2 with three
 * words after its header, "old" 0.3. */
typedef struct demo_table {
    uint32_t size, version;
    uint64_t word[3];
} demo_table;
static const demo_table demo = {sizeof demo, RVFIT_MAKE_VERSION(1, 2),
                                {11, 22, 33}};
static const demo_table old = {sizeof old, RVFIT_MAKE_VERSION(0, 3),
                               {0, 0, 0}};
static const rvfit_ext ext[] = {
    {"demo", &demo},
    {"old", &old},
#ifdef STUB_BADEXT
    {"broken", NULL},
#endif
    {NULL, NULL},
};
#define STUB_EXT_LIST ext
#else
#define STUB_EXT_LIST NULL
#endif

#ifdef STUB_DEVTYPE
static const char *const keys[] = {"device_type", NULL};
#else
static const char *const keys[] = {NULL};
#endif

static const rvfit_plugin desc = {
#ifdef STUB_BADABI
    .abi_major = 99,
#else
    .abi_major = RVFIT_ABI_MAJOR,
#endif
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
#ifdef STUB_WRONGKIND
    .kind = RVFIT_PLUGIN_INSTRUMENT,
#else
    .kind = RVFIT_PLUGIN_BACKEND,
#endif
#ifdef STUB_WRONGNAME
    .name = "somethingelse",
#else
    .name = STUB_NAME,
#endif
    .version = "0.0",
    .description = "loader test stub",
    .config_keys = keys,
    .ops = &ops,
    .ext = STUB_EXT_LIST,
};

#ifdef STUB_NOSYM
RVFIT_EXPORT const rvfit_plugin *not_the_entry(void) { return &desc; }
#else
RVFIT_EXPORT const rvfit_plugin *rvfit_plugin_entry(void) { return &desc; }
#endif
