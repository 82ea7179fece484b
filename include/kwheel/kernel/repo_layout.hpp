#pragma once
// The layout of a built kernel repo, wherever its files come from (a
// directory on disk or the Hub): build/<variant>/<package>/... . Paths come
// from untrusted listings, so every one is checked before it names a file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

// A file of the repo: its repo-relative path and where its bytes are now.
struct RepoFile {
  std::string path;                 // "build/torch27-cxx11-cu126-x86_64-linux/img2gray/_ops.py"
  std::filesystem::path source;     // local file holding the bytes
  uint64_t size = 0;
  bool executable = false;
};

struct VariantInput {
  std::string name;                 // the directory name, e.g. torch27-cxx11-cu126-x86_64-linux
  std::vector<RepoFile> files;      // path relative to the variant dir
};

// Why `path` may not name a file in a wheel or on disk, or "" if it may:
// no absolute paths, '..', '.', empty components, backslashes, NUL or control
// characters, over-long names.
std::string unsafe_path_reason(std::string_view path);

// Why a wheel may not hold `member` (a path inside it) besides the
// .dist-info kwheel generates, or "": installers take a top-level name
// ending in .dist-info for the wheel's metadata directory and one ending in
// .data for its data directory, and pip refuses the wheel.
std::string reserved_wheel_path_reason(std::string_view member);

// Groups the files under build/ by variant. Files outside build/ are ignored;
// a file directly in build/ or an unsafe path is an Error(input).
std::vector<VariantInput> group_variants(const std::vector<RepoFile>& files);

// Lists DIR/build recursively. Symlinks are followed only when they resolve
// inside `link_root` (default: DIR itself; a cache snapshot links into its
// blobs); anything else (outside links, devices, sockets) is an Error(input)
// naming the path.
std::vector<RepoFile> list_local_repo(const std::filesystem::path& dir, const std::filesystem::path& link_root = {});

}  // namespace kwheel
