#pragma once
// Where a build's kernel repo comes from: a directory on disk, or a Hub
// repo id resolved to one commit and fetched into the HF cache. Both end as
// the same list of variants for the same build pipeline.
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kwheel/base/feedback.hpp"
#include "kwheel/base/file_gate.hpp"
#include "kwheel/hub/hf_config.hpp"
#include "kwheel/hub/hub.hpp"
#include "kwheel/hub/publisher_trust.hpp"
#include "kwheel/kernel/repo_layout.hpp"

namespace kwheel {

struct SourceRequest {
  std::string source;                    // a directory, or ORG/NAME on the Hub
  std::optional<std::string> revision;
  std::optional<std::string> version_spec;
  HubFlags hub;
  TrustPolicy trust;                     // who may publish what kwheel builds
  unsigned jobs = 8;                     // parallel downloads
};

struct ResolvedSource {
  bool is_hub = false;
  std::string name;                     // repo's name part, or the directory's name
  std::string location;                 // the repo id or the directory as given
  std::optional<Resolution> resolution; // Hub only
  std::unique_ptr<HubClient> client;    // Hub only
  std::optional<TrustDecision> trust;   // Hub only: why its publisher is trusted
  std::vector<TreeEntry> tree;          // Hub only
  nlohmann::json describe() const;      // for --json: never the token
};

// A directory that exists wins over a repo id of the same spelling. A Hub
// repo's publisher is checked (publisher_trust.hpp) before anything else is
// asked of the Hub.
ResolvedSource resolve_source(const SourceRequest& request, const Feedback& feedback);

// The files of build/: from disk, the cache, or downloaded (with progress).
std::vector<RepoFile> fetch_source(ResolvedSource& src, const SourceRequest& request, const Feedback& feedback);

// The same files, where a build can start before the last download ends:
// for a Hub source that is not fully cached, the downloads run on a second
// thread and await() blocks a writer until its variant's blobs are in.
class StreamedSource {
 public:
  // Returns once the files are listed (download errors surface through
  // await() and finish()). `src` and `feedback` must outlive this object.
  StreamedSource(ResolvedSource& src, const SourceRequest& request, const Feedback& feedback);
  ~StreamedSource();  // waits for the download thread
  StreamedSource(const StreamedSource&) = delete;
  StreamedSource& operator=(const StreamedSource&) = delete;

  const std::vector<RepoFile>& files() const { return files_; }
  // For BuildOptions::await_inputs; empty when nothing is downloading.
  std::function<void(const VariantInput&)> awaiter();
  // Waits for the downloads (and the cache's snapshot links) to end;
  // rethrows their error.
  void finish();

 private:
  std::vector<RepoFile> files_;
  FileGate gate_;
  std::exception_ptr error_;
  std::jthread downloader_;
};

}  // namespace kwheel
