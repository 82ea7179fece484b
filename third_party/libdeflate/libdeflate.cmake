# libdeflate 1.14 with kwheel's final-block addition (README.md here), built
# in instead of the system's: compression, decompression (tests) and CRC-32.
# The C flags are upstream Makefile's; the output does not depend on them.
set(KWHEEL_LIBDEFLATE_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(kwheel_libdeflate STATIC
  ${KWHEEL_LIBDEFLATE_DIR}/lib/deflate_compress.c
  ${KWHEEL_LIBDEFLATE_DIR}/lib/deflate_decompress.c
  ${KWHEEL_LIBDEFLATE_DIR}/lib/crc32.c
  ${KWHEEL_LIBDEFLATE_DIR}/lib/utils.c
  ${KWHEEL_LIBDEFLATE_DIR}/lib/x86/cpu_features.c
  ${KWHEEL_LIBDEFLATE_DIR}/lib/arm/cpu_features.c)
set_target_properties(kwheel_libdeflate PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
target_compile_options(kwheel_libdeflate PRIVATE -O2 -fomit-frame-pointer)
target_compile_definitions(kwheel_libdeflate PRIVATE _ANSI_SOURCE)
target_include_directories(kwheel_libdeflate SYSTEM PUBLIC ${KWHEEL_LIBDEFLATE_DIR})
