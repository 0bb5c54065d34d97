/* rvfit/abi.h — the plugin ABI: its version, the version of each table a
 * plugin fills, and the recorded layout of every struct a plugin sees.
 *
 * Included by rvfit/plugin.h (which plugins include); it includes the
 * headers whose structs it pins.  The rules (docs/plugin-abi.md):
 *   - RVFIT_ABI_MAJOR covers everything a plugin and the core share:
 *     the data structs (batches, library, points, errors, host, ...), the
 *     limits that size them, enum values, SDK function signatures (it is
 *     also the SONAME of librvfit_sdk) and the descriptor's leading
 *     fields.  The loader refuses another major.
 *   - RVFIT_ABI_MINOR: a field appended to a table that carries its own
 *     size (rvfit_plugin, rvfit_host).  The loader refuses a newer minor.
 *   - Each ops table and extension has its own major.minor, packed with
 *     RVFIT_MAKE_VERSION into the table's `version`: append an entry ->
 *     minor; change, remove or reorder one -> major (only plugins of that
 *     kind must be rebuilt).
 * The size assertions below are recorded for LP64 targets (Linux x86-64,
 * aarch64); when one fails, the message says which number to bump.  The
 * limits are checked everywhere: they size arrays on both sides.
 */
#ifndef RVFIT_ABI_H
#define RVFIT_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/descriptor.h"
#include "rvfit/host.h"
#include "rvfit/instrument.h"
#include "rvfit/instrument_epochs.h"
#include "rvfit/instrument_mock.h"
#include "rvfit/library.h"
#include "rvfit/numeric.h"
#include "rvfit/spectra.h"
#include "rvfit/status.h"

#define RVFIT_ABI_MAJOR 3
#define RVFIT_ABI_MINOR 0

/* The rvfit release these headers come with (CMake refuses to configure
 * when it differs from the project's VERSION).  The plugins released with
 * rvfit report it as their version; a plugin of its own keeps its own. */
#define RVFIT_RELEASE "0.1.0"

/* A table version: major in the high 16 bits, minor in the low 16. */
#define RVFIT_MAKE_VERSION(major, minor)                                   \
    (((uint32_t)(major) << 16) | (uint32_t)(minor))
#define RVFIT_VERSION_MAJ(v) ((uint32_t)(v) >> 16)
#define RVFIT_VERSION_MIN(v) ((uint32_t)(v)&0xffffu)

/* rvfit_backend_ops (rvfit/backend.h) */
#define RVFIT_BACKEND_OPS_MAJOR 2
#define RVFIT_BACKEND_OPS_MINOR 1
#define RVFIT_BACKEND_OPS_VERSION                                          \
    RVFIT_MAKE_VERSION(RVFIT_BACKEND_OPS_MAJOR, RVFIT_BACKEND_OPS_MINOR)

/* rvfit_instrument_ops (rvfit/instrument.h) */
#define RVFIT_INSTRUMENT_OPS_MAJOR 1
#define RVFIT_INSTRUMENT_OPS_MINOR 0
#define RVFIT_INSTRUMENT_OPS_VERSION                                       \
    RVFIT_MAKE_VERSION(RVFIT_INSTRUMENT_OPS_MAJOR, RVFIT_INSTRUMENT_OPS_MINOR)

/* The 'mock' extension, rvfit_instrument_mock_ops (rvfit/instrument_mock.h) */
#define RVFIT_MOCK_EXT_MAJOR 1
#define RVFIT_MOCK_EXT_MINOR 0
#define RVFIT_MOCK_EXT_VERSION                                             \
    RVFIT_MAKE_VERSION(RVFIT_MOCK_EXT_MAJOR, RVFIT_MOCK_EXT_MINOR)

/* The 'epochs' extension, rvfit_instrument_epochs_ops
 * (rvfit/instrument_epochs.h) */
#define RVFIT_EPOCHS_EXT_MAJOR 1
#define RVFIT_EPOCHS_EXT_MINOR 0
#define RVFIT_EPOCHS_EXT_VERSION                                           \
    RVFIT_MAKE_VERSION(RVFIT_EPOCHS_EXT_MAJOR, RVFIT_EPOCHS_EXT_MINOR)

/* Entries of a descriptor's ext array the loader accepts (a bound, so an
 * unterminated array is reported instead of read past its end). */
#define RVFIT_MAX_EXT 64

/* ---- recorded layout ------------------------------------------------ */

#ifdef __cplusplus
#define RVFIT_ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define RVFIT_ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* A struct whose layout is fixed for the whole major version. */
#define RVFIT_ABI_STRUCT(T, n)                                             \
    RVFIT_ABI_ASSERT(sizeof(T) == (n),                                     \
                     "ABI: sizeof(" #T ") is no longer " #n " bytes "      \
                     "(LP64): a struct plugins share changed; bump "        \
                     "RVFIT_ABI_MAJOR and update the size recorded in "    \
                     "rvfit/abi.h")
/* A table that carries its size and version and only grows at the end. */
#define RVFIT_ABI_TABLE(T, n, VER)                                         \
    RVFIT_ABI_ASSERT(sizeof(T) == (n),                                     \
                     "ABI: sizeof(" #T ") is no longer " #n " bytes "      \
                     "(LP64): appending an entry needs a " #VER "_MINOR "  \
                     "bump, any other change a " #VER "_MAJOR bump; "      \
                     "then update the size recorded in rvfit/abi.h")
/* A limit that sizes arrays on both sides of the plugin boundary. */
#define RVFIT_ABI_LIMIT(L, v)                                              \
    RVFIT_ABI_ASSERT((L) == (v), "ABI: " #L " is no longer " #v            \
                                 ": it sizes structs or arrays plugins "   \
                                 "share; bump RVFIT_ABI_MAJOR and update " \
                                 "the value recorded in rvfit/abi.h")

RVFIT_ABI_LIMIT(RVFIT_MAX_PARAMS, 8);
RVFIT_ABI_LIMIT(RVFIT_MAX_ARMS, 8);
RVFIT_ABI_LIMIT(RVFIT_MAX_NODES, 256);
RVFIT_ABI_LIMIT(RVFIT_MAX_POLY, 32);
RVFIT_ABI_LIMIT(RVFIT_MAX_CORNERS, 256);
RVFIT_ABI_LIMIT(RVFIT_MAX_STENCIL, 256);
RVFIT_ABI_LIMIT(RVFIT_MAX_VSINI_HALF, 512);
RVFIT_ABI_LIMIT(RVFIT_ERR_LEN, 2048);
RVFIT_ABI_LIMIT(RVFIT_NAME_LEN, 72);
RVFIT_ABI_LIMIT(RVFIT_MAX_EXT, 64);
RVFIT_ABI_LIMIT(RVFIT_OBJKEY_LEN, 48);

/* The loader reads these before it knows anything else about a plugin:
 * they may never move, on any target. */
RVFIT_ABI_ASSERT(offsetof(rvfit_plugin, abi_major) == 0 &&
                     offsetof(rvfit_plugin, abi_minor) == 4 &&
                     offsetof(rvfit_plugin, size) == 8 &&
                     offsetof(rvfit_plugin, kind) == 12,
                 "ABI: the leading fields of rvfit_plugin may never move");
RVFIT_ABI_ASSERT(offsetof(rvfit_backend_ops, version) == 4 &&
                     offsetof(rvfit_instrument_ops, version) == 4 &&
                     offsetof(rvfit_instrument_mock_ops, version) == 4 &&
                     offsetof(rvfit_instrument_epochs_ops, version) == 4,
                 "ABI: every table starts with uint32_t size, version");

#if defined(__LP64__) || defined(_LP64)
/* descriptor and tables (size + version; append only) */
RVFIT_ABI_TABLE(rvfit_plugin, 64, RVFIT_ABI);
RVFIT_ABI_TABLE(rvfit_host, 48, RVFIT_ABI);
RVFIT_ABI_STRUCT(rvfit_ext, 16);
RVFIT_ABI_TABLE(rvfit_backend_ops, 96, RVFIT_BACKEND_OPS);
RVFIT_ABI_TABLE(rvfit_instrument_ops, 56, RVFIT_INSTRUMENT_OPS);
RVFIT_ABI_TABLE(rvfit_instrument_mock_ops, 16, RVFIT_MOCK_EXT);
RVFIT_ABI_TABLE(rvfit_instrument_epochs_ops, 16, RVFIT_EPOCHS_EXT);
/* status.h, host.h */
RVFIT_ABI_STRUCT(rvfit_err, 2048);
RVFIT_ABI_STRUCT(rvfit_kv, 32);
/* backend.h */
RVFIT_ABI_STRUCT(rvfit_point, 88);
RVFIT_ABI_STRUCT(rvfit_model_opts, 8);
RVFIT_ABI_STRUCT(rvfit_chisq_out, 16);
RVFIT_ABI_STRUCT(rvfit_counters, 24);
RVFIT_ABI_STRUCT(rvfit_stencils, 40);
/* library.h */
RVFIT_ABI_STRUCT(rvfit_library, 17560);
RVFIT_ABI_STRUCT(rvfit_axis, 2096);
RVFIT_ABI_STRUCT(rvfit_lib_arm, 56);
/* spectra.h */
RVFIT_ABI_STRUCT(rvfit_batch, 752);
RVFIT_ABI_STRUCT(rvfit_arm_batch, 88);
RVFIT_ABI_STRUCT(rvfit_arm_info, 40);
RVFIT_ABI_STRUCT(rvfit_column, 232);
RVFIT_ABI_STRUCT(rvfit_table_schema, 88);
RVFIT_ABI_STRUCT(rvfit_table_rows, 16);
/* instrument.h */
RVFIT_ABI_STRUCT(rvfit_file_info, 360);
RVFIT_ABI_STRUCT(rvfit_select, 24);
RVFIT_ABI_STRUCT(rvfit_template_arm, 48);
RVFIT_ABI_STRUCT(rvfit_mock_star, 64);
/* instrument_epochs.h */
RVFIT_ABI_STRUCT(rvfit_epoch, 112);
/* numeric.h (caller-owned state the SDK functions read) */
RVFIT_ABI_STRUCT(rvfit_rng, 32);
RVFIT_ABI_STRUCT(rvfit_parallel_job, 32);
#endif

#endif
