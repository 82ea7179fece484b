#pragma once
// `kwheel verify` on an installed kernel: the distribution's RECORD in its
// *.dist-info, then the chain its package carries (verify_chain.hpp).
#include <filesystem>
#include <string>

#include "kwheel/trust/verify_chain.hpp"

namespace kwheel {

// The distribution `name` (any spelling PEP 503 normalises alike) installed
// in `site_packages`: one item. Error(not_found) when it is not installed there.
ChainItem verify_installed(const std::filesystem::path& site_packages, const std::string& name, const ChainOptions& options);
// `name` as interpreter `python` has it installed: verify_installed in the
// site-packages it names (installed_location), then where that interpreter's
// `import` finds the package checked; another place (an earlier sys.path
// entry, an import hook) fails the item's package check.
ChainItem verify_installed_for(const std::string& python, const std::string& name, const ChainOptions& options);
// Where interpreter `python` has `name` installed (its site-packages
// directory), asked through an embedded helper. Error(usage) when `python`
// does not run, Error(not_found) when it has no such distribution.
std::filesystem::path installed_location(const std::string& python, const std::string& name);

}  // namespace kwheel
