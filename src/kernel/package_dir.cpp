#include "kwheel/kernel/package_dir.hpp"

#include "kwheel/packaging/pep440.hpp"

namespace kwheel {

void TopLevelDirs::add(std::string_view path) {
  const auto slash = path.find('/');
  if (slash == std::string_view::npos) return;
  const std::string top(path.substr(0, slash));
  if (top.empty()) return;
  dirs.insert(top);
  if (path.substr(slash + 1) == "__init__.py") packages.insert(top);
}

std::optional<std::string> pick_package_dir(const TopLevelDirs& tops, std::string_view project, NamedDirectory named) {
  const std::string expected = wheel_name_component(project);
  if ((named == NamedDirectory::any ? tops.dirs : tops.packages).count(expected)) return expected;
  if (tops.packages.size() == 1) return *tops.packages.begin();
  return std::nullopt;
}

}  // namespace kwheel
