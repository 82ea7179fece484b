#include "kwheel/wheel/core_metadata.hpp"

#include <algorithm>
#include <cctype>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

// The last guard before METADATA: a control character would end the header
// (CR, LF), drive the terminal of whoever prints it (ESC), or cut a C string
// (NUL); invalid UTF-8 makes the file unreadable to packaging.
void header(std::string& out, const std::string& key, const std::string& value) {
  if (const size_t at = unprintable_at(value); at != std::string::npos)
    throw Error(ErrorKind::input, "metadata field " + key + " must be printable text on one line, got '" + value + "' (byte " +
                                      hex_offset(static_cast<unsigned char>(value[at])) + " at offset " + std::to_string(at) +
                                      " is a control character or not UTF-8)");
  out += key + ": " + value + "\n";
}

}  // namespace

bool is_spdx_expression(std::string_view text) {
  if (text.empty() || text.size() > 512) return false;
  int depth = 0;
  bool want_id = true;  // alternates: id, operator, id, ...
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ') { ++i; continue; }
    if (c == '(') { if (!want_id || ++depth > 16) return false; ++i; continue; }
    if (c == ')') { if (want_id || --depth < 0) return false; ++i; continue; }
    size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '.' || text[j] == '-' || text[j] == '+' || text[j] == ':')) ++j;
    if (j == i) return false;
    const std::string_view word = text.substr(i, j - i);
    const bool op = word == "AND" || word == "OR" || word == "WITH";
    if (op == want_id) return false;
    want_id = op;
    i = j;
  }
  return !want_id && depth == 0;
}

std::optional<std::string> commit_of_revision_url(std::string_view url) {
  auto at = url.rfind("/tree/");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view sha = url.substr(at + 6);
  if (sha.size() != 40 || !std::all_of(sha.begin(), sha.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  return std::string(sha);
}

std::string render_metadata(const CoreMetadata& m) {
  std::string out;
  header(out, "Metadata-Version", "2.4");
  header(out, "Name", m.name);
  header(out, "Version", m.version);
  if (!m.summary.empty()) header(out, "Summary", m.summary);
  if (!m.keywords.empty()) {
    // The spec's one field, comma-separated: a comma inside a keyword would split it.
    for (const auto& k : m.keywords)
      if (k.empty() || k.find(',') != std::string::npos) throw Error(ErrorKind::input, "metadata keyword '" + k + "' must be non-empty and hold no comma");
    header(out, "Keywords", join(m.keywords, ","));
  }
  if (!m.license.empty()) header(out, is_spdx_expression(m.license) ? "License-Expression" : "License", m.license);
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
