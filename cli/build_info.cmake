# Writes build_info.h for `dtrcheck --version`, run at every build (the
# dtrcheck_build_info target) so the name of the source follows a pull or an
# edit without re-running CMake. configure_file() rewrites the header only when
# its text changes, so an unchanged source rebuilds nothing.
# In: SOURCE_DIR, OUT, GIT (may be empty), COMPILER, BUILD_TYPE.
set(DTRCHECK_GIT_DESCRIBE "")
if(GIT)
  execute_process(COMMAND ${GIT} describe --always --dirty --tags
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE DTRCHECK_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT DTRCHECK_GIT_DESCRIBE)
  set(DTRCHECK_GIT_DESCRIBE "unknown")
endif()
set(DTRCHECK_COMPILER "${COMPILER}")
set(DTRCHECK_BUILD_TYPE "${BUILD_TYPE}")
configure_file(${SOURCE_DIR}/cli/build_info.h.in ${OUT} @ONLY)
