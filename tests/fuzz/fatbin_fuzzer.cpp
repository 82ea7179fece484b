// libFuzzer target for the fatbin reader and the decisions built on it
// (device coverage, the backend.archs audit). Seeds: .nv_fatbin sections
// of kernels nvcc 13.0 built (tests/fuzz/seeds/fatbin/). Any outcome but a
// result or kwheel::Error is a bug.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"
#include "kwheel/evidence/device_coverage.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const auto entries = kwheel::parse_fatbin(bytes, "fuzz.so");
    // Every entry header is at least 64 bytes: the count is bounded by the input.
    FUZZ_CHECK(entries.size() <= size / 64);
    const auto targets = kwheel::cuda_targets(entries);
    for (const auto& t : targets) FUZZ_CHECK(kwheel::parse_cuda_target(t.str()) == t);  // names read back
    const auto c = kwheel::cuda_coverage(targets, {9, 0, kwheel::ArchSuffix::none});
    FUZZ_CHECK(c.covered == c.reason.empty());
    (void)kwheel::audit_declared_archs({"8.0", "9.0+PTX", "10.0a"}, targets, {});
  } catch (const kwheel::Error&) {
  }
  return 0;
}
