#pragma once
// A client for the Hugging Face Hub's HTTP API, speaking the protocol
// huggingface_hub speaks: revision info, refs, paginated recursive tree
// listings and /resolve/ downloads, into the shared HF cache.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/hub/hf_cache.hpp"
#include "kwheel/hub/hf_config.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/repo_entries.hpp"
#include "kwheel/hub/repo_file.hpp"

namespace kwheel {

// Where repo ids and commits are named for people: the public Hub.
inline constexpr const char* kPublicHub = "https://huggingface.co";

struct Resolution {
  std::string requested;           // what the user asked for ("main", ">=0.1,<0.2")
  std::string ref;                 // the ref it resolved through, if any
  std::string commit;              // full sha; every later request uses it
  std::optional<std::string> version;  // X.Y.Z from a vX.Y.Z tag at that commit (old repos)
  std::optional<uint64_t> kernel_version;  // N, when it resolved through branch vN
  bool latest = false;             // neither --version nor --revision: the highest vN was taken
};

// The N of a version branch name "vN" (kernels >= 0.14), if it is one: at
// most 8 digits, the versions metadata.json may name.
std::optional<uint64_t> version_branch(const std::string& name);

struct FetchProgress {
  std::function<void(uint64_t files, uint64_t bytes)> on_plan;   // what must be downloaded
  // Before any download: every file (as fetch() will return them) and the
  // cache blobs still missing, which arrive later through
  // download.on_file_done (job.dest). Lets a caller start on the rest.
  std::function<void(const std::vector<RepoFile>& files, const std::vector<std::filesystem::path>& missing)> on_listed;
  DownloadProgress download;
};

class HubClient {
 public:
  // `transport` carries the requests; none: libcurl (tests pass a fake).
  HubClient(HubConfig config, std::string repo_id, unsigned jobs = 8, std::shared_ptr<Transport> transport = {});

  // Lists refs; a kernel repo that is not there is looked up as a model
  // repo unless the type was forced, and the client keeps the type found.
  std::vector<RefInfo> list_refs();
  // --revision (branch, tag, full or short sha) or --version SPEC (an
  // integer N: branch vN, as kernels >= 0.14; otherwise PEP 440 specifiers
  // over vX.Y.Z tags, highest match, as kernels 0.10). Neither: the highest
  // vN branch; a repo without one is an Error(not_found) listing its refs.
  Resolution resolve(const std::optional<std::string>& revision, const std::optional<std::string>& version_spec);
  // How many commits the Hub lists in the history of `commit` (itself
  // included): the build number of integer-versioned wheels. Cached, so
  // --offline builds of a commit built once online know it too.
  uint64_t history_length(const std::string& commit);
  // Non-empty when the repo was found only as a model repo.
  std::string repo_type_note() const;
  std::vector<TreeEntry> list_tree(const std::string& commit, const std::string& path = "build");
  // Ensures every listed file is in the cache (downloading what is missing,
  // verified) and returns them as repo files backed by the cache's blobs.
  std::vector<RepoFile> fetch(const std::string& commit, const std::vector<TreeEntry>& entries, const FetchProgress& progress = {});
  // Offline: the files of build/ at a commit, from the cache alone.
  std::vector<RepoFile> cached_files(const std::string& commit);

  // What the Hub says of the organisation `org`
  // (GET /api/organizations/{org}/overview, huggingface_hub's
  // get_organization_overview): trustedKernelPublisher or not, or a 404,
  // which that call documents as "no such organization" -- but which a
  // wrong endpoint path gives too, so the caller must still learn whether a
  // Hub answered at all. Every other outcome is an Error that names the
  // request and its status: auth when the token is refused or required
  // (401, 403), network otherwise (no connection, TLS, 5xx, not JSON).
  enum class PublisherAnswer { trusted, not_trusted, no_such_organization };
  PublisherAnswer publisher_overview(const std::string& org);

  const std::string& repo_id() const { return repo_id_; }
  const HubConfig& config() const { return config_; }
  const HfCache& cache() const { return cache_; }
  const TransferStats& stats() const { return http_.stats(); }
  std::string repo_url() const;  // for messages: endpoint/repo
  // The commit's page on huggingface.co (kPublicHub), whatever endpoint
  // served it: what a wheel records as its source, a function of the repo
  // and the commit alone.
  std::string tree_url(const std::string& commit) const;

 private:
  nlohmann::json get_json(const std::string& url, const std::string& what);
  [[noreturn]] void throw_for(const HttpResponse& r, const std::string& what);
  std::string error_message(const HttpResponse& r) const;  // the Hub's own words for a failed request, redacted
  [[noreturn]] void throw_for_history(const HttpResponse& r, const std::string& what, const std::string& commit);
  Resolution resolve_offline(const std::optional<std::string>& revision, const std::optional<std::string>& version_spec);
  std::string api_base() const;      // endpoint/api/{models|kernels}/org/name
  void use_repo_type(const std::string& type);

  HubConfig config_;
  std::string repo_id_;
  unsigned jobs_;
  bool fell_back_ = false;
  HfCache cache_;
  HttpClient http_;
};

}  // namespace kwheel
