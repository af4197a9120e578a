# kiln_quick_start_link(TARGET): links a tool so that it starts at once
# (docs/Design.md §13, "Cold start"). A tool is one large static
# executable (LLVM's archives); what it pays before main() is
#  - the dynamic loader relocating it: a position-independent executable
#    carries about 125 000 relative relocations, applied to pages that must
#    then be copied; a fixed-address one carries none;
#  - loading each shared library: every one is an open, several mappings and
#    its own relocations and initialisers; libcrypto (the remote tier's
#    signatures) alone costs several milliseconds. zstd, zlib, hiredis and
#    libcrypto are linked from their archives when Debian's -dev packages
#    ship them, and --as-needed drops the shared libraries nothing then uses;
#  - LLVM's static initialisers (about 380, registering some 2,000
#    command-line options), spread over 35 MB of text: under lld they and
#    the command-line code they call are laid out together
#    (--symbol-ordering-file, from llvm-nm of LLVM's archives at build time;
#    -z keep-text-section-prefix), so that they fault in fewer pages.
# The library itself, the tests and the benchmarks are linked as before.
# Off in sanitizer and fuzzer builds, where start-up time does not matter.
if(KILN_SANITIZE OR KILN_BUILD_FUZZERS)
  set(KILN_QUICK_START_DEFAULT OFF)
else()
  set(KILN_QUICK_START_DEFAULT ON)
endif()
option(KILN_QUICK_START_TOOLS
  "Link kiln-compile, kiln-run and kiln-store for a quick start (no PIE, archived compression and crypto libraries)"
  ${KILN_QUICK_START_DEFAULT})

set(KILN_QUICK_START_ARCHIVES "")
if(KILN_QUICK_START_TOOLS)
  set(_kiln_archives zstd z)
  if(KILN_REMOTE)
    list(APPEND _kiln_archives hiredis crypto)
  endif()
  foreach(lib ${_kiln_archives})
    find_library(KILN_ARCHIVE_${lib} NAMES lib${lib}.a)
    if(KILN_ARCHIVE_${lib})
      list(APPEND KILN_QUICK_START_ARCHIVES ${KILN_ARCHIVE_${lib}})
    endif()
  endforeach()
endif()

# The startup order file: the text symbols LLVM's static initialisers run,
# by name (the initialisers, llvm::cl, the option parser, StringMap, the pass
# registry). Names that a tool does not link are ignored.
set(KILN_STARTUP_ORDER "")
if(KILN_QUICK_START_TOOLS AND KILN_LLD)
  find_program(KILN_LLVM_NM NAMES llvm-nm-19 llvm-nm
    HINTS ${LLVM_TOOLS_BINARY_DIR} /usr/lib/llvm-19/bin)
  file(GLOB KILN_LLVM_ARCHIVES ${LLVM_LIBRARY_DIR}/libLLVM*.a)
  if(KILN_LLVM_NM AND KILN_LLVM_ARCHIVES)
    set(KILN_STARTUP_ORDER ${CMAKE_BINARY_DIR}/startup-order.txt)
    add_custom_command(OUTPUT ${KILN_STARTUP_ORDER}
      COMMAND sh -c "\"$0\" --defined-only --no-sort \"$@\" 2>/dev/null | awk '$2 ~ /^[tTwW]$/ && $3 ~ /^(_GLOBAL__sub_I|__cxx_global_var_init|_ZN4llvm2cl|_ZNK4llvm2cl|_ZN12_GLOBAL__N_117CommandLineParser|_ZN4llvm13StringMapImpl|_ZN4llvm12PassRegistry|_ZN4llvm11xxh3_64bits)/ {print $3}' | sort -u > ${KILN_STARTUP_ORDER}"
        ${KILN_LLVM_NM} ${KILN_LLVM_ARCHIVES}
      DEPENDS ${KILN_LLVM_ARCHIVES} ${CMAKE_CURRENT_LIST_FILE}
      COMMENT "Listing LLVM's start-up symbols for the tools' link"
      VERBATIM)
    add_custom_target(kiln-startup-order DEPENDS ${KILN_STARTUP_ORDER})
  endif()
endif()

function(kiln_quick_start_link target)
  if(NOT KILN_QUICK_START_TOOLS)
    return()
  endif()
  # Ahead of the shared libraries that kiln's link interface names, so that
  # the linker takes the archives' definitions.
  target_link_libraries(${target} PRIVATE ${KILN_QUICK_START_ARCHIVES})
  target_link_options(${target} PRIVATE -no-pie "LINKER:--as-needed")
  if(KILN_LLD)
    target_link_options(${target} PRIVATE "LINKER:-z,keep-text-section-prefix")
  endif()
  if(KILN_STARTUP_ORDER)
    add_dependencies(${target} kiln-startup-order)
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${KILN_STARTUP_ORDER})
    target_link_options(${target} PRIVATE
      "LINKER:--symbol-ordering-file=${KILN_STARTUP_ORDER}"
      "LINKER:--no-warn-symbol-ordering")
  endif()
endfunction()
