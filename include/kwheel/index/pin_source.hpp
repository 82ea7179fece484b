#pragma once
// Where `kwheel pin` reads its candidates: a directory of wheels, or a
// simple index (PEP 691 JSON or PEP 503 HTML, over HTTP(S) or file://).
// Each source gives a Listing of files with absolute URLs; what pin decides
// of them is index/pin.hpp's.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kwheel/hub/connection.hpp"
#include "kwheel/index/pin.hpp"
#include "kwheel/index/simple_api.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

namespace kwheel {

// What a source offers: its candidate files, and where they were found.
struct Listing {
  std::vector<IndexFile> files;
  std::string where;  // for messages: the directory or the project page
};

// The path of a file:///absolute/path URL; Error(usage) for another form.
std::filesystem::path file_url_path(const std::string& url);

// The directory a file:// index's links must stay in, symlinks resolved:
// the nearest of the index root and its three parents that holds
// kwheel-index.json (a kwheel site: pages under SITE/.../simple/, wheels in
// SITE/files/), else the parent of a root named simple, else the root.
std::filesystem::path file_index_site(const std::filesystem::path& root);

// Throws Error(input) naming the page, the link as written and the fix
// unless `url` (page's link `href`, made absolute) resolves, symlinks
// followed, to a regular file inside `site`: /dev/zero, a FIFO, ../ or a
// symlink out of the site, or an absolute path elsewhere are refused.
void check_site_link(const std::filesystem::path& site, const std::string& page, const std::string& href, const std::string& url);

// The wheels of a directory, by their parsed names (other files, hidden
// files and names that do not parse are not wheels of it).
std::vector<std::pair<std::filesystem::directory_entry, WheelFilename>> directory_wheels(const std::string& dir);

// An index URL as pin reads it: http(s) or file://, ending in a slash.
std::string index_root(const std::string& source);

// The projects an index's root page lists, normalized.
std::vector<std::string> index_projects(const std::string& root, IndexConnection& index);

HttpOptions pin_http_options();

// The wheels of a directory (of `wanted`, or of its only project), each
// hashed here. Sets `wanted` when it was unset, and result's index line and
// page format.
Listing list_directory(const PinRequest& req, std::optional<std::string>& wanted, PinResult& result);

// The files on the project page of `wanted` (or of the index's only
// project), their URLs made absolute. Sets `wanted` when it was unset, and
// result's index line, page format and connection facts.
Listing list_index(const PinRequest& req, std::optional<std::string>& wanted, IndexConnection& index, PinResult& result);

}  // namespace kwheel
