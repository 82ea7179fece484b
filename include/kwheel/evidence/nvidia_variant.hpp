#pragma once
// What a CUDA build's binaries say, in the vocabulary of uv's built-in
// NVIDIA variant provider (uv 0.13.9 vendors nvidia-variant-provider
// 0.0.1): the properties `kwheel index --variants` labels a wheel with.
//
// - `cuda_version_lower_bound`: the newest CUDA release any of the code
//   needs (cuda_release.hpp), and never below the release the build was
//   made for (its variant's cuNNN: the build links that torch's CUDA
//   libraries). Without evidence in the binaries there is no bound, and
//   the build is not offered as a variant.
// - `sm_arch`: uv lists, for a GPU of capability M.m, `Mk_real` for every
//   k <= m, then `M0_virtual`. A value is given only when every GPU that
//   uv would match with it runs the wheel's code by validate's rule
//   (device_coverage.hpp: SASS for `_real`, any code for `_virtual` where
//   some GPU of the family needs the PTX). GPUs the code runs on that no
//   value can name without also naming one it does not run on (sm_100a
//   runs on 10.0 only; `100_real` also matches 10.3) are reported, not
//   claimed.
#include <optional>
#include <string>
#include <vector>

#include "kwheel/evidence/cuda_arch.hpp"
#include "kwheel/evidence/cuda_release.hpp"
#include "kwheel/evidence/gpu_code.hpp"

namespace kwheel {

// Every GPU capability from 5.0 (uv's floor) that NVIDIA's compilers
// target: nvcc 12.9's and 13.0's --list-gpu-code (10.1 is 11.0's old name).
const std::vector<CudaArch>& known_cuda_devices();

struct NvidiaVariantEvidence {
  std::optional<CudaRelease> lower_bound;
  std::vector<std::string> lower_bound_from;  // "sm_90 in img2gray/_x.so: compiled by CUDA 13.0", ...
  std::vector<std::string> sm_arch;           // uv's values, sorted: "100_real", "90_real", "90_virtual"
  std::vector<std::string> unclaimed;         // "10.0 (sm_100a): 100_real would also claim 10.3"
  std::string problem;                        // why the build cannot be a variant; "" when it can
};

// `objects`: the wheel's GPU code; `built_for`: the CUDA its variant names
// (nullopt for none).
NvidiaVariantEvidence nvidia_variant_evidence(const std::vector<ObjectGpuCode>& objects, const std::optional<CudaRelease>& built_for);

}  // namespace kwheel
