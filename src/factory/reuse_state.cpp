#include "kwheel/factory/reuse_state.hpp"

#include <nlohmann/json.hpp>

namespace kwheel {

namespace {

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

std::filesystem::path reuse_state_path(const std::filesystem::path& wheel) {
  return wheel.parent_path() / ".kwheel" / (wheel.filename().string() + ".json");
}

std::optional<ReuseState> parse_reuse_state(std::string_view text) {
  if (text.size() > kMaxReuseStateBytes) return std::nullopt;
  const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto string_at = [&](const char* key) -> std::optional<std::string> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto fingerprint = string_at("fingerprint"), identity = string_at("wheel_identity"), sha256 = string_at("sha256");
  auto size = j.find("size");
  if (!fingerprint || !identity || size == j.end() || !size->is_number_unsigned()) return std::nullopt;
  // A build that reported no digest took none: no key, never an empty one.
  if (j.contains("sha256") && !(sha256 && is_sha256_hex(*sha256))) return std::nullopt;
  return ReuseState{*fingerprint, *identity, sha256.value_or(""), size->get<uint64_t>()};
}

std::string format_reuse_state(const ReuseState& s) {
  nlohmann::json j{{"fingerprint", s.fingerprint}, {"wheel_identity", s.wheel_identity}, {"size", s.size}};
  if (!s.sha256.empty()) j["sha256"] = s.sha256;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kwheel
