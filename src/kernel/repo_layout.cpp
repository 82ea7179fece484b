#include "kwheel/kernel/repo_layout.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "kwheel/base/error.hpp"
#include "kwheel/base/safe_path.hpp"

namespace kwheel {
namespace fs = std::filesystem;

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

}  // namespace kwheel
