# kiln_quick_start_link(TARGET): links a tool so that it starts at once
# (docs/Design.md, "Tools that start at once"). A tool is one large static
# executable (LLVM's archives); what it pays before main() is
#  - the dynamic loader relocating it: a position-independent executable
#    carries about 125 000 relative relocations, applied to pages that must
#    then be copied; a fixed-address one carries none;
#  - loading each shared library: every one is an open, several mappings and
#    its own relocations and initialisers; libcrypto (the remote tier's
#    signatures) alone costs several milliseconds. zstd, zlib, hiredis and
#    libcrypto are linked from their archives when Debian's -dev packages
#    ship them, and --as-needed drops the shared libraries nothing then uses;
#  - LLVM's static initialisers (about 380, registering its command-line
#    options), kept together by keeping .text.startup apart so that they
#    fault in fewer pages.
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
endfunction()
