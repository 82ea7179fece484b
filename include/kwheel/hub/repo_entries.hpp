#pragma once
// What the Hub lists about a repo: the entries of a tree listing and its
// refs. Values only, so the JSON parsers (hub_json) and the client (hub)
// both build on them without including each other.
#include <cstdint>
#include <optional>
#include <string>

namespace kwheel {

struct TreeEntry {
  std::string path;
  std::string type;                  // "file" or "directory"
  uint64_t size = 0;
  std::string oid;                   // git blob id
  std::optional<std::string> lfs_sha256;
  std::string etag() const { return lfs_sha256 ? *lfs_sha256 : oid; }
};

struct RefInfo {
  std::string name;    // "main", "v0.1.1"
  std::string kind;    // "branch" or "tag"
  std::string commit;
};

}  // namespace kwheel
