#include "kwheel/hub/repo_file.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "kwheel/base/error.hpp"

namespace kwheel {
namespace fs = std::filesystem;

std::vector<RepoFile> list_local_repo(const fs::path& dir, const fs::path& link_root) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::not_found, "'" + dir.string() + "' is not a directory; pass a kernel repo checkout containing build/");
  const fs::path build = dir / "build";
  if (!fs::is_directory(build, ec))
    throw Error(ErrorKind::input, "'" + dir.string() + "' has no build/ directory; run the kernel build first (e.g. scripts/build-kernel)");
  const fs::path root = fs::canonical(link_root.empty() ? dir : link_root);
  auto inside = [&root](const fs::path& target) {
    auto [r, t] = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
    return r == root.end();
  };
  if (fs::is_symlink(build, ec) && !inside(fs::canonical(build, ec)))
    throw Error(ErrorKind::input, "'build' is a symlink pointing outside the repo (to '" + fs::read_symlink(build, ec).string() +
                                      "'); replace it with the directory itself");
  std::vector<RepoFile> files;
  // Empty variant directories are reported, not silently dropped.
  for (const auto& variant : fs::directory_iterator(build)) {
    if (variant.is_directory() && !variant.is_symlink() && fs::is_empty(variant.path()))
      files.push_back({"build/" + variant.path().filename().string() + "/", {}, 0, false});
  }
  for (auto it = fs::recursive_directory_iterator(build); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path p = it->path();
    // Lexical: fs::relative would resolve a symlink and name its target.
    const std::string rel = p.lexically_relative(dir).generic_string();
    if (it->is_symlink()) {
      fs::path target = fs::weakly_canonical(p, ec);
      if (ec || !inside(target))
        throw Error(ErrorKind::input, "'" + rel + "' is a symlink pointing outside the repo (to '" +
                                          fs::read_symlink(p, ec).string() + "'); replace it with the file itself");
      if (fs::is_directory(target)) throw Error(ErrorKind::input, "'" + rel + "' is a symlink to a directory; not supported in a wheel");
    }
    if (fs::is_directory(p)) continue;
    if (!fs::is_regular_file(p))
      throw Error(ErrorKind::input, "'" + rel + "' is not a regular file; a wheel can only carry files");
    const std::string name = p.filename().string();
    if (name.ends_with(".pyc") || rel.find("/__pycache__/") != std::string::npos) continue;
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) throw Error(ErrorKind::io, "cannot stat '" + p.string() + "'");
    files.push_back({rel, p, static_cast<uint64_t>(st.st_size), (st.st_mode & S_IXUSR) != 0});
  }
  std::sort(files.begin(), files.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return files;
}

}  // namespace kwheel
