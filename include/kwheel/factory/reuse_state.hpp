#pragma once
// What `kwheel build` records beside each wheel it wrote (-o/.kwheel/
// <wheel>.json), so that a later build from the same inputs can keep the
// wheel instead of packing it again. The file is on disk, so anyone may
// have changed it: reading it never throws, and anything that is not
// exactly what kwheel writes means "not reusable".
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kwheel {

struct ReuseState {
  std::string fingerprint;     // of the inputs the wheel was packed from
  std::string wheel_identity;  // device, inode, size and times right after writing
  std::string sha256;          // of the wheel, 64 lower-case hex digits; empty: not yet taken
  uint64_t size = 0;
};

// Far above what kwheel writes (a few hundred bytes); a larger file is not ours.
inline constexpr size_t kMaxReuseStateBytes = 16 << 10;

std::filesystem::path reuse_state_path(const std::filesystem::path& wheel);

// The state in `text`, or nullopt for anything malformed, ill-typed or too large.
std::optional<ReuseState> parse_reuse_state(std::string_view text);
// One line of JSON that parse_reuse_state reads back as `state`.
std::string format_reuse_state(const ReuseState& state);

}  // namespace kwheel
