#pragma once
// The pages of the "simple repository API" (PEP 503 HTML, PEP 691 JSON,
// PEP 658/714 core metadata files, PEP 700 sizes and versions): written for
// the static sites kwheel builds (index/simple_index.hpp) and read back from
// any index (kwheel pin).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// One file on a project page.
struct IndexFile {
  std::string filename;
  std::string url;                              // href without the #sha256= fragment
  std::string sha256;                           // hex; "" if the index gives none
  std::string requires_python;                  // as in METADATA; "" if none
  std::optional<std::string> metadata_sha256;   // PEP 658: <url>.metadata exists with this hash
  std::optional<uint64_t> size;
  std::string version;                          // from METADATA (pages) or the filename (parsed pages)
  bool yanked = false;
};

std::string html_escape(std::string_view text);
// Named (amp, lt, gt, quot, apos) and numeric character references.
std::string html_unescape(const std::string& text);

// Pages. Files are listed in the given order; callers sort.
std::string render_root_html(const std::vector<std::string>& normalized_names);
std::string render_root_json(const std::vector<std::string>& normalized_names);
std::string render_project_html(const std::string& normalized_name, const std::vector<IndexFile>& files);
std::string render_project_json(const std::string& normalized_name, const std::vector<IndexFile>& files);

// Reading a project page back: anchors of a PEP 503 page (href resolved
// against `page_url` by the caller; fragments split off here) or the files
// of a PEP 691 JSON page. Throw Error(input) naming `where` on a page that
// is not one, and on a page that lists one file name with two sha256s
// (naming both); a name listed twice with one hash is one file. Hashes are
// lowered (as pip does); nothing else is checked here: what a value must be
// before it is pinned is index/index_values.hpp's.
std::vector<IndexFile> parse_project_html(const std::string& html, const std::string& where);
std::vector<IndexFile> parse_project_json(const std::string& json, const std::string& where);
// Project names of a root page (HTML anchors' text or JSON "projects"),
// those that are PEP 508 names: another link is no project.
std::vector<std::string> parse_root_page(const std::string& body, bool is_json, const std::string& where);

}  // namespace kwheel
