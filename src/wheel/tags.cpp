#include "kwheel/wheel/tags.hpp"

#include <regex>

#include "kwheel/base/error.hpp"
#include "kwheel/evidence/macos_tag.hpp"

namespace kwheel {
namespace {

std::string python_tag(const std::string& min_python) {
  static const std::regex re(R"(^3\.([1-9][0-9]?)$)");  // no leading zero: 3.09 is not cp39
  std::smatch m;
  if (!std::regex_match(min_python, m, re) || std::stoi(m[1]) < 2)
    throw Error(ErrorKind::usage, "--min-python '" + min_python + "': expected 3.N with N >= 2, e.g. 3.9");
  return "cp3" + std::string(m[1]);
}

std::string linux_cpu(const std::string& cpu) { return cpu == "arm64" ? "aarch64" : cpu; }

// The floor before any evidence (macos_tag.hpp); a build replaces it with
// what the Mach-O files need.
std::string macos_floor(const Variant& v, const std::string& arch) {
  const MacosVersion f = macos_backend_floor(arch, v.backend.kind == BackendKind::metal);
  return std::to_string(f.major) + "_" + std::to_string(f.minor);
}

}  // namespace

std::string local_label(const Variant& v) {
  const std::string ver = v.framework_version.str();
  std::string label;
  switch (v.framework) {
    // "torch.cuda": the first segment "torch" sorts below every native
    // "torch2…" label, so an unpinned install prefers a native build for the
    // platform and falls back to pure Python only where there is none.
    case Framework::torch_noarch: return v.noarch == "universal" ? "" : "torch." + v.noarch;
    case Framework::torch: label = "torch" + ver; break;
    case Framework::torch_stable_abi: label = "torchstableabi" + ver; break;
    case Framework::tvm_ffi: label = "tvmffi" + ver; break;
  }
  label += "." + v.backend.variant_str();
  // cxx11 is the ABI of every torch wheel since 2.7 and carries no segment;
  // the rare cxx98 build gets one so the two never share a version.
  if (v.cxx11_abi == false) label += ".cxx98";
  return label;
}

std::string platform_tag(const Variant& v, const std::string& manylinux) {
  if (v.os == "linux") {
    static const std::regex re(R"(^2_([1-9][0-9]{0,2})$)");
    if (!std::regex_match(manylinux, re))
      throw Error(ErrorKind::usage, "--manylinux '" + manylinux + "': expected 2_N, e.g. 2_28");
    return "manylinux_" + manylinux + "_" + linux_cpu(v.cpu);
  }
  if (v.os == "darwin") {
    const std::string arch = v.cpu == "aarch64" ? std::string("arm64") : v.cpu;
    return "macosx_" + macos_floor(v, arch) + "_" + arch;
  }
  if (v.os == "windows") return v.cpu == "x86_64" ? "win_amd64" : "win_arm64";
  throw Error(ErrorKind::input, "variant '" + v.str() + "': no wheel platform tag for OS '" + v.os + "'");
}

WheelTags compute_tags(const Variant& v, const TagOptions& o) {
  WheelTags t;
  if (v.is_noarch()) {
    t.python = "py3";
    t.abi = "none";
    t.platforms = {"any"};
    t.purelib = true;
    t.requires_dist = "torch";
  } else {
    t.python = python_tag(o.min_python);
    t.abi = "abi3";
    // "auto": the build reads the variant's ELF files and picks the policy
    // they satisfy (build.cpp); nothing can be claimed before that.
    if (!(v.os == "linux" && o.manylinux == "auto")) t.platforms = {platform_tag(v, o.manylinux)};
    switch (v.framework) {
      case Framework::torch: t.requires_dist = "torch==" + v.framework_version.str() + ".*"; break;
      // kernels 0.17.2 (variants.py) loads torch-stable-abiMm into any torch
      // whose major.minor is at least M.m, with no upper bound: the stable
      // ABI is kept by later releases. The requirement says exactly that.
      case Framework::torch_stable_abi: t.requires_dist = "torch>=" + v.framework_version.str(); break;
      case Framework::tvm_ffi: t.requires_dist = "apache-tvm-ffi==" + v.framework_version.str() + ".*"; break;
      case Framework::torch_noarch: break;
    }
  }
  t.local_label = local_label(v);
  return t;
}

std::string WheelTags::str() const {
  std::string plats;
  for (const auto& p : platforms) plats += (plats.empty() ? "" : ".") + p;
  return python + "-" + abi + "-" + plats;
}

std::vector<std::string> WheelTags::expanded() const {
  std::vector<std::string> out;
  for (const auto& p : platforms) out.push_back(python + "-" + abi + "-" + p);
  return out;
}

}  // namespace kwheel
