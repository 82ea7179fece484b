#pragma once
// Which top-level directory of a file tree is its one import package: the
// rule the build applies to a nested variant (kernel_layout.hpp) and
// validate to a built wheel, so that both name the same package.
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace kwheel {

// The top-level directories of a tree, fed one path at a time.
struct TopLevelDirs {
  std::set<std::string> dirs;      // every top-level directory
  std::set<std::string> packages;  // those with an __init__.py directly in them
  // "pkg/sub/x.py" adds "pkg"; "pkg/__init__.py" also makes it a package; a
  // file at the top adds nothing.
  void add(std::string_view path);
};

// Whether the directory named after the project must itself be a package to
// be chosen: a kernel variant's directory of that name is its package
// whatever it holds; a built wheel's only if it has an __init__.py.
enum class NamedDirectory { any, package };

// The directory named after `project` (as a wheel name component: "my-kernel"
// names my_kernel/) when there is one, else the only package; nullopt when
// neither decides (no package, or several and none named after the project).
std::optional<std::string> pick_package_dir(const TopLevelDirs& tops, std::string_view project, NamedDirectory named);

}  // namespace kwheel
