#include "kwheel/validate/compat.hpp"

#include <regex>
#include <vector>

#include "kwheel/base/text.hpp"
#include "kwheel/validate/backend_rule.hpp"
#include "kwheel/validate/interpreter.hpp"
#include "kwheel/wheel/tags.hpp"

namespace kwheel {

namespace {
// A kwheel label is ~20 bytes; PEP 440 sets no limit, this is ours.
constexpr size_t kMaxLabelBytes = 255;
}  // namespace
namespace {

// glibc floor of a Linux platform tag, or -1 for a non-manylinux tag.
int manylinux_glibc_minor(const std::string& tag, std::string& arch) {
  // Digit runs are bounded so that std::stoi cannot overflow (tags come from
  // filenames on index pages): a longer number is no manylinux tag.
  static const std::regex modern(R"(^manylinux_2_(\d{1,6})_(\w+)$)");
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

std::string who(const InterpreterInfo& in) { return in.executable.empty() ? "the target environment" : in.executable; }

std::optional<std::string> platform_problem(const WheelFilename& w, const InterpreterInfo& in) {
  if (in.system.empty() && in.executable.empty()) return std::nullopt;  // a described target, platform unknown
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
      if (in.glibc.empty() && in.executable.empty()) return std::nullopt;  // a described target: glibc unknown
      auto g = leading_major_minor(in.glibc);
      if (!g) return "platform " + p + " needs glibc, this interpreter's libc is not glibc";
      if (g->major == 2 && g->minor < floor) {
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
  if (in.python.empty() && in.executable.empty()) return std::nullopt;  // a described target: Python not checked
  auto have = leading_major_minor(in.python);
  if (!have) return "cannot tell this interpreter's Python version";
  for (const auto& py : w.python) {
    for (const auto& abi : w.abi) {
      if (py == "py3" || py == "py" + std::to_string(have->major) + std::to_string(have->minor)) return std::nullopt;
      static const std::regex cp(R"(^cp(\d)(\d{1,6})$)");  // bounded for std::stoi
      std::smatch m;
      if (!std::regex_match(py, m, cp) || in.implementation != "cpython") continue;
      int major = std::stoi(m[1]), minor = std::stoi(m[2]);
      if (abi == "abi3" && major == have->major && minor <= have->minor) return std::nullopt;
      if ((abi == "none" || abi == py) && major == have->major && minor == have->minor) return std::nullopt;
    }
  }
  return "Python tags " + w.python.front() + "-" + w.abi.front() + " do not fit Python " + in.python;
}

// kernels 0.17.2 loads tvm-ffiMm only where tvm_ffi.__version__ has major.minor
// M.m exactly. A described target names no tvm-ffi, so it is not judged.
std::optional<std::string> tvm_ffi_problem(const LocalLabel& label, const InterpreterInfo& in) {
  if (label.framework != "tvmffi" || !label.framework_version || in.executable.empty()) return std::nullopt;
  const std::string want = label.framework_version->str();
  std::string need = "the wheel needs tvm-ffi ";
  need.append(want).append(" (apache-tvm-ffi==").append(want).append(".*, imported as tvm_ffi)");
  if (!in.tvm_ffi && !in.tvm_ffi_site.empty()) return need.append(", and the version of ").append(in.executable).append("'s tvm_ffi cannot be read");
  if (!in.tvm_ffi) return need.append(" and ").append(in.executable).append(" has none; pip install 'apache-tvm-ffi==").append(want).append(".*' there");
  const auto have = leading_major_minor(*in.tvm_ffi);
  if (!have || *have != *label.framework_version) return need.append(", ").append(in.executable).append(" has tvm-ffi ").append(*in.tvm_ffi);
  return std::nullopt;
}

bool is_noarch_backend(const std::string& s) {
  static const char* const kNames[] = {"cpu", "cuda", "rocm", "xpu", "metal", "npu", "neuron", "cann", "tpu"};
  for (const char* n : kNames)
    if (s == n) return true;
  return false;
}

}  // namespace

std::optional<MajorMinor> leading_major_minor(const std::string& v) {
  static const std::regex re(R"(^(\d{1,6})\.(\d{1,6}))");
  std::smatch m;
  if (!std::regex_search(v, m, re)) return std::nullopt;
  return MajorMinor{std::stoi(m[1]), std::stoi(m[2])};
}

LocalLabel read_label(const std::string& version) {
  LocalLabel l;
  auto plus = version.find('+');
  if (plus == std::string::npos) return l;
  l.text = version.substr(plus + 1);
  // Labels come from other people's wheels and index pages; the regexes
  // below recurse per character, so an absurd label is just unreadable.
  if (l.text.size() > kMaxLabelBytes) return l;
  std::vector<std::string> segs = split(l.text, '.');
  size_t first = 0;
  static const std::regex framework(R"(^(torch|torchstableabi|tvmffi)(\d{1,6})$)");
  // Up to 8 digits: what the variant grammar lets a minor have (torch + 9 digits).
  static const std::regex digits(R"(^\d{1,8}$)");
  std::smatch m;
  if (segs.size() >= 2 && std::regex_match(segs[0], m, framework) && std::regex_match(segs[1], digits)) {
    l.framework = m[1];
    l.framework_version = MajorMinor{std::stoi(m[2]), std::stoi(segs[1])};
    first = 2;
  } else if (segs.size() == 2 && segs[0] == "torch" && is_noarch_backend(segs[1])) {
    l.noarch = true;  // kwheel's pure-Python label, torch.cuda
    first = 1;
  } else if (segs.size() == 1 && is_noarch_backend(segs[0])) {
    l.noarch = true;  // labels of kwheel before 0.1.0's release: +cuda
  }
  for (size_t i = first; i < segs.size(); ++i) {
    const std::string& seg = segs[i];
    static const std::regex cu(R"(^cu(\d{1,8})(\d)$)");  // bounded for std::stoi
    static const std::regex backend(R"(^(cu|rocm|xpu|cann)\d+$|^(cpu|cuda|rocm|xpu|metal|npu|neuron|cann|tpu)$)");
    if (std::regex_match(seg, m, cu)) l.cuda = std::to_string(std::stoi(m[1])) + "." + m[2].str();
    if (seg.starts_with("rocm")) l.rocm = true;
    if (seg == "cpu") l.cpu = true;
    if (seg == "cxx98") l.cxx98 = true;
    if (l.backend.empty() && std::regex_match(seg, backend)) l.backend = seg;
  }
  return l;
}

std::string LocalLabel::index_name() const {
  if (noarch) return backend;
  if (framework.empty() || !framework_version || backend.empty()) return "";
  std::string name = framework + framework_version->str() + "-" + backend;
  if (cxx98) name += "-cxx98";
  return name;
}

std::string LocalLabel::describe() const {
  if (universal()) return "torch-universal (any torch, any device)";
  auto compute = [&]() -> std::string {
    if (cuda) return "CUDA " + *cuda;
    if (cpu) return "CPU";
    if (backend == "cuda") return "CUDA";
    if (rocm) return backend.size() > 4 ? "ROCm " + backend.substr(4, backend.size() - 5) + "." + backend.substr(backend.size() - 1) : "ROCm";
    return backend.empty() ? "unknown compute" : backend;
  };
  if (noarch) return "torch-" + backend + " (pure Python, any torch, " + compute() + ")";
  if (framework.empty()) return "label " + text;
  std::string fw = framework == "torch" ? "torch " + framework_version->str()
                   : framework == "torchstableabi" ? "torch >= " + framework_version->str() + " (stable ABI)"
                                                   : "tvm-ffi " + framework_version->str();
  return fw + ", " + compute() + (cxx98 ? ", pre-cxx11 C++ ABI" : "");
}

std::optional<std::string> tags_and_torch_incompatibility(const WheelFilename& w, const InterpreterInfo& in) {
  if (auto p = python_problem(w, in)) return p;
  if (auto p = platform_problem(w, in)) return p;
  const LocalLabel label = read_label(w.version);
  if ((label.framework == "torch" || label.framework == "torchstableabi") && label.framework_version) {
    const std::string need = label.framework == "torch" ? "==" + label.framework_version->str() + ".*" : ">=" + label.framework_version->str();
    if (!in.torch) return "the wheel needs torch " + need + " and " + who(in) + " has none";
    auto have = leading_major_minor(*in.torch);
    if (!have) return "cannot parse this interpreter's torch version '" + *in.torch + "'";
    bool ok = label.framework == "torch" ? *have == *label.framework_version : *have >= *label.framework_version;
    if (!ok) return "the wheel needs torch " + need + ", " + (in.executable.empty() ? "the target has" : "this interpreter has") + " torch " + *in.torch;
  }
  return std::nullopt;
}

std::optional<std::string> filename_incompatibility(const WheelFilename& w, const InterpreterInfo& in, const std::string& device) {
  if (auto p = tags_and_torch_incompatibility(w, in)) return p;
  const LocalLabel label = read_label(w.version);
  if (auto p = tvm_ffi_problem(label, in)) return p;
  if (auto p = backend_mismatch(label, system_backend(in, device))) return p;
  // kernels refuses --device cuda on a torch without CUDA outright.
  if (label.cpu && device == "cuda") return "a CPU build has no CUDA kernels to run on --device cuda";
  return std::nullopt;
}

std::optional<std::string> variant_incompatibility(const Variant& v, const InterpreterInfo& env) {
  const WheelTags tags = compute_tags(v, TagOptions{});
  WheelFilename w;
  w.name = "kernel";
  w.version = tags.local_label.empty() ? "0" : "0+" + tags.local_label;
  w.python = {tags.python};
  w.abi = {tags.abi};
  // The oldest manylinux floor: a variant's name says nothing of its glibc.
  w.platform = {v.is_noarch() || tags.purelib ? std::string("any") : v.os == "linux" ? platform_tag(v, "2_5") : platform_tag(v, "")};
  return filename_incompatibility(w, env, "auto");
}

}  // namespace kwheel
