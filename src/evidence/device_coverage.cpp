#include "kwheel/evidence/device_coverage.hpp"

#include <algorithm>
#include <set>

#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

bool same_capability(const CudaArch& a, const CudaArch& b) { return a.major == b.major && a.minor == b.minor; }

// Within the major version, at or above the minor one.
bool same_family_at_least(const CudaArch& code, const CudaArch& device) {
  return device.major == code.major && device.minor >= code.minor;
}

bool at_least(const CudaArch& code, const CudaArch& device) {
  return device.major > code.major || (device.major == code.major && device.minor >= code.minor);
}

// The driver's preference: SASS made for exactly this device, then other
// compatible SASS, then PTX it must compile.
int preference(const CudaTarget& t, const CudaArch& device) {
  if (t.kind == CudaCodeKind::ptx) return 2;
  return same_capability(t.arch, device) ? 0 : 1;
}

std::vector<std::string> sorted_names(const std::vector<CudaTarget>& code) {
  std::set<CudaTarget> unique(code.begin(), code.end());
  std::vector<std::string> out;
  for (const auto& t : unique) out.push_back(t.str());
  return out;
}

}  // namespace

bool runs_on(const CudaTarget& code, const CudaArch& device) {
  switch (code.arch.suffix) {
    case ArchSuffix::a: return same_capability(code.arch, device);
    case ArchSuffix::f: return same_family_at_least(code.arch, device);
    case ArchSuffix::none:
      return code.kind == CudaCodeKind::sass ? same_family_at_least(code.arch, device) : at_least(code.arch, device);
  }
  return false;
}

bool declared_supports(const DeclaredCudaArch& declared, const CudaArch& device) {
  const CudaArch& a = declared.arch;
  switch (a.suffix) {
    case ArchSuffix::a: return same_capability(a, device);
    case ArchSuffix::f: return same_family_at_least(a, device);
    case ArchSuffix::none: return declared.ptx ? at_least(a, device) : same_family_at_least(a, device);
  }
  return false;
}

// Each side promises a set of devices bounded below by its own capability
// (and above by its family or by that capability alone); two such sets
// meet, if at all, at the higher of the two lower bounds, so those two
// capabilities are the only devices to try.
bool serves_declared(const std::vector<CudaTarget>& code, const std::vector<DeclaredCudaArch>& declared) {
  for (const auto& t : code)
    for (const auto& d : declared)
      for (const CudaArch& device : {t.arch, d.arch}) {
        const CudaArch plain{device.major, device.minor, ArchSuffix::none};
        if (runs_on(t, plain) && declared_supports(d, plain)) return true;
      }
  return false;
}

std::string describe_targets(const std::vector<CudaTarget>& code) { return join(sorted_names(code), ", "); }

DeviceCoverage cuda_coverage(const std::vector<CudaTarget>& code, const CudaArch& device) {
  DeviceCoverage c;
  for (const auto& t : code) {
    if (!runs_on(t, device)) continue;
    if (!c.by || preference(t, device) < preference(*c.by, device)) c.by = t;
  }
  c.covered = c.by.has_value();
  c.jit = c.by && c.by->kind == CudaCodeKind::ptx;
  if (!c.covered) {
    const std::string gpu = "sm_" + device.number();
    c.reason = code.empty() ? "this GPU is " + gpu + "; the wheel carries no CUDA code"
                            : "this GPU is " + gpu + "; the wheel's code targets " + describe_targets(code) + " only";
  }
  return c;
}

ArchAudit audit_declared_archs(const std::vector<std::string>& declared, const std::vector<CudaTarget>& cuda,
                               const std::vector<std::string>& gfx) {
  ArchAudit audit;
  std::set<CudaTarget> promised;
  std::set<std::string> promised_gfx;
  for (const auto& text : declared) {
    if (text.starts_with("gfx")) {
      promised_gfx.insert(text);
      if (std::find(gfx.begin(), gfx.end(), text) == gfx.end()) audit.missing.push_back(text);
      continue;
    }
    auto d = parse_declared_cuda_arch(text);
    if (!d) {
      audit.unparsed.push_back(text);
      continue;
    }
    const CudaTarget sass{CudaCodeKind::sass, d->arch}, ptx{CudaCodeKind::ptx, d->arch};
    promised.insert(sass);
    promised.insert(ptx);
    // kernels reads "X.Y+PTX" as "runs on X.Y and everything newer": the
    // PTX keeps that promise (SASS beside it is only faster), so a PTX-only
    // build declares exactly that. A plain "X.Y" promises SASS.
    const CudaTarget& needed = d->ptx ? ptx : sass;
    if (std::find(cuda.begin(), cuda.end(), needed) == cuda.end()) audit.missing.push_back(text + " (" + needed.str() + ")");
  }
  for (const auto& t : std::set<CudaTarget>(cuda.begin(), cuda.end()))
    if (!promised.count(t)) audit.undeclared.push_back(t.str());
  for (const auto& g : std::set<std::string>(gfx.begin(), gfx.end()))
    if (!promised_gfx.count(g)) audit.undeclared.push_back(g);
  return audit;
}

}  // namespace kwheel
