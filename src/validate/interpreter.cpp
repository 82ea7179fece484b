#include "kwheel/validate/interpreter.hpp"

#include "kwheel/base/embedded_python.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/process.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
using nlohmann::json;

InterpreterInfo probe_interpreter(const std::string& python) {
  ProcessResult r;
  try {
    // -I: no working directory on sys.path (a torch/ checkout there must not
    // pass for the installed torch), no PYTHON* variables, no user site.
    r = run_process({python, "-I", "-c", std::string(embedded_python("probe_interpreter"))}, isolated_python(std::chrono::seconds(60)));
  } catch (const Error&) {
    throw Error(ErrorKind::usage, "cannot run Python interpreter '" + python + "'; pass --python PATH to one that has torch");
  }
  json j = json::parse(last_line(r.out), nullptr, false);
  if (r.exit_code != 0 || j.is_discarded() || !j.is_object())
    throw Error(ErrorKind::usage, "'" + python + "' did not run as a Python 3 interpreter: " + last_lines(r.err, 2));
  InterpreterInfo in;
  in.raw = j;
  in.executable = j.value("executable", python);
  in.python = j.value("python", "");
  in.python_version = j.value("python_version", "");
  in.implementation = j.value("implementation", "");
  in.machine = j.value("machine", "");
  in.system = j.value("system", "");
  in.glibc = j.value("glibc", "");
  in.has_pip = j.value("has_pip", false);
  in.pip_runner = j.value("pip_runner", "");
  if (j.contains("torch") && j["torch"].is_string()) in.torch = j["torch"];
  if (j.contains("cuda") && j["cuda"].is_string()) in.cuda = j["cuda"];
  if (j.contains("hip") && j["hip"].is_string()) in.hip = j["hip"];
  if (j.contains("xpu") && j["xpu"].is_string()) in.xpu = j["xpu"];
  in.torch_site = j.value("torch_site", "");
  if (j.contains("tvm_ffi") && j["tvm_ffi"].is_string()) in.tvm_ffi = j["tvm_ffi"];
  in.tvm_ffi_site = j.value("tvm_ffi_site", "");
  return in;
}

std::optional<CudaDevice> probe_cuda_device(const InterpreterInfo& in, std::chrono::seconds timeout) {
  ProcessResult r = run_process({in.executable, "-I", "-c", std::string(embedded_python("probe_cuda_device"))}, isolated_python(timeout));
  json j = json::parse(last_line(r.out), nullptr, false);
  if (r.exit_code != 0 || !j.is_object() || !j.contains("available") || !j["available"].is_boolean())
    throw Error(ErrorKind::usage, "cannot ask " + in.executable + "'s torch for its GPU: " + last_lines(r.err, 2) +
                                      "; pass --device cpu or a --python whose torch imports");
  if (!j["available"].get<bool>()) return std::nullopt;
  const auto cc = j.contains("capability") && j["capability"].is_string() ? parse_compute_capability(j["capability"].get<std::string>()) : std::nullopt;
  if (!cc) throw Error(ErrorKind::usage, in.executable + "'s torch reports no readable compute capability; pass --device cpu");
  return CudaDevice{*cc, j.value("name", "")};
}

}  // namespace kwheel
