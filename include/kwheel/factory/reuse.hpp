#pragma once
// Keeping a wheel already in out_dir instead of packing it again: builds
// are reproducible, so a wheel kwheel wrote from exactly these inputs, and
// not touched since, is the wheel this run would write. What is recorded
// beside it is reuse_state.hpp's file; this decides from it.
#include <filesystem>
#include <optional>
#include <string>

#include "kwheel/factory/build.hpp"
#include "kwheel/factory/reuse_state.hpp"

namespace kwheel {

// Identifies everything that determines a wheel's bytes: member files (by
// device, inode, size, mtime and ctime, which any write changes), their
// archive paths and modes, METADATA, WHEEL, write options, kwheel version.
std::string input_fingerprint(const PlannedWheel& plan, const BuildOptions& options);

// A file's identity on disk (device, inode, size, mtime, ctime), or
// "missing": what a wheel's state records right after writing it.
std::string stat_identity(const std::filesystem::path& p);

// The wheel in out_dir to keep instead of packing, if any. When the run
// reports digests and the one that wrote it took none, its digest is taken
// here and the state is also left in `taken`, for commit_build to record.
std::optional<ReuseState> kept_wheel(const std::filesystem::path& wheel, const std::string& fingerprint, const BuildOptions& o,
                                     std::optional<ReuseState>& taken);

// Writes `state` beside `wheel`; a failure is ignored (reuse is only an
// optimisation: the next build writes the wheel again).
void record_state(const std::filesystem::path& wheel, const ReuseState& state);

}  // namespace kwheel
