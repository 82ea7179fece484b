#include "kwheel/validate.hpp"

#include <stdlib.h>

#include <fstream>
#include <regex>
#include <set>

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

std::optional<std::pair<int, int>> major_minor(const std::string& v) {
  static const std::regex re(R"(^(\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_search(v, m, re)) return std::nullopt;
  return std::make_pair(std::stoi(m[1]), std::stoi(m[2]));
}

// glibc floor of a Linux platform tag, or -1 for a non-manylinux tag.
int manylinux_glibc_minor(const std::string& tag, std::string& arch) {
  static const std::regex modern(R"(^manylinux_2_(\d+)_(\w+)$)");
  static const std::regex legacy(R"(^manylinux(1|2010|2014)_(\w+)$)");
  std::smatch m;
  if (std::regex_match(tag, m, modern)) {
    arch = m[2];
    return std::stoi(m[1]);
  }
  if (std::regex_match(tag, m, legacy)) {
    arch = m[2];
    return m[1] == "1" ? 5 : m[1] == "2010" ? 12 : 17;
  }
  return -1;
}

std::optional<std::string> platform_problem(const WheelFilename& w, const InterpreterInfo& in) {
  std::string last;
  for (const auto& p : w.platform) {
    if (p == "any") return std::nullopt;
    std::string arch;
    int floor = manylinux_glibc_minor(p, arch);
    if (floor >= 0) {
      if (in.system != "linux" || arch != in.machine) {
        last = "platform " + p + " does not match this " + in.system + "/" + in.machine + " interpreter";
        continue;
      }
      auto g = major_minor(in.glibc);
      if (!g) return "platform " + p + " needs glibc, this interpreter's libc is not glibc";
      if (g->first == 2 && g->second < floor) {
        last = "platform " + p + " needs glibc 2." + std::to_string(floor) + ", this system has " + in.glibc;
        continue;
      }
      return std::nullopt;
    }
    if (p == "linux_" + in.machine && in.system == "linux") return std::nullopt;
    last = "platform " + p + " does not match this " + in.system + "/" + in.machine + " interpreter";
  }
  return last;
}

std::optional<std::string> python_problem(const WheelFilename& w, const InterpreterInfo& in) {
  auto have = major_minor(in.python);
  if (!have) return "cannot tell this interpreter's Python version";
  for (const auto& py : w.python) {
    for (const auto& abi : w.abi) {
      if (py == "py3" || py == "py" + std::to_string(have->first) + std::to_string(have->second)) return std::nullopt;
      static const std::regex cp(R"(^cp(\d)(\d+)$)");
      std::smatch m;
      if (!std::regex_match(py, m, cp) || in.implementation != "cpython") continue;
      int major = std::stoi(m[1]), minor = std::stoi(m[2]);
      if (abi == "abi3" && major == have->first && minor <= have->second) return std::nullopt;
      if ((abi == "none" || abi == py) && major == have->first && minor == have->second) return std::nullopt;
    }
  }
  return "Python tags " + w.python.front() + "-" + w.abi.front() + " do not fit Python " + in.python;
}

struct LocalLabel {
  std::optional<std::string> cuda;  // "13.0"
  bool rocm = false, cpu = false, cxx98 = false;
};

// Reads kwheel's label segments back (torch2.7.cu126.cxx98); foreign labels
// simply yield nothing.
LocalLabel read_label(const std::string& version) {
  LocalLabel l;
  auto plus = version.find('+');
  if (plus == std::string::npos) return l;
  std::string rest = version.substr(plus + 1);
  size_t start = 0;
  while (start <= rest.size()) {
    size_t dot = rest.find('.', start);
    std::string seg = rest.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    static const std::regex cu(R"(^cu(\d+)(\d)$)");
    std::smatch m;
    if (std::regex_match(seg, m, cu)) l.cuda = std::to_string(std::stoi(m[1])) + "." + m[2].str();
    else if (seg.starts_with("rocm")) l.rocm = true;
    else if (seg == "cpu") l.cpu = true;
    else if (seg == "cxx98") l.cxx98 = true;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return l;
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
  if (auto p = python_problem(w.filename(), in)) return p;
  if (auto p = platform_problem(w.filename(), in)) return p;
  // Requires-Dist: torch==X.Y.* names the torch the variant was built for.
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
  LocalLabel label = read_label(w.filename().version);
  if (label.cuda) {
    if (!in.cuda) return "a CUDA " + *label.cuda + " build needs a CUDA torch; this torch (" + in.torch.value_or("none") + ") has no CUDA";
    auto a = major_minor(*label.cuda), b = major_minor(*in.cuda);
    if (!a || !b || *a != *b) return "a CUDA " + *label.cuda + " build needs torch built for CUDA " + *label.cuda + ", this torch uses CUDA " + *in.cuda;
  }
  if (label.rocm && !in.hip) return "a ROCm build needs a ROCm torch";
  if (label.cpu && device == "cuda") return "a CPU build has no CUDA kernels to run on --device cuda";
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
