#pragma once
// Which backend's builds fit which system, decided as kernels 0.17.2
// decides it, so that validate, pin and variants never offer a build that
// kernels itself would refuse to load (issue #37, 6: a torch-cpu build was
// pinned for a CUDA target).
//
// kernels/backends.py `_backend` names the system's backend from its torch
// (CUDA, else ROCm, else Metal, else XPU, else CPU); `_select_backend("cpu")`
// picks CPU on any system. kernels/variants.py `_check_variants` then holds
// each variant to it:
//   * an arch build (torch27-cxx11-cu126-..., torch-stable-abi..., tvm-ffi...)
//     on a CUDA system needs CUDA of the same major and a minor no newer than
//     the system's; on any other system its backend string must be the
//     system's exactly (rocm63 on ROCm 6.3, cpu on CPU);
//   * a noarch build (torch-cuda, torch-cpu, ...) needs the system backend's
//     name ("npu" for CANN), or is torch-universal.
// The reasons are kernels' own words.
#include <optional>
#include <string>

#include "kwheel/kernel/variant.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/validate/interpreter.hpp"

namespace kwheel {

// The backend kernels selects for `env` on `device` ("auto", "cuda", "cpu").
// From what the probe reads without importing torch: torch.version.cuda,
// .hip and .xpu; a macOS torch is taken as Metal (MPS, which kernels asks
// torch for at run time). No torch, or --device cpu: CPU.
Backend system_backend(const InterpreterInfo& env, const std::string& device);

// Why kernels would reject a build with this label on `system`, in kernels'
// words, or nullopt. A label that names no backend (torch-universal, a
// foreign label) is not judged here.
std::optional<std::string> backend_mismatch(const LocalLabel& label, const Backend& system);

}  // namespace kwheel
