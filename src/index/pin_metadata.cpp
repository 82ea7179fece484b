// A pin candidate's METADATA and a variant index's files, each held to the
// sha256 its index page gives.
#include "kwheel/index/pin_metadata.hpp"

#include <filesystem>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/pin_source.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/wheel/kernel_marker.hpp"
#include "kwheel/wheel/core_metadata.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {
namespace fs = std::filesystem;

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

namespace {

// The most of a wheel pin reads to find its METADATA, over HTTP and from
// file:// alike.
constexpr uint64_t kMaxPinnedWheel = uint64_t{4} << 30;
// A file a variant index lists (variants.json): the cap HttpClient::get
// puts on it over HTTP, for file:// too.
constexpr uint64_t kMaxListedFile = kMaxHubJsonBody;

// A wheel of a file:// index (or a directory) is hashed and opened only
// when it is a regular file under the cap: /dev/zero would be hashed for ever.
void check_local_wheel(const IndexFile& f, const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    throw Error(ErrorKind::input, f.filename + " at " + f.url + " is not a regular file, so pin does not read it; rebuild the index with `kwheel index`");
  const uint64_t size = fs::file_size(p, ec);
  if (ec || size > kMaxPinnedWheel)
    throw Error(ErrorKind::input, f.filename + " at " + f.url + " is " + (ec ? "of unknown size" : std::to_string(size) + " bytes") +
                                      ", over the 4 GiB pin reads to find its METADATA; pin from a directory of the wheels");
}

// Most private indexes (pypiserver, Artifactory, Nexus) serve no PEP 658
// metadata. pip then reads METADATA from the wheel itself, and so does pin:
// fetched once into a directory that vanishes, and held to the page's sha256
// (and the size the server announces, under a cap) before a byte is read.

CandidateMetadata metadata_from_wheel(const IndexFile& f, HttpClient& http) {
  if (f.sha256.size() != 64)
    return {std::nullopt, "the index gives neither PEP 658 metadata nor a sha256 for it, so its METADATA cannot be trusted"};
  const HttpResponse head = http.get(f.url, true);
  const std::string length = head.header("content-length");
  if (head.status != 200 || length.empty() || length.size() > 12 || length.find_first_not_of("0123456789") != std::string::npos)
    return {std::nullopt, "the index serves no PEP 658 metadata for it, and fetching the wheel to read its METADATA failed (HEAD " +
                              display_url(f.url) + ": HTTP " + std::to_string(head.status) +
                              (length.empty() ? ", no Content-Length" : "") + ")"};
  const uint64_t size = std::stoull(length);
  if (size > kMaxPinnedWheel)
    throw Error(ErrorKind::input, f.filename + " at " + display_url(f.url) + " is " + std::to_string(size) +
                                      " bytes, over the 4 GiB pin reads to find its METADATA; pin from a directory of the wheels");
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

}  // namespace

// From the wheel itself where it is a local file (its bytes checked against
// the page's sha256 when a file:// page gave one), else from its PEP 658
// .metadata companion, checked against the page's metadata sha256. A page
// that gives no sha256 for the metadata gives nothing to trust.
CandidateMetadata candidate_metadata(const IndexFile& f, HttpClient* http) {
  const std::string& url = f.url;
  if (url.starts_with("file://") || url.find("://") == std::string::npos) {
    const fs::path p = url.starts_with("file://") ? file_url_path(url) : fs::path(url);
    check_local_wheel(f, p);
    if (url.starts_with("file://")) check_served_sha256(f.filename + " at " + url, f.sha256, sha256_file_hex(p));
    return {WheelArchive(p).metadata_text(), ""};
  }
  const CandidateMetadata none{std::nullopt, "the index serves no PEP 658 metadata for it"};
  if (!http) return none;
  if (!f.metadata_sha256) return metadata_from_wheel(f, *http);
  if (f.metadata_sha256->empty()) return {std::nullopt, "the index gives no sha256 for its PEP 658 metadata, so it cannot be trusted"};
  HttpResponse r = http->get(url + ".metadata", false, 1 << 20);
  if (r.status != 200) return none;
  check_served_sha256(f.filename + ".metadata from " + display_url(url + ".metadata"), *f.metadata_sha256, sha256_hex(r.body));
  return {std::move(r.body), ""};
}

// `pin --lock`: why a candidate is not the locked build, or nullopt.
std::optional<std::string> commit_problem(const IndexFile& f, const PinRequest& req, HttpClient* http) {
  const CandidateMetadata metadata = candidate_metadata(f, http);
  if (!metadata.text) return metadata.missing + ", so its Hub commit is unknown; pin --lock from a directory or a kwheel index";
  auto rev = recorded_revision(parse_metadata_fields(*metadata.text));
  if (!rev) return "its METADATA records no Hub revision (not built by kwheel from the Hub)";
  if (rev->first != *req.repo_id || rev->second != *req.commit)
    return "built from " + rev->first + " at " + rev->second.substr(0, 12) + ", not the locked " + req.commit->substr(0, 12);
  return std::nullopt;
}

namespace {

// The file whose METADATA speaks for its project: a wheel of the newest
// version, one with PEP 658 metadata (and its sha256) if there is one, so
// that no wheel is fetched for it.
const IndexFile* representative(const std::vector<IndexFile>& files, const std::string& project) {
  const IndexFile* best = nullptr;
  std::optional<Version> best_version;
  bool best_has_metadata = false;
  for (const auto& f : files) {
    WheelFilename w;
    try {
      w = parse_wheel_filename(f.filename, VariantLabels::accept);
    } catch (const Error&) {
      continue;  // an sdist, a variants.json, a stray file
    }
    const auto v = Version::try_parse(w.version);
    if (!v || normalize_name(w.name) != project) continue;
    const bool has_metadata = f.metadata_sha256 && !f.metadata_sha256->empty();
    if (!best || *best_version < *v || (*best_version == *v && has_metadata && !best_has_metadata)) {
      best = &f;
      best_version = v;
      best_has_metadata = has_metadata;
    }
  }
  return best;
}

}  // namespace

bool project_is_kernel(const std::vector<IndexFile>& files, const std::string& project, const std::string& where, HttpClient& http) {
  const IndexFile* f = representative(files, project);
  if (!f) return false;  // no wheel: nothing kwheel builds
  const CandidateMetadata metadata = candidate_metadata(*f, &http);
  if (!metadata.text)
    throw Error(ErrorKind::input, "cannot tell whether project '" + project + "' at " + where + " is a kernel: " + f->filename + ": " + metadata.missing +
                                      "; pass --name to pin the kernels by name");
  return marks_kernel(parse_metadata_fields(*metadata.text));
}

// A file a variant index lists, held to the page's sha256.
std::string fetch_listed(const IndexFile& f, HttpClient& http) {
  std::string body;
  if (f.url.starts_with("file://")) {
    body = read_small_file(file_url_path(f.url), kMaxListedFile, f.filename, "a variant index's variants.json is a regular file of at most 8 MiB");
  } else {
    const HttpResponse r = http.get(f.url, false, kMaxListedFile);
    if (r.status != 200) throw Error(ErrorKind::network, "cannot fetch " + display_url(f.url) + ": HTTP " + std::to_string(r.status));
    body = r.body;
  }
  check_served_sha256(f.filename, f.sha256, sha256_hex(body));
  return body;
}

}  // namespace kwheel
