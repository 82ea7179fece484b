#pragma once
// Which import package a distribution provides, read from what Python
// would import, never from RECORD (which whoever can write site-packages
// rewrites at will). kwheel names a wheel [--name-prefix]<kernel name> and
// its one package <kernel name> with '-' as '_' (kernel_layout.hpp), so
// the package is found from the distribution's name and the top level of
// site-packages (or of a wheel's members), and `kwheel verify` holds that
// directory, whatever RECORD lists, to the signed digest.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// The top level of site-packages or of a wheel: each module name Python
// can import there, with the entries that import as it.
struct TopLevelImports {
  // "img2gray" -> {"img2gray/", "img2gray.py"}: a directory, or a file
  // Python's path finder loads (.py, .pyc, .pyw, an extension module).
  std::map<std::string, std::vector<std::string>> forms;
  // Adds one top-level entry; anything Python does not import by name
  // (.dist-info, .data, .pth, a README) adds nothing.
  void add(std::string_view entry, bool directory);
};

// The entries directly in `site` (a site-packages directory).
TopLevelImports imports_in(const std::filesystem::path& site);
// The top level of a wheel's members ("img2gray/_ops.py" gives img2gray/).
TopLevelImports imports_of_members(const std::vector<std::string>& members);

// The module `dist_name` provides: the longest ending of its PEP 503 form
// that is a kernel name and imports there ("acme-img2gray" gives img2gray
// when acme_img2gray does not import). Longest first, so that a package
// named after the whole name (the one `import` of it loads) is never passed
// over for a shorter one; nullopt when no ending imports.
std::optional<std::string> import_name_of(std::string_view dist_name, const TopLevelImports& tops);

// The one package directory among `tops`, or nullopt (none, or several).
// Only where import_name_of finds nothing: a wheel or an install built with
// --name. It can never make a signature vouch: a signed kernel's name must
// end the distribution's (chain_evidence's name check), and then
// import_name_of would have found its package.
std::optional<std::string> only_package_dir(const TopLevelImports& tops);

// Why `module` is not one package directory and nothing else, or "": a
// file beside the directory that imports under the same name is outside
// any package verify checks, and loads when the directory does not.
std::string import_forms_fault(const TopLevelImports& tops, const std::string& module);

}  // namespace kwheel
