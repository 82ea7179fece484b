#pragma once
// Does a wheel work? For an interpreter with torch: decide whether the wheel
// can run there (Python, platform, torch, compute backend, C++ ABI), then
// install it with pip into a fresh environment that still sees that
// interpreter's torch, and run the kernel in a fresh process.
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kwheel/validate/interpreter.hpp"
#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/wheel/wheel_reader.hpp"

namespace kwheel {





struct ValidateOptions {
  std::string python = "python3";
  std::string device = "auto";       // auto, cuda, cpu
  bool keep_env = false;             // leave the environment for inspection
  std::chrono::seconds timeout{900}; // per child process
  // The GPU (probe_cuda_device) when the device is cuda or auto: a CUDA
  // wheel whose code runs on no such GPU is SKIP, never run and never PASS.
  std::optional<CudaDevice> cuda_device;
};

// Whether a CUDA wheel's GPU code runs on `device`, object by object
// (gpu_code.hpp); nullopt for a wheel that is not a CUDA build.
std::optional<WheelCoverage> judge_device(const WheelArchive& wheel, const CudaDevice& device);

struct ValidationResult {
  std::filesystem::path wheel;
  enum class Status { pass, fail, skip } status = Status::fail;
  std::string reason;                // why it failed or was skipped
  nlohmann::json details;            // what the run reported
  nlohmann::json timings;            // seconds per phase
};

// Why this wheel cannot run with `interp` on `device`, or nullopt.
std::optional<std::string> incompatibility(const WheelArchive& wheel, const InterpreterInfo& interp, const std::string& device);

ValidationResult validate_wheel(const std::filesystem::path& wheel, const InterpreterInfo& interp, const ValidateOptions& options);

const char* status_name(ValidationResult::Status status);
nlohmann::json to_json(const ValidationResult& result);

}  // namespace kwheel
