#include "kwheel/kernel/repo_layout.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "kwheel/base/error.hpp"

namespace kwheel {
namespace fs = std::filesystem;

std::string unsafe_path_reason(std::string_view path) {
  if (path.empty()) return "empty path";
  if (path.size() > 1024) return "path longer than 1024 bytes";
  if (path.front() == '/') return "absolute path";
  for (unsigned char c : path) {
    if (c == 0) return "NUL byte in path";
    if (c < 0x20 || c == 0x7f) return "control character in path";
    if (c == '\\') return "backslash in path";
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view part = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty()) return "empty path component";
    if (part == "." || part == "..") return "'" + std::string(part) + "' path component";
    if (part.size() > 255) return "path component longer than 255 bytes";
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return {};
}

std::string reserved_wheel_path_reason(std::string_view member) {
  const std::string_view top = member.substr(0, member.find('/'));
  for (std::string_view suffix : {".dist-info", ".data"})
    if (top.ends_with(suffix))
      return "top-level '" + std::string(top) + "' ends in " + std::string(suffix) + ", which installers take for the wheel's " +
             (suffix == ".data" ? "data" : "metadata") + " directory (pip refuses the wheel)";
  return {};
}

std::vector<VariantInput> group_variants(const std::vector<RepoFile>& files) {
  std::map<std::string, VariantInput> by_name;
  for (const auto& f : files) {
    if (!f.path.starts_with("build/")) continue;
    // "build/<variant>/" marks a variant directory that holds no file.
    if (f.path.ends_with("/") && f.path.find('/', 6) == f.path.size() - 1) {
      std::string name = f.path.substr(6, f.path.size() - 7);
      if (auto why = unsafe_path_reason(name); !why.empty())
        throw Error(ErrorKind::input, "repo directory '" + f.path + "': " + why);
      by_name[name].name = name;
      continue;
    }
    if (auto why = unsafe_path_reason(f.path); !why.empty())
      throw Error(ErrorKind::input, "repo file '" + f.path + "': " + why + "; refusing to use this repo");
    std::string rest = f.path.substr(6);
    size_t slash = rest.find('/');
    if (slash == std::string::npos)
      throw Error(ErrorKind::input, "repo file '" + f.path + "' sits directly in build/; expected build/<variant>/<package>/...");
    auto& v = by_name[rest.substr(0, slash)];
    v.name = rest.substr(0, slash);
    RepoFile rel = f;
    rel.path = rest.substr(slash + 1);
    v.files.push_back(std::move(rel));
  }
  std::vector<VariantInput> out;
  for (auto& [_, v] : by_name) {
    std::sort(v.files.begin(), v.files.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
    out.push_back(std::move(v));
  }
  return out;
}

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
