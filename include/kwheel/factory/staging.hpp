#pragma once
// The two halves of build_wheels, for callers that commit several builds
// at once (`build --lock`: every kernel's wheels, or none). Staging plans
// and writes every selected variant in parallel into temp files beside
// out_dir (or keeps an up-to-date wheel there: reuse.hpp); committing
// renames them into out_dir. The staged wheels are removed unless committed.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/factory/build.hpp"
#include "kwheel/factory/reuse_state.hpp"
#include "kwheel/wheel/wheel_writer.hpp"

namespace kwheel {

struct StagedBuild {
  BuildReport report;
  std::vector<StagedWheel> staged;        // per variant
  std::vector<std::string> fingerprints;  // per variant
  // Per variant: a kept wheel's state with the digest this run took (the
  // run that wrote it reported none), for commit_build to record.
  std::vector<std::optional<ReuseState>> digests_taken;
  std::vector<size_t> todo;               // the selected variants
};
// Throws Error(usage) for bad options, Error(not_found) when no variant is
// selected; a variant's own failure is in its report.
StagedBuild stage_build(const std::vector<VariantInput>& variants, const BuildOptions& options);
// Renames every staged wheel into out_dir; call only when report.ok().
void commit_build(StagedBuild& build);

}  // namespace kwheel
