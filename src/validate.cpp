#include "kwheel/validate.hpp"

#include <stdlib.h>

#include <fstream>
#include <regex>
#include <set>

#include "kwheel/compat.hpp"
#include "kwheel/embedded_python.hpp"
#include "kwheel/error.hpp"
#include "kwheel/pep440.hpp"
#include "kwheel/process.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Keeps the child's environment to what we choose: no user site, no
// PYTHONPATH leaking packages in, so the test proves the wheel alone.
ProcessOptions isolated(std::chrono::seconds timeout) {
  ProcessOptions o;
  o.set_env = {{"PYTHONNOUSERSITE", "1"}, {"PYTHONDONTWRITEBYTECODE", "1"}, {"PIP_DISABLE_PIP_VERSION_CHECK", "1"}};
  o.unset_env = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_REQUIRE_VIRTUALENV"};
  o.timeout = timeout;
  return o;
}

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return {};
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string tail(const std::string& text, size_t lines = 6) {
  size_t pos = text.size();
  while (lines-- && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

std::string package_of(const WheelArchive& w) {
  std::set<std::string> packages;
  for (const auto& m : w.members()) {
    auto slash = m.find('/');
    if (slash != std::string::npos && m.substr(slash + 1) == "__init__.py" && !m.substr(0, slash).ends_with(".dist-info"))
      packages.insert(m.substr(0, slash));
  }
  const std::string expected = wheel_name_component(w.filename().name);
  if (packages.count(expected)) return expected;
  if (packages.size() == 1) return *packages.begin();
  throw Error(ErrorKind::input, "wheel '" + w.path().filename().string() + "' has no single top-level package to import (found " + std::to_string(packages.size()) + ")");
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kwheel-validate-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw Error(ErrorKind::io, "cannot create a temporary directory under " + fs::temp_directory_path().string());
    path_ = tmpl;
  }
  ~TempDir() {
    if (!keep_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  void keep() { keep_ = true; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool keep_ = false;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

InterpreterInfo probe_interpreter(const std::string& python) {
  ProcessOptions o = isolated(std::chrono::seconds(60));
  ProcessResult r;
  try {
    r = run_process({python, "-c", std::string(embedded_python("probe_interpreter"))}, o);
  } catch (const Error&) {
    throw Error(ErrorKind::usage, "cannot run Python interpreter '" + python + "'; pass --python PATH to one that has torch");
  }
  json j = json::parse(last_line(r.out), nullptr, false);
  if (r.exit_code != 0 || j.is_discarded() || !j.is_object())
    throw Error(ErrorKind::usage, "'" + python + "' did not run as a Python 3 interpreter: " + tail(r.err, 2));
  InterpreterInfo in;
  in.raw = j;
  in.executable = j.value("executable", python);
  in.python = j.value("python", "");
  in.implementation = j.value("implementation", "");
  in.machine = j.value("machine", "");
  in.system = j.value("system", "");
  in.glibc = j.value("glibc", "");
  in.has_pip = j.value("has_pip", false);
  if (j.contains("torch") && j["torch"].is_string()) in.torch = j["torch"];
  if (j.contains("cuda") && j["cuda"].is_string()) in.cuda = j["cuda"];
  if (j.contains("hip") && j["hip"].is_string()) in.hip = j["hip"];
  in.torch_site = j.value("torch_site", "");
  return in;
}

std::optional<std::string> incompatibility(const WheelArchive& w, const InterpreterInfo& in, const std::string& device) {
  // Tags and the local label first (what `kwheel pin` decides on too), then
  // what only the archive says: Requires-Dist torch==X.Y.* names the torch
  // a foreign-labelled variant was built for.
  if (auto p = filename_incompatibility(w.filename(), in, device)) return p;
  bool needs_torch = false;
  for (auto [it, end] = w.metadata().equal_range("Requires-Dist"); it != end; ++it) {
    static const std::regex torch_req(R"(^torch\s*(\(?\s*([^;)]*)\)?)?\s*(;.*)?$)");
    std::smatch m;
    if (!std::regex_match(it->second, m, torch_req)) continue;
    needs_torch = true;
    if (!in.torch) return "the wheel needs torch and " + in.executable + " has none";
    std::string spec = m[2];
    while (!spec.empty() && spec.back() == ' ') spec.pop_back();
    if (spec.empty()) continue;
    auto have = Version::try_parse(*in.torch);
    if (!have) return "cannot parse this interpreter's torch version '" + *in.torch + "'";
    // Pre-releases count: distributions ship them (Debian's 1.13.0a0).
    if (!SpecifierSet::parse(spec).contains(*have, true))
      return "the wheel needs torch " + spec + ", this interpreter has torch " + *in.torch;
  }
  if (!needs_torch && !in.torch) return "no torch in " + in.executable;
  return std::nullopt;
}

ValidationResult validate_wheel(const fs::path& path, const InterpreterInfo& in, const ValidateOptions& o) {
  ValidationResult r;
  r.wheel = path;
  r.timings = json::object();
  auto fail = [&](const std::string& why) {
    r.status = ValidationResult::Status::fail;
    r.reason = why;
    return r;
  };
  const auto t0 = Clock::now();
  std::unique_ptr<WheelArchive> wheel;
  try {
    wheel = std::make_unique<WheelArchive>(path);
  } catch (const Error& e) {
    return fail(e.what());
  }
  if (auto problems = wheel->verify_record(); !problems.empty())
    return fail("RECORD check failed: " + problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
  if (auto why = incompatibility(*wheel, in, o.device)) {
    r.status = ValidationResult::Status::skip;
    r.reason = *why;
    return r;
  }
  if (!in.has_pip) return fail("interpreter " + in.executable + " has no pip; install it (e.g. apt-get install python3-pip) or pass --python of one that has");
  std::string package;
  try {
    package = package_of(*wheel);
  } catch (const Error& e) {
    return fail(e.what());
  }
  r.timings["inspect"] = seconds_since(t0);

  TempDir tmp;
  if (o.keep_env) tmp.keep();
  const fs::path env = tmp.path() / "env";
  auto t = Clock::now();
  ProcessResult venv = run_process({in.executable, "-m", "venv", "--without-pip", env.string()}, isolated(o.timeout));
  if (venv.exit_code != 0) return fail("cannot create a virtual environment with " + in.executable + ": " + tail(venv.err, 2));
  // A venv does not see its parent's packages, not even with
  // --system-site-packages when the parent is itself a venv: point a .pth
  // at the directory that holds torch instead.
  const fs::path site = env / "lib" / ("python" + in.python) / "site-packages";
  if (!in.torch_site.empty()) {
    std::ofstream pth(site / "_kwheel_torch.pth");
    pth << in.torch_site << "\n";
    if (!pth) return fail("cannot write " + (site / "_kwheel_torch.pth").string());
  }
  const std::string env_python = (env / "bin" / "python").string();
  r.timings["venv"] = seconds_since(t);

  t = Clock::now();
  ProcessResult pip = run_process({in.executable, "-m", "pip", "--python", env_python, "install", "--no-deps", "--no-index", "--no-cache-dir",
                                   "--no-compile", "--disable-pip-version-check", "-q", fs::absolute(path).string()},
                                  isolated(o.timeout));
  r.timings["install"] = seconds_since(t);
  if (pip.timed_out) return fail("pip install timed out after " + std::to_string(o.timeout.count()) + " s");
  if (pip.exit_code != 0) return fail("pip refused to install the wheel: " + tail(pip.err, 3));

  t = Clock::now();
  const std::string abi = read_label(wheel->filename().version).cxx98 ? "cxx98" : (wheel->filename().platform.front() == "any" ? "any" : "cxx11");
  ProcessResult run = run_process({env_python, "-c", std::string(embedded_python("validate_runner")), package, o.device, abi}, isolated(o.timeout));
  r.timings["check"] = seconds_since(t);
  r.timings["total"] = seconds_since(t0);
  if (o.keep_env) r.details["env"] = env.string();
  if (run.timed_out) return fail("the kernel check timed out after " + std::to_string(o.timeout.count()) + " s");
  json report = json::parse(last_line(run.out), nullptr, false);
  if (report.is_discarded() || !report.is_object())
    return fail("the check process died (exit " + std::to_string(run.exit_code) + "): " + tail(run.err, 4));
  r.details.update(report);
  if (run.exit_code == 0) r.status = ValidationResult::Status::pass;
  else if (run.exit_code == 3) {
    r.status = ValidationResult::Status::skip;
    r.reason = report.value("reason", "skipped by the check");
  } else {
    r.status = ValidationResult::Status::fail;
    r.reason = report.value("error", "the check failed (exit " + std::to_string(run.exit_code) + ")");
  }
  return r;
}

const char* status_name(ValidationResult::Status s) {
  switch (s) {
    case ValidationResult::Status::pass: return "PASS";
    case ValidationResult::Status::fail: return "FAIL";
    case ValidationResult::Status::skip: return "SKIP";
  }
  return "?";
}

json to_json(const ValidationResult& r) {
  json j{{"wheel", r.wheel.string()}, {"filename", r.wheel.filename().string()}, {"result", status_name(r.status)}, {"timings", r.timings}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.details.empty()) j["details"] = r.details;
  return j;
}

}  // namespace kwheel
