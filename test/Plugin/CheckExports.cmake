# cmake -DLIBRARY=libkiln.so -DNM=nm -P CheckExports.cmake
#
# Every symbol libkiln.so defines for others (nm -D --defined-only) is the C
# API's (kiln_*) or the C++ API's (kiln::api::...): none of LLVM's, TBB's,
# fmt's, hiredis's, OpenSSL's or the C++ runtime's templates. Prints the
# count.
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D ${LIBRARY}: ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(count 0)
set(bad "")
foreach(line ${lines})
  # "ADDRESS TYPE NAME[@@VERSION]"
  if(NOT line MATCHES "^[0-9a-f]* [A-Za-z] ([^@]+)(@@?(.*))?$")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  set(version "${CMAKE_MATCH_3}")
  if(name STREQUAL version) # the version node's own symbol, KILN_0.1
    continue()
  endif()
  math(EXPR count "${count} + 1")
  if(name MATCHES "^kiln_" OR name MATCHES "^_ZN4kiln3api" OR
     name MATCHES "^_ZNK4kiln3api")
    continue()
  endif()
  list(APPEND bad "${name}")
endforeach()
# nm -D without demangling also lists any LLVM symbol by its mangled name:
# _ZN4llvm, _ZNK4llvm, LLVM* (the C API).
if(bad)
  list(LENGTH bad nbad)
  list(JOIN bad "\n  " shown)
  message(FATAL_ERROR "${LIBRARY} exports ${nbad} symbols outside Kiln's "
    "APIs:\n  ${shown}")
endif()
if(count EQUAL 0)
  message(FATAL_ERROR "${LIBRARY} exports nothing")
endif()
string(FIND "${out}" "llvm" llvm_at)
if(NOT llvm_at EQUAL -1)
  message(FATAL_ERROR "${LIBRARY}: nm -D lists an LLVM symbol:\n${out}")
endif()
message(STATUS "${LIBRARY}: ${count} exported symbols, all Kiln's C and C++ APIs")
