#include "kwheel/hub/hub_json.hpp"

#include <algorithm>
#include <cctype>

#include "kwheel/base/bounded_json.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/hub/http.hpp"

namespace kwheel {
using nlohmann::json;

namespace {

bool is_hex(const std::string& s, size_t len) {
  return s.size() == len && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c)); });
}

}  // namespace

bool is_git_sha1(const std::string& text) { return is_hex(text, 40); }

std::optional<json> parse_hub_json(std::string_view body, const std::string& where) {
  return parse_bounded_json(body, {kMaxHubJsonBody, kMaxHubJsonDepth, kMaxHubJsonValues}, ErrorKind::network, "the answer from " + where,
                            "no Hugging Face Hub answers like this: check --endpoint");
}

TreeEntry parse_tree_entry(const json& j, const std::string& where) {
  auto bad = [&](const std::string& why) { return Error(ErrorKind::network, "malformed tree listing from " + where + ": " + why); };
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string() || !j.contains("path") || !j["path"].is_string())
    throw bad("an entry lacks 'type' or 'path'");
  TreeEntry e;
  e.type = j["type"];
  e.path = j["path"];
  if (e.type == "directory") return e;
  if (e.type != "file") throw bad("entry '" + e.path + "' has unknown type '" + e.type + "'");
  if (!j.contains("size") || !j["size"].is_number_unsigned() || !j.contains("oid") || !j["oid"].is_string())
    throw bad("file '" + e.path + "' lacks 'size' or 'oid'");
  e.size = j["size"];
  e.oid = j["oid"];
  if (!is_hex(e.oid, 40)) throw bad("file '" + e.path + "' has an oid that is not a git sha1");
  if (j.contains("lfs") && !j["lfs"].is_null()) {
    const auto& l = j["lfs"];
    if (!l.is_object() || !l.contains("oid") || !l["oid"].is_string()) throw bad("file '" + e.path + "' has a malformed 'lfs' object");
    std::string oid = l["oid"];
    if (oid.starts_with("sha256:")) oid = oid.substr(7);
    if (!is_hex(oid, 64)) throw bad("file '" + e.path + "' has an LFS oid that is not a sha256");
    e.lfs_sha256 = oid;
    if (l.contains("size") && l["size"].is_number_unsigned() && l["size"].get<uint64_t>() != e.size)
      throw bad("file '" + e.path + "' has inconsistent sizes");
  }
  return e;
}

std::vector<RefInfo> parse_refs(const json& j, const std::string& where) {
  std::vector<RefInfo> out;
  for (const char* kind : {"branches", "tags"}) {
    if (!j.is_object() || !j.contains(kind) || !j[kind].is_array()) continue;
    for (const auto& r : j[kind]) {
      if (!r.is_object() || !r.contains("name") || !r["name"].is_string() || !r.contains("targetCommit") || !r["targetCommit"].is_string())
        throw Error(ErrorKind::network, "malformed refs listing from " + where);
      out.push_back({r["name"], std::string(kind) == "branches" ? "branch" : "tag", r["targetCommit"]});
    }
  }
  return out;
}

std::optional<std::string> revision_sha(const json& info) {
  if (!info.is_object() || !info.contains("sha") || !info["sha"].is_string() || !is_hex(info["sha"].get<std::string>(), 40)) return std::nullopt;
  return info["sha"].get<std::string>();
}

}  // namespace kwheel
