/* rvfit/instrument_mock.h — the optional 'mock' extension of instrument
 * plugins: writing synthetic files in the instrument's own format (what
 * `rvfit mock spectra` and the tests use).
 *
 * It lives outside rvfit_instrument_ops so that the reader interface stays
 * a reader interface: a plugin that only reads (docs/examples/ascii) has
 * no such table, and the mock writer can change version without touching
 * readers.  A plugin offers it as an entry of its descriptor's ext array:
 *
 *   static const rvfit_instrument_mock_ops mock = {
 *       .size = sizeof mock, .version = RVFIT_MOCK_EXT_VERSION,
 *       .write_mock = my_write_mock};
 *   static const rvfit_ext ext[] = {{RVFIT_EXT_MOCK, &mock}, {NULL, NULL}};
 *   ... .ext = ext in the rvfit_plugin descriptor.
 *
 * The core finds it with rvfit_plugin_ext(handle, RVFIT_EXT_MOCK,
 * RVFIT_MOCK_EXT_VERSION, sizeof(rvfit_instrument_mock_ops), err).
 * Versioning: RVFIT_MOCK_EXT_VERSION (rvfit/abi.h, reached through
 * rvfit/plugin.h); entries are only appended (minor bump).
 * Threading: write_mock may use up to host->nthreads threads itself; the
 * truth callback must then be safe to call concurrently for different
 * stars.
 */
#ifndef RVFIT_INSTRUMENT_MOCK_H
#define RVFIT_INSTRUMENT_MOCK_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/host.h"
#include "rvfit/instrument.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_EXT_MOCK "mock"

typedef struct rvfit_instrument_mock_ops {
    uint32_t size;    /* sizeof(rvfit_instrument_mock_ops) as compiled */
    uint32_t version; /* RVFIT_MOCK_EXT_VERSION as compiled            */

    /* --- mock 1.0 (ABI 2.0) --- */

    /* Write a synthetic file at `path` (atomically: nothing is left at
     * `path` on failure) for nstar stars, the true spectra from
     * truth(ctx, star, ...), the noise deterministic in `seed` whatever
     * the thread count.  opts are the plugin's [instrument.NAME] options.
     * Errors name the file and, for bad stars, the star. */
    int (*write_mock)(const rvfit_host *host, const rvfit_kv *opts,
                      int nopt, const char *path, size_t nstar,
                      const rvfit_mock_star *stars, rvfit_truth_fn truth,
                      void *ctx, uint64_t seed, rvfit_err *err);
} rvfit_instrument_mock_ops;

#ifdef __cplusplus
}
#endif
#endif
