# cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... [-DC_COMPILER=...
#   -DCXX_COMPILER=... -DLAUNCHER=ccache -DNINJA=ninja -DLINKER_FLAGS=...
#   -DSANITIZE=... -DPKG_CONFIG=pkg-config] -P InstallTest.cmake
#
# Installs BUILD_DIR into WORK_DIR/prefix, then builds and runs against that
# prefix alone: the CMake consumer (find_package(kiln), kiln::kiln, the
# compiler's default C++ standard) and the C consumer (pkg-config kiln).
# Every step is timed; the first failure stops the test with its output.
cmake_minimum_required(VERSION 3.20)
foreach(var BUILD_DIR WORK_DIR CONSUMER_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "InstallTest.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT PKG_CONFIG)
  set(PKG_CONFIG pkg-config)
endif()
if(NOT C_COMPILER)
  set(C_COMPILER cc)
endif()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
set(c_consumer ${WORK_DIR}/c-consumer)
file(REMOVE_RECURSE ${prefix} ${consumer_build} ${c_consumer})
file(MAKE_DIRECTORY ${WORK_DIR})

# step(NAME COMMAND...): runs the command in WORK_DIR, quietly unless it fails.
function(step name)
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "${name}: failed (${rc}) after ${seconds} s: "
      "${command}\n${out}")
  endif()
  message(STATUS "${name}: ok (${seconds} s)")
  string(STRIP "${out}" out)
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(compile_flags "")
set(link_flags ${LINKER_FLAGS})
if(SANITIZE)
  set(compile_flags -fsanitize=${SANITIZE})
  list(APPEND link_flags -fsanitize=${SANITIZE})
endif()

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The installed package must not send its consumers looking for fmt (the
# consumer finds no fmt either: a fmt:: target left in would fail it too).
file(GLOB_RECURSE package_files ${prefix}/kiln*.cmake)
if(NOT package_files)
  message(FATAL_ERROR "no kiln*.cmake under ${prefix}")
endif()
foreach(f ${package_files})
  file(STRINGS ${f} fmt_lines REGEX "fmt::|\\(fmt")
  if(fmt_lines)
    message(FATAL_ERROR "${f} mentions fmt:\n${fmt_lines}")
  endif()
endforeach()

# The C++ consumer: find_package(kiln) with the installed prefix alone.
set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${consumer_build}
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
if(NINJA)
  list(APPEND configure -G Ninja -DCMAKE_MAKE_PROGRAM=${NINJA})
endif()
if(C_COMPILER)
  list(APPEND configure -DCMAKE_C_COMPILER=${C_COMPILER})
endif()
if(CXX_COMPILER)
  list(APPEND configure -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}
    -DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER})
endif()
string(REPLACE ";" " " cxx_flags "${compile_flags}")
string(REPLACE ";" " " exe_link_flags "${link_flags}")
list(APPEND configure "-DCMAKE_CXX_FLAGS=${cxx_flags}"
  "-DCMAKE_EXE_LINKER_FLAGS=${exe_link_flags}")
step("configure the CMake consumer" ${configure})
step("build the CMake consumer"
  ${CMAKE_COMMAND} --build ${consumer_build} --parallel 2)
step("run the CMake consumer" ${consumer_build}/consumer)
message(STATUS "  ${step_output}")

# The C consumer: compiled and linked with cc and pkg-config's flags only.
file(GLOB_RECURSE kiln_pc ${prefix}/kiln.pc)
if(NOT kiln_pc)
  message(FATAL_ERROR "no kiln.pc under ${prefix}")
endif()
get_filename_component(pc_dir "${kiln_pc}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs kiln
  RESULT_VARIABLE rc OUTPUT_VARIABLE pc_flags ERROR_VARIABLE pc_error
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs kiln: ${pc_error}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
set(cc ${C_COMPILER})
if(LAUNCHER)
  set(cc ${LAUNCHER} ${C_COMPILER})
endif()
step("build the C consumer" ${cc} -std=c99 -pedantic -Wall -Wextra -Werror
  ${compile_flags} ${CONSUMER_DIR}/consumer.c -o ${c_consumer}
  ${pc_flags} ${link_flags})
step("run the C consumer" ${c_consumer})
message(STATUS "  ${step_output}")
