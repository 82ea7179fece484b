#pragma once
// The cache kernels 0.17.2 reads offline, made to point at installed
// packages. kernels resolves `version=N` through <cache>/kernels--ORG--NAME/
// refs/vN (a commit), then loads snapshots/<commit>/build/<variant>/
// (metadata.json, __init__.py). Here build/<variant> is a symlink to the
// installed package directory: `pip uninstall` removes what it points at
// and `kwheel verify` checks the very files kernels imports; a copy would
// outlive the one and escape the other (docs/loading.md).
//
// Each repo folder written carries kLinkMarker, naming the environment
// (sys.prefix) it was linked from. A run for one environment rewrites its
// own folders to what is installed now and removes the ones nothing
// installed needs; a folder without the marker (a Hub download, another
// tool's) is never touched. A folder is built under a temp name and swapped
// in with one rename (RENAME_EXCHANGE when one is there), so kernels sees
// the old links or the new ones, never half of either.
#include <filesystem>
#include <string>
#include <vector>

#include "kwheel/wheel/kernel_origin.hpp"

namespace kwheel {

inline constexpr const char* kLinkMarker = ".kwheel-link.json";

// KERNELS_CACHE, else huggingface_hub's cache (hub_cache_dir), as kernels
// 0.17.2 reads them (_versions.py, hf_hub.py).
std::filesystem::path default_kernels_cache();
// "kernels--ORG--NAME": huggingface_hub's folder for a kernel-type repo.
std::string cache_folder_name(const std::string& repo_id);

struct LinkEntry {
  KernelOrigin origin;                 // revision set (a stand-in for a directory build)
  std::filesystem::path package_dir;   // what build/<variant> points at
  std::string distribution;            // "img2gray 1.3+torch.cpu", for the marker and messages
};

struct RefusedRepo {
  std::string repo_id;
  std::string why;
};

struct CacheChange {
  std::vector<std::string> linked;    // repo ids whose folder now holds these entries
  std::vector<std::string> removed;   // repo ids of this environment's folders nothing needs any more
  std::vector<RefusedRepo> refused;   // left as they were, and why
};

// Makes `cache`'s folders for `environment` exactly `entries`. Throws
// Error(io) when the cache cannot be written at all; one repo that cannot
// be (a folder kwheel did not make, two versions N naming two commits) is
// refused and the others are done.
CacheChange write_cache_links(const std::filesystem::path& cache, const std::string& environment, const std::vector<LinkEntry>& entries);

}  // namespace kwheel
