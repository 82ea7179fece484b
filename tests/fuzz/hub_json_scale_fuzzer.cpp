// Hub answers at the scale an attacker would use: the input is a short
// program that expands into a body of up to 12 MiB (records of [length:1]
// [text:length][repeat:3, little endian]: "[" x 1M then "]" x 1M is a
// million levels of nesting in 8 bytes), parsed as HubClient parses every
// API answer (parse_hub_json), then read as a tree page and a refs list.
// Invariants: the only error is Error(network); a body over the size cap
// never parses; a value that parses respects the depth limit. The memory
// bound is libFuzzer's -rss_limit_mb (scripts/fuzz runs it at 512).
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/hub_json.hpp"

using namespace kwheel;

namespace {

constexpr size_t kBudget = 12 << 20;

std::string expand(const std::uint8_t* data, std::size_t size) {
  std::string body;
  size_t i = 0;
  while (i < size && body.size() < kBudget) {
    const size_t len = data[i++];
    if (len == 0 || i + len + 3 > size) break;
    const std::string_view text(reinterpret_cast<const char*>(data + i), len);
    i += len;
    size_t reps = data[i] | (size_t{data[i + 1]} << 8) | (size_t{data[i + 2]} << 16);
    i += 3;
    reps = std::min(reps, (kBudget - body.size()) / len);
    for (size_t r = 0; r < reps; ++r) body.append(text);
  }
  return body;
}

int depth(const nlohmann::json& j) {
  int deepest = 0;
  if (j.is_structured())
    for (const auto& child : j) deepest = std::max(deepest, depth(child));
  return j.is_structured() ? deepest + 1 : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body = expand(data, size);
  try {
    const auto j = parse_hub_json(body, "fuzz");
    if (!j) return 0;
    FUZZ_CHECK(body.size() <= kMaxHubJsonBody);
    FUZZ_CHECK(depth(*j) <= kMaxHubJsonDepth + 1);
    if (j->is_array())
      for (const auto& element : *j) try {
          (void)parse_tree_entry(element, "fuzz");
        } catch (const Error& e) {
          FUZZ_CHECK(e.kind() == ErrorKind::network);
        }
    (void)parse_refs(*j, "fuzz");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::network);
  }
  return 0;
}
