#pragma once
// The two text files every wheel's .dist-info carries besides RECORD:
// METADATA (core metadata, email-header format) and WHEEL.
#include <string>
#include <utility>
#include <vector>

#include "kwheel/tags.hpp"

namespace kwheel {

struct CoreMetadata {
  std::string name;     // as the user spells it; tools normalise
  std::string version;  // full version, local label included
  std::string summary;
  std::string requires_python;
  std::vector<std::string> requires_dist;
  std::vector<std::pair<std::string, std::string>> project_urls;  // label, URL
  std::string description;  // Markdown body
};

// Metadata-Version 2.4. Throws Error(input) if a header value holds a newline.
std::string render_metadata(const CoreMetadata& metadata);
std::string render_wheel_file(const WheelTags& tags, const std::string& generator);

}  // namespace kwheel
