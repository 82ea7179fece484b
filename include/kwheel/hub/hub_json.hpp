#pragma once
// The Hub API's JSON answers, checked and turned into repo_entries.hpp's types: a
// tree listing's entries (GET .../tree/{rev}/{path}), the refs listing
// (GET .../refs) and revision info (GET .../revision/{rev}). Pure functions
// of the parsed body, so tests and fuzzers reach them without a server. The
// body comes from the network: any shape but the Hub's is an
// Error(network) naming `where`, never a crash or a half-filled value.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kwheel/hub/repo_entries.hpp"

namespace kwheel {

// Bounds on what one Hub answer may cost. A parsed JSON value costs ~100
// bytes whatever its text, so 8 MiB of "[[],[],...]" would be ~300 MB of
// tree, and a nesting of millions more still: values (object keys
// included) and nesting are counted while parsing, before anything is
// built past the limit. A real tree page (1000 entries) is ~20k values.
constexpr int kMaxHubJsonDepth = 32;
constexpr size_t kMaxHubJsonValues = 200000;
// Tree listings accumulate across pages: at most this many entries (a
// kernel's build/ holds a few hundred) and pages.
constexpr size_t kMaxTreeEntries = 20000;
constexpr int kMaxTreePages = 1000;
// The history listing only counts commits (50 a page on the Hub).
constexpr int kMaxHistoryPages = 10000;
// A pagination link longer than this is refused (real cursors are ~100 bytes).
constexpr size_t kMaxNextLinkBytes = 8192;

// The JSON of a Hub answer from `where` (a URL fit for messages), or
// nullopt when it is not JSON at all (a body cut short: callers may fetch it
// again). Over kMaxHubJsonBody bytes, kMaxHubJsonDepth levels or
// kMaxHubJsonValues values: an Error(network) naming `where` and the limit.
std::optional<nlohmann::json> parse_hub_json(std::string_view body, const std::string& where);

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
