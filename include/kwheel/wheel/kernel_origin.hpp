#pragma once
// What kernels' loaders need to find an installed kernel wheel, recorded in
// the wheel's own .dist-info as hub_kernel.json: the Hub repo id that
// get_kernel names, the kernel version N (branch vN), the commit it was
// built from, the variant's name and the package directory `import` loads.
// `kwheel link` reads it back from site-packages (docs/loading.md). Wheels
// kwheel wrote before hub_kernel.json carry the same facts in METADATA:
// the "Hub revision" Project-URL (repo id and commit), the Version's major
// part (N) and the variant named in the description.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {

inline constexpr const char* kHubKernelFile = "hub_kernel.json";

struct KernelOrigin {
  std::string package;   // "img2gray": the import package
  std::string repo_id;   // "kernels-community/img2gray"; empty for a directory build without --repo-id
  std::string revision;  // 40-hex commit; empty for a directory build
  std::string variant;   // "torch27-cxx11-cu126-x86_64-linux"
  std::uint64_t version = 0;  // N of branch vN
};

// The file's text: one JSON object, keys sorted, "\n" at the end, the same
// bytes for the same origin (it is part of a reproducible wheel).
std::string render_hub_kernel_json(const KernelOrigin& origin);
// Throws Error(input) naming `where` and the field at fault.
KernelOrigin parse_hub_kernel_json(std::string_view text, const std::string& where);
// The origin an older kwheel wheel's METADATA records, or nullopt when it
// records no Hub revision or names no variant (a directory build: nothing
// says which repo it is). `package` is not in METADATA and stays empty.
std::optional<KernelOrigin> origin_from_metadata(const MetadataFields& fields);

}  // namespace kwheel
