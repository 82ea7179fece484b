# CMake toolchain for the release build (scripts/release-wheel): zig's clang
# targeting glibc 2.28, so every binary built with it runs on manylinux_2_28
# (RHEL 8 and its rebuilds, Ubuntu 20.04, Amazon Linux 2023) whatever glibc
# this machine has. KWHEEL_ZIG_BIN is the directory of the wrappers
# third_party/release/build-deps writes (cc, c++, ar, ranlib: `zig cc -target
# x86_64-linux-gnu.2.28`, ...); KWHEEL_RELEASE_PREFIX is where the pinned
# static dependencies are installed. Both come from the environment so that
# try_compile projects, which re-read this file, see them too.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(_zig_bin "$ENV{KWHEEL_ZIG_BIN}")
set(_prefix "$ENV{KWHEEL_RELEASE_PREFIX}")
if(NOT _zig_bin OR NOT _prefix)
  message(FATAL_ERROR "zig-toolchain.cmake: set KWHEEL_ZIG_BIN and KWHEEL_RELEASE_PREFIX (scripts/release-wheel does)")
endif()
set(CMAKE_C_COMPILER "${_zig_bin}/cc")
set(CMAKE_CXX_COMPILER "${_zig_bin}/c++")
set(CMAKE_AR "${_zig_bin}/ar" CACHE FILEPATH "")
set(CMAKE_RANLIB "${_zig_bin}/ranlib" CACHE FILEPATH "")
# Only the pinned prefix is searched for libraries, headers and packages:
# this machine's /usr/include holds glibc 2.36's headers and /usr/lib its
# libraries, and one of them found by accident is a GLIBC_2.3x symbol in the
# wheel. Programs (pkg-config, perl) still come from the host.
set(CMAKE_FIND_ROOT_PATH "${_prefix}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_PREFIX_PATH "${_prefix}")
# Static archives only: nothing in the wheel but the kwheel binary.
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(OPENSSL_USE_STATIC_LIBS TRUE)
set(OPENSSL_ROOT_DIR "${_prefix}")
# pkg-config reads the prefix's .pc files only, and their private
# (static-link) dependencies too.
set(ENV{PKG_CONFIG_LIBDIR} "${_prefix}/lib/pkgconfig:${_prefix}/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(PKG_CONFIG_ARGN --static)
# libcurl is linked statically: there is no libcurl.so.4 to load on first use.
set(KWHEEL_LAZY_CURL OFF CACHE BOOL "Load libcurl on first use instead of linking it" FORCE)
