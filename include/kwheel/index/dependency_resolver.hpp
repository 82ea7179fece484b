#pragma once
// The Python dependencies of pinned kernels, resolved by uv (`uv pip compile
// --generate-hashes`), not by kwheel: kwheel chooses the kernel wheels by its
// own fit rules (`pin`), hands uv their exact `name==version+label` pins,
// and takes back every other package with its exact version and the sha256
// of every file the index offers for it.
//
// torch is the user's, already installed: it is given to uv as an
// exclusion (`--excludes`, uv >= 0.9), which removes torch from the
// resolution itself, together with everything only torch would bring in,
// even when a dependency needs torch transitively. `--no-emit-package` would
// still resolve torch (and let its version decide others), and an override
// would pin one; neither leaves torch to the environment.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/hub/child_tool_access.hpp"
#include "kwheel/packaging/pylock.hpp"

namespace kwheel {

struct ResolvedDependency {
  std::string name;                 // as uv writes it (normalized)
  std::string version;
  std::string marker;               // "" when it applies everywhere
  std::vector<std::string> sha256;  // every acceptable file's, as uv lists them
  std::string index;                // the index uv took it from (no userinfo); "" if uv did not say
};

struct DependencyRequest {
  std::vector<std::string> kernel_pins;  // "img2gray==0.1.0+torch1.13.cpu", chosen by kwheel
  std::vector<std::string> kernel_names; // left out of uv's output: their lines are kwheel's
  std::string kernels_source;            // the kernels' index URL, or a directory of wheels
  std::optional<std::string> deps_index; // --deps-index-url; default the kernels' index (a directory: none, so only the directory)
  std::optional<std::string> python;     // the target interpreter; nullopt: a universal resolution (a described target)
  std::string uv;                        // the uv program (find_uv)
  ChildToolAccess access;                // CA, client certificate and logins for uv
  bool pylock = false;                   // also the same resolution as PEP 751 packages
  std::chrono::seconds timeout{600};
};

struct DependencyResolution {
  std::string tool;                              // "uv 0.13.9"
  std::string command;                           // "uv pip compile --generate-hashes"
  std::vector<ResolvedDependency> dependencies;  // sorted by name
  std::vector<LockedPackage> locked;             // with `pylock`: the dependencies' PEP 751 entries, index set
  std::string requires_python;                   // from uv's lock; "" without `pylock`
};

// uv's `--generate-hashes --no-annotate --emit-index-annotation` output.
// Throws Error(input) on a line that is not a pinned requirement, or one
// whose name, version, marker or hashes are not what they must be
// (index/index_values.hpp): uv passes on what an index said.
std::vector<ResolvedDependency> parse_uv_requirements(const std::string& text);

// The uv to run: `explicit_path` (--uv), else $KWHEEL_UV, else `uv` on PATH.
// Throws Error(not_found) saying how to get uv, naming `why` (what needs it).
std::string find_uv(const std::optional<std::string>& explicit_path, const std::string& why);

// Throws Error(not_found) naming the requirement uv could not find or
// satisfy, Error(network) when the index cannot be read, Error(input) when
// uv's answer holds credentials (it is written into files).
DependencyResolution resolve_dependencies(const DependencyRequest& request);

}  // namespace kwheel
