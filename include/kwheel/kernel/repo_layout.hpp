#pragma once
// The layout of a built kernel repo, wherever its files come from (a
// directory on disk or the Hub): build/<variant>/<package>/... . Paths come
// from untrusted listings, so every one is checked before it names a file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kwheel/base/safe_path.hpp"
#include "kwheel/hub/repo_file.hpp"

namespace kwheel {

struct VariantInput {
  std::string name;                 // the directory name, e.g. torch27-cxx11-cu126-x86_64-linux
  std::vector<RepoFile> files;      // path relative to the variant dir
};

// Why a wheel may not hold `member` (a path inside it) besides the
// .dist-info kwheel generates, or "": installers take a top-level name
// ending in .dist-info for the wheel's metadata directory and one ending in
// .data for its data directory, and pip refuses the wheel.
std::string reserved_wheel_path_reason(std::string_view member);

// Groups the files under build/ by variant. Files outside build/ are ignored;
// a file directly in build/ or an unsafe path is an Error(input).
std::vector<VariantInput> group_variants(const std::vector<RepoFile>& files);

}  // namespace kwheel
