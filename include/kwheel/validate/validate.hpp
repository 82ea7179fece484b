#pragma once
// Does a wheel work? For an interpreter with torch: decide whether the wheel
// can run there (Python, platform, torch, compute backend, C++ ABI), then
// install it with pip into a fresh environment that still sees that
// interpreter's torch, and run the kernel in a fresh process.
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/base/feedback.hpp"
#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/validate/interpreter.hpp"
#include "kwheel/validate/wheel_dependencies.hpp"
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
  // A run in which no wheel PASSed nor FAILed (every one SKIP) is a
  // success only with this: a CI runner that lost its GPU or its torch
  // skips everything, and must not pass the gate unnoticed.
  bool allow_skip = false;
  // Where each wheel's dependencies (Requires-Dist beyond torch) are
  // installed from (--index-url, --find-links); none: nowhere, and a wheel
  // whose dependencies the environment lacks FAILs naming them.
  DependencySources dependencies;
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

// How validate_wheels talks to its front-end while it works: the notes
// and warnings every library call gives (Feedback), and the two moments a
// run of several wheels has: a wheel's check starts (minutes may pass
// before its verdict), and its verdict is known.
struct ValidateFeedback : Feedback {
  std::function<void(const std::filesystem::path&)> on_start;
  std::function<void(const ValidationResult&)> on_result;
};

struct ValidationRun {
  InterpreterInfo interpreter;
  std::optional<CudaDevice> cuda_device;  // the GPU CUDA wheels were judged against
  std::vector<ValidationResult> results;  // one per wheel, in the order given
  bool allow_skip = false;                // ValidateOptions::allow_skip
  std::size_t count(ValidationResult::Status status) const;

  // What the run as a whole says: a wheel failed; none failed and at
  // least one passed; or nothing was tested (every wheel SKIP), which is
  // a success only with allow_skip.
  enum class Outcome { failed, passed, untested };
  Outcome outcome() const;
  bool ok() const { return outcome() == Outcome::passed || (outcome() == Outcome::untested && allow_skip); }
  int exit_code() const;        // 0, ErrorKind::validation or ErrorKind::untested
  std::string summary() const;  // "3 PASS, 0 FAIL, 1 SKIP: ..." saying which outcome it was
};

const char* outcome_name(ValidationRun::Outcome outcome);

// `kwheel validate`: probes options.python, asks for the GPU only when a
// CUDA wheel (by its file name) could use the answer, then validates each
// wheel in turn.
ValidationRun validate_wheels(const std::vector<std::filesystem::path>& wheels, ValidateOptions options, const ValidateFeedback& feedback);

// The same, with an interpreter already probed (or described).
ValidationRun validate_wheels(const std::vector<std::filesystem::path>& wheels, const InterpreterInfo& interp, ValidateOptions options,
                              const ValidateFeedback& feedback);

// {"ok", "outcome" ("passed", "failed", "untested"), "allow_skip", "summary", "interpreter" (with
// "cuda_device"), "passed", "failed", "skipped", "wheels"}.
nlohmann::json to_json(const ValidationRun& run);

}  // namespace kwheel
