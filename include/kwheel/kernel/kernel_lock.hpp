#pragma once
// What a team pins: `kernels.lock` as `kernels lock` writes it, and the
// [tool.kernels.dependencies] table of pyproject.toml it is made from.
// Both lock formats are read:
//   kernels >= 0.17  [{"dependency": {"repo-id": R, "version": N | "revision": REV},
//                      "lock": {"commit": SHA}}, ...]   (transitive deps included)
//   older            [{"repo_id": R, "sha": SHA, "variants": {...}}, ...]
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/kernel/kernel_metadata.hpp"

namespace kwheel {

struct LockedKernel {
  KernelDependency dependency;   // version/revision empty in the older format
  std::string commit;            // full sha
  std::string format;            // "0.17" or "legacy"
};

// Parses kernels.lock text. Throws Error(input) naming `source`, the entry
// (by index and repo) and what is wrong with it.
std::vector<LockedKernel> parse_kernels_lock(std::string_view json, const std::string& source);
std::vector<LockedKernel> read_kernels_lock(const std::filesystem::path& file);

// [tool.kernels.dependencies] of a pyproject.toml: "org/name" = N, a
// kernel version (the only form kernels 0.17 accepts). Throws
// Error(input) naming the file and key; Error(not_found) without the table.
std::vector<KernelDependency> read_project_dependencies(const std::filesystem::path& pyproject);

}  // namespace kwheel
