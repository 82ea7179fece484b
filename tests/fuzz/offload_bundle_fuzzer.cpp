// The clang offload bundles of a ROCm library's .hip_fatbin (uncompressed,
// and zlib and zstd CCOB containers that decompress up to 1 GiB). Invariants: parsing
// returns or throws kwheel::Error; every target it reports is one the
// entry-id grammar allows (a processor that starts its target id, a
// non-empty kind and triple); sizes are bounded by the input or the 1 GiB
// decompression limit; gfx_targets is sorted and unique. Seeds (seeds/offload_bundle/):
// clang-offload-bundler 14 output (-type=o -bundle-align=4096 with real gfx90a
// and gfx908 code objects; -type=bc with legacy "hip-...-gfx906" ids), the
// .hip_fatbin of a two-object HIP-style link, and zlib CCOB v1-v3 and zstd
// containers of those, laid out as LLVM's CompressedOffloadBundle writes them;
// a zstd CCOB v2 clang-19's bundler wrote (-compress) over gfx90a and gfx1201
// code objects clang-19 compiled.
#include <algorithm>
#include <functional>
#include <span>

#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/offload_bundle.hpp"

using namespace kwheel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  std::vector<OffloadBundle> bundles;
  try {
    bundles = parse_offload_bundles(bytes, "fuzz.so");
  } catch (const Error&) {
    return 0;
  }
  for (const OffloadBundle& b : bundles) {
    for (const OffloadTarget& t : b.targets) {
      FUZZ_CHECK(!t.kind.empty() && !t.triple.empty() && t.entry_id.size() <= 1024);
      FUZZ_CHECK(t.entry_id.starts_with(t.kind + "-"));
      FUZZ_CHECK(t.target_id.starts_with(t.processor));
      FUZZ_CHECK(t.target_id.empty() == t.processor.empty());
      FUZZ_CHECK(t.size <= (b.compressed ? std::uint64_t{1} << 30 : size));
    }
  }
  const auto gfx = gfx_targets(bundles);
  FUZZ_CHECK(std::adjacent_find(gfx.begin(), gfx.end(), std::greater_equal<>()) == gfx.end());
  return 0;
}
