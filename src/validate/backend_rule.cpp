#include "kwheel/validate/backend_rule.hpp"

namespace kwheel {

namespace {

Backend versioned(BackendKind kind, const std::optional<MajorMinor>& version) {
  Backend b;
  b.kind = kind;
  b.version = version;
  return b;
}

// kernels: XPU(version=f"{torch.version.xpu[0:4]}.{torch.version.xpu[5:6]}").
std::optional<MajorMinor> xpu_version(const std::string& xpu) {
  if (xpu.size() < 6) return std::nullopt;
  return leading_major_minor(xpu.substr(0, 4) + "." + xpu.substr(5, 1));
}

// kernels/variants.py: noarch variants name CANN's backend "npu".
std::string noarch_name(const Backend& system) { return system.kind == BackendKind::cann ? "npu" : system.name(); }

std::optional<std::string> noarch_mismatch(const LocalLabel& label, const Backend& system) {
  const std::string want = noarch_name(system);
  if (label.backend == want || label.backend == "universal") return std::nullopt;
  return "backend (" + label.backend + ") does not match system backend (" + want + ") and is not universal";
}

std::optional<std::string> arch_mismatch(const LocalLabel& label, const Backend& system) {
  if (system.kind == BackendKind::cuda && label.cuda) {
    // kernels: a system CUDA x.y takes builds for x.z with z <= y.
    const auto build = leading_major_minor(*label.cuda);
    if (build && system.version && build->major == system.version->major && build->minor <= system.version->minor) return std::nullopt;
    return "CUDA version (" + *label.cuda + ") is not compatible with system CUDA version (" + (system.version ? system.version->str() : "?") + ")";
  }
  if (label.backend == system.variant_str()) return std::nullopt;
  return "backend (" + label.backend + ") does not match selected backend (" + system.variant_str() + ")";
}

}  // namespace

Backend system_backend(const InterpreterInfo& env, const std::string& device) {
  if (device == "cpu" || !env.torch) return Backend{};
  if (env.cuda) return versioned(BackendKind::cuda, leading_major_minor(*env.cuda));
  if (env.hip) return versioned(BackendKind::rocm, leading_major_minor(*env.hip));
  if (env.system == "darwin") return versioned(BackendKind::metal, std::nullopt);
  if (env.xpu) return versioned(BackendKind::xpu, xpu_version(*env.xpu));
  return Backend{};
}

std::optional<std::string> backend_mismatch(const LocalLabel& label, const Backend& system) {
  if (label.universal() || label.backend.empty()) return std::nullopt;
  return label.noarch ? noarch_mismatch(label, system) : arch_mismatch(label, system);
}

}  // namespace kwheel
