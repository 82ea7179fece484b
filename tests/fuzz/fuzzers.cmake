# libFuzzer targets, ASan + UBSan (included by the top-level CMakeLists.txt
# when KWHEEL_FUZZ is ON; scripts/fuzz configures such a clang++ tree in
# build/fuzz/cmake and builds the target `fuzzers`). The modules the targets
# reach are compiled once, into one sanitized static library that every
# target links; tests/fuzz/<target>_fuzzer.cpp is each target's entry point.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KWHEEL_FUZZ needs clang++ (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
endif()

file(GLOB KWHEEL_FUZZ_ENTRY_POINTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/*_fuzzer.cpp)
list(TRANSFORM KWHEEL_FUZZ_ENTRY_POINTS REPLACE ".*/([a-z0-9_]+)_fuzzer\\.cpp$" "\\1" OUTPUT_VARIABLE KWHEEL_FUZZ_TARGETS)
# What the targets call, and what that calls: compiled once, sanitized and
# instrumented. Every other module (kwheel_core's glob) is compiled plain at
# -O0, for the symbols of functions the targets never reach (validate_wheel's
# temp_dir, say): a module added under src/ never breaks this build, and one a
# target comes to reach should be added here.
set(KWHEEL_FUZZ_MODULES
  evidence/abi3 evidence/elf evidence/manylinux                 # elf
  evidence/elf_image evidence/elf_layout evidence/elf_dynamic
  evidence/elf_versions evidence/elf_symbols
  evidence/manylinux_data evidence/manylinux_policy
  kernel/variant wheel/tags validate/compat packaging/pep440    # variant, index_page
  packaging/wheel_filename base/text
  hub/hub_json base/bounded_json hub/http base/digest           # hub_json, hub_json_scale, link_header
  base/secret base/filter_streambuf
  wheel/wheel_reader packaging/record kernel/repo_layout        # wheel, dist_info, pypirc
  base/safe_path
  index/publish index/pypirc validate/validate
  index/simple_api                                              # index_page
  kernel/kernel_metadata kernel/kernel_lock                     # kernel_metadata
  factory/reuse_state                                           # reuse_state
  evidence/fatbin evidence/cuda_arch evidence/device_coverage   # fatbin
  evidence/macho evidence/pe                                    # macho
  evidence/offload_bundle                                       # offload_bundle
  hub/netrc packaging/requirement                               # netrc, requirement
  index/pin index/pin_source index/pin_metadata index/pin_variants # pin_page
  index/pin_dependencies index/index_values index/simple_page
  packaging/pylock packaging/wheel_variant packaging/variant_selection hub/url)
list(TRANSFORM KWHEEL_FUZZ_MODULES REPLACE "(.+)" "${CMAKE_SOURCE_DIR}/src/\\1.cpp" OUTPUT_VARIABLE KWHEEL_FUZZ_SOURCES)

set(KWHEEL_FUZZ_PLAIN_SOURCES ${KWHEEL_LIB_SOURCES})
list(REMOVE_ITEM KWHEEL_FUZZ_PLAIN_SOURCES ${KWHEEL_FUZZ_SOURCES})
# The plain modules are a target of their own, not per-file options, so
# that they too compile a directory at a time (KWHEEL_UNITY, which
# scripts/fuzz turns on): CMake never puts a file with options of its own in
# a unity build.
add_library(kwheel_fuzz_plain OBJECT ${KWHEEL_FUZZ_PLAIN_SOURCES} ${KWHEEL_EMBEDDED_PY} ${KWHEEL_EMBEDDED_DATA})
target_include_directories(kwheel_fuzz_plain PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_compile_options(kwheel_fuzz_plain PRIVATE -gline-tables-only -O0 -fno-omit-frame-pointer)
target_compile_definitions(kwheel_fuzz_plain PRIVATE KWHEEL_VERSION="${PROJECT_VERSION}" KWHEEL_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_link_libraries(kwheel_fuzz_plain PRIVATE ${KWHEEL_CORE_LIBS})
kwheel_unity_by_directory(kwheel_fuzz_plain EXCLUDE ${KWHEEL_LIB_UNITY_EXCLUDE})

# Line tables are all a crash report needs, at a fraction of full debug
# info's compile time.
set(KWHEEL_FUZZ_FLAGS -gline-tables-only -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
add_library(kwheel_fuzz_core STATIC ${KWHEEL_FUZZ_SOURCES} $<TARGET_OBJECTS:kwheel_fuzz_plain>)
target_include_directories(kwheel_fuzz_core PUBLIC ${CMAKE_SOURCE_DIR}/include)
target_compile_options(kwheel_fuzz_core PUBLIC ${KWHEEL_FUZZ_FLAGS})
target_compile_definitions(kwheel_fuzz_core PUBLIC KWHEEL_VERSION="${PROJECT_VERSION}" KWHEEL_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
# The heavy standard and JSON headers parsed once, not once per source: 215 s
# of CPU for a clean build instead of 250 s (CI has 2 cores).
target_precompile_headers(kwheel_fuzz_core PRIVATE <nlohmann/json.hpp> <regex> <filesystem> <functional> <map> <optional> <string> <vector>)
target_link_libraries(kwheel_fuzz_core PUBLIC ${KWHEEL_CORE_LIBS})
kwheel_unity_by_directory(kwheel_fuzz_core EXCLUDE ${KWHEEL_LIB_UNITY_EXCLUDE})

add_custom_target(fuzzers)
foreach(t ${KWHEEL_FUZZ_TARGETS})
  add_executable(${t}_fuzzer ${CMAKE_SOURCE_DIR}/tests/fuzz/${t}_fuzzer.cpp ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_support.hpp)
  target_link_libraries(${t}_fuzzer PRIVATE kwheel_fuzz_core)
  target_precompile_headers(${t}_fuzzer REUSE_FROM kwheel_fuzz_core)
  target_link_options(${t}_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
  set_target_properties(${t}_fuzzer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  add_dependencies(fuzzers ${t}_fuzzer)
endforeach()
