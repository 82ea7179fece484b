#pragma once
// `kwheel pin`'s dependencies: what the pinned kernels need beyond torch,
// pinned with hashes so that `pip install --require-hashes -r
// requirements.txt` installs the kernels and everything they import.
//
// Two kinds, two deciders. kernel-depends (other kernel wheels, named with
// `--name-prefix`) are chosen by kwheel's own fit rules, as the top kernels
// are: every build of a kernel shares its platform tags, and only the local
// label tells cu130 from cpu. Everything else is resolved by uv
// (index/dependency_resolver.hpp), given the kernels' exact pins; torch is
// the environment's and is resolved by no one.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kwheel/index/dependency_resolver.hpp"
#include "kwheel/index/pin.hpp"

namespace kwheel {

struct DependencyOptions {
  std::optional<std::string> deps_index;  // --deps-index-url: where the Python dependencies come from (default: the kernels' index)
  std::optional<std::string> uv;          // --uv PATH; else KWHEEL_UV, else uv on PATH
  ChildToolAccess access;                 // how uv reaches the indexes (hub/connection)
  bool pylock = false;                    // the resolution is also wanted as PEP 751 packages
};

struct PinnedDependencies {
  std::vector<PinResult> kernel_depends;          // pinned by kwheel's rules, in the order first needed
  std::optional<DependencyResolution> resolution; // nullopt: nothing beyond torch and kernels, no resolver ran
};

// `kernels` are pin()'s results with PinRequest::read_requirements set;
// `base` is the request they were pinned with. A kernel-depends is a
// requirement whose project the kernels' source holds with kwheel-labelled
// builds. Throws what pin() and resolve_dependencies() throw, the message
// naming the kernel that needs it.
PinnedDependencies pin_dependencies(const PinRequest& base, const std::vector<PinResult>& kernels, const DependencyOptions& options);

// `kernels_text` (the requirements pin wrote for the kernels) with the
// kernel-depends lines, the header naming the resolver, the dependencies'
// index and their pinned lines. Without anything to add, `kernels_text`.
std::string requirements_with_dependencies(const std::string& kernels_text, const PinnedDependencies& deps, const DependencyOptions& options,
                                           const std::string& kernels_index);

// The same resolution as a PEP 751 lock: every kernel (its chosen files,
// its index) and every dependency. Throws Error(input) when a URL in it
// would carry credentials.
std::string pylock_with_dependencies(const std::vector<PinResult>& kernels, const PinnedDependencies& deps, const std::string& kernels_index,
                                     const std::string& target);

// {"kernel_depends": [to_json(PinResult)], "dependencies": [{"name",
// "version", "marker", "hashes", "index"}], "resolver": "uv 0.13.9" | null}
nlohmann::json to_json(const PinnedDependencies& deps);

}  // namespace kwheel
