#include "kwheel/evidence/cuda_arch.hpp"

#include <charconv>

#include "kwheel/base/enum_name.hpp"

namespace kwheel {
namespace {

std::string_view suffix_str(ArchSuffix s) {
  static constexpr EnumName<ArchSuffix> names[] = {{ArchSuffix::none, ""}, {ArchSuffix::a, "a"}, {ArchSuffix::f, "f"}};
  return enum_name(s, names, "");
}

// Strips a trailing 'a' or 'f' off `text`.
ArchSuffix take_suffix(std::string_view& text) {
  if (text.ends_with('a')) {
    text.remove_suffix(1);
    return ArchSuffix::a;
  }
  if (text.ends_with('f')) {
    text.remove_suffix(1);
    return ArchSuffix::f;
  }
  return ArchSuffix::none;
}

// A decimal of 1-3 digits without a leading zero (nvcc never writes one).
std::optional<unsigned> small_number(std::string_view text) {
  if (text.empty() || text.size() > 3 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// "9.0", "10.3": one or two digits of major, exactly one of minor.
std::optional<CudaArch> dotted(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 2 || text.size() != dot + 2) return std::nullopt;
  auto major = small_number(text.substr(0, dot));
  const char m = text[dot + 1];
  if (!major || *major == 0 || m < '0' || m > '9') return std::nullopt;
  return CudaArch{*major, static_cast<unsigned>(m - '0'), ArchSuffix::none};
}

}  // namespace

std::string CudaArch::number() const { return std::to_string(major) + std::to_string(minor); }

std::string CudaArch::capability() const {
  return std::to_string(major) + "." + std::to_string(minor) + std::string(suffix_str(suffix));
}

std::string CudaTarget::str() const {
  return (kind == CudaCodeKind::sass ? "sm_" : "compute_") + arch.number() + std::string(suffix_str(arch.suffix));
}

std::optional<CudaArch> arch_from_number(unsigned number, ArchSuffix suffix) {
  if (number < 10 || number > 999) return std::nullopt;
  return CudaArch{number / 10, number % 10, suffix};
}

std::optional<CudaTarget> parse_cuda_target(std::string_view text) {
  CudaTarget t;
  if (text.starts_with("sm_")) {
    text.remove_prefix(3);
  } else if (text.starts_with("compute_")) {
    t.kind = CudaCodeKind::ptx;
    text.remove_prefix(8);
  } else {
    return std::nullopt;
  }
  const ArchSuffix suffix = take_suffix(text);
  const auto n = small_number(text);
  if (!n) return std::nullopt;
  const auto arch = arch_from_number(*n, suffix);
  if (!arch) return std::nullopt;
  t.arch = *arch;
  return t;
}

std::optional<DeclaredCudaArch> parse_declared_cuda_arch(std::string_view text) {
  DeclaredCudaArch d;
  if (text.ends_with("+PTX")) {
    d.ptx = true;
    text.remove_suffix(4);
  }
  const ArchSuffix suffix = take_suffix(text);
  const auto arch = dotted(text);
  if (!arch) return std::nullopt;
  d.arch = *arch;
  d.arch.suffix = suffix;
  return d;
}

std::optional<CudaArch> parse_compute_capability(std::string_view text) { return dotted(text); }

}  // namespace kwheel
