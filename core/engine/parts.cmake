# The engine's parts, lowest layer first (docs/architecture.md, "Layout").
# A part uses only itself and the parts listed before it; of those it
# includes only the public header (include/rvfit/<header>) or the one
# internal header named here.  tests/test_layers.py checks this on the
# sources and the compiled objects, from the engine_parts.txt written
# below.
#
# rvfit_engine_part(NAME PUBLIC_HEADER INTERNAL_HEADER|- SOURCES...)
# Sets RVFIT_ENGINE_SOURCES (all, absolute paths) and
# RVFIT_ENGINE_<NAME>_SOURCES (one part's; the fuzz targets build parts).
set(RVFIT_ENGINE_SOURCES "")
set(RVFIT_ENGINE_PARTS_TEXT "")
macro(rvfit_engine_part name public internal)
  set(RVFIT_ENGINE_${name}_SOURCES "")
  foreach(s ${ARGN})
    list(APPEND RVFIT_ENGINE_${name}_SOURCES ${CMAKE_CURRENT_LIST_DIR}/${name}/${s})
  endforeach()
  list(APPEND RVFIT_ENGINE_SOURCES ${RVFIT_ENGINE_${name}_SOURCES})
  if("${internal}" STREQUAL "-")
    string(APPEND RVFIT_ENGINE_PARTS_TEXT "${name} ${public}\n")
  else()
    string(APPEND RVFIT_ENGINE_PARTS_TEXT "${name} ${public} ${internal}\n")
  endif()
endmacro()

# configuration: INI files (inih), defaults, the effective text
rvfit_engine_part(config config.h -
  config.c)
# the template-library file format and the library in memory
rvfit_engine_part(library library_io.h library_internal.h
  fits_io.c check.c read.c write.c filled.c fill_holes.c geometry.c
  template.c)
# plugins: finding, loading, ABI checks; opening backends and instruments
rvfit_engine_part(plugin loader.h -
  loader.c backend_open.c)
# template interpolators: a registry of kinds, stencils for the backends
# (a kind: its files here and one line in interp.c's registry)
rvfit_engine_part(interp interp.h -
  interp.c grid.c options.c file.c stencil_buf.c error_stencil.c
  simplex/sx_build.c simplex/sx_index.c simplex/sx_stencil.c
  simplex/sx_quad.c simplex/sx_kind.c
  pca/pca_build.c pca/pca_data.c pca/pca_records.c pca/pca_kind.c)
# batch preparation before a backend loads it
rvfit_engine_part(prep prep.h -
  prep.c)
# the fit driver: its stages in lockstep, the error terms, objects of
# several spectra (fit_group.c)
rvfit_engine_part(fit fit.h fit_internal.h
  fit.c fit_eval.c fit_result.c fit_group.c
  stage_init.c stage_optim.c stage_clip.c stage_vrefine.c stage_hessian.c
  stage_diag.c
  newton.c nelder_mead.c quad.c err_interp.c err_pin.c)
# several spectra of one object fitted together: the joint driver, the
# constant-velocity fit and its statistics, the two-velocity test
rvfit_engine_part(joint joint.h -
  joint.c joint_sb2.c joint_stats.c)
# output files: rvtab/rvmod, their columns, merging parts, the status file
rvfit_engine_part(output output.h output_internal.h
  output.c output_cols.c output_write.c output_names.c output_merge.c
  output_joint.c statusfile.c)
# fit figures (Cairo)
rvfit_engine_part(plot plot.h -
  plot_draw.c plot_layout.c plot_png.c plot_row.c plot_summary.c)
# a run: reader, fit and writer threads over a stream of inputs; joint
# runs (run_j*.c): every spectrum of an object in one fit
rvfit_engine_part(run run.h -
  run.c run_ctx.c run_queue.c run_batch.c run_mem.c run_reader.c run_writer.c
  run_notes.c run_plot.c run_jindex.c run_jread.c run_jwrite.c run_joint.c)
# the in-process session behind the bindings
rvfit_engine_part(session session.h -
  session.c session_batch.c session_fit.c)

file(WRITE ${CMAKE_BINARY_DIR}/core/engine_parts.txt "${RVFIT_ENGINE_PARTS_TEXT}")
