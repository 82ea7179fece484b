#pragma once
// The Hub API's JSON answers, checked and turned into hub.hpp's types: a
// tree listing's entries (GET .../tree/{rev}/{path}), the refs listing
// (GET .../refs) and revision info (GET .../revision/{rev}). Pure functions
// of the parsed body, so tests and fuzzers reach them without a server. The
// body comes from the network: any shape but the Hub's is an
// Error(network) naming `where`, never a crash or a half-filled value.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kwheel/hub.hpp"

namespace kwheel {

// A full git object id as the Hub writes it: 40 lower-case hex digits.
bool is_git_sha1(const std::string& text);

// One element of a tree listing. Files need an unsigned size and a git sha1
// oid; an "lfs" object, when present, a sha256 oid ("sha256:" prefix
// allowed) and, if it gives one, the same size.
TreeEntry parse_tree_entry(const nlohmann::json& entry, const std::string& where);

// The "branches" and "tags" arrays of a refs listing (either may be absent),
// branches first, each in the server's order.
std::vector<RefInfo> parse_refs(const nlohmann::json& body, const std::string& where);

// The commit sha of revision info ({"sha": "<40 hex>", ...}), or nullopt
// when there is none (the caller names the revision in its error).
std::optional<std::string> revision_sha(const nlohmann::json& info);

}  // namespace kwheel
