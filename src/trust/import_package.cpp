#include "kwheel/trust/import_package.hpp"

#include <algorithm>
#include <array>

#include "kwheel/kernel/kernel_metadata.hpp"
#include "kwheel/packaging/pep440.hpp"

namespace kwheel {

namespace fs = std::filesystem;

namespace {

// The suffixes CPython's FileFinder loads a top-level module from on any
// platform (EXTENSION_SUFFIXES end in .so or .pyd; SOURCE and BYTECODE).
bool importable_file(std::string_view name) {
  static constexpr std::array<std::string_view, 5> suffixes = {".py", ".pyc", ".pyw", ".so", ".pyd"};
  return std::any_of(suffixes.begin(), suffixes.end(), [&](std::string_view s) { return name.ends_with(s); });
}

// In name order, once each: a directory listing's order is the file system's.
TopLevelImports sorted(TopLevelImports tops) {
  for (auto& [_, entries] : tops.forms) {
    std::sort(entries.begin(), entries.end());
    entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  }
  return tops;
}

}  // namespace

void TopLevelImports::add(std::string_view entry, bool directory) {
  const std::string name(entry);
  // A directory imports by its whole name; a dotted one (x.dist-info, x.data) never does.
  if (directory) {
    if (name.find('.') == std::string::npos && !name.empty()) forms[name].push_back(name + "/");
    return;
  }
  const auto dot = name.find('.');
  if (dot == std::string::npos || dot == 0 || !importable_file(name)) return;
  forms[name.substr(0, dot)].push_back(name);
}

TopLevelImports imports_in(const fs::path& site) {
  TopLevelImports tops;
  for (const auto& e : fs::directory_iterator(site)) tops.add(e.path().filename().string(), e.is_directory());
  return sorted(std::move(tops));
}

TopLevelImports imports_of_members(const std::vector<std::string>& members) {
  TopLevelImports tops;
  for (const auto& m : members) {
    const auto slash = m.find('/');
    tops.add(m.substr(0, slash), slash != std::string::npos);
  }
  return sorted(std::move(tops));
}

std::optional<std::string> import_name_of(std::string_view dist_name, const TopLevelImports& tops) {
  const std::string normal = normalize_name(dist_name);
  for (size_t at = 0; at < normal.size(); ++at) {
    const std::string ending = normal.substr(at);
    if (!is_valid_kernel_name(ending)) continue;
    std::string module = ending;
    std::replace(module.begin(), module.end(), '-', '_');
    if (tops.forms.count(module)) return module;
  }
  return std::nullopt;
}

std::optional<std::string> only_package_dir(const TopLevelImports& tops) {
  std::optional<std::string> found;
  for (const auto& [module, entries] : tops.forms) {
    if (std::find(entries.begin(), entries.end(), module + "/") == entries.end()) continue;
    if (found) return std::nullopt;
    found = module;
  }
  return found;
}

std::string import_forms_fault(const TopLevelImports& tops, const std::string& module) {
  const auto it = tops.forms.find(module);
  if (it == tops.forms.end()) return "nothing imports as '" + module + "'";
  const std::string dir = module + "/";
  const auto& entries = it->second;
  if (std::find(entries.begin(), entries.end(), dir) == entries.end())
    return "'" + entries.front() + "' is what `import " + module + "` loads, not the package directory '" + dir + "' kwheel installs";
  for (const auto& e : entries)
    if (e != dir)
      return "'" + e + "' imports as '" + module + "' beside the package '" + dir + "', outside everything verify checks; Python loads it whenever '" +
             dir + "' is not a package";
  return "";
}

}  // namespace kwheel
