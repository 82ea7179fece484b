#include "kwheel/evidence/macos_tag.hpp"

#include <cstdint>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

std::string tag_version(const MacosVersion& v) { return std::to_string(v.major) + "_" + std::to_string(v.minor); }

// The slice of `o` the variant's architecture loads, or a refusal naming
// what the file holds instead.
const MachOSlice& slice_for(const MachOInfo& o, const std::string& arch) {
  std::vector<std::string> found;
  for (const auto& s : o.slices) {
    if (s.arch == arch) return s;
    found.push_back(s.arch);
  }
  throw Error(ErrorKind::policy, "'" + o.name + "' is a Mach-O for " + join(found, " + ") + ", not " + arch +
                                     "; rebuild it for " + arch + " or build the variant that matches it");
}

constexpr std::uint32_t kPlatformMacos = 1;  // LC_BUILD_VERSION's PLATFORM_MACOS

}  // namespace

MacosVersion macos_backend_floor(const std::string& arch, bool metal) {
  if (metal) return {26, 0, 0};
  return arch == "arm64" || arch == "arm64e" ? MacosVersion{11, 0, 0} : MacosVersion{10, 9, 0};
}

std::vector<std::string> macos_tag_archs(const std::string& tag_arch) {
  if (tag_arch == "universal2") return {"arm64", "x86_64"};
  if (tag_arch == "intel") return {"x86_64", "i386"};
  if (tag_arch == "arm64" || tag_arch == "x86_64" || tag_arch == "i386" || tag_arch == "arm64e") return {tag_arch};
  return {};
}

std::optional<std::pair<MacosVersion, std::string>> parse_macos_tag(const std::string& tag) {
  static const std::string prefix = "macosx_";
  if (!tag.starts_with(prefix)) return std::nullopt;
  const auto parts = split(tag.substr(prefix.size()), '_');
  if (parts.size() < 3) return std::nullopt;
  auto v = parse_macos_version(parts[0] + "." + parts[1]);
  if (!v) return std::nullopt;
  std::string arch = parts[2];
  for (size_t i = 3; i < parts.size(); ++i) arch += "_" + parts[i];  // x86_64
  return std::make_pair(*v, arch);
}

MacosVersion taggable_macos(const MacosVersion& v) {
  if (v.major >= 11) return {v.minor || v.patch ? v.major + 1 : v.major, 0, 0};
  return {v.major, v.patch ? v.minor + 1 : v.minor, 0};
}

MacosReport assess_macos(const std::vector<MachOInfo>& objects, const std::string& arch, const MacosVersion& backend_floor,
                         const std::optional<MacosVersion>& requested) {
  MacosReport r;
  MacosVersion needed = backend_floor;
  r.reason = "the backend's floor";
  for (const auto& o : objects) {
    const MachOSlice& s = slice_for(o, arch);
    if (s.platform && *s.platform != kPlatformMacos)
      throw Error(ErrorKind::policy, "'" + o.name + "' is built for Apple platform " + std::to_string(*s.platform) +
                                         " (LC_BUILD_VERSION), not macOS; rebuild it for macOS");
    r.objects.push_back({o.name, s.arch, s.min_macos, s.min_macos_source});
    if (!s.min_macos || *s.min_macos <= needed) continue;
    needed = *s.min_macos;
    r.reason = o.name + " needs macOS " + s.min_macos->str() + " (" + s.min_macos_source + ")";
  }
  if (requested) {
    if (taggable_macos(*requested) != *requested) {
      const std::string down = requested->major >= 11 ? std::to_string(requested->major) + ".0"
                                                      : std::to_string(requested->major) + "." + std::to_string(requested->minor);
      throw Error(ErrorKind::usage, "--macos " + requested->str() +
                                        (requested->major >= 11 ? ": wheel tags name macOS 11 and later by major version only"
                                                                : ": wheel tags name macOS 10 by major and minor version only") +
                                        "; pass --macos " + down + " or " + taggable_macos(*requested).str());
    }
    if (*requested < backend_floor)
      throw Error(ErrorKind::usage, "--macos " + requested->str() + " is below the " + backend_floor.str() + " this backend needs; pass --macos " + backend_floor.str() + " or higher");
    if (needed > *requested)
      throw Error(ErrorKind::policy, "--macos " + requested->str() + " claims too old a macOS: " + r.reason +
                                         "; pass --macos " + taggable_macos(needed).str() + " or rebuild with MACOSX_DEPLOYMENT_TARGET=" + requested->str());
    needed = *requested;
    r.reason = "--macos " + requested->str();
  }
  r.floor = taggable_macos(needed);
  r.platform_tag = "macosx_" + tag_version(r.floor) + "_" + arch;
  return r;
}

nlohmann::json to_json(const MacosReport& r) {
  nlohmann::json objects = nlohmann::json::array();
  for (const auto& o : r.objects)
    objects.push_back({{"file", o.file}, {"arch", o.arch}, {"min_macos", o.min_macos ? nlohmann::json(o.min_macos->str()) : nlohmann::json(nullptr)},
                       {"source", o.source}});
  return {{"tag", r.platform_tag}, {"floor", r.floor.str()}, {"reason", r.reason}, {"objects", objects}};
}

}  // namespace kwheel
