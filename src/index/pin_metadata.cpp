// A pin candidate's METADATA and a variant index's files, each held to the
// sha256 its index page gives.
#include "kwheel/index/pin_metadata.hpp"

#include <filesystem>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/hub/url.hpp"
#include "kwheel/index/pin_source.hpp"
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

}  // namespace

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

// A file a variant index lists, held to the page's sha256.
std::string fetch_listed(const IndexFile& f, HttpClient& http) {
  std::string body;
  if (f.url.starts_with("file://")) {
    body = read_local_file(file_url_path(f.url));
  } else {
    const HttpResponse r = http.get(f.url, false);
    if (r.status != 200) throw Error(ErrorKind::network, "cannot fetch " + display_url(f.url) + ": HTTP " + std::to_string(r.status));
    body = r.body;
  }
  check_served_sha256(f.filename, f.sha256, sha256_hex(body));
  return body;
}

}  // namespace kwheel
