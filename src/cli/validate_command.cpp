#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/validate/validate.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

struct ValidateArgs {
  std::vector<std::string> inputs;
  ValidateOptions options;
  unsigned timeout = 900;
};

// A wheel's verdict as the table shows it: status and file name, then
// why it failed or was skipped, or which device ran it.
void print_result(const ValidationResult& r) {
  std::cout << std::left << std::setw(5) << status_name(r.status) << " " << r.wheel.filename().string();
  if (!r.reason.empty()) std::cout << "\n      " << r.reason;
  else if (r.details.contains("device")) std::cout << " (" << r.details["device"].get<std::string>() << (r.details.contains("device_name") ? ", " + r.details["device_name"].get<std::string>() : "") << ")";
  std::cout << std::endl;
}

// Notes and warnings as every command shows them; each wheel's name on a
// terminal while it is checked, and its verdict as soon as it is known.
ValidateFeedback validate_feedback(const Output& out) {
  ValidateFeedback f{feedback(out), {}, {}};
  f.on_start = [&out](const fs::path& w) {
    if (out.progress()) std::cerr << "checking " << w.filename().string() << " ...\n";
  };
  f.on_result = [&out](const ValidationResult& r) {
    if (out.table()) print_result(r);
    else if (!out.json && r.status == ValidationResult::Status::fail)  // -q: only a FAIL, on stderr
      out.error(r.wheel.filename().string() + ": FAIL: " + r.reason);
  };
  return f;
}

}  // namespace

void register_validate(CLI::App& app, Output& out, int& exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  auto* sub = app.add_subcommand("validate", "Install each wheel with pip into a fresh environment and run its kernel (PASS/FAIL/SKIP)");
  sub->add_option("wheels", args->inputs, "Wheel files or directories of wheels")->type_name("WHEEL|DIR")->required();
  sub->add_option("--python", args->options.python, "Interpreter whose torch the wheels are tested with")->type_name("PYTHON")->capture_default_str();
  sub->add_option("--device", args->options.device, "Where the kernel runs: auto (CUDA when available), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
  sub->add_flag("--keep-env", args->options.keep_env, "Keep each test environment (its path is in the report)");
  sub->add_option("--timeout", args->timeout, "Seconds allowed per pip install and per check")->type_name("SECONDS")->capture_default_str();
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel validate dist --python /opt/venv/bin/python    # that interpreter's torch decides which wheels can run",
                     "kwheel validate dist/img2gray-*.whl --device cpu",
                     "kwheel validate dist --python /opt/venv/bin/python --json > report.json"});
  sub->callback([args, &out, &exit_code] {
    args->options.timeout = std::chrono::seconds(args->timeout);
    const auto wheels = wheel_files(args->inputs);
    const ValidationRun run = validate_wheels(wheels, args->options, validate_feedback(out));
    const std::size_t failed = run.count(ValidationResult::Status::fail);
    if (out.json) out.emit_json(to_json(run));
    else out.info("summary: " + std::to_string(run.count(ValidationResult::Status::pass)) + " PASS, " + std::to_string(failed) + " FAIL, " + std::to_string(run.count(ValidationResult::Status::skip)) + " SKIP");
    exit_code = failed ? static_cast<int>(ErrorKind::validation) : 0;
  });
}

}  // namespace kwheel::cli
