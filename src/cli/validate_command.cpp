#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/validate/validate.hpp"

namespace kwheel::cli {
namespace fs = std::filesystem;

namespace {

struct ValidateArgs {
  std::vector<std::string> inputs;
  ValidateOptions options;
  unsigned timeout = 900;
  std::string index_url;
  TlsFlags tls;
};

// The objects with no code for the GPU, when the wheel ran anyway (another
// object has code for it): the verdict says whether they were needed.
void print_no_code(const ValidationResult& r) {
  if (r.status == ValidationResult::Status::skip || !r.details.contains("gpu_code")) return;
  // details also carry what the check process reported: read defensively.
  const auto& gpu = r.details["gpu_code"];
  if (!gpu.is_object() || !gpu.contains("no_code_for_device") || !gpu["no_code_for_device"].is_array()) return;
  std::vector<std::string> files;
  for (const auto& f : gpu["no_code_for_device"])
    if (f.is_string()) files.push_back(f.get<std::string>());
  if (files.empty()) return;
  const std::size_t shown = std::min<std::size_t>(files.size(), 6);
  std::string list = join({files.begin(), files.begin() + static_cast<std::ptrdiff_t>(shown)}, ", ");
  if (files.size() > shown) list.append(", and ").append(std::to_string(files.size() - shown)).append(" more");
  const std::string device = gpu.contains("device") && gpu["device"].is_string() ? gpu["device"].get<std::string>() : "this GPU";
  std::cout << "\n      no code for " << device << " in " << list;
}

// A wheel's verdict as the table shows it: status and file name, then
// why it failed or was skipped, or which device ran it.
void print_result(const ValidationResult& r) {
  std::cout << std::left << std::setw(5) << status_name(r.status) << " " << r.wheel.filename().string();
  if (!r.reason.empty()) std::cout << "\n      " << r.reason;
  else if (r.details.contains("device")) std::cout << " (" << r.details["device"].get<std::string>() << (r.details.contains("device_name") ? ", " + r.details["device_name"].get<std::string>() : "") << ")";
  print_no_code(r);
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
  sub->add_flag("--allow-skip", args->options.allow_skip,
                "Exit 0 when every wheel is SKIP (nothing fits this torch or device); without it such a run exits 10");
  sub->add_option("--timeout", args->timeout, "Seconds allowed per pip install and per check")->type_name("SECONDS")->capture_default_str();
  add_tls_flags(sub, args->tls);
  url_option(sub->add_option("--index-url", args->index_url, "Install each wheel's dependencies (beyond torch) from this index, and from nowhere else")
                 ->type_name("URL"));
  sub->add_option("--find-links", args->options.dependencies.find_links, "Install each wheel's dependencies from the wheels in this directory (repeatable; alone, no index is read)")
      ->type_name("DIR");
  add_output_flags(sub, out);
  add_examples(sub, {"kwheel validate dist --python /opt/venv/bin/python    # that interpreter's torch decides which wheels can run",
                     "kwheel validate dist --python /opt/venv/bin/python --index-url https://pypi.example.com/simple/   # einops & co. from there",
                     "kwheel validate dist/img2gray-*.whl --device cpu --json > report.json"});
  sub->callback([args, &out, &exit_code] {
    args->options.timeout = std::chrono::seconds(args->timeout);
    if (!args->index_url.empty()) {
      args->index_url = checked_index_url("--index-url", args->index_url, "simple index URL (a directory of wheels: --find-links DIR)");
      args->options.dependencies.index_url = args->index_url;
    }
    for (const auto& d : args->options.dependencies.find_links)
      if (std::error_code ec; !fs::is_directory(d, ec)) throw Error(ErrorKind::usage, "--find-links '" + d + "' is not a directory; give the directory that holds the wheels");
    // pip reaches the index as kwheel's own requests would: the same CA,
    // client certificate and first login (keyring: pip asks it itself).
    if (!args->index_url.empty())
      args->options.dependencies.access = child_tool_access(resolve_tls(tls_sources(args->tls)), {args->index_url}, feedback(out).on_warn);
    const auto wheels = wheel_files(args->inputs);
    const ValidationRun run = validate_wheels(wheels, args->options, validate_feedback(out));
    exit_code = run.exit_code();
    if (out.json) out.emit_json(to_json(run));
    // A run that tested nothing says why it exits non-zero even with -q:
    // the exit code alone does not tell a skipped run from a broken one.
    else if (run.outcome() == ValidationRun::Outcome::untested && !run.ok()) std::cerr << "kwheel: error: summary: " << run.summary() << "\n";
    else out.info("summary: " + run.summary());
  });
}

}  // namespace kwheel::cli
