#include "kwheel/evidence/pe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "kwheel/base/error.hpp"
#include "kwheel/evidence/format_reader.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/mapped_file.hpp"
#include "kwheel/base/unique_fd.hpp"

namespace kwheel {
namespace {

// Constants from the PE/COFF specification (as LLVM's BinaryFormat/COFF.h
// spells them), so no Windows header is needed.
constexpr std::uint64_t kDosHeaderSize = 64;
constexpr std::uint64_t kLfanewOffset = 0x3c;
// RtlImageNtHeaderEx refuses an e_lfanew from 256 MiB on; so do we, which
// also keeps a stray "MZ" text file from looking like an image.
constexpr std::uint64_t kMaxLfanew = 256ull * 1024 * 1024;
constexpr std::uint64_t kSignatureSize = 4;
constexpr std::uint64_t kCoffHeaderSize = 20;
constexpr std::uint64_t kSectionHeaderSize = 40;
// Standard plus Windows-specific fields, before the data directories.
constexpr std::uint64_t kMinOptionalPe32 = 96;
constexpr std::uint64_t kMinOptionalPe32Plus = 112;

enum OptionalMagic : std::uint16_t { PE32_MAGIC = 0x10b, PE32PLUS_MAGIC = 0x20b };
enum Characteristics : std::uint16_t { IMAGE_FILE_DLL = 0x2000 };
enum Machine : std::uint16_t { IMAGE_FILE_MACHINE_I386 = 0x14c, IMAGE_FILE_MACHINE_AMD64 = 0x8664, IMAGE_FILE_MACHINE_ARM64 = 0xaa64 };

std::uint32_t lfanew_of(std::span<const std::byte> head) {
  std::uint32_t v = 0;
  for (std::size_t i = 4; i > 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(head[kLfanewOffset + i - 1]);
  return v;
}

bool is_signature_at(std::span<const std::byte> bytes, std::uint64_t off) {
  static constexpr char kSignature[] = {'P', 'E', '\0', '\0'};
  for (std::size_t i = 0; i < kSignatureSize; ++i) {
    if (bytes[off + i] != static_cast<std::byte>(kSignature[i])) return false;
  }
  return true;
}

std::string arch_name(std::uint16_t machine) {
  switch (machine) {
    case IMAGE_FILE_MACHINE_AMD64: return "amd64";
    case IMAGE_FILE_MACHINE_ARM64: return "arm64";
    case IMAGE_FILE_MACHINE_I386: return "win32";
    default: return "machine_" + hex_offset(machine);
  }
}

// Reads the optional header's magic and checks the header is long enough
// for the fields the loader requires of that kind of image.
bool read_optional_header(const FormatReader& r, std::uint64_t off, std::uint64_t size) {
  if (size < 2) r.fail("the optional header is " + std::to_string(size) + " bytes: an object file, not an image");
  if (!r.contains(off, size)) {
    r.fail("the optional header (" + std::to_string(size) + " bytes at " + hex_offset(off) + ") runs past the end of the file");
  }
  const std::uint16_t magic = r.u16(off, "optional header magic");
  if (magic != PE32_MAGIC && magic != PE32PLUS_MAGIC) {
    r.fail("optional header magic " + hex_offset(magic) + " is neither PE32 (0x10b) nor PE32+ (0x20b)");
  }
  const bool plus = magic == PE32PLUS_MAGIC;
  const std::uint64_t need = plus ? kMinOptionalPe32Plus : kMinOptionalPe32;
  if (size < need) {
    r.fail(std::string("the ") + (plus ? "PE32+" : "PE32") + " optional header is " + std::to_string(size) +
           " bytes, less than the " + std::to_string(need) + " it needs");
  }
  return plus;
}

}  // namespace

bool has_pe_magic(std::span<const std::byte> head) {
  if (head.size() < kDosHeaderSize || head[0] != std::byte{'M'} || head[1] != std::byte{'Z'}) return false;
  const std::uint64_t lfanew = lfanew_of(head);
  if (lfanew >= kMaxLfanew) return false;
  return lfanew + kSignatureSize > head.size() || is_signature_at(head, lfanew);
}

bool is_pe_file(const std::filesystem::path& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return false;
  std::byte head[kDosHeaderSize];
  if (::pread(fd.get(), head, sizeof head, 0) != static_cast<ssize_t>(sizeof head) || !has_pe_magic(head)) return false;
  std::byte sig[kSignatureSize];
  const auto off = static_cast<off_t>(lfanew_of(head));
  return ::pread(fd.get(), sig, sizeof sig, off) == static_cast<ssize_t>(sizeof sig) && is_signature_at(sig, 0);
}

PeInfo parse_pe(std::span<const std::byte> bytes, std::string_view name) {
  if (!has_pe_magic(bytes)) {
    throw Error(ErrorKind::input, std::string(name) + ": not a PE image (no MZ header pointing at a PE signature)");
  }
  const FormatReader r(bytes, name, "PE");
  const std::uint64_t lfanew = lfanew_of(bytes);
  if (!r.contains(lfanew, kSignatureSize + kCoffHeaderSize)) {
    r.fail("the PE header at e_lfanew " + hex_offset(lfanew) + " runs past the end of the file (" + std::to_string(r.size()) +
           " bytes)");
  }
  if (!is_signature_at(bytes, lfanew)) r.fail("no PE\\0\\0 signature at e_lfanew " + hex_offset(lfanew));
  const std::uint64_t coff = lfanew + kSignatureSize;
  PeInfo info;
  info.name = std::string(name);
  info.machine = r.u16(coff, "Machine");
  info.arch = arch_name(info.machine);
  const std::uint64_t sections = r.u16(coff + 2, "NumberOfSections");
  const std::uint64_t optional_size = r.u16(coff + 16, "SizeOfOptionalHeader");
  info.dll = (r.u16(coff + 18, "Characteristics") & IMAGE_FILE_DLL) != 0;
  const std::uint64_t optional = coff + kCoffHeaderSize;
  info.pe32_plus = read_optional_header(r, optional, optional_size);
  // Counts are 16-bit, so this cannot overflow; a table past the end means
  // the header lies about the file.
  if (!r.contains(optional + optional_size, sections * kSectionHeaderSize)) {
    r.fail(std::to_string(sections) + " section headers run past the end of the file (" + std::to_string(r.size()) +
           " bytes)");
  }
  return info;
}

std::optional<std::string> load_refusal(const PeInfo& info) {
  if (info.dll) return std::nullopt;
  return "an executable image (no IMAGE_FILE_DLL in its characteristics), not a DLL; Python imports only a DLL";
}

PeInfo read_pe(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_pe(file.bytes(), path.string());
}

}  // namespace kwheel
