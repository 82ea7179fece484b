#include "kwheel/core_metadata.hpp"

#include "kwheel/error.hpp"

namespace kwheel {
namespace {

void header(std::string& out, const std::string& key, const std::string& value) {
  if (value.find_first_of("\r\n") != std::string::npos)
    throw Error(ErrorKind::input, "metadata field " + key + " must be one line, got '" + value + "'");
  out += key + ": " + value + "\n";
}

}  // namespace

std::string render_metadata(const CoreMetadata& m) {
  std::string out;
  header(out, "Metadata-Version", "2.4");
  header(out, "Name", m.name);
  header(out, "Version", m.version);
  if (!m.summary.empty()) header(out, "Summary", m.summary);
  for (const auto& [label, url] : m.project_urls) header(out, "Project-URL", label + ", " + url);
  if (!m.requires_python.empty()) header(out, "Requires-Python", m.requires_python);
  for (const auto& r : m.requires_dist) header(out, "Requires-Dist", r);
  if (!m.description.empty()) {
    header(out, "Description-Content-Type", "text/markdown");
    out += "\n" + m.description;
    if (!m.description.ends_with("\n")) out += "\n";
  }
  return out;
}

std::string render_wheel_file(const WheelTags& tags, const std::string& generator) {
  std::string out;
  header(out, "Wheel-Version", "1.0");
  header(out, "Generator", generator);
  header(out, "Root-Is-Purelib", tags.purelib ? "true" : "false");
  for (const auto& t : tags.expanded()) header(out, "Tag", t);
  return out + "\n";
}

}  // namespace kwheel
