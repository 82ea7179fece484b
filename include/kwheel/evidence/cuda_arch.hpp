#pragma once
// CUDA architectures as kwheel meets them: the fatbin's entries (sm_90a,
// compute_80), metadata.json's backend.archs (8.0, 9.0a, 9.0+PTX, 10.0f)
// and a device's compute capability (9.0). One value type for all three, so
// that "does this code run on that GPU" compares like with like.
#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace kwheel {

// NVIDIA's suffixes: `a` code uses arch-specific features and runs only on
// exactly that capability; `f` code uses family features and runs on later
// members of the same family (CUDA 12.9+).
enum class ArchSuffix { none, a, f };

struct CudaArch {
  unsigned major = 0, minor = 0;
  ArchSuffix suffix = ArchSuffix::none;
  // 9.0 -> "90", 10.3 -> "103": the number nvcc's sm_/compute_ names use.
  std::string number() const;
  // "9.0", "9.0a", "10.0f": the spelling of backend.archs and of a device.
  std::string capability() const;
  auto operator<=>(const CudaArch&) const = default;
};

enum class CudaCodeKind { sass, ptx };

// One compiled form of the kernels: machine code (SASS, "sm_90a") or
// virtual-architecture PTX ("compute_80") that the driver JIT-compiles.
struct CudaTarget {
  CudaCodeKind kind = CudaCodeKind::sass;
  CudaArch arch;
  std::string str() const;  // "sm_90a", "compute_80"
  auto operator<=>(const CudaTarget&) const = default;
};

// nvcc's names: "sm_90", "sm_90a", "sm_100f", "compute_80". nullopt otherwise.
std::optional<CudaTarget> parse_cuda_target(std::string_view text);

// The architecture number a fatbin entry carries (90, 103, 121), split at
// its last digit as nvcc does; nullopt for numbers no GPU has (< 10, > 999).
std::optional<CudaArch> arch_from_number(unsigned number, ArchSuffix suffix);

// One backend.archs entry of metadata.json (kernel-builder writes
// TORCH_CUDA_ARCH_LIST's spelling): "8.0", "9.0a", "10.0f", "9.0+PTX". A
// declared arch promises SASS for it; "+PTX" promises its PTX as well.
struct DeclaredCudaArch {
  CudaArch arch;
  bool ptx = false;
};
std::optional<DeclaredCudaArch> parse_declared_cuda_arch(std::string_view text);

// A device's compute capability as torch reports it: "9.0" (no suffix).
std::optional<CudaArch> parse_compute_capability(std::string_view text);

}  // namespace kwheel
