#pragma once
// The files of a kernel repo as the sources deliver them: the Hub client
// (from the HF cache's blobs or a snapshot another tool downloaded) and a
// checkout on disk both hand the build the same value, listed by one rule.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kwheel {

// A file of the repo: its repo-relative path and where its bytes are now.
struct RepoFile {
  std::string path;                 // "build/torch27-cxx11-cu126-x86_64-linux/img2gray/_ops.py"
  std::filesystem::path source;     // local file holding the bytes
  uint64_t size = 0;
  bool executable = false;
};

// Lists DIR/build recursively. Symlinks are followed only when they resolve
// inside `link_root` (default: DIR itself; a cache snapshot links into its
// blobs); anything else (outside links, devices, sockets) is an Error(input)
// naming the path.
std::vector<RepoFile> list_local_repo(const std::filesystem::path& dir, const std::filesystem::path& link_root = {});

}  // namespace kwheel
