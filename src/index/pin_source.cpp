// Where `kwheel pin` reads its candidates: a directory's wheels or an
// index's project page.
#include "kwheel/index/pin_source.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/pin_metadata.hpp"
#include "kwheel/index/simple_page.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

struct Page {
  std::string body;
  bool json = false;
  std::string url;
};

}  // namespace

std::string read_local_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(ErrorKind::not_found, "cannot read '" + p.string() + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path file_url_path(const std::string& url) {
  std::string rest = url.substr(7);  // after file://
  if (rest.starts_with("localhost/")) rest = rest.substr(9);
  if (!rest.starts_with("/")) throw Error(ErrorKind::usage, "'" + url + "' is not a file:///absolute/path URL");
  std::string out = percent_decode(rest);
  return fs::path(out);
}

namespace {

// A simple-API page: a directory's index.json (preferred) or index.html
// for file://, content negotiation over HTTP.
Page fetch_page(const std::string& url, IndexConnection* index, const std::string& what) {
  Page page;
  page.url = url;
  if (url.starts_with("file://")) {
    fs::path dir = file_url_path(url);
    std::error_code ec;
    if (fs::exists(dir / "index.json", ec)) {
      page.body = read_local_file(dir / "index.json");
      page.json = true;
    } else if (fs::exists(dir / "index.html", ec)) {
      page.body = read_local_file(dir / "index.html");
    } else {
      throw Error(ErrorKind::not_found, what + " not found: '" + dir.string() + "' has no index.json or index.html");
    }
    return page;
  }
  SimplePage r = get_simple_page(index->http(), url);
  // pip's rule: a 401 to credentials that did not come from the URL asks keyring once.
  if (r.status == 401 && index->retry_with_keyring(r.url)) r = get_simple_page(index->http(), url);
  if (r.status == 404) throw Error(ErrorKind::not_found, what + " not found at " + display_url(url) + " (HTTP 404)");
  if (r.status == 401 || r.status == 403) throw index->refused(r.url, r.status);
  if (r.status != 200)
    throw Error(ErrorKind::network, display_url(url) + " answered HTTP " + std::to_string(r.status) + " for the " + what + index->status_hint(r.status));
  page.body = std::move(r.body);
  page.json = r.json;
  page.url = r.url;
  return page;
}

std::string join_url(const std::string& page_url, const std::string& href) {
  // A page served over HTTP is the server's word: it may not send pin to
  // read (or hang on) a file of this machine.
  if (href.starts_with("file:") && !page_url.starts_with("file://"))
    throw Error(ErrorKind::input, "index page " + display_url(page_url) + " links the local file '" + href +
                                      "'; a page served over HTTP may link only http(s) files, so nothing is pinned from it");
  if (href.find("://") != std::string::npos) return href;
  if (page_url.starts_with("file://")) {
    fs::path base = file_url_path(page_url);
    fs::path joined = href.starts_with("/") ? fs::path(href) : (base / href).lexically_normal();
    return "file://" + joined.string();
  }
  return resolve_url(page_url, href);
}

}  // namespace


// The wheels of a directory, by their parsed names (other files, hidden
// files and names that do not parse are not wheels of it).
std::vector<std::pair<fs::directory_entry, WheelFilename>> directory_wheels(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::not_found, "'" + display_url(dir) + "' is neither a directory of wheels nor an index URL (http://, https://, file://)");
  std::vector<std::pair<fs::directory_entry, WheelFilename>> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string fn = e.path().filename().string();
    if (!e.is_regular_file() || e.path().extension() != ".whl" || fn.starts_with(".")) continue;
    try {
      out.emplace_back(e, parse_wheel_filename(fn));
    } catch (const Error&) {
    }
  }
  return out;
}

// An index URL as pin reads it: http(s) or file://, ending in a slash.
std::string index_root(const std::string& source) {
  if (!source.starts_with("http://") && !source.starts_with("https://") && !source.starts_with("file://"))
    throw Error(ErrorKind::usage, "index URL '" + display_url(source) + "' must be http://, https:// or file://");
  return source.ends_with("/") ? source : source + "/";
}

// The projects an index's root page lists, normalized.
std::vector<std::string> index_projects(const std::string& root, IndexConnection& index) {
  const Page p = fetch_page(root, &index, "index page");
  std::vector<std::string> names;
  for (const auto& n : parse_root_page(p.body, p.json, root)) names.push_back(normalize_name(n));
  return names;
}

HttpOptions pin_http_options() {
  HttpOptions ho;
  ho.user_agent = "kwheel/" KWHEEL_VERSION;
  ho.max_attempts = 3;
  return ho;
}

// The wheels of a directory (of `wanted`, or of its only project), each
// hashed here.
Listing list_directory(const PinRequest& req, std::optional<std::string>& wanted, PinResult& result) {
  Listing out;
  out.where = req.source;
  std::set<std::string> projects;
  for (const auto& [e, w] : directory_wheels(req.source)) {
    const std::string fn = e.path().filename().string();
    // pin --lock over a directory: the locked build's wheels, by what
    // they record, whatever the kernel named its distribution.
    IndexFile local;
    local.url = fs::absolute(e.path()).string();
    if (req.commit && !req.name && commit_problem(local, req, nullptr)) continue;
    projects.insert(normalize_name(w.name));
    if (wanted && normalize_name(w.name) != *wanted) continue;
    IndexFile f;
    f.filename = fn;
    f.url = fs::absolute(e.path()).string();
    f.sha256 = sha256_file_hex(e.path());
    f.version = w.version;
    out.files.push_back(std::move(f));
  }
  std::sort(out.files.begin(), out.files.end(), [](const IndexFile& x, const IndexFile& y) { return x.filename < y.filename; });
  if (projects.empty() && req.commit)
    throw Error(ErrorKind::not_found, "directory '" + req.source + "' holds no wheel built from " + *req.repo_id + " at " + req.commit->substr(0, 12) +
                                          "; build them with `kwheel build --lock`");
  if (projects.empty()) throw Error(ErrorKind::not_found, "directory '" + req.source + "' holds no .whl file; build some with `kwheel build`");
  if (!wanted) {
    if (projects.size() > 1) {
      std::string list;
      for (const auto& p : projects) list += (list.empty() ? "" : ", ") + p;
      throw Error(ErrorKind::usage, "'" + req.source + "' holds wheels of several projects (" + list + "); pass --name");
    }
    wanted = *projects.begin();
  }
  result.index_line = "";
  result.page_format = "directory";
  return out;
}

// The files on the project page of `wanted` (or of the index's only
// project), their URLs made absolute.
Listing list_index(const PinRequest& req, std::optional<std::string>& wanted, IndexConnection& index, PinResult& result) {
  const std::string& root = index.url();
  if (!wanted) {
    const std::vector<std::string> names = index_projects(root, index);
    if (names.size() != 1) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw Error(ErrorKind::usage, "index " + root + " lists " + std::to_string(names.size()) + " projects" + (list.empty() ? "" : " (" + list + ")") + "; pass --name");
    }
    wanted = names.front();
  }
  Listing out;
  const std::string project_url = root + encode_component(*wanted) + "/";
  Page p = fetch_page(project_url, &index, "project '" + *wanted + "'");
  out.files = p.json ? parse_project_json(p.body, project_url) : parse_project_html(p.body, project_url);
  result.page_format = p.json ? "json" : "html";
  for (auto& f : out.files) f.url = join_url(p.url, f.url);
  result.index_line = std::string(req.extra_index ? "--extra-index-url " : "--index-url ") + root;
  result.ca_from = index.ca_from();
  result.credentials_from = index.credentials_from();
  out.where = project_url;
  return out;
}

}  // namespace kwheel
