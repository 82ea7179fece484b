#pragma once
// Which GPUs a wheel's code runs on, and whether that is what its
// metadata.json promises. Pure functions over the evidence the binary
// readers found (fatbin entries, offload-bundle targets), after NVIDIA's
// CUDA compatibility rules:
// - SASS sm_XY runs on X.Z devices for Z >= Y; sm_XYf (family) likewise;
// - sm_XYa runs on exactly X.Y;
// - PTX compute_XY is JIT-compiled for any device at or above X.Y;
//   compute_XYa only for exactly X.Y, compute_XYf within the family.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/evidence/cuda_arch.hpp"

namespace kwheel {

bool runs_on(const CudaTarget& code, const CudaArch& device);

struct DeviceCoverage {
  bool covered = false;
  std::optional<CudaTarget> by;  // the code the driver picks: SASS before PTX
  bool jit = false;              // `by` is PTX, compiled at first use
  std::string reason;            // when not covered, one line naming both sides
};

// `code`: every CUDA target of a wheel's shared objects. A device no code
// runs on is not covered: "this GPU is sm_90; the wheel's code targets
// sm_100 only".
DeviceCoverage cuda_coverage(const std::vector<CudaTarget>& code, const CudaArch& device);

// metadata.json's backend.archs against the code the binaries carry.
struct ArchAudit {
  std::vector<std::string> missing;     // declared, but no code for it: the build refuses these
  std::vector<std::string> undeclared;  // code nothing declares ("sm_86"): shown, not refused
  std::vector<std::string> unparsed;    // entries of backend.archs no rule knows: shown
};

// A declared CUDA arch needs SASS of exactly that arch ("9.0a" -> sm_90a);
// "9.0+PTX" needs compute_90 PTX (kernels reads it as "9.0 and newer", which
// the PTX provides, with or without sm_90 beside it); a declared gfx
// processor needs a bundle entry for it.
ArchAudit audit_declared_archs(const std::vector<std::string>& declared, const std::vector<CudaTarget>& cuda,
                               const std::vector<std::string>& gfx);

// Whether a declared arch promises `device`, as kernels 0.17.2 reads
// backend.archs (kernels/archs.py, _cuda_arch_supports): "X.Ya" exactly
// X.Y; "X.Yf" and plain "X.Y" X.Z for Z >= Y; "X.Y+PTX" every device at or
// above X.Y.
bool declared_supports(const DeclaredCudaArch& declared, const CudaArch& device);

// Whether some of `code` runs on some device that one of `declared`
// promises: an object for which this is false carries code for none of
// the GPUs the wheel is declared for.
bool serves_declared(const std::vector<CudaTarget>& code, const std::vector<DeclaredCudaArch>& declared);

// "sm_80, sm_90, compute_90": sorted, unique, for messages and reports.
std::string describe_targets(const std::vector<CudaTarget>& code);

}  // namespace kwheel
