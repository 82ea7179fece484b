#include "kwheel/kernel/kernel_lock.hpp"

// Errors as values: a malformed pyproject.toml is an input error, not a throw
// from inside a third-party parser.
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "kwheel/base/error.hpp"
#include "kwheel/hub/hf_config.hpp"
#include "kwheel/hub/hub_json.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A lock lists a few dozen kernels; a file this size is not one.
constexpr uint64_t kMaxFileBytes = 16 << 20;

std::string read_small_file(const fs::path& file, const std::string& what) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) throw Error(ErrorKind::not_found, what + " '" + file.string() + "' cannot be read: " + ec.message());
  if (size > kMaxFileBytes) throw Error(ErrorKind::input, what + " '" + file.string() + "' is over 16 MiB; is it the right file?");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw Error(ErrorKind::io, "cannot read " + what + " '" + file.string() + "'");
  return text.str();
}

class EntryError {
 public:
  EntryError(const std::string& source, size_t index) : where_(source + " entry " + std::to_string(index + 1)) {}
  void name(const std::string& repo) { where_ += " ('" + repo + "')"; }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorKind::input, where_ + ": " + why + "; regenerate it with `kernels lock`");
  }

 private:
  std::string where_;
};

std::string repo_of(const json& v, const EntryError& err) {
  if (!v.is_string()) err.fail("the repo id is not a string");
  std::string repo = v.get<std::string>();
  if (!looks_like_repo_id(repo)) err.fail("'" + repo.substr(0, 200) + "' is not a Hub repo id (org/name)");
  return repo;
}

std::string commit_of(const json& v, const EntryError& err) {
  if (!v.is_string() || !is_git_sha1(v.get<std::string>())) err.fail("the locked commit is not a full 40-hex git sha");
  return v.get<std::string>();
}

LockedKernel current_entry(const json& e, EntryError& err) {
  const json& dep = e["dependency"];
  if (!dep.is_object() || !e.contains("lock") || !e["lock"].is_object() || !e["lock"].contains("commit"))
    err.fail("expected {\"dependency\": {...}, \"lock\": {\"commit\": ...}}");
  LockedKernel k;
  k.format = "0.17";
  k.dependency.repo_id = repo_of(dep.value("repo-id", json()), err);
  err.name(k.dependency.repo_id);
  const bool has_v = dep.contains("version"), has_r = dep.contains("revision");
  if (has_v == has_r) err.fail("the dependency needs exactly one of 'version' and 'revision'");
  if (has_v && !dep["version"].is_number_unsigned()) err.fail("its version is not a non-negative integer");
  if (has_r && !dep["revision"].is_string()) err.fail("its revision is not a string");
  if (has_v) k.dependency.version = dep["version"].get<uint64_t>();
  else k.dependency.revision = dep["revision"].get<std::string>();
  k.commit = commit_of(e["lock"]["commit"], err);
  return k;
}

LockedKernel legacy_entry(const json& e, EntryError& err) {
  LockedKernel k;
  k.format = "legacy";
  k.dependency.repo_id = repo_of(e["repo_id"], err);
  err.name(k.dependency.repo_id);
  if (!e.contains("sha")) err.fail("it has no 'sha'");
  k.commit = commit_of(e["sha"], err);
  return k;
}

}  // namespace

std::vector<LockedKernel> parse_kernels_lock(std::string_view text, const std::string& source) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorKind::input, source + " is not valid JSON; regenerate it with `kernels lock`");
  if (!j.is_array()) throw Error(ErrorKind::input, source + " must hold a JSON list of locked kernels; regenerate it with `kernels lock`");
  if (j.empty()) throw Error(ErrorKind::input, source + " locks no kernel; add [tool.kernels.dependencies] and run `kernels lock`");
  std::vector<LockedKernel> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < j.size(); ++i) {
    EntryError err(source, i);
    const json& e = j[i];
    if (!e.is_object()) err.fail("expected an object");
    if (e.contains("dependency")) out.push_back(current_entry(e, err));
    else if (e.contains("repo_id")) out.push_back(legacy_entry(e, err));
    else err.fail("it is neither a kernels 0.17 entry (dependency/lock) nor an older one (repo_id/sha)");
    // kernels.lock may name one repo at two versions (transitive deps); the
    // same repo at the same commit twice would build the same wheels twice.
    if (!seen.emplace(out.back().dependency.repo_id, out.back().commit).second) out.pop_back();
  }
  return out;
}

std::vector<LockedKernel> read_kernels_lock(const fs::path& file) {
  return parse_kernels_lock(read_small_file(file, "lock file"), "lock file '" + file.string() + "'");
}

std::vector<KernelDependency> read_project_dependencies(const fs::path& pyproject) {
  const std::string where = "'" + pyproject.string() + "'";
  const std::string text = read_small_file(pyproject, "project file");
  toml::parse_result parsed = toml::parse(text, pyproject.string());
  if (!parsed) {
    const auto& e = parsed.error();
    throw Error(ErrorKind::input, where + " is not valid TOML (line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description()) + ")");
  }
  const toml::table* deps = parsed.table()["tool"]["kernels"]["dependencies"].as_table();
  if (!deps || deps->empty())
    throw Error(ErrorKind::not_found, where + " has no [tool.kernels.dependencies]; add e.g. \"kernels-community/activation\" = 1");
  std::vector<KernelDependency> out;
  for (const auto& [key, value] : *deps) {
    KernelDependency d;
    d.repo_id = std::string(key.str());
    const std::string at = where + " [tool.kernels.dependencies] \"" + d.repo_id + "\"";
    if (!looks_like_repo_id(d.repo_id)) throw Error(ErrorKind::input, at + ": not a Hub repo id (org/name)");
    // kernels 0.17 takes an integer kernel version and nothing else.
    auto version = value.value<int64_t>();
    if (!version || !value.is_integer() || *version < 0)
      throw Error(ErrorKind::input, at + ": use a kernel version (= 1), as kernels 0.17 requires");
    d.version = static_cast<uint64_t>(*version);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace kwheel
