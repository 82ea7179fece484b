#pragma once
// One entry of a clang offload bundle (offload_bundle.hpp): what its id
// says it is for. The id is <kind>-<triple>[-<target id>]: the triple has
// four fields in what current clang writes ("amdgcn-amd-amdhsa-", an empty
// environment, hence the "--" before the target id) and three in what
// older HIP toolchains wrote ("hip-amdgcn-amd-amdhsa-gfx908"); both are
// read. The id comes from the bundle, so from the internet: every field is
// held to the grammar clang writes before any of it is reported.
#include <cstdint>
#include <string>
#include <string_view>

namespace kwheel {

struct OffloadTarget {
  std::string entry_id;   // as stored: "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"
  std::string kind;       // "hip", "hipv4", "openmp", "host"
  std::string triple;     // "amdgcn-amd-amdhsa" (an empty environment field dropped)
  std::string target_id;  // "gfx90a:xnack-", empty for host
  std::string processor;  // "gfx90a", empty for host
  std::uint64_t size = 0; // code object size
};

// Reads the entry id `id` of a code object of `size` bytes into `out`, or
// returns why it cannot ("is not <kind>-<arch>-<vendor>-<os>[-<env>]
// [-<target id>]", ...: the words after "the id '<id>', which"), leaving
// `out` as it was. The caller names the file, the bundle and the entry.
std::string read_offload_entry_id(std::string_view id, std::uint64_t size, OffloadTarget& out);

}  // namespace kwheel
