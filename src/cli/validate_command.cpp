#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/error.hpp"
#include "kwheel/validate.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

struct ValidateArgs {
  std::vector<std::string> inputs;
  ValidateOptions options;
  unsigned timeout = 900;
};

std::vector<fs::path> wheels_in(const std::vector<std::string>& inputs) {
  std::vector<fs::path> out;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::directory_iterator(in))
        if (e.is_regular_file() && e.path().extension() == ".whl" && !e.path().filename().string().starts_with(".")) found.push_back(e.path());
      if (found.empty()) throw Error(ErrorKind::not_found, "directory '" + in + "' holds no .whl file; build some with `kwheel build`");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(in, ec)) {
      // A named file that is not even called *.whl is a mistake on the
      // command line, not a wheel that fails validation.
      if (fs::path(in).extension() != ".whl") throw Error(ErrorKind::input, "'" + in + "' is not a wheel (a .whl file)");
      out.emplace_back(in);
    } else {
      throw Error(ErrorKind::not_found, "'" + in + "' is neither a wheel file nor a directory of wheels");
    }
  }
  return out;
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
    auto wheels = wheels_in(args->inputs);
    InterpreterInfo interp = probe_interpreter(args->options.python);
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
    if (out.json) out.emit_json({{"ok", failed == 0}, {"interpreter", interp_json}, {"passed", passed}, {"failed", failed}, {"skipped", skipped}, {"wheels", results}});
    else out.info("summary: " + std::to_string(passed) + " PASS, " + std::to_string(failed) + " FAIL, " + std::to_string(skipped) + " SKIP");
    exit_code = failed ? static_cast<int>(ErrorKind::validation) : 0;
  });
}

}  // namespace kwheel::cli
