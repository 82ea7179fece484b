#include "kwheel/evidence/cuda_release.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace kwheel {
namespace {

// PTX ISA -> the CUDA release that introduced it, from NVIDIA's PTX ISA
// release notes ("PTX ISA version X.Y ... CUDA X.Y"). 12.6 kept ISA 8.5.
struct IsaRow {
  unsigned isa_major, isa_minor, cuda_major, cuda_minor;
};
constexpr std::array<IsaRow, 26> kPtxIsa{{
    {6, 0, 9, 0},   {6, 1, 9, 1},   {6, 2, 9, 2},   {6, 3, 10, 0},  {6, 4, 10, 1},  {6, 5, 10, 2},  {7, 0, 11, 0},
    {7, 1, 11, 1},  {7, 2, 11, 2},  {7, 3, 11, 3},  {7, 4, 11, 4},  {7, 5, 11, 5},  {7, 6, 11, 6},  {7, 7, 11, 7},
    {7, 8, 11, 8},  {8, 0, 12, 0},  {8, 1, 12, 1},  {8, 2, 12, 2},  {8, 3, 12, 3},  {8, 4, 12, 4},  {8, 5, 12, 5},
    {8, 6, 12, 7},  {8, 7, 12, 8},  {8, 8, 12, 9},  {9, 0, 13, 0},  {9, 1, 13, 1},
}};

constexpr unsigned char kOsabiCuda12 = 0x33;
constexpr std::string_view kToolkitWords = "Cuda compilation tools, release ";
// The note sits in a cubin's first pages; PTX names its release in its
// header comment. Looking no further bounds the work on a hostile payload.
constexpr std::size_t kScanLimit = 1 << 20;

std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), std::min(bytes.size(), kScanLimit)};
}

std::optional<unsigned> leading_number(std::string_view s, std::size_t& pos) {
  const std::size_t start = pos;
  unsigned v = 0;
  while (pos < s.size() && pos - start < 3 && s[pos] >= '0' && s[pos] <= '9') v = v * 10 + static_cast<unsigned>(s[pos++] - '0');
  if (pos == start) return std::nullopt;
  return v;
}

// A CUDA 12-era cubin's ELF header: e_version (offset 20, little-endian)
// holds the toolkit release as 10 x major + minor.
std::optional<CudaRelease> cubin_header_release(std::span<const std::byte> p) {
  if (p.size() < 24 || std::to_integer<char>(p[0]) != 0x7f || std::to_integer<char>(p[1]) != 'E' || std::to_integer<char>(p[2]) != 'L' ||
      std::to_integer<char>(p[3]) != 'F' || std::to_integer<unsigned char>(p[7]) != kOsabiCuda12)
    return std::nullopt;
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(p[20 + i]);
  if (v < 70 || v > 129) return std::nullopt;  // CUDA 7.0 .. 12.9 wrote this form
  return CudaRelease{v / 10, v % 10};
}

std::optional<CudaRelease> named_release(std::span<const std::byte> p) {
  const std::string_view text = as_text(p);
  const std::size_t at = text.find(kToolkitWords);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t pos = at + kToolkitWords.size();
  const auto major = leading_number(text, pos);
  if (!major || pos >= text.size() || text[pos++] != '.') return std::nullopt;
  const auto minor = leading_number(text, pos);
  if (!minor) return std::nullopt;
  return CudaRelease{*major, *minor};
}

}  // namespace

std::string CudaRelease::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::optional<CudaRelease> parse_cuda_release(std::string_view text) {
  std::size_t pos = 0;
  const auto major = leading_number(text, pos);
  if (!major || pos >= text.size() || text[pos++] != '.') return std::nullopt;
  const auto minor = leading_number(text, pos);
  if (!minor || pos != text.size()) return std::nullopt;
  return CudaRelease{*major, *minor};
}

std::optional<CudaRelease> release_of_ptx_isa(unsigned major, unsigned minor) {
  for (const auto& r : kPtxIsa)
    if (r.isa_major == major && r.isa_minor == minor) return CudaRelease{r.cuda_major, r.cuda_minor};
  return std::nullopt;
}

std::optional<CudaRelease> toolkit_of_payload(std::span<const std::byte> payload) {
  if (auto r = cubin_header_release(payload)) return r;
  return named_release(payload);
}

}  // namespace kwheel
