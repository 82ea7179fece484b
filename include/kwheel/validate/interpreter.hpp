#pragma once
// The Python interpreter a wheel is validated with: what it is (version,
// platform, glibc, pip, torch and its CUDA/HIP), read without importing
// torch, and, asked separately because importing torch takes seconds, the
// GPU its torch sees. `validate` and `compat` decide from these facts.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kwheel/evidence/cuda_arch.hpp"

namespace kwheel {

struct InterpreterInfo {
  std::string executable;
  std::string python;    // "3.11"
  // "3.11.2": sys.version_info[:3], what pip holds Requires-Python to; ""
  // for a described target (--torch/--cuda), whose Python is unknown.
  std::string python_version;
  std::string implementation;
  std::string machine;   // "x86_64"
  std::string system;    // "linux"
  std::string glibc;     // "2.36", empty if not glibc
  bool has_pip = false;
  std::string pip_runner;            // pip's __pip-runner__.py (pip >= 22.3), empty if none
  std::optional<std::string> torch;  // "2.11.0+cu130"
  std::optional<std::string> cuda;   // "13.0"
  std::optional<std::string> hip;
  std::optional<std::string> xpu;    // "20250101": oneAPI's version for an XPU torch (kernels' backend rule)
  std::string torch_site;            // the directory holding the torch package
  std::optional<std::string> tvm_ffi;  // "0.1.3": apache-tvm-ffi's version, when tvm_ffi is importable
  std::string tvm_ffi_site;          // the directory holding the tvm_ffi package
  nlohmann::json raw;
};

// The version Requires-Python is held to: python_version, else python
// ("3.11", read as 3.11.0); "" when the target is described, not probed.
inline std::string requires_python_version(const InterpreterInfo& t) { return t.python_version.empty() ? t.python : t.python_version; }

// Runs the interpreter once (without importing torch). Throws Error(usage)
// when it cannot be run.
InterpreterInfo probe_interpreter(const std::string& python);

// The GPU a CUDA check would run on.
struct CudaDevice {
  CudaArch capability;  // 9.0
  std::string name;     // "NVIDIA H100 80GB HBM3"
};

// Imports the interpreter's torch once (seconds): the device, or nullopt
// when torch sees none. Throws Error(usage) when torch cannot be imported.
std::optional<CudaDevice> probe_cuda_device(const InterpreterInfo& interp, std::chrono::seconds timeout);

}  // namespace kwheel
