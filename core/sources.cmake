# The core's sources, listed (no globs): a file joins the build when it
# is named here.  Included by core/CMakeLists.txt and by the fuzz targets
# (tests/fuzz), which compile parts of the core themselves.
set(_core ${CMAKE_CURRENT_LIST_DIR})

# The SDK: the runtime services plugins use (src/) and the mock-writer kit
# (mockkit/).
set(RVFIT_SDK_SOURCES
  files.c fits.c fits_headers.c host.c library_model.c library_stencil.c
  linalg.c numeric.c parallel.c physics.c physics_tables.c pool.c
  spectra.c status.c template_arm.c)
list(TRANSFORM RVFIT_SDK_SOURCES PREPEND ${_core}/sdk/src/)
list(APPEND RVFIT_SDK_SOURCES ${_core}/sdk/mockkit/mockkit.c
  ${_core}/sdk/mockkit/mockkit_loglam.c ${_core}/sdk/mockkit/mockkit_signal.c)

# The engine, part by part.
include(${_core}/engine/parts.cmake)

# The tools: template building, synthetic grids and stars.
# (rvspecfit_*: reading rvspecfit's template files, with HDF5)
set(RVFIT_TOOLS_SOURCES grid_write.c mockstars.c phoenix_read.c synth.c
  templates.c tools_library.c rvspecfit_h5.c rvspecfit_import.c
  rvspecfit_lsf.c)
list(TRANSFORM RVFIT_TOOLS_SOURCES PREPEND ${_core}/tools/src/)

# The command-line program: its infrastructure (options, logging, runs,
# MPI, signals, locks, reports) and one file per command (cmd/).
set(RVFIT_CLI_SOURCES main.c cli_common.c cli_coord.c cli_joint.c
  cli_lock.c cli_mpi.c cli_run.c cli_report.c cli_signal.c cli_status.c
  cmd/cmd_compare.c cmd/cmd_compare_truth.c cmd/cmd_config.c
  cmd/cmd_config_md.c cmd/cmd_fit.c cmd/cmd_mock.c cmd/cmd_plot.c
  cmd/cmd_plot_read.c cmd/cmd_plugins.c
  cmd/cmd_templates.c)
list(TRANSFORM RVFIT_CLI_SOURCES PREPEND ${_core}/cli/)
