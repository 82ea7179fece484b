#include "kwheel/link/cache_links.hpp"

#include <stdio.h>  // renameat2
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/environment.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "kwheel/hub/hf_config.hpp"

namespace kwheel {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxMarkerBytes = 1 << 20;
constexpr const char* kFolderPrefix = "kernels--";

Error io_error(const std::string& what, const fs::path& p, const std::string& why) {
  return Error(ErrorKind::io, "cannot " + what + " '" + p.string() + "': " + why + "; check the permissions of the cache, or pass --cache DIR");
}

// The marker of `folder`, or null when there is none or it is not ours.
nlohmann::json read_marker(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(folder / kLinkMarker, ec))) return nullptr;
  try {
    auto j = nlohmann::json::parse(read_small_file(folder / kLinkMarker, kMaxMarkerBytes, "a kwheel link marker"), nullptr, false);
    if (j.is_object() && j.value("made_by", "") == "kwheel link" && j.contains("environment") && j["environment"].is_string()) return j;
  } catch (const Error&) {
  }
  return nullptr;
}

// A fresh directory beside the repo folders: same file system, so a rename
// swaps it in; hidden, and not "kernels--", so kernels never reads it.
fs::path fresh_dir(const fs::path& cache, const std::string& tag) {
  for (int i = 0;; ++i) {
    const fs::path p = cache / (".kwheel-link-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(i));
    std::error_code ec;
    if (fs::create_directory(p, ec)) return p;
    if (ec || i > 1000) throw io_error("create", p, ec ? ec.message() : "too many leftovers of earlier runs");
  }
}

void remove_tree(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);  // symlinks are removed, never followed
}

// `fresh` becomes `folder` in one step; what `folder` held is removed.
void swap_in(const fs::path& fresh, const fs::path& folder) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(folder, ec))) {
    if (::rename(fresh.c_str(), folder.c_str()) != 0) throw io_error("create", folder, std::strerror(errno));
    return;
  }
  if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE) != 0) {
    // A file system without RENAME_EXCHANGE: the old folder moves aside
    // first, and for that instant the repo is absent, never half-made.
    if (errno != EINVAL && errno != ENOSYS) throw io_error("replace", folder, std::strerror(errno));
    const fs::path aside = fresh.string() + "-old";
    if (::rename(folder.c_str(), aside.c_str()) != 0) throw io_error("replace", folder, std::strerror(errno));
    if (::rename(fresh.c_str(), folder.c_str()) != 0) throw io_error("replace", folder, std::strerror(errno));
    remove_tree(aside);
    return;
  }
  remove_tree(fresh);  // now the old folder
}

void make_symlink(const fs::path& target, const fs::path& link) {
  std::error_code ec;
  fs::create_directory_symlink(target, link, ec);
  if (ec) throw io_error("link", link, ec.message());
}

// Why these entries cannot share one repo folder, or "".
std::string clash(const std::vector<const LinkEntry*>& entries) {
  std::map<std::uint64_t, std::string> commit_of;
  std::set<std::pair<std::string, std::string>> variants;
  for (const auto* e : entries) {
    auto [it, fresh] = commit_of.emplace(e->origin.version, e->origin.revision);
    if (!fresh && it->second != e->origin.revision)
      return "two installed distributions give version " + std::to_string(e->origin.version) + " two commits (" + it->second.substr(0, 12) +
             ", " + e->origin.revision.substr(0, 12) + "); uninstall one";
    if (!variants.emplace(e->origin.revision, e->origin.variant).second)
      return "two installed distributions are variant '" + e->origin.variant + "' of commit " + e->origin.revision.substr(0, 12) + "; uninstall one";
  }
  return "";
}

// One repo's folder, built under a temp name in `cache`.
fs::path build_folder(const fs::path& cache, const std::string& environment, const std::string& repo_id, const std::vector<const LinkEntry*>& entries) {
  const fs::path dir = fresh_dir(cache, "new");
  try {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto* e : entries) {
      fs::create_directories(dir / "refs");
      write_file_atomic(dir / "refs" / ("v" + std::to_string(e->origin.version)), e->origin.revision);
      const fs::path build = dir / "snapshots" / e->origin.revision / "build";
      fs::create_directories(build);
      make_symlink(e->package_dir, build / e->origin.variant);
      kernels.push_back({{"distribution", e->distribution}, {"version", e->origin.version}, {"revision", e->origin.revision},
                         {"variant", e->origin.variant}, {"target", e->package_dir.string()}});
    }
    const nlohmann::json marker{{"made_by", "kwheel link"}, {"environment", environment}, {"repo_id", repo_id}, {"kernels", kernels}};
    write_file_atomic(dir / kLinkMarker, marker.dump(1) + "\n");
  } catch (...) {
    remove_tree(dir);
    throw;
  }
  return dir;
}

// This environment's folders in `cache` that no entry needs any more.
std::vector<std::pair<std::string, fs::path>> stale_folders(const fs::path& cache, const std::string& environment, const std::set<std::string>& wanted) {
  std::vector<std::pair<std::string, fs::path>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(kFolderPrefix) || !e.is_directory(ec) || e.is_symlink(ec)) continue;
    const auto marker = read_marker(e.path());
    if (marker.is_null() || marker["environment"] != environment) continue;
    const std::string repo = marker.value("repo_id", "");
    if (!wanted.count(repo)) out.emplace_back(repo, e.path());
  }
  return out;
}

}  // namespace

fs::path default_kernels_cache() {
  if (auto k = env_value("KERNELS_CACHE")) return *k;
  return hub_cache_dir();
}

std::string cache_folder_name(const std::string& repo_id) {
  const auto slash = repo_id.find('/');
  return std::string(kFolderPrefix) + repo_id.substr(0, slash) + "--" + repo_id.substr(slash + 1);
}

CacheChange write_cache_links(const fs::path& cache, const std::string& environment, const std::vector<LinkEntry>& entries) {
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) throw io_error("create", cache, ec.message());
  std::map<std::string, std::vector<const LinkEntry*>> by_repo;
  for (const auto& e : entries) by_repo[e.origin.repo_id].push_back(&e);
  CacheChange change;
  std::set<std::string> wanted;
  for (const auto& [repo, list] : by_repo) {
    const fs::path folder = cache / cache_folder_name(repo);
    if (fs::exists(fs::symlink_status(folder, ec)) && read_marker(folder).is_null()) {
      change.refused.push_back({repo, "'" + folder.string() + "' was not made by kwheel link (a Hub download, or another tool's); "
                                      "it is left as it is: remove it, or pass --cache DIR for a cache of links alone"});
      continue;
    }
    if (auto why = clash(list); !why.empty()) {
      change.refused.push_back({repo, why});
      continue;
    }
    swap_in(build_folder(cache, environment, repo, list), folder);
    change.linked.push_back(repo);
    wanted.insert(repo);  // a refused repo's old links of this environment go: they are not what is installed
  }
  for (const auto& [repo, folder] : stale_folders(cache, environment, wanted)) {
    const fs::path aside = fresh_dir(cache, "old");
    remove_tree(aside);
    if (::rename(folder.c_str(), aside.c_str()) != 0) throw io_error("remove", folder, std::strerror(errno));
    remove_tree(aside);
    change.removed.push_back(repo);
  }
  return change;
}

}  // namespace kwheel
