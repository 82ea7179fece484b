#include "kwheel/factory/wheel_version.hpp"

#include <algorithm>

#include "kwheel/base/error.hpp"

namespace kwheel {

void apply_version_rule(BuildOptions& o, const VersionRequest& a, const ResolvedSource& src, std::optional<uint64_t> locked_version) {
  if (!a.wheel_version.empty()) {
    o.version = a.wheel_version;
    return;
  }
  if (!src.is_hub) {
    if (a.version.empty())
      throw Error(ErrorKind::usage, "building from directory '" + src.location + "' needs --version, e.g. --version 1.0");
    o.version = a.version;
    return;
  }
  const Resolution& r = *src.resolution;
  if (r.version && !r.kernel_version) {
    o.version = *r.version;
    return;
  }
  o.branch_version = r.kernel_version ? r.kernel_version : locked_version;
  // Said before anything is downloaded: without a vN branch, the version
  // can only come from the variants' metadata.json.
  if (!o.branch_version && !src.tree.empty() &&
      std::none_of(src.tree.begin(), src.tree.end(), [](const TreeEntry& e) { return e.path.ends_with("/metadata.json"); }))
    throw Error(ErrorKind::usage, "revision '" + r.requested + "' of " + src.location + " (commit " + r.commit.substr(0, 12) +
                                      ") is not a vN branch, carries no vX.Y.Z tag, and its variants have no metadata.json to say the kernel version; "
                                      "pass --version N (branch vN), --version X.Y.Z (a tag) or --wheel-version X.Y.Z");
  o.build_number = src.client->history_length(r.commit);
}

}  // namespace kwheel
