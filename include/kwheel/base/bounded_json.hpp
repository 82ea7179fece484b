#pragma once
// JSON from the network or from disk, parsed with bounds. A parsed value
// costs ~100 bytes whatever its text, so a few MB of "[[],[],...]" would be
// hundreds of MB of tree, and deep nesting costs more still: size, nesting
// and the number of values are checked while parsing, before anything past
// a limit is built. Hub answers (hub_json) and index pages (simple_index)
// use it with their own limits and error kinds.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kwheel/base/error.hpp"

namespace kwheel {

struct JsonLimits {
  size_t max_bytes;
  int max_depth;
  size_t max_values;  // object keys count
};

// The JSON in `body`, or nullopt when it is not JSON (a body cut short:
// callers may fetch it again). Over a limit: Error(kind, "<what> <limit>;
// <fix>"), where <what> is `what` ("the answer from URL", say).
std::optional<nlohmann::json> parse_bounded_json(std::string_view body, const JsonLimits& limits, ErrorKind kind,
                                                 const std::string& what, const std::string& fix);

}  // namespace kwheel
