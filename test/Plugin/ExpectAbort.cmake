# cmake -DHOST=kiln-plugin-host -DPLUGIN=kiln-plugin-naive.so
#   "-DLIBRARIES=libLLVM-14.so.1;..." -P ExpectAbort.cmake
#
# The naive plugin must still abort inside dlopen with LLVM's message about
# its command-line options (test/Plugin/CMakeLists.txt says why): the proof
# that the host provokes what kiln::plugin and libkiln.so avoid.
execute_process(COMMAND ${HOST} ${PLUGIN} ${LIBRARIES}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "the naive plugin ran (exit 0), so the host no longer "
    "provokes the clash of LLVMs:\n${out}")
endif()
if(NOT out MATCHES "inconsistency in registered CommandLine options")
  message(FATAL_ERROR "the naive plugin failed (${rc}) without LLVM's "
    "message on its command-line options:\n${out}")
endif()
message(STATUS "the naive plugin aborted as expected (${rc}):\n${out}")
