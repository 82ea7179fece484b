// Hub API response bodies: a tree listing page, the refs listing and the
// revision info, parsed as HubClient parses them (json::parse without
// exceptions, then the hub_json checks); a page's files then grouped into
// variants as build groups them.
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/hub_json.hpp"
#include "kwheel/kernel/repo_layout.hpp"

using namespace kwheel;
using nlohmann::json;

namespace {

bool lower_hex(const std::string& s, std::size_t len) {
  if (s.size() != len) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const json j = json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;

  if (j.is_array()) {  // HubClient::list_tree: every element of a page
    std::vector<RepoFile> files;
    for (const auto& element : j) {
      try {
        const TreeEntry e = parse_tree_entry(element, "fuzz");
        if (e.type == "file") files.push_back({e.path, "/nonexistent", e.size, false});
        FUZZ_CHECK(e.type == "file" || e.type == "directory");
        if (e.type == "file") {
          FUZZ_CHECK(lower_hex(e.oid, 40) && is_git_sha1(e.oid));
          FUZZ_CHECK(!e.lfs_sha256 || lower_hex(*e.lfs_sha256, 64));
          FUZZ_CHECK(e.etag() == (e.lfs_sha256 ? *e.lfs_sha256 : e.oid));
        }
      } catch (const Error& e) {
        FUZZ_CHECK(e.kind() == ErrorKind::network);
      }
    }
    try {  // build: the listed files grouped into variants (paths are the repo owner's)
      for (const VariantInput& v : group_variants(files)) {
        FUZZ_CHECK(unsafe_path_reason(v.name).empty() && v.name.find('/') == std::string::npos);
        for (const RepoFile& f : v.files) FUZZ_CHECK(unsafe_path_reason(f.path).empty());
      }
    } catch (const Error& e) {
      FUZZ_CHECK(e.kind() == ErrorKind::input);
    }
  }

  try {  // HubClient::list_refs
    for (const RefInfo& r : parse_refs(j, "fuzz")) FUZZ_CHECK(r.kind == "branch" || r.kind == "tag");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::network);
  }

  if (auto sha = revision_sha(j)) FUZZ_CHECK(lower_hex(*sha, 40));  // HubClient::resolve
  return 0;
}
