# cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_DIR=... [-DSOURCE_DIR=...
#   -DC_COMPILER=... -DCXX_COMPILER=... -DLAUNCHER=ccache -DNINJA=ninja
#   -DLINKER_FLAGS=... -DSANITIZE=... -DPKG_CONFIG=pkg-config -DSHARED=ON
#   -DREADELF=readelf -DSTRIP=strip -DSIZE_LIMIT_MIB=30] -P InstallTest.cmake
#
# Installs BUILD_DIR into WORK_DIR/prefix, then builds and runs against that
# prefix alone (nothing of the build or source tree on any include or link
# path, nothing of LLVM's headers or definitions):
#   the static CMake consumer  find_package(kiln), kiln::kiln
#   the static C consumer      pkg-config kiln
#   the shared CMake consumer  find_package(kiln COMPONENTS shared), kiln::shared
#   the shared C consumer      pkg-config kiln-shared
# Each program's and libkiln.so's dynamic dependencies (DT_NEEDED) must be
# in the list of docs/GettingStarted.md ("What a consumer needs"), and the
# stripped static C consumer must stay within SIZE_LIMIT_MIB (not checked
# in a sanitizer build). Every step is timed; the first failure stops the
# test with its output.
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
set(shared_consumer_build ${WORK_DIR}/shared-consumer-build)
set(shared_c_consumer ${WORK_DIR}/shared-c-consumer)
file(REMOVE_RECURSE ${prefix} ${consumer_build} ${c_consumer}
  ${shared_consumer_build} ${shared_c_consumer})
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


# check_needed(FILE): every DT_NEEDED entry of FILE is a library of the
# Debian packages docs/GettingStarted.md lists for consumers at run time
# (and the sanitizers' runtimes in a sanitizer build).
set(allowed_needed
  libtbb.so.12                 # libtbb12
  libzstd.so.1                 # libzstd1
  libz.so.1                    # zlib1g
  libhiredis.so.0.14           # libhiredis0.14 (KILN_REMOTE)
  libcrypto.so.3               # libssl3 (KILN_REMOTE)
  libstdc++.so.6               # libstdc++6
  libgcc_s.so.1                # libgcc-s1
  libm.so.6 libmvec.so.1 libc.so.6 libpthread.so.0 libdl.so.2 librt.so.1
  ld-linux-x86-64.so.2         # libc6
  )
function(check_needed file)
  if(NOT READELF)
    return()
  endif()
  execute_process(COMMAND ${READELF} -d ${file}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -d ${file}: ${out}")
  endif()
  string(REGEX MATCHALL "Shared library: \\[[^]]*\\]" entries "${out}")
  set(names "")
  foreach(entry ${entries})
    string(REGEX REPLACE "Shared library: \\[(.*)\\]" "\\1" name "${entry}")
    list(APPEND names ${name})
    if(name IN_LIST allowed_needed OR name MATCHES "^libkiln\\.so\\." OR
       (SANITIZE AND name MATCHES "^lib(a|ub|t)san\\.so"))
      continue()
    endif()
    message(FATAL_ERROR "${file} needs ${name}, which the documented "
      "packages do not give (docs/GettingStarted.md, \"What a consumer "
      "needs\")")
  endforeach()
  list(JOIN names " " names)
  message(STATUS "  needs: ${names}")
endfunction()

# check_clean_build(BUILD): the consumer's build files name nothing of the
# build or source tree and nothing of LLVM's headers or definitions.
function(check_clean_build build)
  file(GLOB_RECURSE files ${build}/*.ninja ${build}/*.make ${build}/flags.make
    ${build}/link.txt ${build}/compile_commands.json)
  foreach(f ${files})
    file(READ ${f} text)
    foreach(bad "${BUILD_DIR}/lib" "${BUILD_DIR}/libkiln" "${SOURCE_DIR}/include"
        "include/llvm" "llvm-19/include" "_GNU_SOURCE" "__STDC_" "libz3")
      if(bad STREQUAL "/include" OR bad STREQUAL "/lib")
        continue() # SOURCE_DIR or BUILD_DIR unset
      endif()
      string(FIND "${text}" "${bad}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${f} mentions ${bad}")
      endif()
    endforeach()
  endforeach()
endfunction()

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The installed package must not send its consumers looking for fmt (the
# consumer finds no fmt either: a fmt:: target left in would fail it too),
# nor carry LLVM's headers or definitions into kiln::kiln.
file(GLOB_RECURSE package_files ${prefix}/kiln*.cmake)
if(NOT package_files)
  message(FATAL_ERROR "no kiln*.cmake under ${prefix}")
endif()
foreach(f ${package_files})
  file(STRINGS ${f} fmt_lines REGEX "fmt::|\\(fmt")
  if(fmt_lines)
    message(FATAL_ERROR "${f} mentions fmt:\n${fmt_lines}")
  endif()
  if(f MATCHES "kilnTargets")
    file(STRINGS ${f} llvm_lines REGEX "llvm|LLVM|_GNU_SOURCE|__STDC_")
    if(llvm_lines)
      message(FATAL_ERROR "${f} mentions LLVM:\n${llvm_lines}")
    endif()
  endif()
endforeach()

set(ninja_args "")
if(NINJA)
  set(ninja_args -G Ninja -DCMAKE_MAKE_PROGRAM=${NINJA})
endif()
string(REPLACE ";" " " cxx_flags "${compile_flags}")
string(REPLACE ";" " " exe_link_flags "${link_flags}")

# cmake_consumer(NAME BUILD ARGS...): configures, builds and runs the CMake
# consumer in BUILD with the installed prefix alone.
function(cmake_consumer name build)
  set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${build}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${ninja_args} ${ARGN}
    "-DCMAKE_CXX_FLAGS=${cxx_flags}" "-DCMAKE_EXE_LINKER_FLAGS=${exe_link_flags}")
  if(CXX_COMPILER)
    list(APPEND configure -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
  endif()
  if(LAUNCHER)
    list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
  endif()
  step("configure the ${name}" ${configure})
  step("build the ${name}" ${CMAKE_COMMAND} --build ${build} --parallel 2)
  check_clean_build(${build})
  step("run the ${name}" ${build}/consumer)
  message(STATUS "  ${step_output}")
  check_needed(${build}/consumer)
endfunction()

# pkg_config_flags(MODULE OUT): `pkg-config --cflags --libs MODULE`, split.
# No flag names a library file by absolute path or carries LLVM's
# definitions or headers.
function(pkg_config_flags module out)
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ${module}
    RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE error
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs ${module}: ${error}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  foreach(flag ${flags})
    if(flag MATCHES "^/.*\\.so" OR flag MATCHES "^-D" OR
       flag MATCHES "^-I.*llvm")
      message(FATAL_ERROR "pkg-config ${module} gives ${flag}")
    endif()
  endforeach()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# The C consumer: compiled and linked with cc and pkg-config's flags only.
file(GLOB_RECURSE kiln_pc ${prefix}/kiln.pc)
if(NOT kiln_pc)
  message(FATAL_ERROR "no kiln.pc under ${prefix}")
endif()
get_filename_component(pc_dir "${kiln_pc}" DIRECTORY)
get_filename_component(lib_dir "${pc_dir}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
set(cc ${C_COMPILER})
if(LAUNCHER)
  set(cc ${LAUNCHER} ${C_COMPILER})
endif()
set(c_flags -std=c99 -pedantic -Wall -Wextra -Werror ${compile_flags})

# Static: libkiln.a.
cmake_consumer("static CMake consumer" ${consumer_build})
pkg_config_flags(kiln pc_flags)
step("build the static C consumer" ${cc} ${c_flags}
  ${CONSUMER_DIR}/consumer.c -o ${c_consumer} ${pc_flags} ${link_flags})
step("run the static C consumer" ${c_consumer})
message(STATUS "  ${step_output}")
check_needed(${c_consumer})
if(STRIP)
  # The size of a minimal consumer, stripped (docs/Design.md, "Consumer
  # size").
  step("strip the static C consumer" ${STRIP} -o ${c_consumer}.stripped ${c_consumer})
  file(SIZE ${c_consumer}.stripped bytes)
  math(EXPR kib "${bytes} / 1024")
  message(STATUS "  stripped: ${bytes} bytes (${kib} KiB)")
  if(SIZE_LIMIT_MIB AND NOT SANITIZE)
    math(EXPR limit "${SIZE_LIMIT_MIB} * 1024 * 1024")
    if(bytes GREATER limit)
      message(FATAL_ERROR "the stripped static C consumer has ${bytes} "
        "bytes, more than ${SIZE_LIMIT_MIB} MiB")
    endif()
  endif()
endif()

# Shared: libkiln.so, when built.
if(NOT SHARED)
  message(STATUS "no libkiln.so in this build: the shared consumers are skipped")
  return()
endif()
file(GLOB kiln_so ${lib_dir}/libkiln.so)
if(NOT kiln_so)
  message(FATAL_ERROR "no libkiln.so in ${lib_dir}")
endif()
check_needed(${kiln_so})
cmake_consumer("shared CMake consumer" ${shared_consumer_build}
  -DKILN_CONSUMER_SHARED=ON)
pkg_config_flags(kiln-shared pc_flags)
step("build the shared C consumer" ${cc} ${c_flags}
  ${CONSUMER_DIR}/consumer.c -o ${shared_c_consumer} ${pc_flags}
  -Wl,-rpath,${lib_dir} ${link_flags})
step("run the shared C consumer" ${shared_c_consumer})
message(STATUS "  ${step_output}")
check_needed(${shared_c_consumer})
