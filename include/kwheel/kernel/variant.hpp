#pragma once
// The Hub's build-variant grammar, as the `kernels` package (0.17.2) parses it:
//   torch{M}{m}[-cxx11|-cxx98]-{backend}-{cpu}-{os}   arch variant; the C++ ABI
//                                                     tag is optional (tagless
//                                                     torch211-cu126-x86_64-linux)
//   torch-stable-abi{M}{m}-{backend}-{cpu}-{os}        torch stable-ABI variant
//   tvm-ffi{M}{m}-{backend}-{cpu}-{os}                  tvm-ffi variant
//   torch-{universal|cpu|cuda|metal|rocm|xpu|npu|cann|neuron|tpu}   pure-Python
//                                                     (noarch) variant
// backend: cpu, metal, neuron, tpu, or cu/rocm/xpu/cann + version digits.
// Every framework version has a one-digit major and the rest as minor
// (torch210 is 2.10, torch-stable-abi211 is 2.11, tvm-ffi01 is 0.1); a
// backend version's minor is its last digit (cu126 is 12.6, xpu20253 is
// 2025.3). Only torch{M}{m} carries an ABI tag. kernels takes any word for
// {cpu}, {os} and the noarch name; kwheel takes the ones it can tag (cpu:
// x86_64, aarch64, arm64, riscv64, ppc64le, s390x; os: linux, darwin,
// windows) and refuses names that do not print back unchanged (cu0126).
// tests/unit/data/kernels-0.17.2-variants.txt lists the names kernels' own
// tests and build lists use; all of them parse.
#include <optional>
#include <string>
#include <string_view>

namespace kwheel {

struct MajorMinor {
  int major = 0;
  int minor = 0;
  std::string str() const;  // "2.10"
  auto operator<=>(const MajorMinor&) const = default;
};

enum class BackendKind { cpu, cuda, rocm, xpu, metal, cann, neuron, tpu };

struct Backend {
  BackendKind kind = BackendKind::cpu;
  std::optional<MajorMinor> version;  // cuda/rocm/xpu/cann only
  std::string name() const;           // "cuda"
  std::string variant_str() const;    // "cu126"
  bool operator==(const Backend&) const = default;
};

enum class Framework { torch, torch_stable_abi, tvm_ffi, torch_noarch };

struct Variant {
  Framework framework = Framework::torch;
  MajorMinor framework_version;       // torch / stable ABI / tvm-ffi version
  std::optional<bool> cxx11_abi;      // only torch arch variants may carry it; unset: tagless
  // Arch variants:
  Backend backend;
  std::string cpu;  // "x86_64", "aarch64"
  std::string os;   // "linux", "darwin", "windows"
  // Noarch variants: "universal", "cpu", "cuda", "npu", ...
  std::string noarch;

  bool is_noarch() const { return framework == Framework::torch_noarch; }
  std::string str() const;  // the directory name; parse(str()) == *this
  bool operator==(const Variant&) const = default;
};

// Throws kwheel::Error(input) naming the variant and why it is not understood.
Variant parse_variant(std::string_view name);

// Like parse_variant, but returns the reason instead of throwing.
struct VariantParse {
  std::optional<Variant> variant;
  std::string error;
};
VariantParse try_parse_variant(std::string_view name);

}  // namespace kwheel
