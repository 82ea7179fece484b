#include "kwheel/kernel/variant.hpp"

#include <array>
#include <charconv>
#include <stdexcept>
#include <vector>

#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

using Parts = std::vector<std::string_view>;

Parts split_dash(std::string_view s) {
  Parts parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find('-', start);
    parts.push_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int to_int(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) throw std::invalid_argument("number too large");
  return v;
}

// `kernels` regexes: torch(\d)(\d+) (one-digit major) and, for backends,
// (\d+)(\d+) with a greedy first group (the minor is the last digit).
std::optional<MajorMinor> split_version(std::string_view digits, bool one_digit_major) {
  if (!all_digits(digits) || digits.size() < 2 || digits.size() > 9) return std::nullopt;
  size_t cut = one_digit_major ? 1 : digits.size() - 1;
  return MajorMinor{to_int(digits.substr(0, cut)), to_int(digits.substr(cut))};
}

struct BackendPrefix {
  std::string_view prefix;
  BackendKind kind;
};
constexpr std::array<BackendPrefix, 4> kVersionedBackends{{
    {"cu", BackendKind::cuda},
    {"rocm", BackendKind::rocm},
    {"xpu", BackendKind::xpu},
    {"cann", BackendKind::cann},
}};

std::optional<Backend> parse_backend(std::string_view s, std::string& why) {
  if (s == "cpu") return Backend{BackendKind::cpu, std::nullopt};
  if (s == "metal") return Backend{BackendKind::metal, std::nullopt};
  if (s == "neuron") return Backend{BackendKind::neuron, std::nullopt};
  if (s == "tpu") return Backend{BackendKind::tpu, std::nullopt};
  for (const auto& [prefix, kind] : kVersionedBackends) {
    if (s.starts_with(prefix)) {
      auto v = split_version(s.substr(prefix.size()), false);
      if (!v) {
        why = "backend '" + std::string(s) + "' needs a version of at least two digits after '" +
              std::string(prefix) + "' (e.g. " + std::string(prefix) + "126)";
        return std::nullopt;
      }
      return Backend{kind, v};
    }
  }
  // kernels names Ascend's pure-Python variant torch-npu but its compiled
  // ones after the CANN toolkit, so "npu" here is a likely mix-up.
  if (s == "npu")
    why = "unknown backend 'npu': it names only the pure-Python variant torch-npu; Ascend builds use cannXY";
  else
    why = "unknown backend '" + std::string(s) + "' (known: cpu, cuXY, rocmXY, xpuXY, cannXY, metal, neuron, tpu)";
  return std::nullopt;
}

// kernels accepts any torch-<word>; kwheel takes the names kernels' resolver
// can select (npu is what it looks for on Ascend/CANN systems) plus cann,
// which kwheel already accepted though kernels' resolver never selects it.
constexpr std::array<std::string_view, 10> kNoarchNames{"universal", "cpu",  "cuda", "metal",  "rocm",
                                                        "xpu",       "npu",  "cann", "neuron", "tpu"};

// kernels takes any CPU and OS word; kwheel must turn them into a platform tag.
bool known_cpu(std::string_view s) { return s == "x86_64" || s == "aarch64" || s == "arm64" || s == "riscv64" || s == "ppc64le" || s == "s390x"; }
bool known_os(std::string_view s) { return s == "linux" || s == "darwin" || s == "windows"; }

bool is_abi_tag(std::string_view s) { return s == "cxx11" || s == "cxx98"; }

// A misplaced or misspelt C++ ABI tag would otherwise only be reported as
// one part too many.
std::string abi_tag_error(const Parts& parts, size_t first, Framework framework) {
  if (parts.size() - first != 4 || !parts[first].starts_with("cxx")) return {};
  const std::string tag(parts[first]);
  const bool torch = framework == Framework::torch;
  if (!is_abi_tag(tag)) return torch ? "unknown C++ ABI tag '" + tag + "' (known: cxx11, cxx98)" : "";
  return torch ? "" : "only torch{M}{m} variants carry a C++ ABI tag ('" + tag + "')";
}

// Parses "{backend}-{cpu}-{os}" into v; returns the reason on failure.
std::string parse_arch(const Parts& parts, size_t first, Variant& v) {
  if (auto why = abi_tag_error(parts, first, v.framework); !why.empty()) return why;
  if (parts.size() - first != 3)
    return "expected {backend}-{cpu}-{os} after the framework, got " + std::to_string(parts.size() - first) +
           " part(s)";
  std::string why;
  auto backend = parse_backend(parts[first], why);
  if (!backend) return why;
  if (!known_cpu(parts[first + 1])) return "unknown CPU architecture '" + std::string(parts[first + 1]) + "'";
  if (!known_os(parts[first + 2])) return "unknown OS '" + std::string(parts[first + 2]) + "'";
  v.backend = *backend;
  v.cpu = parts[first + 1];
  v.os = parts[first + 2];
  return {};
}

// Each parse_* below fills v and returns the reason the name is refused,
// empty when it parsed.

std::string parse_stable_abi(const Parts& parts, Variant& v) {
  // parts: "torch", "stable", "abi{M}{m}", arch... (kernels: torch-stable-abi(\d)(\d+))
  auto ver = parts.size() > 2 ? split_version(parts[2].substr(3), true) : std::nullopt;
  if (!ver) return "stable-ABI version must be digits, a one-digit major then the minor (e.g. torch-stable-abi211)";
  v.framework = Framework::torch_stable_abi;
  v.framework_version = *ver;
  return parse_arch(parts, 3, v);
}

std::string parse_noarch(const Parts& parts, Variant& v) {
  if (parts.size() != 2) return "a pure-Python variant is torch-{universal|cpu|cuda|...}";
  for (auto n : kNoarchNames) {
    if (parts[1] != n) continue;
    v.framework = Framework::torch_noarch;
    v.noarch = n;
    return {};
  }
  return "unknown pure-Python backend '" + std::string(parts[1]) +
         "' (known: universal, cpu, cuda, metal, rocm, xpu, npu, cann, neuron, tpu)";
}

// The C++ ABI tag is optional: kernels 0.17 reads "torch211-cu126-x86_64-linux"
// (no tag) as well as the older "torch211-cxx11-cu126-x86_64-linux".
std::string parse_torch(const Parts& parts, Variant& v) {
  auto ver = split_version(parts[0].substr(5), true);
  if (!ver)
    return "torch version must be digits after 'torch', a one-digit major then the minor (e.g. torch27, torch210)";
  v.framework = Framework::torch;
  v.framework_version = *ver;
  size_t first = 1;
  if (parts.size() > 1 && is_abi_tag(parts[1])) {
    v.cxx11_abi = parts[1] == "cxx11";
    first = 2;
  }
  return parse_arch(parts, first, v);
}

std::string parse_tvm_ffi(const Parts& parts, Variant& v) {
  // kernels: tvm-ffi(\d+?)(\d+), a lazy major, so one digit.
  auto ver = split_version(parts[1].substr(3), true);
  if (!ver) return "tvm-ffi version must be digits, a one-digit major then the minor (e.g. tvm-ffi01 for 0.1)";
  v.framework = Framework::tvm_ffi;
  v.framework_version = *ver;
  return parse_arch(parts, 2, v);
}

// Dispatches on the framework the way kernels' parse_variant does; the order
// matters, "torch-stable-abi…" also starts with "torch-".
std::string parse_parts(std::string_view name, const Parts& parts, Variant& v) {
  if (name.starts_with("torch-stable-abi")) return parse_stable_abi(parts, v);
  if (parts[0] == "torch") return parse_noarch(parts, v);
  if (parts[0].starts_with("torch")) return parse_torch(parts, v);
  if (parts[0] == "tvm" && parts.size() > 1 && parts[1].starts_with("ffi")) return parse_tvm_ffi(parts, v);
  return "unknown framework '" + std::string(parts[0]) + "' (expected torch…, torch-stable-abi…, tvm-ffi…)";
}

std::string check_charset(std::string_view name) {
  if (name.empty()) return "empty variant name";
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return "variant names use only a-z, 0-9, '-' and '_'";
  }
  return {};
}

}  // namespace

std::string MajorMinor::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::string Backend::name() const {
  switch (kind) {
    case BackendKind::cpu: return "cpu";
    case BackendKind::cuda: return "cuda";
    case BackendKind::rocm: return "rocm";
    case BackendKind::xpu: return "xpu";
    case BackendKind::metal: return "metal";
    case BackendKind::cann: return "cann";
    case BackendKind::neuron: return "neuron";
    case BackendKind::tpu: return "tpu";
  }
  return "?";
}

std::string Backend::variant_str() const {
  std::string digits = version ? std::to_string(version->major) + std::to_string(version->minor) : "";
  switch (kind) {
    case BackendKind::cuda: return "cu" + digits;
    case BackendKind::rocm: return "rocm" + digits;
    case BackendKind::xpu: return "xpu" + digits;
    case BackendKind::cann: return "cann" + digits;
    default: return name();
  }
}

std::string Variant::str() const {
  const std::string digits = std::to_string(framework_version.major) + std::to_string(framework_version.minor);
  const std::string arch = backend.variant_str() + "-" + cpu + "-" + os;
  switch (framework) {
    case Framework::torch_noarch: return "torch-" + noarch;
    case Framework::torch_stable_abi: return "torch-stable-abi" + digits + "-" + arch;
    case Framework::tvm_ffi: return "tvm-ffi" + digits + "-" + arch;
    case Framework::torch:
      break;
  }
  std::string s = "torch" + digits;
  if (cxx11_abi) s += *cxx11_abi ? "-cxx11" : "-cxx98";
  return s + "-" + arch;
}

VariantParse try_parse_variant(std::string_view name) {
  auto fail = [](std::string why) { return VariantParse{std::nullopt, std::move(why)}; };
  if (auto why = check_charset(name); !why.empty()) return fail(why);
  Variant v;
  std::string why;
  try {
    why = parse_parts(name, split_dash(name), v);
  } catch (const std::invalid_argument&) {
    return fail("version number out of range");
  }
  if (!why.empty()) return fail(why);
  // Anything that does not print back to the same name was normalised by us
  // (e.g. cu0126); refusing it keeps the grammar a bijection.
  if (v.str() != name) return fail("not in canonical form (would be '" + v.str() + "')");
  return {v, {}};
}

Variant parse_variant(std::string_view name) {
  auto r = try_parse_variant(name);
  if (!r.variant)
    throw Error(ErrorKind::input, "variant '" + std::string(name) + "': " + r.error);
  return *r.variant;
}

}  // namespace kwheel
