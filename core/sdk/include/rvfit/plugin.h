/* rvfit/plugin.h — the plugin descriptor and its single entry symbol.
 *
 * A plugin is a shared library named rvfit_<kind>_<name>.so (kind is
 * "backend" or "instrument") exporting exactly one symbol,
 * RVFIT_PLUGIN_ENTRY, a function returning a pointer to a static
 * descriptor.  The loader checks, in order, and reports the failing stage:
 *   not found  -> dlopen -> symbol -> ABI (major equal, minor <= host,
 *   descriptor sane, kind as the file name says, ops table version of that
 *   kind: major equal, minor <= host; extension list sane) -> name
 *   (descriptor name == file name) -> init (the plugin's open).
 * Build plugins with -fvisibility=hidden and mark the entry RVFIT_EXPORT.
 *
 * Every struct reachable from here is ABI; rvfit/abi.h holds the
 * versions and pins the layouts, rvfit/descriptor.h the descriptor.  See
 * docs/plugin-abi.md.
 */
#ifndef RVFIT_PLUGIN_H
#define RVFIT_PLUGIN_H

#include <stdint.h>

#include "rvfit/abi.h"
#include "rvfit/backend.h"
#include "rvfit/descriptor.h"
#include "rvfit/instrument.h"
#include "rvfit/instrument_epochs.h"
#include "rvfit/instrument_mock.h"
#include "rvfit/numeric.h"
#include "rvfit/physics.h"

#endif
