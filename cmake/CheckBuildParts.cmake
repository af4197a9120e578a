# cmake -DKILN_SOURCE_DIR=<src> -DWORK_DIR=<tmp> -P CheckBuildParts.cmake
#
# A build that cannot lose parts: configures copies of the source tree with
# one layer's folder emptied of sources and with it removed, and fails
# unless each configure stops with an error naming the layer.
cmake_minimum_required(VERSION 3.20)
foreach(var KILN_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckBuildParts.cmake: -D${var}=... is required")
  endif()
endforeach()

# The files a configure reads: CMake files, sources (globbed by the layers),
# and the corpus and example folders the top level adds.
function(copy_tree dest)
  file(REMOVE_RECURSE ${dest})
  file(MAKE_DIRECTORY ${dest})
  foreach(item CMakeLists.txt cmake include lib tools unittests test examples
               bench)
    file(COPY ${KILN_SOURCE_DIR}/${item} DESTINATION ${dest}
         PATTERN "results" EXCLUDE)
  endforeach()
endfunction()

function(expect_configure_error name dest pattern)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${dest} -B ${dest}/build -G Ninja
            -DKILN_BUILD_BENCH=OFF
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${name}: the configure succeeded without the layer")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${name}: the configure failed, but not naming the "
                        "layer (wanted '${pattern}'):\n${err}")
  endif()
  message(STATUS "${name}: the configure stops, as it should")
endfunction()

set(tree ${WORK_DIR}/no-sources)
copy_tree(${tree})
file(GLOB sources ${tree}/lib/Runtime/*.cpp)
file(REMOVE ${sources})
expect_configure_error("lib/Runtime without sources" ${tree}
                       "lib/Runtime has no .cpp source")

set(tree ${WORK_DIR}/no-folder)
copy_tree(${tree})
file(REMOVE_RECURSE ${tree}/lib/Runtime)
expect_configure_error("lib/Runtime removed" ${tree} "Runtime")
file(REMOVE_RECURSE ${WORK_DIR})
