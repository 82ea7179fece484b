#pragma once
// A darwin variant's platform tag, from its Mach-O files the way delocate
// reads them: each object must have a slice for the variant's architecture,
// and the wheel runs from the newest minimum macOS among those slices
// (LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX). Policy as data: the backend's
// own floor (kernels loads Metal kernels from macOS 26; arm64 Macs start
// at 11) is given by the caller.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/evidence/macho.hpp"

namespace kwheel {

struct MacosObject {
  std::string file;                     // the member's archive path
  std::string arch;                     // the slice used
  std::optional<MacosVersion> min_macos;
  std::string source;                   // "LC_BUILD_VERSION", "LC_VERSION_MIN_MACOSX", "" (none recorded)
};

struct MacosReport {
  std::string platform_tag;             // "macosx_14_0_arm64"
  MacosVersion floor;                   // the version the tag names
  std::string reason;                   // why: the object that needs it, the backend, or --macos
  std::vector<MacosObject> objects;
};

// The version a wheel tag can name at or above `v`. Installers match macOS
// 11+ tags on the major version only (macosx_14_0 on any 14.x), so a
// binary needing 14.2 gets macosx_15_0: a 14_0 tag would install where the
// binary cannot load. 10.x tags name the minor, so 10.15.4 gives 10_16.
MacosVersion taggable_macos(const MacosVersion& v);

// The oldest macOS a wheel may claim before any evidence: kernels loads
// Metal kernels from macOS 26 (built with -std=metal4.0); arm64 Macs start
// at 11.0; x86_64 wheels conventionally at 10.9. The one statement of it.
MacosVersion macos_backend_floor(const std::string& arch, bool metal);

// The CPU names a macOS tag stands for: "arm64" -> {arm64}, "universal2"
// -> {arm64, x86_64}, "intel" -> {x86_64, i386}; empty for a name that is
// no macOS CPU.
std::vector<std::string> macos_tag_archs(const std::string& tag_arch);

// "macosx_14_0_arm64" -> {14.0, "arm64"}; nullopt for other tags.
std::optional<std::pair<MacosVersion, std::string>> parse_macos_tag(const std::string& tag);

// `objects` are the variant's Mach-O files (file name set to the member),
// `arch` the wheel's ("arm64", "x86_64"). `requested` (--macos) claims a
// version instead of deriving one: an object needing more is refused, and
// so is a claim below `backend_floor`. A slice built for another Apple
// platform (iOS, Mac Catalyst) is refused: its minimum is not a macOS one.
// Throws Error(policy) naming the object and the fix.
MacosReport assess_macos(const std::vector<MachOInfo>& objects, const std::string& arch, const MacosVersion& backend_floor,
                         const std::optional<MacosVersion>& requested);

nlohmann::json to_json(const MacosReport& report);

}  // namespace kwheel
