# Kiln's layers: the one table of which library may use which.
#
#                    CAPI         the C API            (lib/CAPI, include/kiln-c)
#                     |
#                    API          the public C++ API   (lib/API, include/kiln/kiln.h)
#                     |
#   ToolSupport    Runtime        devices, buffers, launches
#   (tools/support)   |
#          \_________ CPU         the LLVM CPU backend: lowering, codegen, JIT,
#                     |           the CPU target of the store (feature check)
#                   Store         the persistent artifact store (generic)
#                     |
#                  Compile        compilation interfaces, KernelLoader, ids
#                     |
#                    IR           types, kernels, parser, printer, verifier
#
# The rule: a file of a layer (include/kiln/<Layer>/, lib/<Layer>/) includes
# headers of its own layer and of the layers below it in this table (the
# transitive closure of KILN_LAYER_DEPENDS_<Layer>), never of a layer above.
# The tools (tools/) and the tests sit above all of it. Store sits above
# Compile: an entry is keyed by Compile's ArtifactId; Compile knows nothing of
# the store (a loader reports through sinks, a target owns its store).
#
# The build uses the table (each lib/<Layer>/CMakeLists.txt names its
# dependencies with kiln_layer_targets, and the object libraries link each
# other, so CMake rejects a cycle), and so does the test `layering`
# (cmake/CheckLayers.cmake), which scans every #include and fails on an
# include of a higher layer.

# Bottom first.
set(KILN_LAYERS IR Compile Store CPU Runtime API CAPI ToolSupport)

# The layers each layer uses directly.
set(KILN_LAYER_DEPENDS_IR "")
set(KILN_LAYER_DEPENDS_Compile IR)
set(KILN_LAYER_DEPENDS_Store Compile)
set(KILN_LAYER_DEPENDS_CPU IR Compile Store)
set(KILN_LAYER_DEPENDS_Runtime IR Compile Store CPU)
set(KILN_LAYER_DEPENDS_API IR CPU Runtime)
set(KILN_LAYER_DEPENDS_CAPI API)
set(KILN_LAYER_DEPENDS_ToolSupport IR Runtime)

# Where each layer's files are, relative to the source root.
set(KILN_LAYER_DIRS_IR include/kiln/IR lib/IR)
set(KILN_LAYER_DIRS_Compile include/kiln/Compile lib/Compile)
set(KILN_LAYER_DIRS_Store include/kiln/Store lib/Store)
set(KILN_LAYER_DIRS_CPU include/kiln/CPU lib/CPU)
set(KILN_LAYER_DIRS_Runtime include/kiln/Runtime lib/Runtime)
set(KILN_LAYER_DIRS_API include/kiln/kiln.h lib/API)
set(KILN_LAYER_DIRS_CAPI include/kiln-c lib/CAPI)
set(KILN_LAYER_DIRS_ToolSupport tools/support)

# kiln_layer_closure(<layer> <out-var>): every layer <layer> may use (its
# dependencies, theirs, ...). A fatal error when the table has a cycle.
function(kiln_layer_closure layer out)
  set(result "")
  set(todo ${KILN_LAYER_DEPENDS_${layer}})
  while(todo)
    list(POP_FRONT todo dep)
    if(dep STREQUAL layer)
      message(FATAL_ERROR "cmake/Layers.cmake: layer ${layer} depends on itself (a cycle)")
    endif()
    if(NOT dep IN_LIST KILN_LAYERS)
      message(FATAL_ERROR "cmake/Layers.cmake: layer ${layer} names an unknown layer '${dep}'")
    endif()
    if(NOT dep IN_LIST result)
      list(APPEND result ${dep})
      list(APPEND todo ${KILN_LAYER_DEPENDS_${dep}})
    endif()
  endwhile()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# kiln_require_sources(<layer> <sources...>): stops the configure when the
# folder lib/<layer> holds no source, so that a renamed or emptied folder
# cannot drop its library from the build without an error.
function(kiln_require_sources layer)
  if(NOT ARGN)
    message(FATAL_ERROR "lib/${layer} has no .cpp source: the library "
                        "Kiln${layer} would be missing from the build")
  endif()
endfunction()

# kiln_layer_targets(<layer> <out-var>): the library targets of the layers
# <layer> uses directly (Kiln<Layer> each).
function(kiln_layer_targets layer out)
  kiln_layer_closure(${layer} unused) # checks the table
  set(result "")
  foreach(dep ${KILN_LAYER_DEPENDS_${layer}})
    list(APPEND result Kiln${dep})
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()
