# Driver of the R package's ctests (see ../CMakeLists.txt), run with
# cmake -P.
#   MODE=testthat: stages the freshly built libmpcf as an install prefix
#                  (include/mpcf/*.h, lib/libmpcf.so*, lib/pkgconfig/mpcf.pc),
#                  copies the package source, R CMD INSTALL into a private
#                  library (configure must find libmpcf with pkg-config and link
#                  it) and runs testthat;
#   MODE=check:    R CMD build (a tarball that carries the libmpcf sources),
#                  then R CMD check --as-cran --no-manual on it as on a machine
#                  with R and a compiler only (pkg-config finds no libmpcf, so
#                  the package builds its bundled sources), failing on any
#                  ERROR or WARNING in the check log; NOTEs are printed.
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

# The install prefix: real file, SONAME link and linker-name link, mpcf.pc.
file(COPY ${HEADER_DIR}/mpcf.h ${HEADER_DIR}/mpcf_export.h DESTINATION ${PREFIX}/include/mpcf)
file(COPY ${LIB_FILE} DESTINATION ${PREFIX}/lib)
get_filename_component(real_name ${LIB_FILE} NAME)
if(NOT LIB_SONAME STREQUAL real_name)
  file(CREATE_LINK ${real_name} ${PREFIX}/lib/${LIB_SONAME} SYMBOLIC)
endif()
if(NOT LIB_LINKER_NAME STREQUAL real_name AND NOT LIB_LINKER_NAME STREQUAL LIB_SONAME)
  file(CREATE_LINK ${LIB_SONAME} ${PREFIX}/lib/${LIB_LINKER_NAME} SYMBOLIC)
endif()

file(WRITE ${PREFIX}/lib/pkgconfig/mpcf.pc "prefix=${PREFIX}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: mpcf
Description: libmpcf staged for the R tests
Version: 0.0.0
Libs: -L\${libdir} -lmpcf
Cflags: -I\${includedir}
")

if(MODE STREQUAL "testthat")
  # A clean copy of the package source: symbolic links (the bundled libmpcf
  # sources) resolved, nothing left over from an in-place build.
  run_step("copy the package" cp -RL ${PKG_SRC} ${WORK}/pkg)
  run_step("cleanup" ${CMAKE_COMMAND} -E chdir ${WORK}/pkg sh ./cleanup)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${PREFIX}/lib/pkgconfig --unset=MPCF_HOME
            ${R} CMD INSTALL --no-multiarch --library=${WORK}/library ${WORK}/pkg
    OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[testthat] R CMD INSTALL failed (exit status ${rc})")
  endif()
  if(NOT out MATCHES "libmpcf from pkg-config")
    message(FATAL_ERROR "[testthat] configure did not take libmpcf from pkg-config")
  endif()
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
           ${R} CMD build --no-build-vignettes --no-manual ${PKG_SRC})
  file(GLOB tarball ${WORK}/out/mpcf_*.tar.gz)
  list(LENGTH tarball count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "[check] expected one mpcf_*.tar.gz, found: ${tarball}")
  endif()
  # No libmpcf anywhere pkg-config looks, no MPCF_HOME: what a user with R
  # and a compiler only has. No network: the CRAN-incoming checks that ask
  # CRAN and the clock check are off.
  file(MAKE_DIRECTORY ${WORK}/no-pkgconfig)
  message(STATUS "[check] R CMD check --as-cran --no-manual ${tarball} (bundled libmpcf)")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E chdir ${WORK}/out
            ${CMAKE_COMMAND} -E env --unset=MPCF_HOME --unset=PKG_CONFIG_PATH
            PKG_CONFIG_LIBDIR=${WORK}/no-pkgconfig _R_CHECK_FORCE_SUGGESTS_=false
            _R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_SYSTEM_CLOCK_=false
            ${R} CMD check --as-cran --no-manual ${tarball}
    RESULT_VARIABLE rc)
  set(install_log ${WORK}/out/mpcf.Rcheck/00install.out)
  if(EXISTS ${install_log})
    file(READ ${install_log} install_out)
    if(NOT install_out MATCHES "libmpcf: building the bundled sources")
      message(FATAL_ERROR "[check] the package did not build its bundled libmpcf sources; see ${install_log}")
    endif()
  endif()
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
