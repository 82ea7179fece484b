#pragma once
// The Hub's build-variant grammar, as the `kernels` package (0.17) parses it:
//   torch{M}{m}[-cxx11|-cxx98]-{backend}-{cpu}-{os}   arch variant
//   torch-stable-abi{M}{m}-{backend}-{cpu}-{os}        torch stable-ABI variant
//   tvm-ffi{M}{m}-{backend}-{cpu}-{os}                  tvm-ffi variant
//   torch-{universal|cpu|cuda|metal|rocm|xpu|...}      pure-Python (noarch)
// The torch major version is one digit and the minor the rest (torch210 is
// 2.10); a backend version's minor is its last digit (cu126 is 12.6).
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
  std::optional<bool> cxx11_abi;      // only torch arch variants may carry it
  // Arch variants:
  Backend backend;
  std::string cpu;  // "x86_64", "aarch64"
  std::string os;   // "linux", "darwin", "windows"
  // Noarch variants: "universal", "cpu", "cuda", ...
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
