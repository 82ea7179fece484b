#include "kwheel/variant.hpp"

#include <array>
#include <charconv>
#include <vector>

#include "kwheel/error.hpp"

namespace kwheel {
namespace {

std::vector<std::string_view> split_dash(std::string_view s) {
  std::vector<std::string_view> parts;
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
  why = "unknown backend '" + std::string(s) + "' (known: cpu, cuXY, rocmXY, xpuXY, cannXY, metal, neuron, tpu)";
  return std::nullopt;
}

constexpr std::array<std::string_view, 9> kNoarchNames{"universal", "cpu", "cuda", "metal", "rocm",
                                                       "xpu",       "cann", "neuron", "tpu"};

bool known_cpu(std::string_view s) { return s == "x86_64" || s == "aarch64" || s == "arm64" || s == "riscv64" || s == "ppc64le" || s == "s390x"; }
bool known_os(std::string_view s) { return s == "linux" || s == "darwin" || s == "windows"; }

// Parses "{backend}-{cpu}-{os}" into v; returns the reason on failure.
std::string parse_arch(const std::vector<std::string_view>& parts, size_t first, Variant& v) {
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
  auto fail = [&](const std::string& why) { return VariantParse{std::nullopt, why}; };
  if (name.empty()) return fail("empty variant name");
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return fail("variant names use only a-z, 0-9, '-' and '_'");
  }
  auto parts = split_dash(name);
  Variant v;
  std::string why;
  try {
    if (name.starts_with("torch-stable-abi")) {
      if (parts.size() < 3) return fail("'torch-stable-abi' needs a version, e.g. torch-stable-abi10-cu126-x86_64-linux");
      auto ver = split_version(parts[2].substr(3), true);
      if (!ver) return fail("stable-ABI version must be digits, e.g. abi10");
      v.framework = Framework::torch_stable_abi;
      v.framework_version = *ver;
      why = parse_arch(parts, 3, v);
    } else if (parts[0] == "torch") {
      if (parts.size() != 2) return fail("a pure-Python variant is torch-{universal|cpu|cuda|...}");
      bool known = false;
      for (auto n : kNoarchNames) known = known || parts[1] == n;
      if (!known) return fail("unknown pure-Python backend '" + std::string(parts[1]) + "'");
      v.framework = Framework::torch_noarch;
      v.noarch = parts[1];
    } else if (parts[0].starts_with("torch")) {
      auto ver = split_version(parts[0].substr(5), true);
      if (!ver) return fail("torch version must be digits after 'torch' (e.g. torch27, torch210)");
      v.framework = Framework::torch;
      v.framework_version = *ver;
      size_t first = 1;
      if (parts.size() > 1 && (parts[1] == "cxx11" || parts[1] == "cxx98")) {
        v.cxx11_abi = parts[1] == "cxx11";
        first = 2;
      }
      why = parse_arch(parts, first, v);
    } else if (parts[0] == "tvm" && parts.size() > 1 && parts[1].starts_with("ffi")) {
      // kernels: tvm-ffi(\d+?)(\d+), a lazy major, so one digit.
      auto ver = split_version(parts[1].substr(3), true);
      if (!ver) return fail("tvm-ffi version must be digits, e.g. tvm-ffi01");
      v.framework = Framework::tvm_ffi;
      v.framework_version = *ver;
      why = parse_arch(parts, 2, v);
    } else {
      return fail("unknown framework '" + std::string(parts[0]) + "' (expected torch…, torch-stable-abi…, tvm-ffi…)");
    }
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
