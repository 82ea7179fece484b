// The reuse state kwheel keeps in -o/.kwheel/ (any process or person may
// have written it). Invariants: reading never throws; what is read is well
// formed (a sha256 of 64 lower-case hex digits, or none: a build without
// --json takes none); and what kwheel writes from it reads back equal.
#include "fuzz_support.hpp"
#include "kwheel/factory/reuse_state.hpp"

using namespace kwheel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto state = parse_reuse_state(fuzz_string(data, size));
  if (!state) return 0;
  FUZZ_CHECK(size <= kMaxReuseStateBytes);
  FUZZ_CHECK(state->sha256.empty() || state->sha256.size() == 64);
  for (char c : state->sha256) FUZZ_CHECK((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  const auto again = parse_reuse_state(format_reuse_state(*state));
  // Strings that are not UTF-8 cannot have come from JSON text: parse only
  // yields valid UTF-8, so the round trip is exact.
  FUZZ_CHECK(again && again->fingerprint == state->fingerprint && again->wheel_identity == state->wheel_identity &&
             again->sha256 == state->sha256 && again->size == state->size);
  return 0;
}
