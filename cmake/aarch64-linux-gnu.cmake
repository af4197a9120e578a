# Cross-compiling Kiln for aarch64-linux-gnu with clang-19 against a sysroot
# of Debian's own arm64 packages (utils/cross-aarch64.sh makes it and passes
# -DKILN_SYSROOT=...; docs/Portability.md). Programs built here run under
# qemu-aarch64-static (or KILN_QEMU): CMake's emulator runs the GoogleTest discovery, and
# the lit suite calls Kiln's tools through wrappers (test/CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT KILN_SYSROOT AND DEFINED ENV{KILN_SYSROOT})
  set(KILN_SYSROOT $ENV{KILN_SYSROOT})
endif()
if(NOT KILN_SYSROOT OR NOT EXISTS ${KILN_SYSROOT}/usr/lib/aarch64-linux-gnu)
  message(FATAL_ERROR "KILN_SYSROOT must name an arm64 sysroot "
    "(utils/cross-aarch64.sh sysroot makes one), not '${KILN_SYSROOT}'")
endif()
# Try-compile projects see the variable too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES KILN_SYSROOT)
set(ENV{KILN_SYSROOT} ${KILN_SYSROOT})

set(CMAKE_SYSROOT ${KILN_SYSROOT})
set(CMAKE_C_COMPILER clang-19)
set(CMAKE_CXX_COMPILER clang++-19)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)

set(CMAKE_FIND_ROOT_PATH ${KILN_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (zstd, hiredis, libcrypto) reads the sysroot's .pc files.
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${KILN_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
  "${KILN_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${KILN_SYSROOT}/usr/share/pkgconfig")

# -cpu max: NEON, SVE (of qemu's default length) and every other extension
# qemu emulates; KILN_QEMU_CPU chooses another CPU.
if(NOT KILN_QEMU_CPU)
  set(KILN_QEMU_CPU max)
endif()
# KILN_QEMU: the emulator (Debian's qemu-user-static or qemu-user).
if(NOT KILN_QEMU)
  set(KILN_QEMU qemu-aarch64-static)
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES KILN_QEMU KILN_QEMU_CPU)
set(CMAKE_CROSSCOMPILING_EMULATOR ${KILN_QEMU} -L ${KILN_SYSROOT}
  -cpu ${KILN_QEMU_CPU})

# The build machine's own linker is x86-64's only: lld links every target.
set(CMAKE_EXE_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_MODULE_LINKER_FLAGS_INIT -fuse-ld=lld)
