#pragma once
// Where a command's kernel repo comes from: a directory on disk, or a Hub
// repo id resolved to one commit and fetched into the HF cache. Both end as
// the same list of variants for the same build pipeline.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "kwheel/hub.hpp"
#include "kwheel/repo_layout.hpp"

namespace kwheel::cli {

struct SourceArgs {
  std::string source;
  std::optional<std::string> revision;
  std::optional<std::string> version_spec;
  HubFlags hub;
  unsigned jobs = 8;
};

// Adds --revision, --endpoint, --token, --offline, --cache-dir, --repo-type.
void add_hub_flags(CLI::App* sub, SourceArgs& args);

struct ResolvedSource {
  bool is_hub = false;
  std::string name;                     // repo's name part, or the directory's name
  std::string location;                 // the repo id or the directory as given
  std::optional<Resolution> resolution; // Hub only
  std::unique_ptr<HubClient> client;    // Hub only
  std::vector<TreeEntry> tree;          // Hub only
  nlohmann::json describe() const;      // for --json: never the token
};

// A directory that exists wins over a repo id of the same spelling.
ResolvedSource resolve_source(const SourceArgs& args, const Output& out);

// The files of build/: from disk, the cache, or downloaded (with progress).
std::vector<RepoFile> fetch_source(ResolvedSource& src, const SourceArgs& args, const Output& out);

}  // namespace kwheel::cli
