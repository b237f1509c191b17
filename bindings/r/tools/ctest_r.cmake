# Driver of the R package's ctests (see ../CMakeLists.txt), run with
# cmake -P. Stages the freshly built libmpcf as an install prefix
# (include/mpcf/*.h, lib/libmpcf.so*), copies the package source, then
#   MODE=testthat: R CMD INSTALL into a private library and run testthat;
#   MODE=check:    R CMD build, then R CMD check --no-manual, failing on any
#                  ERROR or WARNING in the check log.
foreach(var MODE WORK R RSCRIPT PKG_SRC HEADER_DIR LIB_FILE LIB_SONAME LIB_LINKER_NAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ctest_r.cmake: -D${var}=... is required")
  endif()
endforeach()

# Runs a command, echoing it; stops the test when it fails.
function(run_step what)
  message(STATUS "[${MODE}] ${what}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[${MODE}] ${what} failed (exit status ${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(PREFIX ${WORK}/prefix)
file(MAKE_DIRECTORY ${PREFIX}/include/mpcf ${PREFIX}/lib ${WORK}/library ${WORK}/out)

# The install prefix: real file, SONAME link and linker-name link.
file(COPY ${HEADER_DIR}/mpcf.h ${HEADER_DIR}/mpcf_export.h DESTINATION ${PREFIX}/include/mpcf)
file(COPY ${LIB_FILE} DESTINATION ${PREFIX}/lib)
get_filename_component(real_name ${LIB_FILE} NAME)
if(NOT LIB_SONAME STREQUAL real_name)
  file(CREATE_LINK ${real_name} ${PREFIX}/lib/${LIB_SONAME} SYMBOLIC)
endif()
if(NOT LIB_LINKER_NAME STREQUAL real_name AND NOT LIB_LINKER_NAME STREQUAL LIB_SONAME)
  file(CREATE_LINK ${LIB_SONAME} ${PREFIX}/lib/${LIB_LINKER_NAME} SYMBOLIC)
endif()

# A clean copy of the package source (nothing left over from an in-place build).
file(COPY ${PKG_SRC}/ DESTINATION ${WORK}/pkg
     PATTERN "*.o" EXCLUDE PATTERN "*.so" EXCLUDE PATTERN "Makevars" EXCLUDE
     PATTERN "config.log" EXCLUDE)

if(MODE STREQUAL "testthat")
  run_step("R CMD INSTALL" ${R} CMD INSTALL --no-multiarch --library=${WORK}/library
           --configure-args=--with-mpcf=${PREFIX} ${WORK}/pkg)
  # R_LIBS puts the private library first, so the package under test is the
  # one just installed (checked below), not one installed system-wide.
  set(script "
    lib <- normalizePath('${WORK}/library')
    stopifnot(startsWith(normalizePath(find.package('mpcf')), lib))
    library(testthat)
    test_dir('.', package = 'mpcf', load_package = 'installed',
             reporter = 'summary', stop_on_failure = TRUE)")
  run_step("testthat" ${CMAKE_COMMAND} -E chdir ${WORK}/pkg/tests/testthat
           ${CMAKE_COMMAND} -E env R_LIBS=${WORK}/library
           ${RSCRIPT} -e "${script}")
elseif(MODE STREQUAL "check")
  run_step("R CMD build" ${CMAKE_COMMAND} -E chdir ${WORK}/out
           ${R} CMD build --no-build-vignettes --no-manual ${WORK}/pkg)
  file(GLOB tarball ${WORK}/out/mpcf_*.tar.gz)
  list(LENGTH tarball count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "[check] expected one mpcf_*.tar.gz, found: ${tarball}")
  endif()
  message(STATUS "[check] R CMD check --no-manual ${tarball} (MPCF_HOME=${PREFIX})")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E chdir ${WORK}/out
            ${CMAKE_COMMAND} -E env MPCF_HOME=${PREFIX} _R_CHECK_FORCE_SUGGESTS_=false
            ${R} CMD check --no-manual ${tarball}
    RESULT_VARIABLE rc)
  set(log ${WORK}/out/mpcf.Rcheck/00check.log)
  if(NOT EXISTS ${log})
    message(FATAL_ERROR "[check] R CMD check wrote no ${log} (exit status ${rc})")
  endif()
  file(STRINGS ${log} lines)
  set(problems "")
  set(notes "")
  foreach(line IN LISTS lines)
    if(line MATCHES "\\.\\.\\. *(ERROR|WARNING)$" OR line MATCHES "^Status: .*(ERROR|WARNING)")
      list(APPEND problems "${line}")
    elseif(line MATCHES "\\.\\.\\. *NOTE$")
      list(APPEND notes "${line}")
    endif()
  endforeach()
  foreach(note IN LISTS notes)
    message(STATUS "[check] ${note}")
  endforeach()
  if(problems OR NOT rc EQUAL 0)
    string(REPLACE ";" "\n  " problems "${problems}")
    message(FATAL_ERROR "[check] R CMD check failed (exit status ${rc}); see ${log}:\n  ${problems}")
  endif()
  message(STATUS "[check] R CMD check passed with no ERROR or WARNING")
else()
  message(FATAL_ERROR "ctest_r.cmake: unknown MODE '${MODE}'")
endif()
