#include "kwheel/index/published_copy.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/index/simple_page.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

namespace kwheel {

namespace {

// The non-empty segments of a URL's path ("http://h/alice/dev/" -> alice, dev).
std::vector<std::string> path_segments(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t path = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
  std::vector<std::string> out;
  if (path == std::string::npos) return out;
  const std::string p = url.substr(path, url.find_first_of("?#", path) - path);
  for (size_t i = 0; i < p.size();) {
    const size_t end = std::min(p.find('/', i), p.size());
    if (end > i) out.push_back(p.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

std::string origin_as_written(const std::string& url) {
  const size_t scheme = url.find("://");
  return url.substr(0, url.find('/', scheme + 3));
}

bool is_sha256_hex(const std::string& s) { return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos; }

}  // namespace

std::optional<std::string> derived_simple_index(const std::string& upload_url) {
  // PyPI's pages are on another host than its uploads.
  if (upload_url.starts_with("https://upload.pypi.org/legacy")) return "https://pypi.org/simple/";
  if (upload_url.starts_with("https://test.pypi.org/legacy")) return "https://test.pypi.org/simple/";
  if (upload_url.find("://") == std::string::npos) return std::nullopt;
  const auto segments = path_segments(upload_url);
  if (segments.empty()) return origin_as_written(upload_url) + "/simple/";
  if (segments.size() == 2) return origin_as_written(upload_url) + "/" + segments[0] + "/" + segments[1] + "/+simple/";
  return std::nullopt;
}

PublishedCopy published_copy(HttpClient& http, const std::string& simple_index, const std::string& filename) {
  const std::string project = normalize_name(parse_wheel_filename(filename).name);
  const std::string url = simple_index + (simple_index.ends_with("/") ? "" : "/") + encode_component(project) + "/";
  const SimplePage page = get_simple_page(http, url);
  const std::string where = display_url(page.url);
  const std::string status = "HTTP " + std::to_string(page.status);
  if (page.status == 404) throw Error(ErrorKind::not_found, "no project page at " + where + " (" + status + ")");
  if (page.status == 401 || page.status == 403) throw Error(ErrorKind::auth, where + " wants credentials (" + status + ")");
  if (page.status != 200) throw Error(ErrorKind::network, where + " answered " + status);
  std::set<std::string> hashes;
  bool listed = false;
  for (const auto& f : page_files(page, where)) {
    if (f.filename != filename) continue;
    listed = true;
    if (!is_sha256_hex(f.sha256)) throw Error(ErrorKind::input, where + " lists " + filename + " with no sha256");
    hashes.insert(f.sha256);
  }
  if (!listed) throw Error(ErrorKind::not_found, where + " does not list " + filename);
  if (hashes.size() > 1) throw Error(ErrorKind::input, where + " lists " + filename + " more than once, with different sha256s");
  return {*hashes.begin(), where};
}

}  // namespace kwheel
