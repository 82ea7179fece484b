#pragma once
// Which version a kernel's wheels carry (docs/wheel-naming.md), decided
// before anything is downloaded so a build that cannot name its wheels
// fails at once.
#include <cstdint>
#include <optional>
#include <string>

#include "kwheel/factory/build.hpp"
#include "kwheel/factory/source.hpp"

namespace kwheel {

struct VersionRequest {
  std::string version;        // --version: a directory's wheel version (Hub: already in the SourceRequest)
  std::string wheel_version;  // --wheel-version: overrides every rule
};

// Sets options.version, or branch_version and build_number: --wheel-version;
// a directory's --version; an old repo's vX.Y.Z tag; otherwise the integer
// scheme <kernel version>.<history length of the commit>, the kernel version
// from the vN branch, else `locked_version`, else the variants' metadata.json.
// Throws Error(usage) when no rule can name the version.
void apply_version_rule(BuildOptions& options, const VersionRequest& request, const ResolvedSource& source,
                        std::optional<uint64_t> locked_version);

}  // namespace kwheel
