#pragma once
// The one call `kwheel build` makes: resolve each kernel's source (a
// directory, a Hub repo, or every kernel of a lock or project), decide its
// wheels' version, stage every wheel while the downloads stream in, and
// commit all of them or none. A run that fails for any reason leaves the
// output directory as it was, created or not.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kwheel/factory/build.hpp"
#include "kwheel/factory/staging.hpp"
#include "kwheel/factory/source.hpp"
#include "kwheel/factory/wheel_version.hpp"

namespace kwheel {

struct PipelineRequest {
  SourceRequest source;    // source.source empty when building a lock or project
  VersionRequest version;  // version.version is also the Hub version spec of a single source
  std::string lock;        // every kernel of this kernels.lock
  std::string project;     // a project's kernels: DIR/kernels.lock, else its pyproject.toml
  // Applied to every kernel (name, out_dir, tags, ...); the source and the
  // version are set per kernel. options.jobs, when set, also caps downloads.
  BuildOptions options;
  bool many() const { return !lock.empty() || !project.empty(); }
};

// One kernel, resolved, downloaded and staged (then committed or not).
// Heap-held: the download thread refers to `source` for its whole life.
struct KernelBuild {
  ResolvedSource source;
  std::unique_ptr<StreamedSource> files;
  BuildOptions options;
  StagedBuild staged;
};

struct PipelineResult {
  std::vector<std::unique_ptr<KernelBuild>> kernels;
  bool committed = false;  // every kernel's wheels are in out_dir; otherwise none is
  std::size_t wheels_built() const;
  // The first failed variant's ErrorKind (input where it has none); 0 when none failed.
  int exit_code() const;
};

// Throws Error for what stops the run as a whole (bad options, a source
// that cannot be resolved, a failed download); a variant that cannot be
// built is reported in its result instead, and nothing is committed.
// `feedback` must outlive the call (the download thread speaks through it).
PipelineResult run_pipeline(const PipelineRequest& request, const Feedback& feedback);

}  // namespace kwheel
