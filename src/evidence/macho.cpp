#include "kwheel/evidence/macho.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <utility>

#include "kwheel/base/error.hpp"
#include "kwheel/evidence/format_reader.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/mapped_file.hpp"
#include "kwheel/base/unique_fd.hpp"

namespace kwheel {
namespace {

// Constants from <mach-o/loader.h> and <mach-o/fat.h> (as LLVM's
// BinaryFormat/MachO.h spells them), so no Apple header is needed.
// Magic numbers: thin headers as read little-endian, fat headers big-endian.
enum ThinMagic : std::uint32_t { MH_MAGIC = 0xfeedface, MH_MAGIC_64 = 0xfeedfacf, MH_CIGAM = 0xcefaedfe, MH_CIGAM_64 = 0xcffaedfe };
enum FatMagic : std::uint32_t { FAT_MAGIC = 0xcafebabe, FAT_MAGIC_64 = 0xcafebabf };

enum LoadCommandType : std::uint32_t { LC_VERSION_MIN_MACOSX = 0x24, LC_BUILD_VERSION = 0x32 };
constexpr std::uint32_t PLATFORM_MACOS = 1;

enum CpuArchBits : std::uint32_t { CPU_ARCH_ABI64 = 0x01000000, CPU_ARCH_ABI64_32 = 0x02000000 };
enum CpuType : std::uint32_t {
  CPU_TYPE_X86 = 7, CPU_TYPE_ARM = 12, CPU_TYPE_POWERPC = 18,
  CPU_TYPE_X86_64 = CPU_TYPE_X86 | CPU_ARCH_ABI64, CPU_TYPE_ARM64 = CPU_TYPE_ARM | CPU_ARCH_ABI64,
  CPU_TYPE_ARM64_32 = CPU_TYPE_ARM | CPU_ARCH_ABI64_32, CPU_TYPE_POWERPC64 = CPU_TYPE_POWERPC | CPU_ARCH_ABI64
};
// The subtype's high byte holds capability bits (arm64e keeps its
// pointer-authentication ABI version there), not the CPU model.
enum CpuSubtype : std::uint32_t { CPU_SUBTYPE_MASK = 0xff000000, CPU_SUBTYPE_X86_64_H = 8, CPU_SUBTYPE_ARM64E = 2 };

constexpr std::uint64_t kMachHeaderSize = 28;
constexpr std::uint64_t kMachHeader64Size = 32;
constexpr std::uint64_t kMinLoadCommand = 8;       // cmd + cmdsize
constexpr std::uint64_t kBuildVersionSize = 24;    // build_version_command without its tools
constexpr std::uint64_t kBuildToolSize = 8;        // build_tool_version
constexpr std::uint64_t kVersionMinSize = 16;      // version_min_command
constexpr std::uint64_t kFatArchSize = 20;
constexpr std::uint64_t kFatArch64Size = 32;
// Java class files share 0xcafebabe and keep their version (minor << 16 |
// major, major >= 45) where nfat_arch would be; file(1)'s magic calls the
// header universal only below 20, and real universal binaries hold a
// handful of slices. The cap also bounds the slices a hostile header makes
// us check pairwise.
constexpr std::uint32_t kMaxFatArch = 19;
// LLVM's limit for a slice's alignment (MachOUniversalBinary: 2^15).
constexpr std::uint32_t kMaxFatAlign = 15;

std::uint32_t first_word_le(std::span<const std::byte> b) {
  return std::to_integer<std::uint32_t>(b[0]) | std::to_integer<std::uint32_t>(b[1]) << 8 |
         std::to_integer<std::uint32_t>(b[2]) << 16 | std::to_integer<std::uint32_t>(b[3]) << 24;
}

std::uint32_t be32(std::span<const std::byte> b, std::size_t off) {
  return std::to_integer<std::uint32_t>(b[off]) << 24 | std::to_integer<std::uint32_t>(b[off + 1]) << 16 |
         std::to_integer<std::uint32_t>(b[off + 2]) << 8 | std::to_integer<std::uint32_t>(b[off + 3]);
}

bool is_thin_magic(std::uint32_t le) {
  return le == MH_MAGIC || le == MH_MAGIC_64 || le == MH_CIGAM || le == MH_CIGAM_64;
}

bool is_fat_magic(std::uint32_t be) { return be == FAT_MAGIC || be == FAT_MAGIC_64; }

std::string arm_name(std::uint32_t sub) {
  switch (sub) {
    case 6: return "armv6";
    case 9: return "armv7";
    case 11: return "armv7s";
    case 12: return "armv7k";
    case 15: return "armv7m";
    case 16: return "armv7em";
    default: return "arm";
  }
}

std::string arch_name(std::uint32_t cputype, std::uint32_t cpusubtype) {
  const std::uint32_t sub = cpusubtype & ~CPU_SUBTYPE_MASK;
  switch (cputype) {
    case CPU_TYPE_X86: return "i386";
    case CPU_TYPE_X86_64: return sub == CPU_SUBTYPE_X86_64_H ? "x86_64h" : "x86_64";
    case CPU_TYPE_ARM64: return sub == CPU_SUBTYPE_ARM64E ? "arm64e" : "arm64";
    case CPU_TYPE_ARM64_32: return "arm64_32";
    case CPU_TYPE_ARM: return arm_name(sub);
    case CPU_TYPE_POWERPC: return "ppc";
    case CPU_TYPE_POWERPC64: return "ppc64";
    default: return "cputype_" + std::to_string(cputype);
  }
}

// Versions are nibble-packed as xxxx.yy.zz.
MacosVersion unpack_version(std::uint32_t v) { return {v >> 16, (v >> 8) & 0xff, v & 0xff}; }

std::optional<MacosVersion> unpack_sdk(std::uint32_t v) {
  if (v == 0) return std::nullopt;  // what ld writes when it knew no SDK ("n/a")
  return unpack_version(v);
}

// What the load commands say about the platform, gathered during the walk.
struct VersionFacts {
  const char* source = nullptr;  // the command that gave the macOS minimum
  bool macos_build = false;      // ... and it was an LC_BUILD_VERSION
  std::uint32_t macos_min = 0, macos_sdk = 0;
  std::optional<std::uint32_t> first_platform;
  std::uint32_t first_sdk = 0;

  void set_macos(const FormatReader& r, const char* from, std::uint32_t min, std::uint32_t sdk) {
    // A zippered binary has one LC_BUILD_VERSION per platform; two that both
    // give a macOS minimum (or both kinds of command) leave it ambiguous.
    if (source != nullptr) {
      r.fail(std::string("both ") + source + " and " + from + " give a minimum macOS version");
    }
    source = from;
    macos_min = min;
    macos_sdk = sdk;
  }
};

void read_build_version(const FormatReader& r, std::uint64_t off, std::uint64_t cmdsize, VersionFacts& facts) {
  if (cmdsize < kBuildVersionSize) r.fail("LC_BUILD_VERSION of " + std::to_string(cmdsize) + " bytes is too short");
  const std::uint32_t platform = r.u32(off + 8, "LC_BUILD_VERSION platform");
  const std::uint32_t minos = r.u32(off + 12, "LC_BUILD_VERSION minos");
  const std::uint32_t sdk = r.u32(off + 16, "LC_BUILD_VERSION sdk");
  const std::uint64_t ntools = r.u32(off + 20, "LC_BUILD_VERSION ntools");
  if (ntools > (cmdsize - kBuildVersionSize) / kBuildToolSize) {
    r.fail("LC_BUILD_VERSION lists " + std::to_string(ntools) + " tools that do not fit in its " +
           std::to_string(cmdsize) + " bytes");
  }
  if (!facts.first_platform) {
    facts.first_platform = platform;
    facts.first_sdk = sdk;
  }
  if (platform == PLATFORM_MACOS) {
    facts.set_macos(r, "LC_BUILD_VERSION", minos, sdk);
    facts.macos_build = true;
  }
}

void read_version_min(const FormatReader& r, std::uint64_t off, std::uint64_t cmdsize, VersionFacts& facts) {
  if (cmdsize < kVersionMinSize) r.fail("LC_VERSION_MIN_MACOSX of " + std::to_string(cmdsize) + " bytes is too short");
  facts.set_macos(r, "LC_VERSION_MIN_MACOSX", r.u32(off + 8, "LC_VERSION_MIN_MACOSX version"),
                  r.u32(off + 12, "LC_VERSION_MIN_MACOSX sdk"));
}

struct LoadCommand {
  std::uint32_t cmd = 0;
  std::uint64_t size = 0;
};

// Command `i` at `off`, checked to lie inside the load commands that end at
// `end`.
LoadCommand load_command(const FormatReader& r, std::uint64_t i, std::uint64_t ncmds, std::uint64_t off, std::uint64_t end) {
  auto at = [&] { return "load command " + std::to_string(i) + " of " + std::to_string(ncmds); };
  if (end - off < kMinLoadCommand) r.fail(at() + " starts past the end of the load commands");
  const LoadCommand c{r.u32(off, "cmd"), r.u32(off + 4, "cmdsize")};
  // LLVM asks 64-bit files for multiples of 8 but lets the kernel's core
  // files through with 4; reads here need no alignment, so 4 is enough to
  // catch garbage without refusing anything a linker writes.
  if (c.size < kMinLoadCommand || c.size % 4 != 0) {
    r.fail(at() + " (cmd " + hex_offset(c.cmd) + ") has cmdsize " + std::to_string(c.size) + ", not a multiple of 4 of at least 8");
  }
  if (c.size > end - off) {
    r.fail(at() + " (cmd " + hex_offset(c.cmd) + ") with cmdsize " + std::to_string(c.size) +
           " runs past the end of the load commands");
  }
  return c;
}

// Walks ncmds commands inside [begin, begin + sizeofcmds). Each command takes
// at least 8 bytes of that range, so ncmds is capped by the bytes present:
// the walk is linear in the file's size whatever the header claims.
VersionFacts walk_load_commands(const FormatReader& r, std::uint64_t begin, std::uint64_t ncmds, std::uint64_t sizeofcmds) {
  if (ncmds > sizeofcmds / kMinLoadCommand) {
    r.fail("ncmds " + std::to_string(ncmds) + " cannot fit in sizeofcmds " + std::to_string(sizeofcmds) +
           " (each load command takes at least 8 bytes)");
  }
  VersionFacts facts;
  std::uint64_t off = begin;
  for (std::uint64_t i = 0; i < ncmds; ++i) {
    const LoadCommand c = load_command(r, i, ncmds, off, begin + sizeofcmds);
    if (c.cmd == LC_BUILD_VERSION) read_build_version(r, off, c.size, facts);
    if (c.cmd == LC_VERSION_MIN_MACOSX) read_version_min(r, off, c.size, facts);
    off += c.size;
  }
  return facts;
}

MachOSlice parse_thin(FormatReader r) {
  if (r.size() < 4) r.fail("file is " + std::to_string(r.size()) + " bytes, too short for a Mach-O header");
  r.set_order(ByteOrder::little);  // the magic, read little-endian, tells the byte order
  const std::uint32_t magic = r.u32(0, "magic");
  if (!is_thin_magic(magic)) r.fail("no Mach-O header magic (found " + hex_offset(magic) + ")");
  r.set_order(magic == MH_CIGAM || magic == MH_CIGAM_64 ? ByteOrder::big : ByteOrder::little);
  const std::uint64_t header = (magic == MH_MAGIC_64 || magic == MH_CIGAM_64) ? kMachHeader64Size : kMachHeaderSize;
  if (r.size() < header) {
    r.fail(std::to_string(r.size()) + " bytes are too short for the " + std::to_string(header) + "-byte Mach-O header");
  }
  MachOSlice s;
  s.cputype = r.u32(4, "cputype");
  s.cpusubtype = r.u32(8, "cpusubtype");
  s.filetype = r.u32(12, "filetype");
  s.arch = arch_name(s.cputype, s.cpusubtype);
  const std::uint64_t ncmds = r.u32(16, "ncmds");
  const std::uint64_t sizeofcmds = r.u32(20, "sizeofcmds");
  if (sizeofcmds > r.size() - header) {
    r.fail("load commands (sizeofcmds " + std::to_string(sizeofcmds) + ") run past the end (" + std::to_string(r.size()) +
           " bytes)");
  }
  const VersionFacts facts = walk_load_commands(r, header, ncmds, sizeofcmds);
  if (facts.source != nullptr) {
    s.min_macos = unpack_version(facts.macos_min);
    s.min_macos_source = facts.source;
    s.sdk = unpack_sdk(facts.macos_sdk);
  } else if (facts.first_platform) {
    s.sdk = unpack_sdk(facts.first_sdk);
  }
  s.platform = facts.macos_build ? std::optional<std::uint32_t>(PLATFORM_MACOS) : facts.first_platform;
  return s;
}

struct FatArch {
  std::uint32_t cputype = 0, cpusubtype = 0, align = 0;
  std::uint64_t offset = 0, size = 0;
  std::string arch;
};

FatArch read_fat_arch(const FormatReader& r, std::uint64_t off, bool is64) {
  FatArch a;
  a.cputype = r.u32(off, "fat_arch cputype");
  a.cpusubtype = r.u32(off + 4, "fat_arch cpusubtype");
  a.offset = is64 ? r.u64(off + 8, "fat_arch offset") : r.u32(off + 8, "fat_arch offset");
  a.size = is64 ? r.u64(off + 16, "fat_arch size") : r.u32(off + 12, "fat_arch size");
  a.align = is64 ? r.u32(off + 24, "fat_arch align") : r.u32(off + 16, "fat_arch align");
  a.arch = arch_name(a.cputype, a.cpusubtype);
  return a;
}

// The checks LLVM's MachOUniversalBinary makes: each slice inside the file,
// past the header table, aligned as declared, and no two overlapping or for
// the same CPU (which slice would the loader pick?).
void check_fat_arch(const FormatReader& r, const std::vector<FatArch>& seen, const FatArch& a, std::uint64_t table_end) {
  const std::string what = "slice " + std::to_string(seen.size() + 1) + " (" + a.arch + ")";
  if (!r.contains(a.offset, a.size)) {
    r.fail(what + " at offset " + hex_offset(a.offset) + " (size " + std::to_string(a.size) + ") lies outside the file (" +
           std::to_string(r.size()) + " bytes)");
  }
  if (a.offset < table_end) r.fail(what + " at offset " + hex_offset(a.offset) + " overlaps the universal header");
  if (a.align > kMaxFatAlign) r.fail(what + " has alignment 2^" + std::to_string(a.align) + ", more than 2^15");
  if (a.offset % (std::uint64_t{1} << a.align) != 0) {
    r.fail(what + " at offset " + hex_offset(a.offset) + " is not aligned to 2^" + std::to_string(a.align));
  }
  for (const FatArch& b : seen) {
    if (a.cputype == b.cputype && (a.cpusubtype & ~CPU_SUBTYPE_MASK) == (b.cpusubtype & ~CPU_SUBTYPE_MASK)) {
      r.fail("two slices are for " + a.arch);
    }
    if (a.offset < b.offset + b.size && b.offset < a.offset + a.size) r.fail(what + " overlaps the " + b.arch + " slice");
  }
}

MachOSlice parse_fat_slice(const FormatReader& r, const FatArch& a, std::size_t index, std::size_t count) {
  FormatReader sub = r.slice(a.offset, a.size,
                       "slice " + std::to_string(index + 1) + " of " + std::to_string(count) + " (" + a.arch + "): ");
  sub.set_order(ByteOrder::big);  // for the fat magic; parse_thin sets the slice's own order
  if (sub.size() >= 4 && is_fat_magic(sub.u32(0, "magic"))) sub.fail("a slice is itself a universal binary");
  MachOSlice s = parse_thin(sub);
  if (s.cputype != a.cputype || (s.cpusubtype & ~CPU_SUBTYPE_MASK) != (a.cpusubtype & ~CPU_SUBTYPE_MASK)) {
    sub.fail("the universal header says " + a.arch + " but the slice's own header says " + s.arch);
  }
  return s;
}

MachOInfo parse_fat(FormatReader r, MachOInfo info) {
  r.set_order(ByteOrder::big);  // universal headers are big-endian whatever the slices are
  const bool is64 = r.u32(0, "magic") == FAT_MAGIC_64;
  const std::uint64_t nfat = r.u32(4, "nfat_arch");  // 1..kMaxFatArch: has_macho_magic checked
  const std::uint64_t entry = is64 ? kFatArch64Size : kFatArchSize;
  const std::uint64_t table_end = 8 + nfat * entry;
  if (table_end > r.size()) {
    r.fail("universal header lists " + std::to_string(nfat) + " architectures but the file ends inside the list");
  }
  std::vector<FatArch> archs;
  for (std::uint64_t i = 0; i < nfat; ++i) {
    FatArch a = read_fat_arch(r, 8 + i * entry, is64);
    check_fat_arch(r, archs, a, table_end);
    archs.push_back(std::move(a));
  }
  info.universal = true;
  for (std::size_t i = 0; i < archs.size(); ++i) info.slices.push_back(parse_fat_slice(r, archs[i], i, archs.size()));
  return info;
}

[[noreturn]] void not_macho(std::span<const std::byte> bytes, std::string_view name) {
  std::string why = " (no Mach-O or universal header magic)";
  if (bytes.size() >= 8 && is_fat_magic(be32(bytes, 0))) {
    const std::uint32_t n = be32(bytes, 4);
    why = ": " + hex_offset(be32(bytes, 0)) + " followed by " + std::to_string(n) +
          (be32(bytes, 0) == FAT_MAGIC && n > kMaxFatArch ? " is a Java class file" : " architectures") +
          " (a universal header lists 1 to " + std::to_string(kMaxFatArch) + ")";
  }
  throw Error(ErrorKind::input, std::string(name) + ": not a Mach-O file" + why);
}

bool parse_component(std::string_view text, unsigned limit, unsigned& out) {
  // Three digits hold every allowed value, and no more can overflow.
  if (text.empty() || text.size() > 3) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out <= limit;
}

}  // namespace

std::string MacosVersion::str() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor);
  if (patch != 0) s += "." + std::to_string(patch);
  return s;
}

std::optional<MacosVersion> parse_macos_version(std::string_view text) {
  unsigned parts[3] = {0, 0, 0};
  const unsigned limits[3] = {999, 255, 255};
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t dot = text.find('.');
    if (!parse_component(text.substr(0, dot), limits[i], parts[i])) return std::nullopt;
    if (dot == std::string_view::npos) return MacosVersion{parts[0], parts[1], parts[2]};
    text.remove_prefix(dot + 1);
  }
  return std::nullopt;  // a fourth component
}

bool has_macho_magic(std::span<const std::byte> head) {
  if (head.size() < 4) return false;
  if (is_thin_magic(first_word_le(head))) return true;
  if (!is_fat_magic(be32(head, 0)) || head.size() < 8) return false;
  const std::uint32_t nfat = be32(head, 4);
  return nfat >= 1 && nfat <= kMaxFatArch;
}

bool is_macho_file(const std::filesystem::path& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return false;
  std::byte head[8];
  const ssize_t n = ::pread(fd.get(), head, sizeof head, 0);
  return n > 0 && has_macho_magic(std::span<const std::byte>(head, static_cast<std::size_t>(n)));
}

MachOInfo parse_macho(std::span<const std::byte> bytes, std::string_view name) {
  if (!has_macho_magic(bytes)) not_macho(bytes, name);
  MachOInfo info;
  info.name = std::string(name);
  const FormatReader r(bytes, name, "Mach-O");
  if (is_fat_magic(be32(bytes, 0))) return parse_fat(r, std::move(info));
  info.slices.push_back(parse_thin(r));
  return info;
}

std::optional<std::string> load_refusal(const MachOInfo& info) {
  enum : std::uint32_t { MH_OBJECT = 1, MH_EXECUTE = 2, MH_DYLIB = 6, MH_BUNDLE = 8 };
  for (const MachOSlice& s : info.slices) {
    if (s.filetype == MH_DYLIB || s.filetype == MH_BUNDLE) continue;
    std::string what = s.filetype == MH_EXECUTE ? "an executable (MH_EXECUTE)"
                       : s.filetype == MH_OBJECT ? "an object file (MH_OBJECT)"
                                                 : "Mach-O file type " + std::to_string(s.filetype);
    if (info.universal) what.append(" in its ").append(s.arch).append(" slice");
    return what.append(", not a dylib or bundle; dyld loads only MH_DYLIB and MH_BUNDLE");
  }
  return std::nullopt;
}

MachOInfo read_macho(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_macho(file.bytes(), path.string());
}

}  // namespace kwheel
