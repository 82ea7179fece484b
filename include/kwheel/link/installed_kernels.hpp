#pragma once
// The kernel wheels an interpreter has installed, as `kwheel link` starts
// from them: asked of the interpreter itself (src/python/find_kernels.py),
// so that the distributions are the ones pip and kernels see there. Each
// says where its origin came from (hub_kernel.json, else an older kwheel
// wheel's METADATA) or why it has none that kernels could load it by.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/wheel/kernel_origin.hpp"

namespace kwheel {

struct InstalledKernel {
  std::string name;                   // the distribution, as its METADATA spells it
  std::string version;                // its Version
  std::filesystem::path site;         // the directory its RECORD is relative to
  std::optional<KernelOrigin> origin; // nullopt: `why` says why it cannot be linked
  std::string origin_from;            // "hub_kernel.json" or "METADATA"
  std::string why;
};

struct InstalledKernels {
  std::string python;   // sys.executable
  std::string prefix;   // sys.prefix: the environment a cache's links belong to
  std::vector<InstalledKernel> kernels;
};

// The helper's answer, read. Error(usage) when it is not one.
InstalledKernels parse_installed_kernels(std::string_view answer, const std::string& python);
// Runs the helper in `python` (-I: its own site-packages, not the caller's
// PYTHONPATH). Error(usage) when `python` does not run as Python 3.
InstalledKernels find_installed_kernels(const std::string& python);

}  // namespace kwheel
