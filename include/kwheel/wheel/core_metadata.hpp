#pragma once
// The two text files every wheel's .dist-info carries besides RECORD:
// METADATA (core metadata, email-header format) and WHEEL.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kwheel/wheel/tags.hpp"

namespace kwheel {

struct CoreMetadata {
  std::string name;     // as the user spells it; tools normalise
  std::string version;  // full version, local label included
  std::string summary;
  std::vector<std::string> keywords;  // one Keywords field, comma-separated (kernel_marker.hpp's marker among them)
  std::string requires_python;
  std::vector<std::string> requires_dist;
  std::vector<std::pair<std::string, std::string>> project_urls;  // label, URL
  // License-Expression when it is an SPDX expression ("Apache-2.0",
  // "MIT OR Apache-2.0"), else the free-text License field.
  std::string license;
  std::string description;  // Markdown body
};

// The Project-URL label under which kwheel records the Hub commit a wheel
// was built from (a tree URL ending in the full sha): `inspect` shows it
// and `pin --lock` matches locked commits by it.
inline constexpr const char* kHubRevisionLabel = "Hub revision";

// Whether `text` has the shape of an SPDX license expression: license ids
// (LicenseRef-... included) joined by AND, OR, WITH and parentheses.
bool is_spdx_expression(std::string_view text);

// The commit sha of a kHubRevisionLabel URL (".../tree/<sha>"), if any.
std::optional<std::string> commit_of_revision_url(std::string_view url);

// Metadata-Version 2.4. Throws Error(input) if a header value holds a
// control character (C0, DEL, C1) or invalid UTF-8: unprintable_at().
std::string render_metadata(const CoreMetadata& metadata);
std::string render_wheel_file(const WheelTags& tags, const std::string& generator);

}  // namespace kwheel
