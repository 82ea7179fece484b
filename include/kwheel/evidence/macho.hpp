#pragma once
// The facts of a Mach-O file that decide a macOS wheel's platform tag: the
// architecture of each slice (one for a thin file, several for a universal
// one) and the oldest macOS each slice runs on, as the linker recorded it.
// Files come from the internet, so every offset, size and count is checked;
// a malformed file is an Error(input) naming the file and the defect, never
// a crash, a hang or an unbounded allocation.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kwheel {

struct MacosVersion {
  unsigned major = 0, minor = 0, patch = 0;
  // "11.0", "10.15"; "10.15.1" only when there is a patch level.
  std::string str() const;
  auto operator<=>(const MacosVersion&) const = default;
};

// Parses "11", "11.0", "10.15", "10.15.4" (MACOSX_DEPLOYMENT_TARGET, a wheel
// tag's numbers); nullopt for anything else, including a major above 999 or
// a minor or patch above 255 (what the binary's nibble-packed form holds).
std::optional<MacosVersion> parse_macos_version(std::string_view text);

struct MachOSlice {
  // lipo's names, which are the wheel tags' where a tag exists: "arm64",
  // "x86_64", "arm64e", "x86_64h", "i386", "ppc", "ppc64", "armv7", ...;
  // "cputype_<n>" for a CPU this reader does not know.
  std::string arch;
  std::uint32_t cputype = 0, cpusubtype = 0, filetype = 0;  // raw header values (MH_DYLIB 6, MH_BUNDLE 8)
  // From LC_BUILD_VERSION with platform macOS (1), or from
  // LC_VERSION_MIN_MACOSX (what linkers emit for targets before 10.14).
  std::optional<MacosVersion> min_macos;
  std::string min_macos_source;  // "LC_BUILD_VERSION", "LC_VERSION_MIN_MACOSX", or empty
  // The LC_BUILD_VERSION platform (1 macOS, 2 iOS, 6 macCatalyst, ...): the
  // macOS one where a zippered binary has several, else the first.
  std::optional<std::uint32_t> platform;
  // The SDK recorded next to the version used above (absent when 0, "n/a").
  std::optional<MacosVersion> sdk;
};

struct MachOInfo {
  std::string name;  // the path or buffer name given, used in every message
  bool universal = false;
  std::vector<MachOSlice> slices;  // file order
};

// Why dyld cannot load a slice as a library: only a dylib (MH_DYLIB) or a
// bundle (MH_BUNDLE, what Python extensions are) loads; an executable
// (MH_EXECUTE) or an object file does not. nullopt when every slice loads.
std::optional<std::string> load_refusal(const MachOInfo& info);

// True if the bytes start like a Mach-O file: thin 32/64-bit in either byte
// order, or universal (0xcafebabe / 0xcafebabf). Java class files share
// 0xcafebabe; like file(1)'s magic, a universal header is only one whose
// next word (nfat_arch, where Java keeps its class-file version) is 1..19,
// so this needs 8 bytes for a universal file.
bool has_macho_magic(std::span<const std::byte> head);
bool is_macho_file(const std::filesystem::path& path);

// Parses an in-memory image; `name` is used in error messages. The fuzzing
// entry point: whatever the bytes, it returns or throws kwheel::Error.
MachOInfo parse_macho(std::span<const std::byte> bytes, std::string_view name);

// Maps the file read-only and parses it. Throws Error(input) for a
// non-Mach-O or malformed file, Error(io) when it cannot be opened.
MachOInfo read_macho(const std::filesystem::path& path);

}  // namespace kwheel
