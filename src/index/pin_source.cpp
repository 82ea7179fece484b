// Where `kwheel pin` reads its candidates: a directory's wheels or an
// index's project page.
#include "kwheel/index/pin_source.hpp"

#include <algorithm>
#include <set>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/pin_metadata.hpp"
#include "kwheel/index/index_values.hpp"
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
    // The caps an HTTP page has (kMaxIndexPageBody), and only a regular
    // file: a page that is /dev/zero or a FIFO costs nothing.
    const std::string fix = "a file:// index page is a regular file of at most 16 MiB; rebuild the index with `kwheel index`";
    auto read_page = [&](const fs::path& p) {
      if (!fs::is_regular_file(p, ec)) throw Error(ErrorKind::input, what + " page '" + p.string() + "' is not a regular file (a device, a FIFO or a directory); " + fix);
      return read_small_file(p, kMaxIndexPageBody, what + " page", fix);
    };
    if (fs::exists(dir / "index.json", ec)) {
      page.body = read_page(dir / "index.json");
      page.json = true;
    } else if (fs::exists(dir / "index.html", ec)) {
      page.body = read_page(dir / "index.html");
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

// Whether `p` (canonical) is `site` (canonical) or below it, by whole components.
bool within(const fs::path& site, const fs::path& p) {
  auto [s, q] = std::mismatch(site.begin(), site.end(), p.begin(), p.end());
  return s == site.end();
}

// A project's page of a file:// index is the directory ROOT/<project>/: a
// symlink there may not lead out of the site either.
void check_site_directory(const fs::path& site, const std::string& root, const std::string& project_url) {
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(file_url_path(project_url), ec);
  if (!ec && fs::exists(dir, ec) && !within(site, dir))
    throw Error(ErrorKind::input, "file:// index " + root + ": the project page " + project_url + " resolves to '" + dir.string() + "', outside the site '" +
                                      site.string() + "'; a file:// index may hold only its own pages (rebuild it with `kwheel index`)");
}

}  // namespace

fs::path file_index_site(const fs::path& root) {
  std::error_code ec;
  const fs::path canonical_root = fs::weakly_canonical(root, ec);
  if (ec) throw Error(ErrorKind::not_found, "cannot resolve the file:// index '" + root.string() + "': " + ec.message());
  // A kwheel site keeps its pages below SITE (SITE/simple/,
  // SITE/torch2.7-cu126/simple/, SITE/variants/torch2.11/simple/) and its
  // wheels in SITE/files/ or SITE/variants/files/, all under the directory
  // holding kwheel-index.json.
  fs::path dir = canonical_root;
  for (int up = 0; up <= 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "kwheel-index.json", ec)) return dir;
    if (dir == dir.parent_path()) break;
  }
  // Another index's <site>/simple/ links files beside simple/.
  if (canonical_root.filename() == "simple" && canonical_root.has_parent_path()) return canonical_root.parent_path();
  return canonical_root;
}

void check_site_link(const fs::path& site, const std::string& page, const std::string& href, const std::string& url) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(file_url_path(url), ec);
  const std::string head = "index page " + page + " links '" + href + "'";
  const std::string fix = "; a file:// index may link only regular files of its own site, so nothing is pinned from it (rebuild the index with `kwheel index`, or pin from a directory of the wheels)";
  if (ec || !within(site, target))
    throw Error(ErrorKind::input, head + ", which resolves to " + (ec ? "nothing" : "'" + target.string() + "'") + ", outside the site '" + site.string() + "'" + fix);
  if (!fs::is_regular_file(target, ec)) throw Error(ErrorKind::input, head + ", which is not a regular file ('" + target.string() + "')" + fix);
}

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
  const bool local = root.starts_with("file://");
  const fs::path site = local ? file_index_site(file_url_path(root)) : fs::path();
  // The project page's directory is a link of the root page's, held to the same site.
  if (local) check_site_directory(site, root, project_url);
  Page p = fetch_page(project_url, &index, "project '" + *wanted + "'");
  out.files = p.json ? parse_project_json(p.body, project_url) : parse_project_html(p.body, project_url);
  result.page_format = p.json ? "json" : "html";
  for (auto& f : out.files) {
    const std::string href = f.url;
    f.url = join_url(p.url, f.url);
    // A file refused for its listed values (pin refuses it as a candidate,
    // naming the value) never decides whether the rest of the page is pinned.
    if (f.url.starts_with("file://") && !listed_file_problem(f, *wanted, project_url)) check_site_link(site, project_url, href, f.url);
  }
  result.index_line = std::string(req.extra_index ? "--extra-index-url " : "--index-url ") + root;
  result.ca_from = index.ca_from();
  result.credentials_from = index.credentials_from();
  out.where = project_url;
  return out;
}

}  // namespace kwheel
