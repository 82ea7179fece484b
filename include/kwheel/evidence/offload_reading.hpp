#pragma once
// The inside of offload_bundle.hpp's reader, shared by src/evidence/offload_*.cpp
// and by nothing else (namespace kwheel::offload): the two magics, where an
// error points (the file and the bundle in it), the limits one section's
// parse is held to, and what reading one bundle gives. The bundle's
// containers are read by offload_entry_table.hpp (uncompressed) and
// offload_compressed.hpp ("CCOB"), the payloads decompressed by
// offload_decompress.hpp, the entry ids by offload_target.hpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/evidence/offload_target.hpp"

namespace kwheel::offload {

inline constexpr std::string_view kBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
inline constexpr std::string_view kCompressedMagic = "CCOB";
// The most one compressed bundle may declare it decompresses to.
inline constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t{1} << 30;

// The end of every refusal: what the user can do about it.
inline constexpr std::string_view kFix = "; the file is damaged or was not written by clang-offload-bundler, rebuild it";

// Which file, and which bundle in it, an error is about.
struct Where {
  std::string_view name;
  std::string bundle;  // "offload bundle at offset 0x2000"

  // Error(input): "<name>: <bundle> <what>; the file is damaged ...".
  [[noreturn]] void fail(const std::string& what) const;
};

// "<bundle> is cut off: <what> (<len> bytes at <off>) runs past the <size>
// bytes there are".
[[noreturn]] void fail_cut_off(const Where& where, std::uint64_t size, std::uint64_t off, std::uint64_t len,
                               std::string_view what);

// Whether [off, off + len) lies inside `size` bytes; no sum can wrap.
inline bool inside(std::uint64_t size, std::uint64_t off, std::uint64_t len) { return off <= size && len <= size - off; }

// Strings copied out are capped relative to the input, as in elf.cpp: a
// compressed bundle can expand to many entries from a few bytes. The fixed
// part is 1 MiB (it was 64 MiB): every thread parsing a section may hold
// this much, so it is part of the run's memory bound (docs/performance.md),
// and a real bundle's entries (about 260 bytes charged each, beside code
// objects of kilobytes) fit in 4 times its section. So is the section's
// decompressed total: each bundle's own cap (1 GiB) would otherwise let
// many small zlib bundles cost minutes of inflating.
class Budget {
 public:
  explicit Budget(std::uint64_t input_bytes)
      : left_(1024 * 1024 + 4 * input_bytes), inflate_left_(kMaxInflatedBytes + 64 * input_bytes) {}
  void charge(std::uint64_t bytes, const Where& where);
  void charge_inflated(std::uint64_t bytes, const Where& where);

 private:
  std::uint64_t left_;
  std::uint64_t inflate_left_;
};

// One bundle, read.
struct Parsed {
  std::vector<OffloadTarget> targets;
  std::uint64_t extent = 0;  // bytes from the bundle's start to its end
};

}  // namespace kwheel::offload
