#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/validate/compat.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/validate/validate.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

struct ValidateArgs {
  std::vector<std::string> inputs;
  ValidateOptions options;
  unsigned timeout = 900;
};

// Only CUDA wheels need the GPU's capability, and asking costs a torch
// import. A wheel whose name does not parse fails alone, later.
bool any_cuda_wheel(const std::vector<fs::path>& wheels) {
  for (const auto& w : wheels) {
    try {
      if (read_label(parse_wheel_filename(w.filename().string()).version).backend.starts_with("cu")) return true;
    } catch (const Error&) {
    }
  }
  return false;
}

}  // namespace

void register_validate(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  auto* sub = app.add_subcommand("validate", "Install each wheel with pip into a fresh environment and run its kernel (PASS/FAIL/SKIP)");
  sub->add_option("wheels", args->inputs, "Wheel files or directories of wheels")->required();
  sub->add_option("--python", args->options.python, "Interpreter whose torch the wheels are tested with")->capture_default_str();
  sub->add_option("--device", args->options.device, "Where the kernel runs: auto (CUDA when available), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
  sub->add_flag("--keep-env", args->options.keep_env, "Keep each test environment (its path is in the report)");
  sub->add_option("--timeout", args->timeout, "Seconds allowed per pip install and per check")->capture_default_str();
  add_output_flags(sub, out);
  sub->callback([args, &out, &exit_code] {
    args->options.timeout = std::chrono::seconds(args->timeout);
    auto wheels = wheel_files(args->inputs);
    InterpreterInfo interp = probe_interpreter(args->options.python);
    // Without torch every wheel is SKIP anyway; a probe that fails leaves the
    // wheels unjudged (as before this check existed) rather than ending the run.
    if (args->options.device != "cpu" && interp.torch && any_cuda_wheel(wheels)) {
      try {
        args->options.cuda_device = probe_cuda_device(interp, std::chrono::seconds(args->timeout));
      } catch (const Error& e) {
        out.warn(std::string("cannot tell which GPU this is, so CUDA wheels are not checked against it: ") + e.what());
      }
    }
    out.info("validating " + std::to_string(wheels.size()) + " wheel(s) with " + interp.executable + " (Python " + interp.python +
             ", torch " + interp.torch.value_or("none") + (interp.cuda ? ", CUDA " + *interp.cuda : "") + ")");
    nlohmann::json results = nlohmann::json::array();
    size_t failed = 0, passed = 0, skipped = 0;
    for (const auto& w : wheels) {
      if (out.progress()) std::cerr << "checking " << w.filename().string() << " ...\n";
      ValidationResult r = validate_wheel(w, interp, args->options);
      results.push_back(to_json(r));
      failed += r.status == ValidationResult::Status::fail;
      passed += r.status == ValidationResult::Status::pass;
      skipped += r.status == ValidationResult::Status::skip;
      if (!out.json) {
        std::cout << std::left << std::setw(5) << status_name(r.status) << " " << w.filename().string();
        if (!r.reason.empty()) std::cout << "\n      " << r.reason;
        else if (r.details.contains("device")) std::cout << " (" << r.details["device"].get<std::string>() << (r.details.contains("device_name") ? ", " + r.details["device_name"].get<std::string>() : "") << ")";
        std::cout << std::endl;
      }
    }
    nlohmann::json interp_json = interp.raw;
    if (const auto& d = args->options.cuda_device) interp_json["cuda_device"] = {{"capability", d->capability.capability()}, {"name", d->name}};
    if (out.json) out.emit_json({{"ok", failed == 0}, {"interpreter", interp_json}, {"passed", passed}, {"failed", failed}, {"skipped", skipped}, {"wheels", results}});
    else out.info("summary: " + std::to_string(passed) + " PASS, " + std::to_string(failed) + " FAIL, " + std::to_string(skipped) + " SKIP");
    exit_code = failed ? static_cast<int>(ErrorKind::validation) : 0;
  });
}

}  // namespace kwheel::cli
