#pragma once
// `kwheel pin` from a variant index (index/variant_index.hpp): the build uv
// 0.13.9 would install (`--preview-features wheel-variants`) on a machine
// with a given NVIDIA driver and GPU, pinned by hash. The machine is what
// uv's built-in NVIDIA provider sees: --cuda-driver/--sm-arch, else uv's
// forcing variables, else nvidia-smi as uv asks it.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/evidence/cuda_arch.hpp"
#include "kwheel/evidence/cuda_release.hpp"
#include "kwheel/index/pin.hpp"

namespace kwheel {

struct VariantMachine {
  std::optional<CudaRelease> cuda_driver;  // the CUDA driver version; nullopt: no NVIDIA driver
  std::optional<CudaArch> gpu;             // the highest compute capability; nullopt: none known
  std::string from;                        // where it was read: "--cuda-driver/--sm-arch", "NV_VARIANT_PROVIDER_FORCE_*", "nvidia-smi", "none"
  std::string describe() const;            // "CUDA driver 13.0, GPU 9.0 (nvidia-smi)"
};

// `cuda_driver`: "X.Y" or "none"; `sm_arch`: "X.Y". Throws Error(usage)
// naming the flag for a malformed value, or for --sm-arch without a driver.
VariantMachine variant_machine(const std::optional<std::string>& cuda_driver, const std::optional<std::string>& sm_arch);

// A project page is a variant index's when it links a variants.json.
bool is_variant_listing(const std::vector<IndexFile>& files);

// Chooses among the variant wheels of `files` for `request`'s interpreter
// (tags, torch) and `machine`, filling `result` as pin() does. `fetch`
// returns a listed file's bytes, checked against the page's sha256.
void pin_variant_listing(const std::vector<IndexFile>& files, const PinRequest& request, const VariantMachine& machine,
                         const std::function<std::string(const IndexFile&)>& fetch, PinResult& result);

}  // namespace kwheel
