#include "kwheel/evidence/offload_target.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace kwheel {
namespace {

bool chars_in(std::string_view s, std::string_view extra) {
  return std::all_of(s.begin(), s.end(), [extra](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || extra.find(c) != extra.npos;
  });
}

// Up to n pieces; the last keeps the rest, separators included.
std::vector<std::string_view> split_n(std::string_view s, char sep, std::size_t n) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    const auto at = s.find(sep);
    if (at == s.npos) break;
    out.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  out.push_back(s);
  return out;
}

// <processor>(:<feature>(+|-))*. Generic processors hold '-'
// (gfx9-generic, gfx10-3-generic), so only ':' separates features.
bool valid_target_id(std::string_view tid) {
  const auto parts = split_n(tid, ':', std::numeric_limits<std::size_t>::max());
  if (parts[0].empty() || !chars_in(parts[0], "_-")) return false;
  return std::all_of(parts.begin() + 1, parts.end(), [](std::string_view f) {
    return f.size() >= 2 && (f.back() == '+' || f.back() == '-') && chars_in(f.substr(0, f.size() - 1), "_");
  });
}

// Older HIP toolchains wrote a three-field triple followed directly by the
// target id ("hip-amdgcn-amd-amdhsa-gfx906"); no environment field starts
// like a processor name, so this tells the two layouts apart.
bool starts_like_processor(std::string_view s) { return s.starts_with("gfx") || s.starts_with("sm_"); }

}  // namespace

// <kind>-<arch>-<vendor>-<os>[-<env>[-<target id>]], or the legacy
// <kind>-<arch>-<vendor>-<os>-<target id>. The checks run in this order, so
// an id broken twice is refused for the first.
std::string read_offload_entry_id(std::string_view id, std::uint64_t size, OffloadTarget& out) {
  if (!chars_in(id, "-_.:+")) return "holds characters no bundle entry id has";
  const auto fields = split_n(id, '-', 5);
  if (fields.size() < 4) return "is not <kind>-<arch>-<vendor>-<os>[-<env>][-<target id>]";
  if (fields[0].empty() || fields[1].empty()) return "has an empty offload kind or architecture";
  if (!chars_in(fields[0], "_")) return "has a malformed offload kind";
  std::string_view env, tid;
  if (fields.size() == 5 && starts_like_processor(fields[4])) {
    tid = fields[4];
  } else if (fields.size() == 5) {
    const auto rest = split_n(fields[4], '-', 2);
    env = rest[0];
    if (rest.size() == 2) tid = rest[1];
  }
  for (std::size_t i = 1; i < 4; ++i) {
    if (!chars_in(fields[i], "_.")) return "has a malformed target triple";
  }
  if (!chars_in(env, "_.")) return "has a malformed target triple";
  if (!tid.empty() && !valid_target_id(tid)) return "has a target id that is not <processor>(:<feature>(+|-))*";

  OffloadTarget t;
  t.kind = std::string(fields[0]);
  t.triple = std::string(fields[1]) + "-" + std::string(fields[2]) + "-" + std::string(fields[3]);
  if (!env.empty()) t.triple += "-" + std::string(env);
  t.target_id = std::string(tid);
  t.processor = std::string(tid.substr(0, tid.find(':')));
  t.size = size;
  t.entry_id = std::string(id);
  out = std::move(t);
  return "";
}

}  // namespace kwheel
