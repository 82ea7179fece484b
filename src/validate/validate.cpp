#include "kwheel/validate/validate.hpp"

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

#include "kwheel/validate/compat.hpp"
#include "kwheel/base/embedded_python.hpp"
#include "kwheel/evidence/device_coverage.hpp"
#include "kwheel/base/enum_name.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/evidence/gpu_code.hpp"
#include "kwheel/kernel/package_dir.hpp"
#include "kwheel/packaging/pep440.hpp"
#include "kwheel/packaging/wheel_filename.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "kwheel/validate/wheel_objects.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Why a check process ended without a report: the signal or exit status,
// the step it had announced last ("kwheel-stage: ..." on stderr) and the
// first line it printed after that (faulthandler's "Fatal Python error:
// Segmentation fault", a Python exception, ...).
std::string describe_death(const ProcessResult& run) {
  static const std::string marker = "kwheel-stage: ";
  std::string stage, after;
  size_t at = run.err.rfind(marker);
  if (at != std::string::npos && (at == 0 || run.err[at - 1] == '\n')) {
    size_t eol = run.err.find('\n', at);
    stage = run.err.substr(at + marker.size(), eol == std::string::npos ? std::string::npos : eol - at - marker.size());
    std::string rest = eol == std::string::npos ? std::string() : run.err.substr(eol + 1);
    size_t first = rest.find_first_not_of("\r\n");
    std::string first_line = first == std::string::npos ? std::string() : rest.substr(first, rest.find('\n', first) - first);
    after = first_line.starts_with("Fatal Python error") ? first_line : last_lines(rest, 3);
  } else {
    after = last_lines(run.err, 4);
  }
  std::string how = run.term_signal ? "crashed with signal " + std::to_string(run.term_signal) + " (" + ::strsignal(run.term_signal) + ")"
                                    : "died (exit " + std::to_string(run.exit_code) + ")";
  std::string msg = "the check process " + how;
  if (!stage.empty()) msg += " while " + stage;
  if (!after.empty()) msg += ": " + after;
  return msg;
}

// The package the check imports, chosen as the build chose it; a wheel's
// .dist-info is never one. Members are installable paths here (the RECORD
// check refused any other).
std::string package_of(const WheelArchive& w) {
  TopLevelDirs tops;
  for (const auto& m : w.members()) tops.add(m);
  std::erase_if(tops.packages, [](const std::string& d) { return d.ends_with(".dist-info"); });
  if (auto package = pick_package_dir(tops, w.filename().name, NamedDirectory::package)) return *package;
  throw Error(ErrorKind::input, "wheel '" + w.path().filename().string() + "' has no single top-level package to import (found " + std::to_string(tops.packages.size()) + ")");
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

std::optional<std::string> incompatibility(const WheelArchive& w, const InterpreterInfo& in, const std::string& device) {
  // Tags and the local label first (what `kwheel pin` decides on too), then
  // what only the archive says: Requires-Dist torch==X.Y.* names the torch
  // a foreign-labelled variant was built for.
  if (auto p = filename_incompatibility(w.filename(), in, device)) return p;
  bool needs_torch = false;
  for (auto [it, end] = w.metadata().equal_range("Requires-Dist"); it != end; ++it) {
    // The requirement before its marker; std::regex recurses per character,
    // so an absurdly long one (the wheel is untrusted) is not read as torch's.
    const std::string req = it->second.substr(0, it->second.find(';'));
    if (req.size() > 1024) continue;
    static const std::regex torch_req(R"(^torch\s*(\(?\s*([^;)]*)\)?)?\s*$)");
    std::smatch m;
    if (!std::regex_match(req, m, torch_req)) continue;
    needs_torch = true;
    if (!in.torch) return "the wheel needs torch and " + in.executable + " has none";
    std::string spec = m[2];
    while (!spec.empty() && spec.back() == ' ') spec.pop_back();
    if (spec.empty()) continue;
    auto have = Version::try_parse(*in.torch);
    if (!have) return "cannot parse this interpreter's torch version '" + *in.torch + "'";
    // Pre-releases count: distributions ship them (Debian's 1.13.0a0).
    std::optional<SpecifierSet> wanted;
    try {
      wanted = SpecifierSet::parse(spec);
    } catch (const Error& e) {
      throw Error(ErrorKind::input, "its METADATA has a malformed requirement 'Requires-Dist: " + it->second + "' (" + e.what() + "); rebuild the wheel");
    }
    if (!wanted->contains(*have, true))
      return "the wheel needs torch " + spec + ", this interpreter has torch " + *in.torch;
  }
  if (!needs_torch && !in.torch) return "no torch in " + in.executable;
  return std::nullopt;
}

std::optional<WheelCoverage> judge_device(const WheelArchive& wheel, const CudaDevice& device) {
  if (!read_label(wheel.filename().version).backend.starts_with("cu")) return std::nullopt;
  return cuda_wheel_coverage(wheel_gpu_code(wheel), device.capability);
}

namespace {

// {"device": "sm_90", "covered", "objects": [{"file", "runs", "jit"}],
//  "no_code_for_device": [...], "unknown": [...]}
json to_json(const WheelCoverage& w, const CudaDevice& device) {
  json objects = json::array();
  for (const auto& [file, c] : w.objects)
    objects.push_back({{"file", file}, {"runs", c.by ? json(c.by->str()) : json(nullptr)}, {"jit", c.jit}});
  return {{"device", "sm_" + device.capability.number()}, {"covered", w.covered}, {"objects", objects},
          {"no_code_for_device", w.no_code}, {"unknown", w.unknown}};
}

}  // namespace

namespace {

using Status = ValidationResult::Status;

// Sets the verdict; false, so that a step that decides can return it.
bool decide(ValidationResult& r, Status status, std::string why) {
  r.status = status;
  r.reason = std::move(why);
  return false;
}

// What the archive alone decides, before any environment is made: FAIL (a
// broken wheel, an interpreter without pip) or SKIP (it cannot run here,
// or none of its objects has code this GPU runs). False when it decided;
// otherwise `package` is the one the check imports. Objects without code
// for the GPU beside one that has it do not SKIP the wheel: packages load
// the object that fits, and the check shows whether the others were needed.
bool judge_archive(const WheelArchive& wheel, const InterpreterInfo& in, const ValidateOptions& o, ValidationResult& r, std::string& package) {
  if (auto problems = wheel.verify_record(); !problems.empty())
    return decide(r, Status::fail,
                  "RECORD check failed: " + problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
  if (auto why = incompatibility(wheel, in, o.device)) return decide(r, Status::skip, *why);
  if (o.device != "cpu" && o.cuda_device)
    if (auto judged = judge_device(wheel, *o.cuda_device); judged && judged->judged) {
      r.details["gpu_code"] = to_json(*judged, *o.cuda_device);
      if (!judged->covered) return decide(r, Status::skip, judged->reason);
    }
  if (!in.has_pip)
    return decide(r, Status::fail, "interpreter " + in.executable + " has no pip; install it (e.g. apt-get install python3-pip) or pass --python of one that has");
  try {
    package = package_of(wheel);
  } catch (const Error& e) {
    return decide(r, Status::fail, e.what());
  }
  return true;
}

// A virtual environment at `env` that sees the interpreter's torch; why
// it could not be made, or nullopt.
std::optional<std::string> make_env(const fs::path& env, const TempDir& tmp, const InterpreterInfo& in, const ValidateOptions& o) {
  ProcessResult venv = run_process({in.executable, "-m", "venv", "--without-pip", env.string()}, isolated_python(o.timeout, tmp.path().string()));
  if (venv.exit_code != 0) return "cannot create a virtual environment with " + in.executable + ": " + last_lines(venv.err, 2);
  // A venv does not see its parent's packages, not even with
  // --system-site-packages when the parent is itself a venv: point a .pth
  // at the directory that holds torch instead. addsitedir, not a bare path
  // line, so that .pth files there (torch's own dependencies may rely on
  // them) are processed as they are for the interpreter itself.
  const fs::path site = env / "lib" / ("python" + in.python) / "site-packages";
  // tvm_ffi, which tvm-ffi kernels import, may live elsewhere than torch.
  std::vector<std::string> sites;
  for (const std::string* s : {&in.torch_site, &in.tvm_ffi_site})
    if (!s->empty() && std::find(sites.begin(), sites.end(), *s) == sites.end()) sites.push_back(*s);
  if (!sites.empty()) {
    std::ofstream pth(site / "_kwheel_torch.pth");
    for (const auto& s : sites) pth << "import site; site.addsitedir(" << json(s).dump() << ")\n";
    if (!pth) return "cannot write " + (site / "_kwheel_torch.pth").string();
  }
  return std::nullopt;
}

// pip's own `--python ENV` starts pip twice (here, then inside ENV through
// __pip-runner__.py); running the runner in ENV directly is the same code
// path with one start-up fewer.
std::vector<std::string> pip_in_env(const InterpreterInfo& in, const std::string& env_python) {
  return in.pip_runner.empty() ? std::vector<std::string>{in.executable, "-m", "pip", "--python", env_python}
                               : std::vector<std::string>{env_python, "-I", in.pip_runner};
}

ProcessResult pip_install(const fs::path& wheel, const std::string& env_python, const TempDir& tmp, const InterpreterInfo& in, const ValidateOptions& o) {
  // --ignore-installed: the environment sees
  // torch's site-packages, and a copy of this package installed there (a
  // previous build of the same version, say) must neither stop the install
  // ("already installed") nor be uninstalled. --isolated: no PIP_* variables
  // or user pip.conf (user = true would install into ~/.local).
  std::vector<std::string> pip_argv = pip_in_env(in, env_python);
  for (const char* a : {"install", "--isolated", "--no-deps", "--no-index", "--no-cache-dir", "--no-compile", "--ignore-installed",
                        "--no-warn-conflicts", "--disable-pip-version-check", "-q"})
    pip_argv.emplace_back(a);
  pip_argv.push_back(fs::absolute(wheel).string());
  return run_process(pip_argv, isolated_python(o.timeout, tmp.path().string()));
}

// The check's verdict: its report (the last line it printed), or how it died.
void judge_check(const ProcessResult& run, const ValidateOptions& o, ValidationResult& r) {
  if (run.timed_out) {
    decide(r, Status::fail, "the kernel check timed out after " + std::to_string(o.timeout.count()) + " s");
    return;
  }
  json report = json::parse(last_line(run.out), nullptr, false);
  if (report.is_discarded() || !report.is_object()) {
    decide(r, Status::fail, describe_death(run));
    return;
  }
  // The runner's own step timings join kwheel's phases: check.import_torch,
  // check.kernel_check, ...
  if (report.contains("timings") && report["timings"].is_object()) {
    for (const auto& [k, v] : report["timings"].items()) r.timings["check." + k] = v;
    report.erase("timings");
  }
  r.details.update(report);
  if (run.exit_code == 0) r.status = Status::pass;
  else if (run.exit_code == 3) decide(r, Status::skip, report.value("reason", "skipped by the check"));
  else decide(r, Status::fail, report.value("error", "the check failed (exit " + std::to_string(run.exit_code) + ")"));
}

ValidationResult validate_unguarded(const fs::path& path, const InterpreterInfo& in, const ValidateOptions& o) {
  ValidationResult r;
  r.wheel = path;
  r.timings = json::object();
  auto fail = [&](const std::string& why) {
    decide(r, Status::fail, why);
    return r;
  };
  const auto t0 = Clock::now();
  std::unique_ptr<WheelArchive> wheel;
  try {
    wheel = std::make_unique<WheelArchive>(path);
  } catch (const Error& e) {
    return fail(e.what());
  }
  std::string package;
  if (!judge_archive(*wheel, in, o, r, package)) return r;
  r.timings["inspect"] = seconds_since(t0);

  TempDir tmp("validate");
  if (o.keep_env) tmp.keep();
  const fs::path env = tmp.path() / "env";
  auto t = Clock::now();
  if (auto why = make_env(env, tmp, in, o)) return fail(*why);
  const std::string env_python = (env / "bin" / "python").string();
  r.timings["venv"] = seconds_since(t);

  t = Clock::now();
  std::vector<std::string> requirements;
  try {
    requirements = runtime_requirements(*wheel);
  } catch (const Error& e) {
    return fail(e.what());
  }
  if (!requirements.empty() && o.dependencies.any())
    if (auto why = install_requirements(pip_in_env(in, env_python), requirements, o.dependencies, in, tmp.path(), o.timeout)) return fail(*why);
  ProcessResult pip = pip_install(path, env_python, tmp, in, o);
  r.timings["install"] = seconds_since(t);
  if (pip.timed_out) return fail("pip install timed out after " + std::to_string(o.timeout.count()) + " s");
  if (pip.exit_code != 0) return fail("pip refused to install the wheel: " + last_lines(pip.err, 3));
  if (!requirements.empty() && !o.dependencies.any())
    if (auto why = missing_requirements(env_python, requirements, wheel->filename().name, tmp.path(), o.timeout)) return fail(*why);

  t = Clock::now();
  const std::string abi = read_label(wheel->filename().version).cxx98 ? "cxx98" : (wheel->filename().platform.front() == "any" ? "any" : "cxx11");
  ProcessResult run = run_process({env_python, "-I", "-c", std::string(embedded_python("validate_runner")), package, o.device, abi},
                                  isolated_python(o.timeout, tmp.path().string()));
  r.timings["check"] = seconds_since(t);
  r.timings["total"] = seconds_since(t0);
  if (o.keep_env) r.details["env"] = env.string();
  judge_check(run, o, r);
  return r;
}

}  // namespace

// One bad wheel fails alone: whatever it throws is its FAIL, and the other
// wheels of the run are still validated and reported.
ValidationResult validate_wheel(const fs::path& path, const InterpreterInfo& in, const ValidateOptions& o) {
  try {
    return validate_unguarded(path, in, o);
  } catch (const std::exception& e) {
    ValidationResult r;
    r.wheel = path;
    r.timings = json::object();
    r.status = ValidationResult::Status::fail;
    r.reason = printable(e.what());
    return r;
  }
}

const char* status_name(ValidationResult::Status s) {
  using S = ValidationResult::Status;
  static constexpr EnumName<S> names[] = {{S::pass, "PASS"}, {S::fail, "FAIL"}, {S::skip, "SKIP"}};
  return enum_name(s, names).data();
}

json to_json(const ValidationResult& r) {
  json j{{"wheel", r.wheel.string()}, {"filename", r.wheel.filename().string()}, {"result", status_name(r.status)}, {"timings", r.timings}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.details.empty()) j["details"] = r.details;
  return j;
}

namespace {

// Only CUDA wheels need the GPU's capability, and asking costs a torch
// import. A wheel whose name does not parse fails alone, later.
bool any_cuda_wheel(const std::vector<fs::path>& wheels) {
  return std::any_of(wheels.begin(), wheels.end(), [](const fs::path& w) {
    try {
      return read_label(parse_wheel_filename(w.filename().string()).version).backend.starts_with("cu");
    } catch (const Error&) {
      return false;
    }
  });
}

std::string describe(const InterpreterInfo& in) {
  return in.executable + " (Python " + in.python + ", torch " + in.torch.value_or("none") + (in.cuda ? ", CUDA " + *in.cuda : "") + ")";
}

}  // namespace

std::size_t ValidationRun::count(ValidationResult::Status status) const {
  return static_cast<std::size_t>(std::count_if(results.begin(), results.end(), [&](const ValidationResult& r) { return r.status == status; }));
}

ValidationRun::Outcome ValidationRun::outcome() const {
  if (count(Status::fail)) return Outcome::failed;
  return count(Status::pass) ? Outcome::passed : Outcome::untested;
}

int ValidationRun::exit_code() const {
  if (ok()) return 0;
  return static_cast<int>(outcome() == Outcome::failed ? ErrorKind::validation : ErrorKind::untested);
}

std::string ValidationRun::summary() const {
  const std::size_t failed = count(Status::fail);
  std::string line = std::to_string(count(Status::pass)) + " PASS, " + std::to_string(failed) + " FAIL, " + std::to_string(count(Status::skip)) + " SKIP: ";
  switch (outcome()) {
    case Outcome::failed:
      return line.append(std::to_string(failed)).append(failed == 1 ? " wheel failed" : " wheels failed");
    case Outcome::passed:
      return line.append("every wheel that could run here passed");
    case Outcome::untested:
      break;
  }
  line.append("nothing was tested, every wheel was skipped (no torch or device here fits them)");
  return allow_skip ? line.append("; accepted with --allow-skip")
                    : line.append("; pass --python with a torch that fits, run where the device is, or --allow-skip to accept this");
}

const char* outcome_name(ValidationRun::Outcome o) {
  using O = ValidationRun::Outcome;
  static constexpr EnumName<O> names[] = {{O::failed, "failed"}, {O::passed, "passed"}, {O::untested, "untested"}};
  return enum_name(o, names).data();
}

ValidationRun validate_wheels(const std::vector<fs::path>& wheels, ValidateOptions options, const ValidateFeedback& feedback) {
  const InterpreterInfo interp = probe_interpreter(options.python);
  return validate_wheels(wheels, interp, std::move(options), feedback);
}

namespace {

// A name that is not a wheel's at all is judged later, as before.
bool is_variant_wheel_name(const std::string& filename) {
  try {
    return parse_wheel_filename(filename, VariantLabels::accept).variant.has_value();
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

ValidationRun validate_wheels(const std::vector<fs::path>& wheels, const InterpreterInfo& interp, ValidateOptions o, const ValidateFeedback& feedback) {
  // pip, which validate installs with, takes a variant filename for an invalid one.
  for (const auto& w : wheels)
    if (is_variant_wheel_name(w.filename().string()))
      throw Error(ErrorKind::usage, "'" + w.string() + "' is a PEP 825 variant wheel, which pip cannot install; validate the build it was re-labelled from "
                                    "(SITE/files/), or install it with uv --preview-features wheel-variants");
  // Without torch every wheel is SKIP anyway; a probe that fails leaves the
  // wheels unjudged (as before this check existed) rather than ending the run.
  if (o.device != "cpu" && interp.torch && any_cuda_wheel(wheels)) {
    try {
      o.cuda_device = probe_cuda_device(interp, o.timeout);
    } catch (const Error& e) {
      feedback.warn(std::string("cannot tell which GPU this is, so CUDA wheels are not checked against it: ") + e.what());
    }
  }
  feedback.info("validating " + std::to_string(wheels.size()) + " wheel(s) with " + describe(interp));
  ValidationRun run{interp, o.cuda_device, {}, o.allow_skip};
  for (const auto& w : wheels) {
    if (feedback.on_start) feedback.on_start(w);
    run.results.push_back(validate_wheel(w, interp, o));
    if (feedback.on_result) feedback.on_result(run.results.back());
  }
  return run;
}

json to_json(const ValidationRun& run) {
  json wheels = json::array();
  for (const auto& r : run.results) wheels.push_back(to_json(r));
  json interp = run.interpreter.raw;
  if (const auto& d = run.cuda_device) interp["cuda_device"] = {{"capability", d->capability.capability()}, {"name", d->name}};
  return json{{"ok", run.ok()},
              {"outcome", outcome_name(run.outcome())},
              {"allow_skip", run.allow_skip},
              {"summary", run.summary()},
              {"interpreter", interp},
              {"passed", run.count(Status::pass)},
              {"failed", run.count(Status::fail)},
              {"skipped", run.count(Status::skip)},
              {"wheels", wheels}};
}

}  // namespace kwheel
