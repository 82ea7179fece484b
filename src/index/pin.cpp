#include "kwheel/index/pin.hpp"
#include "kwheel/index/pin_variants.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "kwheel/base/digest.hpp"
#include "kwheel/wheel/core_metadata.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/wheel/wheel_reader.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/index/simple_page.hpp"
#include "kwheel/kernel/kernel_lock.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/packaging/wheel_filename.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Page {
  std::string body;
  bool json = false;
  std::string url;
};

std::string read_file(const fs::path& p) {
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

// A simple-API page: a directory's index.json (preferred) or index.html
// for file://, content negotiation over HTTP.
Page fetch_page(const std::string& url, IndexConnection* index, const std::string& what) {
  Page page;
  page.url = url;
  if (url.starts_with("file://")) {
    fs::path dir = file_url_path(url);
    std::error_code ec;
    if (fs::exists(dir / "index.json", ec)) {
      page.body = read_file(dir / "index.json");
      page.json = true;
    } else if (fs::exists(dir / "index.html", ec)) {
      page.body = read_file(dir / "index.html");
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

// How specific a fitting build is: only builds for the target's backend fit
// (kernels' rule, validate/backend_rule), so a native build for its torch
// ranks first, then a stable-ABI or tvm-ffi one, a pure-Python backend
// build, torch-universal. Within a rank the newest CUDA minor wins, as
// kernels prefers it (cu128 over cu126 on CUDA 12.8).
std::pair<int, int> specificity(const LocalLabel& l) {
  if (l.universal()) return {0, 0};
  if (l.noarch) return {1, 0};
  if (l.framework.empty()) return {0, 0};
  const auto cuda = l.cuda ? leading_major_minor(*l.cuda) : std::nullopt;
  return {l.framework == "torch" ? 3 : 2, cuda ? cuda->minor : 0};
}

std::string variant_name(const LocalLabel& l) {
  if (l.universal()) return "universal";
  std::string n = l.index_name();
  return n.empty() ? "+" + l.text : n;
}

std::string describe(const InterpreterInfo& t) {
  if (!t.executable.empty())
    return t.executable + " (Python " + t.python + ", torch " + t.torch.value_or("none") + (t.cuda ? ", CUDA " + *t.cuda : t.hip ? ", ROCm" : ", CPU") + ")";
  return "torch " + t.torch.value_or("?") + (t.cuda ? " + CUDA " + *t.cuda : " CPU-only");
}

}  // namespace

InterpreterInfo described_target(const std::string& torch, const std::optional<std::string>& cuda) {
  auto mm = leading_major_minor(torch);
  if (!mm || torch.find_first_not_of("0123456789.") != std::string::npos)
    throw Error(ErrorKind::usage, "--torch '" + torch + "' is not a torch version like 2.7");
  InterpreterInfo t;
  t.torch = mm->str();
  if (cuda) {
    auto c = leading_major_minor(*cuda);
    if (!c || cuda->find_first_not_of("0123456789.") != std::string::npos)
      throw Error(ErrorKind::usage, "--cuda '" + *cuda + "' is not a CUDA version like 12.6");
    t.cuda = c->str();
  }
  return t;
}

namespace {

// PEP 658/714 (and pip): bytes an index serves are trusted only when they
// hash to what its page says. Other bytes are a stale or tampered index, an
// attack on what gets pinned, not a candidate to pass over: the pin fails.
void check_served_sha256(const std::string& what, const std::string& page_sha256, const std::string& served_sha256) {
  if (page_sha256.empty())
    throw Error(ErrorKind::input, "the index page gives no sha256 for " + what + ", so its bytes cannot be trusted; rebuild the index with hashes (kwheel index writes them)");
  if (ascii_lower(page_sha256) == served_sha256) return;
  throw Error(ErrorKind::input, what + " is not what the index page says: the page gives sha256 " + page_sha256 + ", the served bytes have sha256 " +
                                    served_sha256 + "; the index is stale or was tampered with, so nothing is pinned (rebuild the index, or pin from a directory of the wheels)");
}

// A candidate's METADATA, or why the index offers none to trust.
struct CandidateMetadata {
  std::optional<std::string> text;
  std::string missing;  // when there is no text
};

// Most private indexes (pypiserver, Artifactory, Nexus) serve no PEP 658
// metadata. pip then reads METADATA from the wheel itself, and so does pin:
// fetched once into a directory that vanishes, and held to the page's sha256
// (and the size the server announces, under a cap) before a byte is read.
constexpr uint64_t kMaxPinnedWheel = uint64_t{4} << 30;

CandidateMetadata metadata_from_wheel(const IndexFile& f, HttpClient& http) {
  if (f.sha256.size() != 64)
    return {std::nullopt, "the index gives neither PEP 658 metadata nor a sha256 for it, so its Hub commit cannot be trusted; pin --lock from a directory or a kwheel index"};
  const HttpResponse head = http.get(f.url, true);
  const std::string length = head.header("content-length");
  if (head.status != 200 || length.empty() || length.size() > 12 || length.find_first_not_of("0123456789") != std::string::npos)
    return {std::nullopt, "the index serves no PEP 658 metadata for it, and fetching the wheel to read its METADATA failed (HEAD " +
                              display_url(f.url) + ": HTTP " + std::to_string(head.status) +
                              (length.empty() ? ", no Content-Length" : "") + "); pin --lock from a directory or a kwheel index"};
  const uint64_t size = std::stoull(length);
  if (size > kMaxPinnedWheel)
    throw Error(ErrorKind::input, f.filename + " at " + display_url(f.url) + " is " + std::to_string(size) +
                                      " bytes, over the 4 GiB pin reads to find its METADATA; pin --lock from a directory of the wheels");
  const TempDir dir("pin-wheel");
  DownloadJob job;
  job.url = f.url;
  // The reader takes the wheel's own name; a candidate's name is a parsed
  // wheel filename, which holds no path separator.
  job.partial = dir.path() / "wheel.part";
  job.dest = dir.path() / fs::path(f.filename).filename();
  job.size = size;
  job.sha256 = ascii_lower(f.sha256);
  job.label = f.filename;
  http.download({job}, 1);
  return {WheelArchive(job.dest).metadata_text(), ""};
}

// From the wheel itself where it is a local file (its bytes checked against
// the page's sha256 when a file:// page gave one), else from its PEP 658
// .metadata companion, checked against the page's metadata sha256. A page
// that gives no sha256 for the metadata gives nothing to trust.
CandidateMetadata candidate_metadata(const IndexFile& f, HttpClient* http) {
  const std::string& url = f.url;
  if (url.starts_with("file://") || url.find("://") == std::string::npos) {
    const fs::path p = url.starts_with("file://") ? file_url_path(url) : fs::path(url);
    if (url.starts_with("file://")) check_served_sha256(f.filename + " at " + url, f.sha256, sha256_file_hex(p));
    return {WheelArchive(p).metadata_text(), ""};
  }
  const std::string fix = "; pin --lock from a directory or a kwheel index";
  const CandidateMetadata none{std::nullopt, "the index serves no PEP 658 metadata for it, so its Hub commit is unknown" + fix};
  if (!http) return none;
  if (!f.metadata_sha256) return metadata_from_wheel(f, *http);
  if (f.metadata_sha256->empty()) return {std::nullopt, "the index gives no sha256 for its PEP 658 metadata, so its Hub commit cannot be trusted" + fix};
  HttpResponse r = http->get(url + ".metadata", false, 1 << 20);
  if (r.status != 200) return none;
  check_served_sha256(f.filename + ".metadata from " + display_url(url + ".metadata"), *f.metadata_sha256, sha256_hex(r.body));
  return {std::move(r.body), ""};
}

// `pin --lock`: why a candidate is not the locked build, or nullopt.
std::optional<std::string> commit_problem(const IndexFile& f, const PinRequest& req, HttpClient* http) {
  const CandidateMetadata metadata = candidate_metadata(f, http);
  if (!metadata.text) return metadata.missing;
  auto rev = recorded_revision(parse_metadata_fields(*metadata.text));
  if (!rev) return "its METADATA records no Hub revision (not built by kwheel from the Hub)";
  if (rev->first != *req.repo_id || rev->second != *req.commit)
    return "built from " + rev->first + " at " + rev->second.substr(0, 12) + ", not the locked " + req.commit->substr(0, 12);
  return std::nullopt;
}

}  // namespace

namespace {

// What a source offers: its candidate files, and where they were found.
struct Listing {
  std::vector<IndexFile> files;
  std::string where;  // for messages: the directory or the project page
};

// The wheels of a directory, by their parsed names (other files, hidden
// files and names that do not parse are not wheels of it).
std::vector<std::pair<fs::directory_entry, WheelFilename>> directory_wheels(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::not_found, "'" + dir + "' is neither a directory of wheels nor an index URL (http://, https://, file://)");
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
    throw Error(ErrorKind::usage, "index URL '" + source + "' must be http://, https:// or file://");
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

// A candidate that fits, ranked.
struct Fit {
  size_t i;  // into PinResult::candidates
  Version public_version, version;
  std::pair<int, int> score;  // specificity()
};

// Every wheel of the project becomes a candidate, with the reason it does
// not fit or, when it does, its rank.
std::vector<Fit> judge_candidates(const std::vector<IndexFile>& files, const PinRequest& req, HttpClient& http, PinResult& result) {
  std::optional<SpecifierSet> spec;
  if (req.version) spec = SpecifierSet::parse(*req.version);
  std::vector<Fit> fits;
  for (const auto& f : files) {
    PinCandidate c;
    c.file = f;
    WheelFilename w;
    try {
      w = parse_wheel_filename(f.filename);
    } catch (const Error&) {
      continue;  // an sdist or a stray file: not a candidate
    }
    if (normalize_name(w.name) != result.project) continue;
    c.label = read_label(w.version);
    auto v = Version::try_parse(w.version);
    if (!v) c.problem = "version '" + w.version + "' is not PEP 440";
    else if (spec && !spec->contains(*v, true)) c.problem = "version " + w.version + " is outside --version " + spec->str();
    else if (f.yanked) c.problem = "yanked on the index";
    else if (f.sha256.size() != 64) c.problem = "the index gives no sha256 for it, so it cannot be pinned by hash";
    else c.problem = filename_incompatibility(w, req.target, req.device);
    if (!c.problem && req.commit) c.problem = commit_problem(f, req, &http);
    if (!c.problem) fits.push_back({result.candidates.size(), Version::parse(v->public_str()), *v, specificity(c.label)});
    result.candidates.push_back(std::move(c));
  }
  return fits;
}

std::string target_description(const PinRequest& req) { return req.target_described.empty() ? describe(req.target) : req.target_described; }

// Nothing fits: the variants and versions there are, and one example reason.
[[noreturn]] void throw_no_fit(const PinResult& result, const std::string& where, const PinRequest& req) {
  std::map<std::string, std::set<std::string>> available;
  // The example reason: a build for the target's torch if there is one
  // (its problem is the interesting one), else the first.
  std::string first_reason;
  const auto target_torch = req.target.torch ? leading_major_minor(*req.target.torch) : std::nullopt;
  for (int pass = 0; pass < 2 && first_reason.empty(); ++pass)
    for (const auto& c : result.candidates)
      if (first_reason.empty() && c.problem && (pass == 1 || (target_torch && c.label.framework_version == target_torch)))
        first_reason = c.file.filename + ": " + *c.problem;
  for (const auto& c : result.candidates) available[variant_name(c.label)].insert(c.file.version);
  std::string list;
  for (const auto& [v, versions] : available) {
    std::string vs;
    for (const auto& x : versions) {
      if (!vs.empty()) vs += "/";
      vs += Version::try_parse(x).value_or(Version::parse("0")).public_str();
    }
    list += (list.empty() ? "" : ", ") + v + " (" + vs + ")";
  }
  throw Error(ErrorKind::not_found, "no " + result.project + " wheel at " + where + " fits " + target_description(req) +
                                        "; available: " + list + " (e.g. " + first_reason + "); pin one with --torch X.Y --cuda X.Y or --cpu, or build that variant");
}

// The newest public version wins, then the most specific build, then the
// newest local version; every fitting file of exactly that version is kept.
void choose(const std::vector<Fit>& fits, PinResult& result) {
  auto best = std::max_element(fits.begin(), fits.end(), [](const Fit& a, const Fit& b) {
    if (a.public_version != b.public_version) return a.public_version < b.public_version;
    if (a.score != b.score) return a.score < b.score;
    return a.version < b.version;
  });
  const PinCandidate& chosen = result.candidates[best->i];
  result.label = chosen.label;
  result.version = chosen.file.version;
  for (const auto& f : fits)
    if (f.version == best->version && result.candidates[f.i].file.version == chosen.file.version) result.files.push_back(result.candidates[f.i].file);
  std::sort(result.files.begin(), result.files.end(), [](const IndexFile& a, const IndexFile& b) { return a.filename < b.filename; });
}

// The requirement line and the requirements.txt snippet around it.
// A pin from a variant index names its PEP 825 variant and the machine it
// was chosen for.
void write_requirements(const PinRequest& req, PinResult& result) {
  result.requirement = result.project + "==" + result.version;
  for (const auto& f : result.files) result.requirement += " --hash=sha256:" + f.sha256;
  const bool wheel_variant = !result.variant_label.empty();
  std::string t = "# kwheel pin: " + result.project + " for " + target_description(req) + (wheel_variant ? " on " + result.variant_machine : "") + "\n";
  if (wheel_variant)
    t += "# variant: " + result.variant_label + " (PEP 825; install with uv pip install --preview-features wheel-variants -r FILE)\n";
  else
    t += "# variant: " + result.label.describe() + (result.label.index_name().empty() ? "" : " (sub-index " + result.label.index_name() + ")") + "\n";
  for (const auto& f : result.files) t += "# file: " + f.filename + "\n";
  if (!result.index_line.empty()) t += result.index_line + "\n";
  else t += "# from directory " + fs::absolute(req.source).string() + ": pip install --find-links DIR -r requirements.txt\n";
  t += result.requirement + "\n";
  result.text = t;
}

// The chosen wheel's Requires-Dist: its dependencies, for pin_dependencies.
// Every file of the chosen version is one build, so the first tells.
void read_requirements(PinResult& result, HttpClient& http) {
  const IndexFile& f = result.files.front();
  const CandidateMetadata metadata = candidate_metadata(f, &http);
  if (!metadata.text)
    throw Error(ErrorKind::input, "cannot read the METADATA of " + f.filename + " to find its dependencies: " + metadata.missing +
                                      "; or pass --no-deps to pin the kernels alone");
  for (const auto& [key, value] : parse_metadata_fields(*metadata.text))
    if (key == "Requires-Dist") result.requires_dist.push_back(value);
}

// A file a variant index lists, held to the page's sha256.
std::string fetch_listed(const IndexFile& f, HttpClient& http) {
  std::string body;
  if (f.url.starts_with("file://")) {
    body = read_file(file_url_path(f.url));
  } else {
    const HttpResponse r = http.get(f.url, false);
    if (r.status != 200) throw Error(ErrorKind::network, "cannot fetch " + display_url(f.url) + ": HTTP " + std::to_string(r.status));
    body = r.body;
  }
  check_served_sha256(f.filename, f.sha256, sha256_hex(body));
  return body;
}

void pin_from_variant_index(const Listing& listing, const PinRequest& req, HttpClient& http, PinResult& result) {
  if (req.commit) throw Error(ErrorKind::usage, "pin --lock reads a kernel's own sub-indexes, not a variant index; point it at SITE/simple/ or a sub-index");
  const VariantMachine machine = variant_machine(req.cuda_driver, req.sm_arch);
  pin_variant_listing(listing.files, req, machine, [&](const IndexFile& f) { return fetch_listed(f, http); }, result);
  if (result.candidates.empty()) throw Error(ErrorKind::not_found, "no wheel of '" + result.project + "' at " + listing.where);
  if (result.files.empty()) {
    std::string reason;
    for (const auto& c : result.candidates)
      if (c.problem && reason.empty()) reason = c.file.filename + ": " + *c.problem;
    throw Error(ErrorKind::not_found, "no variant of " + result.project + " at " + listing.where + " fits " + target_description(req) + " on " +
                                          machine.describe() + " (e.g. " + reason + "); pass --cuda-driver X.Y --sm-arch X.Y for another machine");
  }
  write_requirements(req, result);
}

}  // namespace

PinResult pin(const PinRequest& req) {
  PinResult result;
  const bool is_url = req.source.find("://") != std::string::npos;
  std::optional<std::string> wanted = req.name ? std::optional(normalize_name(*req.name)) : std::nullopt;
  IndexConnection index(is_url ? index_root(req.source) : std::string(), req.connection, pin_http_options(), req.transport);

  const Listing listing = is_url ? list_index(req, wanted, index, result) : list_directory(req, wanted, result);
  result.project = *wanted;
  if (is_variant_listing(listing.files)) {
    pin_from_variant_index(listing, req, index.http(), result);
    if (req.read_requirements) read_requirements(result, index.http());
    return result;
  }
  const std::vector<Fit> fits = judge_candidates(listing.files, req, index.http(), result);
  if (result.candidates.empty()) throw Error(ErrorKind::not_found, "no wheel of '" + result.project + "' at " + listing.where);
  if (fits.empty()) throw_no_fit(result, listing.where, req);
  choose(fits, result);
  write_requirements(req, result);
  if (req.read_requirements) read_requirements(result, index.http());
  return result;
}

json to_json(const PinResult& r) {
  json files = json::array();
  for (const auto& f : r.files) files.push_back({{"filename", f.filename}, {"url", f.url}, {"sha256", f.sha256}});
  json candidates = json::array();
  for (const auto& c : r.candidates) {
    json j{{"filename", c.file.filename}, {"variant", variant_name(c.label)}, {"fits", !c.problem.has_value()}};
    if (c.problem) j["reason"] = *c.problem;
    candidates.push_back(std::move(j));
  }
  json j{{"ok", true},
         {"project", r.project},
         {"version", r.version},
         {"variant", variant_name(r.label)},
         {"variant_described", r.label.describe()},
         {"requirement", r.requirement},
         {"index_line", r.index_line},
         {"page_format", r.page_format},
         {"requirements", r.text},
         {"files", files},
         {"candidates", candidates}};
  // Where TLS trust and credentials came from, never what they are.
  if (r.page_format != "directory") j["connection"] = {{"ca_from", r.ca_from}, {"credentials_from", r.credentials_from}};
  if (!r.variant_label.empty()) j["wheel_variant"] = {{"label", r.variant_label}, {"machine", r.variant_machine}};
  return j;
}

std::vector<std::string> pin_source_projects(const PinRequest& req) {
  std::set<std::string> names;
  if (req.source.find("://") == std::string::npos) {
    for (const auto& [e, w] : directory_wheels(req.source)) names.insert(normalize_name(w.name));
    if (names.empty()) throw Error(ErrorKind::not_found, "directory '" + req.source + "' holds no .whl file; build some with `kwheel build`");
    return {names.begin(), names.end()};
  }
  IndexConnection index(index_root(req.source), req.connection, pin_http_options(), req.transport);
  for (auto& n : index_projects(index.url(), index)) names.insert(std::move(n));
  if (names.empty()) throw Error(ErrorKind::not_found, "index " + index.url() + " lists no project");
  return {names.begin(), names.end()};
}

bool is_pin_index_line(const std::string& line) {
  return line.starts_with("--index-url ") || line.starts_with("--extra-index-url ") || line.starts_with("# from directory ") || line.starts_with("# from a directory");
}

PinSetResult pin_all(const PinRequest& base) {
  PinSetResult result;
  const std::vector<std::string> projects = pin_source_projects(base);
  std::string header, lines, index_line;
  for (const auto& project : projects) {
    PinRequest req = base;
    req.name = project;
    try {
      result.kernels.push_back(pin(req));
    } catch (const Error& e) {
      if (projects.size() == 1) throw;
      throw Error(e.kind(), "project '" + project + "': " + e.what() + " (pass --name to pin the others one by one)", e.reason());
    }
    const PinResult& r = result.kernels.back();
    header += "# " + r.project + ": " + r.label.describe() + (r.label.index_name().empty() ? "" : " (sub-index " + r.label.index_name() + ")") + "\n";
    for (const auto& f : r.files) header += "#   file: " + f.filename + "\n";
    index_line = r.index_line;
    lines += r.requirement + "\n";
  }
  if (result.kernels.size() == 1) {
    result.text = result.kernels.front().text;
    return result;
  }
  result.text = "# kwheel pin: " + std::to_string(result.kernels.size()) + " kernels for " + target_description(base) + "\n" + header;
  result.text += index_line.empty() ? "# from directory " + fs::absolute(base.source).string() + ": pip install --find-links DIR -r requirements.txt\n"
                                    : index_line + "\n";
  result.text += lines;
  return result;
}

json to_json(const PinSetResult& r) {
  if (r.kernels.size() == 1) return to_json(r.kernels.front());
  json kernels = json::array();
  for (const auto& k : r.kernels) kernels.push_back(to_json(k));
  return json{{"ok", true}, {"requirements", r.text}, {"kernels", kernels}};
}

LockPinResult pin_lock(const PinRequest& base, const std::string& lock) {
  const bool is_url = base.source.find("://") != std::string::npos;
  LockPinResult result{lock, {}, {}};
  std::string index_line, lines, header;
  for (const auto& k : read_kernels_lock(lock)) {
    PinRequest req = base;
    req.repo_id = k.dependency.repo_id;
    req.commit = k.commit;
    if (is_url) req.name = k.dependency.repo_id.substr(k.dependency.repo_id.find('/') + 1);
    try {
      result.kernels.push_back(pin(req));
    } catch (const Error& e) {
      throw Error(e.kind(), "lock entry '" + k.dependency.repo_id + "' (commit " + k.commit.substr(0, 12) + "): " + e.what(), e.reason());
    }
    const PinResult& r = result.kernels.back();
    header += "# " + k.dependency.repo_id + " @ " + k.commit.substr(0, 12) + ": " + r.label.describe() + "\n";
    index_line = r.index_line;
    lines += r.requirement + "\n";
  }
  result.text = "# kwheel pin --lock " + lock + "\n" + header;
  result.text += index_line.empty() ? "# from a directory: pip install --find-links DIR --require-hashes -r requirements.txt\n" : index_line + "\n";
  result.text += lines;
  return result;
}

json to_json(const LockPinResult& r) {
  json kernels = json::array();
  for (const auto& k : r.kernels) kernels.push_back(to_json(k));
  return json{{"ok", true}, {"lock", r.lock}, {"requirements", r.text}, {"kernels", kernels}};
}

}  // namespace kwheel
